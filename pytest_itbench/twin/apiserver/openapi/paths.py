"""The ``paths`` of an OpenAPI v3 group-version document: one operation per verb a resource serves.

kubectl reads these operations in three places: ``explain`` finds a
resource's kind through the ``x-kubernetes-group-version-kind`` of its list
or get operation; field validation is switched to the server
(``fieldValidation=Strict``) when the kind's PATCH operation takes a
``fieldValidation`` query parameter; and client-side apply computes a
strategic merge patch from the schemas only when that PATCH operation
accepts ``application/strategic-merge-patch+json`` (custom resources do
not, so kubectl sends them a JSON merge patch). Operation ids, tags,
actions and descriptions follow kube-apiserver's installer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .schemas import ref
from ..resources import Resource, Subresource

JSON, YAML, PROTOBUF = "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"
_WATCH_MEDIA = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
_BUILTIN_PATCH = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                  "application/strategic-merge-patch+json")
_CUSTOM_PATCH = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json")

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STATUS, DELETE_OPTIONS, PATCH, RESOURCE_LIST = (META + "Status", META + "DeleteOptions", META + "Patch",
                                                META + "APIResourceList")

# Query parameters of each kind of operation (metav1 ListOptions, CreateOptions, ... as v1.31 has them).
_LIST_QUERY = (("allowWatchBookmarks", "boolean"), ("continue", "string"), ("fieldSelector", "string"),
               ("labelSelector", "string"), ("limit", "integer"), ("resourceVersion", "string"),
               ("resourceVersionMatch", "string"), ("sendInitialEvents", "boolean"), ("timeoutSeconds", "integer"),
               ("watch", "boolean"))
_WRITE_QUERY = (("dryRun", "string"), ("fieldManager", "string"), ("fieldValidation", "string"))
_PATCH_QUERY = _WRITE_QUERY + (("force", "boolean"),)
_DELETE_QUERY = (("dryRun", "string"), ("gracePeriodSeconds", "integer"), ("orphanDependents", "boolean"),
                 ("propagationPolicy", "string"))
_DELETE_COLLECTION_QUERY = tuple(sorted(
    _DELETE_QUERY + tuple(p for p in _LIST_QUERY if p[0] not in ("allowWatchBookmarks", "watch"))))
_LOG_QUERY = (("container", "string"), ("follow", "boolean"), ("insecureSkipTLSVerifyBackend", "boolean"),
              ("limitBytes", "integer"), ("previous", "boolean"), ("sinceSeconds", "integer"),
              ("tailLines", "integer"), ("timestamps", "boolean"))
_EXEC_QUERY = (("command", "string"), ("container", "string"), ("stderr", "boolean"), ("stdin", "boolean"),
               ("stdout", "boolean"), ("tty", "boolean"))
_CONNECT_QUERY = {"exec": _EXEC_QUERY, "portforward": (("ports", "integer"),)}

# Subresources that stream text instead of returning an object.
_TEXT_SUBRESOURCES = {"log", "exec", "portforward"}

DefinitionName = Callable[[str, str, str], "str | None"]  # (group, version, kind) -> component name


@dataclass(frozen=True)
class Paths:
    paths: dict
    referenced: frozenset[str]  # component names the operations refer to


def group_version_paths(group: str, version: str, resources: list[Resource],
                        definition_name: DefinitionName) -> Paths:
    """The paths of the ``group``/``version`` document, for ``resources`` served there."""
    builder = _Builder(group, version, definition_name)
    if any(res.crd is None for res in resources):  # apiextensions publishes no discovery path for CRDs
        builder.discovery()
    for res in resources:
        builder.resource(res)
    return Paths(dict(sorted(builder.paths.items())), frozenset(builder.referenced))


class _Builder:
    def __init__(self, group: str, version: str, definition_name: DefinitionName):
        # Custom resources produce and accept fewer media types than built-in APIs; set per resource.
        self.custom = False
        self.definition_name = definition_name
        self.root = f"/apis/{group}/{version}" if group else f"/api/{version}"
        trimmed = group.removesuffix(".k8s.io") if group else "core"
        self.id_prefix = _operation_id(trimmed, True) + _operation_id(version, True)
        self.tag = f"{_operation_id(trimmed, False)}_{_operation_id(version, False)}"
        self.paths: dict[str, dict] = {}
        self.referenced: set[str] = set()

    # ---- schemas --------------------------------------------------------------------------
    def schema_for(self, group: str, version: str, kind: str) -> dict | None:
        name = self.definition_name(group, version, kind)
        if name is None:
            return None
        self.referenced.add(name)
        return ref(name)

    def meta(self, name: str) -> dict:
        self.referenced.add(name)
        return ref(name)

    # ---- operations -------------------------------------------------------------------------
    def operation(self, verb: str, rest: str, description: str, action: str, gvk: dict | None, *,
                  query=(), body: dict | None = None, body_media=None, responses: dict) -> dict:
        op: dict = {"description": description, "operationId": verb + self.id_prefix + rest}
        if query:
            op["parameters"] = [_query(name, kind) for name, kind in query]
        if body is not None:
            op["requestBody"] = {"content": {m: {"schema": body} for m in body_media}, "required": True}
        op["responses"] = responses
        op["tags"] = [self.tag]
        op["x-kubernetes-action"] = action
        if gvk is not None:
            op["x-kubernetes-group-version-kind"] = gvk
        return op

    def responses(self, schema: dict | None, codes: tuple[tuple[str, str], ...], watch: bool = False) -> dict:
        media = [JSON, YAML] if self.custom else [JSON, PROTOBUF, YAML]
        if watch and not self.custom:
            media += _WATCH_MEDIA
        out = {}
        for code, text in codes:
            entry: dict = {"description": text}
            if schema is not None:
                entry["content"] = {m: {"schema": schema} for m in sorted(media)}
            out[code] = entry
        out["401"] = {"description": "Unauthorized"}
        return out

    @property
    def write_media(self) -> tuple[str, ...]:
        return (JSON, YAML) if self.custom else ("*/*",)

    # ---- paths ------------------------------------------------------------------------------
    def discovery(self) -> None:
        op = {"description": "get available resources", "operationId": "get" + self.id_prefix + "APIResources",
              "responses": self.responses(self.meta(RESOURCE_LIST), (("200", "OK"),)), "tags": [self.tag]}
        self.paths[self.root + "/"] = {"get": op}

    def resource(self, res: Resource) -> None:
        self.custom = res.crd is not None
        kind = res.kind
        ns = "Namespaced" if res.namespaced else ""
        gvk = {"group": res.group, "kind": kind, "version": res.version}
        obj = self.schema_for(res.group, res.version, kind)
        lst = self.schema_for(res.group, res.version, res.list_kind)
        verbs = set(res.verbs)
        collection = f"{self.root}/namespaces/{{namespace}}/{res.plural}" if res.namespaced \
            else f"{self.root}/{res.plural}"
        scope_params = [_path_param("namespace")] if res.namespaced else []

        if res.namespaced and "list" in verbs:
            self.paths[f"{self.root}/{res.plural}"] = {
                "get": self.operation("list", f"{kind}ForAllNamespaces", f"list or watch objects of kind {kind}",
                                      "list", gvk, query=_LIST_QUERY,
                                      responses=self.responses(lst, (("200", "OK"),), watch=True)),
                "parameters": [_query("pretty", "string")]}

        item_ops: dict = {}
        if "list" in verbs:
            item_ops["get"] = self.operation("list", ns + kind, f"list or watch objects of kind {kind}", "list", gvk,
                                             query=_LIST_QUERY,
                                             responses=self.responses(lst, (("200", "OK"),), watch=True))
        if "create" in verbs:
            item_ops["post"] = self.operation(
                "create", ns + kind, f"create{_article(kind)}{kind}", "post", gvk, query=_WRITE_QUERY, body=obj,
                body_media=self.write_media,
                responses=self.responses(obj, (("200", "OK"), ("201", "Created"), ("202", "Accepted"))))
        if "deletecollection" in verbs:
            item_ops["delete"] = self.operation(
                "delete", f"Collection{ns}{kind}", f"delete collection of {kind}", "deletecollection", gvk,
                query=_DELETE_COLLECTION_QUERY, body=self.meta(DELETE_OPTIONS), body_media=self.write_media,
                responses=self.responses(self.meta(STATUS), (("200", "OK"),)))
        if item_ops:
            item_ops["parameters"] = scope_params + [_query("pretty", "string")]
            self.paths[collection] = item_ops

        named = collection + "/{name}"
        name_params = [_path_param("name")] + scope_params + [_query("pretty", "string")]
        ops: dict = {}
        if "get" in verbs:
            ops["get"] = self.operation("read", ns + kind, f"read the specified {kind}", "get", gvk,
                                        responses=self.responses(obj, (("200", "OK"),)))
        if "update" in verbs:
            ops["put"] = self.operation("replace", ns + kind, f"replace the specified {kind}", "put", gvk,
                                        query=_WRITE_QUERY, body=obj, body_media=self.write_media,
                                        responses=self.responses(obj, (("200", "OK"), ("201", "Created"))))
        if "patch" in verbs:
            ops["patch"] = self.patch_operation(ns + kind, f"partially update the specified {kind}", gvk, obj)
        if "delete" in verbs:
            ops["delete"] = self.operation(
                "delete", ns + kind, f"delete{_article(kind)}{kind}", "delete", gvk, query=_DELETE_QUERY,
                body=self.meta(DELETE_OPTIONS), body_media=self.write_media,
                responses=self.responses(self.meta(STATUS), (("200", "OK"), ("202", "Accepted"))))
        if ops:
            ops["parameters"] = name_params
            self.paths[named] = ops
        for sub in res.subresources:
            self.subresource(res, sub, named, name_params)

    def patch_operation(self, rest: str, description: str, gvk: dict, result: dict | None) -> dict:
        return self.operation("patch", rest, description, "patch", gvk, query=_PATCH_QUERY, body=self.meta(PATCH),
                              body_media=_CUSTOM_PATCH if self.custom else _BUILTIN_PATCH,
                              responses=self.responses(result, (("200", "OK"), ("201", "Created"))))

    def subresource(self, res: Resource, sub: Subresource, named: str, params: list) -> None:
        ns = "Namespaced" if res.namespaced else ""
        kind = res.kind
        title = sub.name[:1].upper() + sub.name[1:]
        group = res.group if sub.group is None else sub.group
        version = res.version if sub.version is None else sub.version
        gvk = {"group": group, "kind": sub.kind, "version": version}
        text = sub.name in _TEXT_SUBRESOURCES
        schema = {"type": "string"} if text else self.schema_for(group, version, sub.kind)
        rest = f"{ns}{kind}{title}"
        ops: dict = {}
        if sub.name in _CONNECT_QUERY:
            for method in ("get", "post"):
                ops[method] = self.operation(
                    "connect", f"{method.title()}{ns}{kind}{title}",
                    f"connect {method.upper()} requests to {sub.name} of {kind}", "connect", gvk,
                    query=_CONNECT_QUERY[sub.name],
                    responses=self.responses(schema, (("200", "OK"),)))
        else:
            if "get" in sub.verbs:
                ops["get"] = self.operation("read", rest, f"read {sub.name} of the specified {kind}", "get", gvk,
                                            query=_LOG_QUERY if sub.name == "log" else (),
                                            responses=self.responses(schema, (("200", "OK"),)))
            if "update" in sub.verbs:
                ops["put"] = self.operation("replace", rest, f"replace {sub.name} of the specified {kind}", "put", gvk,
                                            query=_WRITE_QUERY, body=schema, body_media=self.write_media,
                                            responses=self.responses(schema, (("200", "OK"), ("201", "Created"))))
            if "patch" in sub.verbs:
                ops["patch"] = self.patch_operation(rest, f"partially update {sub.name} of the specified {kind}", gvk,
                                                    schema)
            if "create" in sub.verbs:
                ops["post"] = self.operation(
                    "create", rest, f"create {sub.name} of{_article(kind)}{kind}", "post", gvk, query=_WRITE_QUERY,
                    body=schema, body_media=self.write_media,
                    responses=self.responses(schema, (("200", "OK"), ("201", "Created"), ("202", "Accepted"))))
        if ops:
            ops["parameters"] = params
            self.paths[f"{named}/{sub.name}"] = ops


def _query(name: str, kind: str) -> dict:
    return {"in": "query", "name": name, "schema": {"type": kind, "uniqueItems": True}}


def _path_param(name: str) -> dict:
    return {"in": "path", "name": name, "required": True, "schema": {"type": "string", "uniqueItems": True}}


def _article(noun: str) -> str:
    """The article before a kind in an operation's description, padded with spaces (" a ", " an ", " ")."""
    if noun.endswith("s") and not noun.endswith("ss"):
        return " "  # plural-looking kinds (Endpoints) take none
    return " an " if noun[:1].lower() in "aeiou" else " a "


def _operation_id(text: str, capitalize_first: bool) -> str:
    """kube-apiserver's ToValidOperationID: drop punctuation, capitalize the letter after it."""
    out = []
    capitalize = capitalize_first
    for i, ch in enumerate(text):
        if ch.isalpha() or ch == "_" or (i and ch.isdigit()):
            out.append(ch.upper() if capitalize else ch)
            capitalize = False
        else:
            capitalize = True
    return "".join(out)
