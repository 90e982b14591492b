"""CustomResourceDefinitions: serving custom resources as soon as their CRD exists, as apiextensions-apiserver does.

On a write of a CRD, admission defaults and validates it (crd_validation);
then the naming and establishing controllers' work happens at once: the
CRD's ``status.acceptedNames`` and its ``NamesAccepted``/``Established``
conditions are written, and every served version is published: a catalog
entry (so routing, legacy and aggregated discovery and OpenAPI see it), its
schema in the schema registry (pruning, strict field validation, explain)
and its printer columns. A changed CRD is republished the same way.

Custom resources are defaulted and validated against their version's schema
(cr_defaulting, cr_validation) on every create and update; the scale
subresource follows the CRD's replica and selector paths (cr_scale).

Deleting a CRD adds the ``customresourcecleanup.apiextensions.k8s.io``
finalizer and a ``Terminating`` condition; the finalizer then deletes every
custom resource and, once none is left, removes itself, which lets the CRD
go and its resources stop being served. Custom resources with finalizers of
their own keep the CRD terminating until they are gone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import orjson

from ...errors import Invalid, MethodNotAllowed, NotFound
from ...store import clone
from . import defaulting as cr_defaulting, validation as cr_validation, definition_validation as crd_validation
from .scale import CustomScale
from ..registry import Ctx, DeleteOptions
from ..resources import ALL_VERBS, Resource, Subresource
from ..tables.custom import printer_for_columns

log = logging.getLogger(__name__)

GROUP = "apiextensions.k8s.io"
FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


@dataclass(frozen=True)
class ServedVersion:
    """One served version of a CRD, as published."""

    resource: Resource
    schema: dict | None  # the version's openAPIV3Schema
    columns: tuple  # additionalPrinterColumns
    scale: dict | None  # the version's scale subresource (replica and selector paths)

    def fingerprint(self) -> bytes:
        return orjson.dumps([repr(self.resource), self.schema, self.columns, self.scale],
                            option=orjson.OPT_SORT_KEYS)


class CustomResourceDefinitions:
    def __init__(self, server, reactor, ctx: Ctx):
        self.server = server
        self.api = server.api
        self.ctx = ctx
        self.definitions = server.catalog.lookup(GROUP, "v1", "customresourcedefinitions")
        self._served: dict[str, dict[str, ServedVersion]] = {}  # CRD name -> version -> what is published
        self.scale = CustomScale(server, self.scale_paths)
        server.crds = self
        self.api.admission.append(self._admit)
        self.api.deleters[self.definitions.bucket] = self._delete
        reactor.register("customresourcedefinitions", self._react)

    # ---- lookups -----------------------------------------------------------------------------
    def served_version(self, res: Resource, version: str | None = None) -> ServedVersion | None:
        return self._served.get(res.crd or "", {}).get(version or res.version)

    def scale_paths(self, res: Resource) -> dict | None:
        served = self.served_version(res)
        return served.scale if served else None

    def _crd(self, name: str) -> dict | None:
        return self.api.store.get(self.definitions.bucket, "", name)

    # ---- admission ------------------------------------------------------------------------------
    def _admit(self, op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if op not in ("create", "update"):
            return
        if res.bucket == self.definitions.bucket:
            self._admit_definition(op, obj, old)
        elif res.crd is not None:
            self._admit_custom_resource(op, res, obj)

    def _admit_definition(self, op: str, crd: dict, old: dict | None) -> None:
        crd_validation.apply_defaults(crd)
        storage = crd_validation.storage_version(crd)
        if op == "create":
            # The CRD strategy starts every CRD with an empty status; the controllers fill it in.
            crd["status"] = {"acceptedNames": {"kind": "", "plural": ""},
                             "storedVersions": [storage] if storage else []}
        else:
            stored = crd.setdefault("status", {}).setdefault("storedVersions", [])
            if storage and storage not in stored:
                stored.append(storage)
        problems = crd_validation.validate(crd, old)
        if problems:
            raise Invalid("CustomResourceDefinition", GROUP, crd["metadata"].get("name", ""), problems)

    def _admit_custom_resource(self, op: str, res: Resource, obj: dict) -> None:
        crd = self._crd(res.crd or "")
        if op == "create" and crd is not None and crd["metadata"].get("deletionTimestamp"):
            raise MethodNotAllowed("create not allowed while custom resource definition is terminating")
        # Admission sees the object in its storage version, so that version's schema applies.
        version = str(obj.get("apiVersion", "")).rpartition("/")[2]
        served = self._served.get(res.crd or "", {}).get(version)
        if served is None or not served.schema:
            return
        cr_defaulting.apply_defaults(obj, served.schema)
        problems = cr_validation.validate(obj, served.schema)
        if problems:
            raise Invalid(res.kind, res.group, obj["metadata"].get("name", ""), problems)

    # ---- reactions ---------------------------------------------------------------------------------
    def _react(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        if res.bucket == self.definitions.bucket:
            name = obj["metadata"]["name"]
            if op == "delete":
                self._withdraw(name)
            elif obj["metadata"].get("deletionTimestamp"):
                self._finalize(obj)
            else:
                self._publish(self._accept_names(obj))
        elif res.crd is not None and op == "delete":
            crd = self._crd(res.crd)
            if crd is not None and crd["metadata"].get("deletionTimestamp"):
                self._finalize(crd)

    def _accept_names(self, crd: dict) -> dict:
        """The naming and establishing controllers: accepted names and conditions, written when they change."""
        status = dict(crd.get("status") or {})
        names = (crd.get("spec") or {}).get("names") or {}
        conflict = self._name_conflict(crd)
        conditions = [dict(c) for c in status.get("conditions") or []]
        if conflict is None:
            status["acceptedNames"] = {k: v for k, v in names.items() if v not in (None, "", [])}
            _set_condition(conditions, "NamesAccepted", "True", "NoConflicts", "no conflicts found", self._now())
            _set_condition(conditions, "Established", "True", "InitialNamesAccepted",
                           "the initial names have been accepted", self._now())
        else:
            reason, message = conflict
            status.setdefault("acceptedNames", {"kind": "", "plural": ""})
            _set_condition(conditions, "NamesAccepted", "False", reason, message, self._now())
            if not _condition_true(conditions, "Established"):
                _set_condition(conditions, "Established", "False", "NotAccepted", "not all names are accepted",
                               self._now())
        status["conditions"] = conditions
        if status == crd.get("status"):
            return crd
        updated = clone(crd)
        updated["status"] = status
        return self.api.update(self.definitions, None, crd["metadata"]["name"], updated, self.ctx,
                               subresource="status", decoded=True)

    def _name_conflict(self, crd: dict) -> tuple[str, str] | None:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        resources: set[str] = set()
        kinds: set[str] = set()
        for other in self.api.store.list(self.definitions.bucket)[0]:
            if other["metadata"]["name"] == crd["metadata"]["name"] or \
                    (other.get("spec") or {}).get("group") != spec.get("group"):
                continue
            accepted = (other.get("status") or {}).get("acceptedNames") or {}
            resources.update(n for n in [accepted.get("plural"), accepted.get("singular"),
                                         *(accepted.get("shortNames") or [])] if n)
            kinds.update(n for n in (accepted.get("kind"), accepted.get("listKind")) if n)
        checks = [("PluralConflict", names.get("plural"), resources),
                  ("SingularConflict", names.get("singular"), resources),
                  *(("ShortNamesConflict", short, resources) for short in names.get("shortNames") or []),
                  ("KindConflict", names.get("kind"), kinds), ("ListKindConflict", names.get("listKind"), kinds)]
        for reason, value, taken in checks:
            if value and value in taken:
                return reason, f'"{value}" is already in use'
        return None

    # ---- publishing ------------------------------------------------------------------------------------
    def _publish(self, crd: dict) -> None:
        name = crd["metadata"]["name"]
        conditions = (crd.get("status") or {}).get("conditions") or []
        wanted = self._versions(crd) if _condition_true(conditions, "Established") else {}
        current = self._served.get(name, {})
        if {v: s.fingerprint() for v, s in wanted.items()} == {v: s.fingerprint() for v, s in current.items()}:
            return
        catalog, schemas, printers = self.server.catalog, self.server.schemas, self.server.printers
        for served in wanted.values():
            res = served.resource
            if served.schema:
                schemas.set_custom(res.group, res.version, res.kind, served.schema)
            printer = printer_for_columns(list(served.columns))
            if printer is None:
                printers.pop((res.group, res.version, res.kind), None)
            else:
                printers[(res.group, res.version, res.kind)] = printer
        catalog.remove_where(lambda r: r.crd == name)
        catalog.add(s.resource for s in wanted.values())
        self._served[name] = wanted
        for version, served in current.items():
            res = served.resource
            if wanted.get(version) is None or wanted[version].resource.kind != res.kind:
                schemas.drop_custom(res.group, res.version, res.kind)
                printers.pop((res.group, res.version, res.kind), None)

    def _versions(self, crd: dict) -> dict[str, ServedVersion]:
        spec = crd["spec"]
        names = crd["status"]["acceptedNames"]
        group, plural, kind = spec["group"], names["plural"], names["kind"]
        storage = crd_validation.storage_version(crd)
        out = {}
        for version in spec.get("versions") or []:
            if not version.get("served"):
                continue
            sub = version.get("subresources") or {}
            subresources = []
            if "scale" in sub:
                subresources.append(Subresource("scale", "Scale", ("get", "patch", "update"), "autoscaling", "v1"))
            if "status" in sub:
                subresources.append(Subresource("status", kind, ("get", "patch", "update")))
            selectable = tuple(f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or []
                               if f.get("jsonPath"))
            res = Resource(group, version["name"], plural, kind, spec.get("scope") == "Namespaced",
                           short_names=tuple(names.get("shortNames") or ()),
                           categories=tuple(names.get("categories") or ()), verbs=ALL_VERBS,
                           subresources=tuple(subresources), bucket=f"{plural}.{group}",
                           storage_version=f"{group}/{storage}", has_generation=True, field_selectors=selectable,
                           crd=crd["metadata"]["name"])
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            out[version["name"]] = ServedVersion(res, schema, tuple(version.get("additionalPrinterColumns") or ()),
                                                 sub.get("scale"))
        return out

    def _withdraw(self, name: str) -> None:
        current = self._served.pop(name, {})
        self.server.catalog.remove_where(lambda r: r.crd == name)
        for served in current.values():
            res = served.resource
            self.server.schemas.drop_custom(res.group, res.version, res.kind)
            self.server.printers.pop((res.group, res.version, res.kind), None)

    # ---- deletion ----------------------------------------------------------------------------------------
    def _delete(self, res: Resource, crd: dict, opts: DeleteOptions, ctx: Ctx) -> dict | None:
        """First deletion of a CRD: mark it, add the cleanup finalizer; the finalizer does the rest."""
        if crd["metadata"].get("deletionTimestamp"):
            return None
        marked = clone(crd)
        meta = marked["metadata"]
        meta["deletionTimestamp"] = self._now()
        if FINALIZER not in (meta.get("finalizers") or []):
            meta["finalizers"] = list(meta.get("finalizers") or []) + [FINALIZER]
        conditions = marked.setdefault("status", {}).setdefault("conditions", [])
        _set_condition(conditions, "Terminating", "True", "InstanceDeletionPending",
                       "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                       self._now())
        if opts.dry_run or ctx.dry_run:
            return marked
        stored = self.api.store.update(res.bucket, marked, check_rv=False)
        self.api._after_write("update", res, stored, crd)
        return self.api.store.get(res.bucket, "", meta["name"]) or stored

    def _finalize(self, crd: dict) -> None:
        """The CRD finalizer: delete every custom resource, then let the CRD go."""
        name = crd["metadata"]["name"]
        if FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        served = next(iter(self._served.get(name, {}).values()), None)
        if served is not None:
            storage = self.server.catalog.storage_resource(served.resource.bucket) or served.resource
            for item in self.api.store.list(storage.bucket)[0]:
                meta = item["metadata"]
                if meta.get("deletionTimestamp"):
                    continue
                try:
                    self.api.delete(storage, meta.get("namespace"), meta["name"], DeleteOptions(), self.ctx)
                except NotFound:
                    continue
            if self.api.store.count(storage.bucket):
                self._mark_terminating(crd, "InstanceDeletionInProgress", "CustomResource deletion is in progress")
                return
        current = self._crd(name)
        if current is None:
            return
        released = clone(current)
        released["metadata"]["finalizers"] = [f for f in released["metadata"].get("finalizers") or []
                                              if f != FINALIZER]
        self.api.update(self.definitions, None, name, released, self.ctx, decoded=True)

    def _mark_terminating(self, crd: dict, reason: str, message: str) -> None:
        conditions = [dict(c) for c in (crd.get("status") or {}).get("conditions") or []]
        _set_condition(conditions, "Terminating", "True", reason, message, self._now())
        if conditions == (crd.get("status") or {}).get("conditions"):
            return
        updated = clone(crd)
        updated.setdefault("status", {})["conditions"] = conditions
        self.api.update(self.definitions, None, crd["metadata"]["name"], updated, self.ctx, subresource="status",
                        decoded=True)

    def _now(self) -> str:
        return self.api.clock.timestamp()


def _condition_true(conditions: list[dict], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _set_condition(conditions: list[dict], kind: str, status: str, reason: str, message: str, now: str) -> None:
    """Set a condition in place; its lastTransitionTime moves only when its status does."""
    for i, cond in enumerate(conditions):
        if cond.get("type") == kind:
            moved = cond.get("status") != status or not cond.get("lastTransitionTime")
            conditions[i] = {"type": kind, "status": status,
                             "lastTransitionTime": now if moved else cond["lastTransitionTime"],
                             "reason": reason, "message": message}
            return
    conditions.append({"type": kind, "status": status, "lastTransitionTime": now, "reason": reason,
                       "message": message})
