"""Defaulting and validation of CustomResourceDefinitions, with apiextensions-apiserver's field paths and messages.

apiextensions validates its internal version, into which the v1 object is
converted first; that conversion moves per-version schemas, subresources and
printer columns to the top level when all versions have identical ones (a
single version always does). Errors about them are therefore reported at
``spec.validation.openAPIV3Schema...``, ``spec.subresources...`` and
``spec.additionalPrinterColumns[i]...`` in that case, and at
``spec.versions[i]...`` otherwise; this module reproduces that.

Checked: metadata.name, group, scope, names, versions (names, exactly one
storage version), required and structural schemas (types, items, root and
metadata restrictions, value validations, list/map extensions), status
subresource root restrictions, scale paths, printer columns, conversion,
storedVersions, API approval for protected groups, preserveUnknownFields,
and the fields that may not change on update. Not checked: defaults against
their schemas, CEL rules in ``x-kubernetes-validations``, selectableFields.
"""

from __future__ import annotations

import re

from ... import errors
from ...errors import FieldError

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
              "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
              "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")

_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
_SCHEMA_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_ROOT_FIELDS_WITH_STATUS = {
    # JSON name: Go field name, as the error message lists them
    "description": "Description", "type": "Type", "format": "Format", "title": "Title", "maximum": "Maximum",
    "exclusiveMaximum": "ExclusiveMaximum", "minimum": "Minimum", "exclusiveMinimum": "ExclusiveMinimum",
    "maxLength": "MaxLength", "minLength": "MinLength", "pattern": "Pattern", "maxItems": "MaxItems",
    "minItems": "MinItems", "uniqueItems": "UniqueItems", "multipleOf": "MultipleOf", "required": "Required",
    "items": "Items", "properties": "Properties", "externalDocs": "ExternalDocs", "example": "Example",
    "x-kubernetes-preserve-unknown-fields": "XPreserveUnknownFields", "x-kubernetes-validations": "XValidations",
}
# Keywords a nested value validation (inside allOf/anyOf/oneOf/not) may not use, with the structural detail.
_FORBIDDEN_NESTED = [
    ("type", "must be empty to be structural"), ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"), ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"), ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
]
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"


def apply_defaults(crd: dict) -> None:
    """SetDefaults_CustomResourceDefinition: singular and listKind from kind, conversion strategy None."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    kind = names.get("kind") or ""
    if not names.get("singular") and kind:
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = kind + "List"
    conversion = spec.setdefault("conversion", {"strategy": "None"})
    service = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)


def storage_version(crd: dict) -> str | None:
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("storage"):
            return version.get("name")
    return None


def validate(crd: dict, old: dict | None) -> list[FieldError]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    status = crd.get("status") or {}
    problems = _metadata_name(crd, spec, names)
    problems += _spec(spec)
    if old is not None:
        problems += _immutable(spec, old)
    problems += _names(status.get("acceptedNames") or {}, "status.acceptedNames")
    problems += _stored_versions(status.get("storedVersions") or [], spec.get("versions") or [])
    problems += _api_approval(crd, old)
    if spec.get("preserveUnknownFields") and not ((old or {}).get("spec") or {}).get("preserveUnknownFields"):
        problems.append(errors.invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                                       "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema "
                                       "instead"))
    return problems


# ---- metadata and names ------------------------------------------------------------------------
def _metadata_name(crd: dict, spec: dict, names: dict) -> list[FieldError]:
    name = (crd.get("metadata") or {}).get("name") or ""
    problems = [errors.invalid("metadata.name", name, m) for m in _subdomain_errors(name)]
    if name != f"{names.get('plural', '')}.{spec.get('group', '')}":
        problems.append(errors.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    return problems


def _subdomain_errors(value: str) -> list[str]:
    out = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append(_SUBDOMAIN_MSG)
    return out


def _label_errors(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.match(value):
        out.append(_LABEL_MSG)
    return out


def _names(names: dict, path: str) -> list[FieldError]:
    problems = []
    for field in ("plural", "singular"):
        value = names.get(field) or ""
        if value and _label_errors(value):
            problems.append(errors.invalid(f"{path}.{field}", value, ",".join(_label_errors(value))))
    for field in ("kind", "listKind"):
        value = names.get(field) or ""
        if value and _label_errors(value.lower()):
            problems.append(errors.invalid(f"{path}.{field}", value, "may have mixed case, but should otherwise "
                                           "match: " + ",".join(_label_errors(value.lower()))))
    for i, short in enumerate(names.get("shortNames") or []):
        if _label_errors(short):
            problems.append(errors.invalid(f"{path}.shortNames[{i}]", short, ",".join(_label_errors(short))))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        problems.append(errors.invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or []):
        if _label_errors(category):
            problems.append(errors.invalid(f"{path}.categories[{i}]", category, ",".join(_label_errors(category))))
    return problems


# ---- spec ------------------------------------------------------------------------------------------
def _hoisted(versions: list[dict], field: str):
    """The per-version ``field`` when every version has the same one (moved to the top level), else a marker."""
    if not versions:
        return _NOT_HOISTED
    first = versions[0].get(field)
    return first if all(v.get(field) == first for v in versions) else _NOT_HOISTED


_NOT_HOISTED = object()


def _spec(spec: dict) -> list[FieldError]:
    problems: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        problems.append(errors.required("spec.group"))
    elif _subdomain_errors(group):
        problems.append(errors.invalid("spec.group", group, ",".join(_subdomain_errors(group))))
    elif len(group.split(".")) < 2:
        problems.append(errors.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        problems.append(errors.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        problems.append(errors.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))

    versions = spec.get("versions") or []
    schema = _hoisted(versions, "schema")
    subresources = _hoisted(versions, "subresources")
    columns = _hoisted(versions, "additionalPrinterColumns")
    if schema is _NOT_HOISTED or not (schema or {}).get("openAPIV3Schema"):
        for i, version in enumerate(versions):
            if not (version.get("schema") or {}).get("openAPIV3Schema"):
                problems.append(errors.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
    any_status = any("status" in (v.get("subresources") or {}) for v in versions)

    storage_count = 0
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        storage_count += bool(version.get("storage"))
        name = version.get("name") or ""
        unique = unique and name not in seen
        seen.add(name)
        if _label_errors(name):
            problems.append(errors.invalid(f"{path}.name", name, ",".join(_label_errors(name))))
        if version.get("deprecationWarning") is not None and not version.get("deprecated"):
            problems.append(errors.invalid(f"{path}.deprecationWarning", version["deprecationWarning"],
                                           "can only be set for deprecated versions"))
        own_subresources = (subresources if subresources is not _NOT_HOISTED else version.get("subresources")) or {}
        if schema is _NOT_HOISTED:
            problems += _validation(version.get("schema"), "status" in own_subresources, f"{path}.schema")
        if subresources is _NOT_HOISTED:
            problems += _subresources(version.get("subresources"), f"{path}.subresources")
        if columns is _NOT_HOISTED:
            for j, col in enumerate(version.get("additionalPrinterColumns") or []):
                problems += _column(col, f"{path}.additionalPrinterColumns[{j}]")

    if not unique:
        problems.append(errors.invalid("spec.versions", _shallow(versions), "must contain unique version names"))
    if storage_count != 1:
        problems.append(errors.invalid("spec.versions", _shallow(versions), "must have exactly one version marked "
                                                                            "as storage version"))
    names = spec.get("names") or {}
    for field in ("plural", "singular", "kind", "listKind"):
        if not names.get(field):
            problems.append(errors.required(f"spec.names.{field}"))
    problems += _names(names, "spec.names")
    if schema is not _NOT_HOISTED:
        problems += _validation(schema, any_status, "spec.validation")
    if subresources is not _NOT_HOISTED:
        problems += _subresources(subresources, "spec.subresources")
    if columns is not _NOT_HOISTED:
        for j, col in enumerate(columns or []):
            problems += _column(col, f"spec.additionalPrinterColumns[{j}]")
    problems += _conversion(spec.get("conversion"))
    return problems


def _shallow(versions: list[dict]) -> list[dict]:
    """Versions as an error shows them: their own fields (Go prints the nested schemas as pointers)."""
    return [{k: v for k, v in version.items() if not isinstance(v, (dict, list))} for version in versions]


def _immutable(spec: dict, old: dict) -> list[FieldError]:
    old_spec = old.get("spec") or {}
    problems = []
    established = any(c.get("type") == "Established" and c.get("status") == "True"
                      for c in (old.get("status") or {}).get("conditions") or [])
    checks = [("spec.scope", ("scope",)), ("spec.names.kind", ("names", "kind"))] if established else []
    checks += [("spec.group", ("group",)), ("spec.names.plural", ("names", "plural"))]
    for path, keys in checks:
        new_value, old_value = spec, old_spec
        for key in keys:
            new_value = (new_value or {}).get(key)
            old_value = (old_value or {}).get(key)
        if new_value != old_value:
            problems.append(errors.invalid(path, new_value, "field is immutable"))
    return problems


def _stored_versions(stored: list[str], versions: list[dict]) -> list[FieldError]:
    if not stored:
        return [errors.invalid("status.storedVersions", stored, "must have at least one stored version")]
    problems = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name")
        if version.get("storage") and name not in remaining:
            problems.append(errors.invalid("status.storedVersions", stored, f"must have the storage version {name}"))
        remaining.pop(name, None)
    for name, i in remaining.items():
        problems.append(errors.invalid(f"status.storedVersions[{i}]", name, "must appear in spec.versions"))
    return problems


def _api_approval(crd: dict, old: dict | None) -> list[FieldError]:
    group = (crd.get("spec") or {}).get("group") or ""
    if not (group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))):
        return []
    state, reason = _approval((crd.get("metadata") or {}).get("annotations") or {})
    if old is not None and _approval((old.get("metadata") or {}).get("annotations") or {})[0] == state:
        return []
    path = f"metadata.annotations[{APPROVAL_ANNOTATION}]"
    if state == "missing":
        return [errors.required(path, reason)]
    if state == "invalid":
        return [errors.invalid(path, crd["metadata"]["annotations"][APPROVAL_ANNOTATION], reason)]
    return []


def _approval(annotations: dict) -> tuple[str, str]:
    value = annotations.get(APPROVAL_ANNOTATION) or ""
    if not value:
        return "missing", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", see '
                           "https://github.com/kubernetes/enhancements/pull/1111")
    if value.startswith("unapproved"):
        return "bypassed", ""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s]+", value):
        return "approved", ""
    return "invalid", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}" with either a URL '
                       'or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111')


def _conversion(conversion: dict | None) -> list[FieldError]:
    if not conversion:
        return []
    strategy = conversion.get("strategy") or ""
    if not strategy:
        return [errors.required("spec.conversion.strategy")]
    if strategy not in ("None", "Webhook"):
        return [errors.not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"])]
    webhook = conversion.get("webhook")
    if strategy == "Webhook":
        if not (webhook or {}).get("clientConfig"):
            return [errors.required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook")]
        return []
    if webhook:
        return [errors.forbidden("spec.conversion.webhookClientConfig",
                                 "should not be set when strategy is not set to Webhook")]
    return []


# ---- subresources and printer columns ------------------------------------------------------------
def _subresources(subresources: dict | None, path: str) -> list[FieldError]:
    scale = (subresources or {}).get("scale")
    if scale is None:
        return []
    problems = []
    for field, prefix, where in (("specReplicasPath", (".spec.",), ".spec"),
                                 ("statusReplicasPath", (".status.",), ".status")):
        value = scale.get(field) or ""
        if not value:
            problems.append(errors.required(f"{path}.scale.{field}"))
        elif _json_path_errors(value, f"{path}.scale.{field}"):
            problems += _json_path_errors(value, f"{path}.scale.{field}")
        elif not value.startswith(prefix):
            problems.append(errors.invalid(f"{path}.scale.{field}", value, f"should be a json path under {where}"))
    selector = scale.get("labelSelectorPath") or ""
    if selector:
        if _json_path_errors(selector, f"{path}.scale.labelSelectorPath"):
            problems += _json_path_errors(selector, f"{path}.scale.labelSelectorPath")
        elif not selector.startswith((".spec.", ".status.")):
            problems.append(errors.invalid(f"{path}.scale.labelSelectorPath", selector,
                                           "should be a json path under either .spec or .status"))
    return problems


def _json_path_errors(value: str, path: str) -> list[FieldError]:
    if not value:
        return [errors.invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [errors.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column(col: dict, path: str) -> list[FieldError]:
    problems = []
    if not col.get("name"):
        problems.append(errors.required(f"{path}.name"))
    kind = col.get("type") or ""
    if not kind:
        problems.append(errors.required(f"{path}.type", "must be one of " + ",".join(_COLUMN_TYPES)))
    elif kind not in _COLUMN_TYPES:
        problems.append(errors.invalid(f"{path}.type", kind, "must be one of " + ",".join(_COLUMN_TYPES)))
    fmt = col.get("format") or ""
    if fmt and fmt not in _COLUMN_FORMATS:
        problems.append(errors.invalid(f"{path}.format", fmt, "must be one of " + ",".join(_COLUMN_FORMATS)))
    json_path = col.get("jsonPath") or ""
    if not json_path:
        problems.append(errors.required(f"{path}.JSONPath"))
    else:
        problems += _json_path_errors(json_path, f"{path}.JSONPath")
    return problems


# ---- schemas ------------------------------------------------------------------------------------------
def _validation(validation: dict | None, status_enabled: bool, path: str) -> list[FieldError]:
    schema = (validation or {}).get("openAPIV3Schema")
    if not schema:
        return []
    path = f"{path}.openAPIV3Schema"
    problems: list[FieldError] = []
    if status_enabled:
        if schema.get("type", "object") != "object":
            problems.append(errors.invalid(f"{path}.type", schema["type"], 'only "object" is allowed as the type at '
                                           "the root of the schema if the status subresource is enabled"))
        elif any(key not in _ROOT_FIELDS_WITH_STATUS for key, value in schema.items() if value not in (None, "", False)):
            allowed = " ".join(dict.fromkeys(_ROOT_FIELDS_WITH_STATUS.values()))
            problems.append(errors.invalid(path, schema, f"only [{allowed}] fields are allowed at the root of the "
                                                         "schema if the status subresource is enabled"))
    if schema.get("nullable"):
        problems.append(errors.forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
    structural = sorted(_structural(schema, "root", path), key=str)
    return problems + structural + _openapi(schema, path, root=True, meta_defaults=None)


def _structural(s: dict, level: str, path: str, embedded_root: bool = False) -> list[FieldError]:
    """Structural schema invariants (apiextensions' ValidateStructural)."""
    problems: list[FieldError] = []
    if s.get("type") == "array" and "items" not in s:
        problems.append(errors.required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        problems += _structural(s["items"], "item", f"{path}.items")
    for key, sub in (s.get("properties") or {}).items():
        if isinstance(sub, dict):
            problems += _structural(sub, "field", f"{path}.properties[{key}]")
    extra = s.get("additionalProperties")
    if extra is not None:
        if level == "root":
            problems.append(errors.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(extra, dict):
            problems += _structural(extra, "field", f"{path}.additionalProperties")
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        problems.append(errors.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True,
                                       "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        problems.append(errors.invalid(f"{path}.x-kubernetes-embedded-resource", True,
                                       "must be false if x-kubernetes-int-or-string is true"))
    all_of = s.get("allOf") or []
    problems += _value_validation(s, path, s.get("anyOf") == _INT_OR_STRING_ANY_OF,
                                  bool(all_of) and isinstance(all_of[0], dict)
                                  and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF)
    kind = s.get("type") or ""
    if embedded and kind != "object":
        if kind:
            problems.append(errors.invalid(f"{path}.type", kind, "must be object if x-kubernetes-embedded-resource "
                                                                 "is true"))
        else:
            problems.append(errors.required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
    elif not kind and not int_or_string and not preserve:
        detail = {"root": "must not be empty at the root", "item": "must not be empty for specified array items",
                  "field": "must not be empty for specified object fields"}[level]
        problems.append(errors.required(f"{path}.type", detail))
    if embedded and extra is not None:
        problems.append(errors.forbidden(f"{path}.additionalProperties",
                                         "must not be used if x-kubernetes-embedded-resource is set"))
    if level == "root" and kind and kind != "object":
        problems.append(errors.invalid(f"{path}.type", kind, "must be object at the root"))
    props = s.get("properties") or {}
    check_meta = level == "root" or embedded
    for field in ("kind", "apiVersion"):
        if check_meta and isinstance(props.get(field), dict) and props[field].get("type") != "string":
            problems.append(errors.invalid(f"{path}.properties[{field}].type", props[field].get("type", ""),
                                           "must be string"))
    meta = props.get("metadata")
    if isinstance(meta, dict):
        meta_path = f"{path}.properties[metadata]"
        if check_meta and meta.get("type") != "object":
            problems.append(errors.invalid(f"{meta_path}.type", meta.get("type", ""), "must be object"))
        if level == "root":
            rest = {k: v for k, v in meta.items() if k not in ("type", "default")}
            inner = set((rest.get("properties") or {}))
            if inner and inner <= {"name", "generateName"}:
                rest.pop("properties")
            if rest:
                problems.append(errors.forbidden(meta_path, "must not specify anything other than name and "
                                                            "generateName, but metadata is implicitly specified"))
    if embedded and not preserve and not props:
        problems.append(errors.required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource "
                                                              "is true without x-kubernetes-preserve-unknown-fields"))
    return problems


def _value_validation(s: dict, path: str, skip_any_of: bool, skip_first_all_of_any_of: bool) -> list[FieldError]:
    """Checks of allOf/anyOf/oneOf/not; the int-or-string anyOf patterns are the allowed exceptions."""
    problems: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or []):
            problems += _nested(sub, f"{path}.anyOf[{i}]", False)
    for i, sub in enumerate(s.get("allOf") or []):
        problems += _nested(sub, f"{path}.allOf[{i}]", skip_first_all_of_any_of and i == 0)
    for i, sub in enumerate(s.get("oneOf") or []):
        problems += _nested(sub, f"{path}.oneOf[{i}]", False)
    if isinstance(s.get("not"), dict):
        problems += _nested(s["not"], f"{path}.not", False)
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(errors.invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but "
                                                                        f"isn't: {exc}"))
    return problems


def _nested(v: dict, path: str, skip_any_of: bool) -> list[FieldError]:
    if not isinstance(v, dict):
        return []
    problems = _value_validation(v, path, skip_any_of, False)
    if isinstance(v.get("items"), dict):
        problems += _nested(v["items"], f"{path}.items", False)
    for key, sub in (v.get("properties") or {}).items():
        problems += _nested(sub, f"{path}.properties[{key}]", False)
    for key, detail in _FORBIDDEN_NESTED:
        if v.get(key) not in (None, "", False, [], {}):
            problems.append(errors.forbidden(f"{path}.{key}", detail))
    if "metadata" in (v.get("properties") or {}):
        problems.append(errors.forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
    return problems


def _openapi(s: dict, path: str, *, root: bool, meta_defaults: str | None,
             inside_meta: bool = False) -> list[FieldError]:
    """The OpenAPI checks apiextensions makes on every schema node (ValidateCustomResourceDefinitionOpenAPISchema)."""
    problems: list[FieldError] = []
    kind = s.get("type")
    if kind and kind not in _SCHEMA_TYPES:
        problems.append(errors.not_supported(f"{path}.type", kind, _SCHEMA_TYPES))
    if "default" in s and meta_defaults is not None:
        problems.append(errors.forbidden(f"{path}.default", f"must not be set {meta_defaults}"))
    for key, what in (("id", "id"), ("additionalItems", "additionalItems"), ("patternProperties", "patternProperties"),
                      ("definitions", "definitions"), ("dependencies", "dependencies"), ("$ref", "$ref")):
        if s.get(key):
            problems.append(errors.forbidden(f"{path}.{key}", f"{what} is not supported"))
    if kind == "null":
        problems.append(errors.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list):
        problems.append(errors.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if inside_meta and s.get("x-kubernetes-embedded-resource"):
        problems.append(errors.forbidden(f"{path}.x-kubernetes-embedded-resource",
                                         "must not be used inside of resource meta"))
    if s.get("uniqueItems"):
        problems.append(errors.forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime "
                                                                "complexity becomes quadratic"))
    extra = s.get("additionalProperties")
    if extra is not None and s.get("properties") and (extra is False or isinstance(extra, dict)):
        problems.append(errors.forbidden(f"{path}.additionalProperties",
                                         "additionalProperties and properties are mutual exclusive"))
    if isinstance(extra, dict):
        sub_defaults = "inside additionalProperties applying to object metadata" if inside_meta else meta_defaults
        problems += _openapi(extra, f"{path}.additionalProperties", root=False, meta_defaults=sub_defaults,
                             inside_meta=inside_meta)
    for key in sorted(s.get("properties") or {}):
        sub = s["properties"][key]
        if not isinstance(sub, dict):
            continue
        meta = (root or bool(s.get("x-kubernetes-embedded-resource"))) and key in ("metadata", "kind", "apiVersion")
        defaults = f"in top-level {key}" if meta and root else meta_defaults
        problems += _openapi(sub, f"{path}.properties[{key}]", root=False, meta_defaults=defaults,
                             inside_meta=inside_meta or meta)
    if isinstance(s.get("not"), dict):
        problems += _openapi(s["not"], f"{path}.not", root=False, meta_defaults=meta_defaults, inside_meta=inside_meta)
    for combinator in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(s.get(combinator) or []):
            if isinstance(sub, dict):
                problems += _openapi(sub, f"{path}.{combinator}[{i}]", root=False, meta_defaults=meta_defaults,
                                     inside_meta=inside_meta)
    if isinstance(s.get("items"), dict):
        problems += _openapi(s["items"], f"{path}.items", root=False, meta_defaults=meta_defaults,
                             inside_meta=inside_meta)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        problems.append(errors.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or "
                                                                                             "undefined"))
    problems += _map_and_list_types(s, path)
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        if not str(rule.get("rule") or "").strip():
            problems.append(errors.required(f"{path}.x-kubernetes-validations[{i}].rule", "rule is not specified"))
    return problems


def _map_and_list_types(s: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    kind = s.get("type") or ""
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and kind != "object":
        problems.append(errors.invalid(f"{path}.type", kind, "must be object if x-kubernetes-map-type is specified")
                        if kind else errors.required(f"{path}.type", "must be object if x-kubernetes-map-type is "
                                                                     "specified"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        problems.append(errors.not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    list_type = s.get("x-kubernetes-list-type")
    if list_type is not None and kind != "array":
        problems.append(errors.invalid(f"{path}.type", kind, "must be array if x-kubernetes-list-type is specified")
                        if kind else errors.required(f"{path}.type", "must be array if x-kubernetes-list-type is "
                                                                     "specified"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        problems.append(errors.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys:
        if list_type is None:
            problems.append(errors.required(f"{path}.x-kubernetes-list-type",
                                            "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            problems.append(errors.invalid(f"{path}.x-kubernetes-list-type", list_type,
                                           "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        items = s.get("items")
        if not keys:
            problems.append(errors.required(f"{path}.x-kubernetes-list-map-keys",
                                            "must not be empty if x-kubernetes-list-type is map"))
        if items is None:
            problems.append(errors.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif isinstance(items, dict) and items.get("type") != "object":
            problems.append(errors.invalid(f"{path}.items.type", items.get("type", ""),
                                           "must be object if parent array's x-kubernetes-list-type is map"))
        elif isinstance(items, dict):
            for key in keys:
                if key not in (items.get("properties") or {}):
                    problems.append(errors.invalid(f"{path}.x-kubernetes-list-map-keys", keys,
                                                   "entries must all be names of item properties"))
    return problems
