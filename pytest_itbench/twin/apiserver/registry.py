"""The resource operations of the API server, independent of HTTP.

``ResourceAPI`` carries out get, list, create, update, patch, apply and
delete as kube-apiserver's generic registry does: decode and prune, convert
to the storage version, apply the resource's strategy, default, admit,
validate, record managed fields, then write to the store. The HTTP layer
(handlers.py) parses requests into calls on it; controllers inside the twin
may call it too, so their writes take the same path as a client's.
"""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass, field
from typing import Callable

import orjson

from .. import errors
from ..clock import SimClock
from ..errors import BadRequest, FieldError, Invalid, MethodNotAllowed, NotFound, StatusError
from ..schema import SchemaRegistry
from ..selectors import FieldSelector, LabelSelector
from ..store import Store, clone
from . import conversion, decoding, defaulting, gojson, strategies, validation
from .patching import fieldmanager, patch
from .access.authn import UserInfo
from .resources import Catalog, Resource

log = logging.getLogger(__name__)

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphabet


@dataclass
class Ctx:
    """What a request brings besides its body."""

    user: UserInfo
    dry_run: bool = False
    field_manager: str | None = None
    field_validation: str = "Warn"
    user_agent: str = ""
    warnings: list[str] = field(default_factory=list)
    # The twin's own components write objects they read from the store and changed: already decoded, so
    # the Go decoder's checks (types, unknown fields, canonical quantities) would find nothing to say.
    trusted: bool = False

    def manager(self, default: str = "unknown") -> str:
        if self.field_manager:
            return self.field_manager
        if self.user_agent:
            return self.user_agent.split("/")[0] or default
        return default


@dataclass
class DeleteOptions:
    propagation: str | None = None  # Background, Foreground, Orphan
    grace_period: int | None = None
    uid: str | None = None
    resource_version: str | None = None
    dry_run: bool = False
    orphan_dependents: bool | None = None  # the deprecated field, as sent: False asks for 202 while pending


class ResourceAPI:
    def __init__(self, store: Store, catalog: Catalog, schemas: SchemaRegistry, clock: SimClock):
        self.store = store
        self.catalog = catalog
        self.schemas = schemas
        self.clock = clock
        self.cluster_ips = strategies.IPAllocator()
        self.node_ports = strategies.PortAllocator()
        # Hooks other parts of the twin register (admission plugins, lifecycle reactions).
        self.admission: list[Callable[[str, Resource, dict, dict | None, Ctx], None]] = []
        self.after_write: list[Callable[[str, Resource, dict, dict | None], None]] = []
        self.deleters: dict[str, Callable[[Resource, dict, DeleteOptions, Ctx], dict | None]] = {}

    # ---- helpers ---------------------------------------------------------------------
    def node_for(self, res: Resource):
        """Schema of a resource in its served version (``None`` for kinds without one)."""
        return self.schemas.for_kind(res.group, res.version, res.kind)

    def storage_of(self, res: Resource) -> Resource:
        return self.catalog.storage_resource(res.bucket) or res

    def to_version(self, obj: dict, res: Resource) -> dict:
        return conversion.convert(obj, res.api_version)

    def _check_namespace(self, res: Resource, namespace: str | None) -> None:
        if res.namespaced and not namespace:
            raise BadRequest("the server could not find the requested resource")

    # ---- reads -----------------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> dict:
        """The object in ``res``'s version: a copy the caller may change."""
        obj = self.store.get(res.bucket, namespace if res.namespaced else "", name)
        if obj is None:
            raise NotFound(res.group_resource, name)
        return clone(self.to_version(obj, res))

    def list(self, res: Resource, namespace: str | None, label_selector: str | None = None,
             field_selector: str | None = None, limit: int | None = None,
             continue_token: str | None = None) -> tuple[list[dict], str, str | None, int | None]:
        """Items (read-only: they may be the stored objects), list resourceVersion, continue token and
        remaining count."""
        labels = LabelSelector.parse(label_selector)
        fields = FieldSelector.parse(field_selector)
        getters = res.field_getters()
        fields.check_supported(getters, res.kind, res.version)
        items, rv = self.store.list(res.bucket, namespace if res.namespaced else None)
        start_key = None
        if continue_token:
            start_key, rv = _decode_continue(continue_token)
        out = []
        remaining = 0
        next_token = None
        for obj in items:
            meta = obj["metadata"]
            key = f"{meta.get('namespace', '')}/{meta['name']}"
            if start_key is not None and key <= start_key:
                continue
            if not labels.empty and not labels.matches(meta.get("labels")):
                continue
            if not fields.empty:
                view = self.to_version(obj, res)
                if not fields.matches(view, getters):
                    continue
            if limit and len(out) >= limit:
                remaining += 1
                continue
            out.append(obj)
        if limit and remaining:
            last = out[-1]["metadata"]
            next_token = _encode_continue(f"{last.get('namespace', '')}/{last['name']}", rv)
        return [self.to_version(o, res) for o in out], str(rv), next_token, (remaining or None)

    # ---- create ---------------------------------------------------------------------------
    def decode_body(self, res: Resource, obj, ctx: Ctx, namespace: str | None, *, name: str | None = None,
                    duplicate_fields: list[str] | None = None) -> dict:
        """Check the body is a ``res`` object, prune unknown fields, apply field validation."""
        if not isinstance(obj, dict):
            raise BadRequest(f"{res.kind} in version \"{res.version}\" cannot be handled as a {res.kind}: "
                             f"json: cannot unmarshal {gojson.json_kind(obj)} into Go value of type "
                             f"struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                             f"\"json:\\\"kind,omitempty\\\"\" }}")
        # A typed endpoint decodes into its own kind: a body may leave kind and apiVersion out.
        api_version = obj.get("apiVersion") or res.api_version
        kind = obj.get("kind") or res.kind
        if api_version != res.api_version:
            raise BadRequest(f"the API version in the data ({api_version}) does not match the expected API version "
                             f"({res.api_version})")
        if kind != res.kind:
            raise BadRequest(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                             f"the kind in the data ({kind}) does not match the expected kind ({res.kind})")
        obj["kind"] = res.kind
        obj["apiVersion"] = res.api_version
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise BadRequest(f"{res.kind} in version \"{res.version}\" cannot be handled as a {res.kind}: "
                             f"json: cannot unmarshal {gojson.json_kind(meta)} into Go struct field "
                             f"{res.kind}.metadata of type v1.ObjectMeta")
        if res.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and namespace and body_ns != namespace:
                raise BadRequest("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
            if namespace:
                meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if name is not None and meta.get("name") and meta["name"] != name:
            raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
        if name is not None and not meta.get("name"):
            meta["name"] = name
        if not ctx.trusted:
            ctx.warnings.extend(decoding.check_fields(obj, self.node_for(res), res, ctx.field_validation,
                                                      duplicate_fields or []))
        return obj

    def create(self, res: Resource, namespace: str | None, obj: dict, ctx: Ctx, *, decoded: bool = False,
               managed_done: bool = False) -> dict:
        """Create an object. ``managed_done``: a server-side apply already wrote its managedFields."""
        self._check_namespace(res, namespace)
        if not decoded:
            # Internal callers keep their dicts: defaulting and admission write into the body.
            obj = self.decode_body(res, clone(obj), ctx, namespace)
        meta = obj["metadata"]
        if meta.get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = self._generate_name(meta["generateName"])
            else:
                raise Invalid(res.kind, res.group, "", [errors.required(
                    "metadata.name", "name or generateName is required")])
        storage = self.storage_of(res)
        obj = conversion.convert(obj, storage.storage_version)
        meta = obj["metadata"]
        for key in ("creationTimestamp", "selfLink"):
            meta.pop(key, None)
        meta["uid"] = self.store.new_uid()  # before the strategy, as upstream: a Job's selector names it
        with self.store.lock:
            strategies.prepare_for_create(res, obj, self.clock.timestamp())
            defaulting.apply_defaults(storage, obj)
            self._admit("create", storage, obj, None, ctx)
            self._validate(storage, obj, None)
            if not managed_done:
                fieldmanager.on_update(self, storage, None, obj, ctx.manager(), "", self.clock.timestamp())
            if ctx.dry_run:
                meta["creationTimestamp"] = self.clock.timestamp()
                return self.to_version(obj, res)
            stored = self.store.create(storage.bucket, obj)
            self._after_write("create", storage, stored, None)
        return self.to_version(stored, res)

    def _generate_name(self, prefix: str) -> str:
        prefix = prefix[:58]
        suffix = "".join(self.store.rng.choice(_NAME_CHARS) for _ in range(5))
        return prefix + suffix

    # ---- update ---------------------------------------------------------------------------
    def update(self, res: Resource, namespace: str | None, name: str, obj: dict, ctx: Ctx, *,
               subresource: str = "", decoded: bool = False, check_rv: bool = True) -> dict:
        self._check_namespace(res, namespace)
        if not decoded:
            obj = self.decode_body(res, clone(obj), ctx, namespace, name=name)
        ns = namespace if res.namespaced else ""
        storage = self.storage_of(res)
        with self.store.lock:
            old = self.store.get(res.bucket, ns, name)
            if old is None:
                if subresource == "" and res.bucket in strategies.CREATE_ON_UPDATE:
                    return self.create(res, namespace, obj, ctx, decoded=True)
                raise NotFound(res.group_resource, name)
            new = conversion.convert(obj, storage.storage_version)
            if new is obj:
                new = dict(obj)
            new["metadata"] = dict(new["metadata"])
            return self._write_update(res, storage, old, new, ctx, subresource, check_rv)

    def _write_update(self, res: Resource, storage: Resource, old: dict, new: dict, ctx: Ctx,
                      subresource: str, check_rv: bool, managed_done: bool = False) -> dict:
        meta, old_meta = new["metadata"], old["metadata"]
        want_rv = meta.get("resourceVersion")
        if check_rv and want_rv and want_rv != old_meta["resourceVersion"]:
            raise errors.Conflict(res.group_resource, old_meta["name"])
        if not want_rv and not _allow_unconditional_update(res):
            raise Invalid(res.kind, res.group, old_meta["name"], [errors.invalid(
                "metadata.resourceVersion", "", "must be specified for an update")])
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if old_meta.get("namespace"):
            meta["namespace"] = old_meta["namespace"]
        if old_meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
            if added:
                raise Invalid(res.kind, res.group, old_meta["name"], [errors.forbidden(
                    "metadata.finalizers", f"no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {json.dumps(sorted(added))}")])
        defaulting.apply_defaults(storage, new)  # decoding defaults, before the strategy compares with old
        if subresource == "status":
            strategies.prepare_for_status_update(res, new, old)
            strategies.bump_generation(res, new, old)
        else:
            strategies.prepare_for_update(res, new, old)
        self._admit("update", storage, new, old, ctx)
        self._validate(storage, new, old, subresource)
        if not managed_done:
            fieldmanager.on_update(self, storage, old, new, ctx.manager(), subresource, self.clock.timestamp())
        if ctx.dry_run:
            return self.to_version(new, res)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") \
                and not old_meta.get("deletionGracePeriodSeconds"):
            # The last finalizer is gone: the object goes away now (a pod in its grace period waits for its kubelet).
            gone = self.store.delete(storage.bucket, old_meta.get("namespace", ""), old_meta["name"])
            self._after_write("delete", storage, gone, old)
            return self.to_version(gone, res)
        stored = self.store.update(storage.bucket, new, check_rv=False)
        if stored is not old:
            self._after_write("update", storage, stored, old)
        return self.to_version(stored, res)

    # ---- patch and apply ---------------------------------------------------------------------
    def patch(self, res: Resource, namespace: str | None, name: str, body: bytes, content_type: str, ctx: Ctx,
              *, subresource: str = "", force: bool = False) -> dict:
        self._check_namespace(res, namespace)
        ns = namespace if res.namespaced else ""
        storage = self.storage_of(res)
        with self.store.lock:
            old = self.store.get(res.bucket, ns, name)
            if content_type == patch.APPLY:
                return self._apply(res, storage, namespace, name, old, body, ctx, subresource, force)
            if old is None:
                raise NotFound(res.group_resource, name)
            current = self.to_version(old, res)
            patched = patch.apply_patch(clone(current), body, content_type, self.node_for(res),
                                        custom=res.crd is not None, kind=res.kind)
            if not isinstance(patched, dict):
                raise BadRequest("the patch produced a value that is not an object")
            # A patch that names a resourceVersion is a precondition; one that does not is unconditional.
            patched_meta = patched.get("metadata") or {}
            check_rv = patched_meta.get("resourceVersion") not in (None, current["metadata"]["resourceVersion"])
            if not check_rv:
                patched_meta["resourceVersion"] = current["metadata"]["resourceVersion"]
            patched = self.decode_body(res, patched, ctx, namespace, name=name)
            new = conversion.convert(patched, storage.storage_version)
            if new is patched:
                new = dict(patched)
            new["metadata"] = dict(new["metadata"])
            return self._write_update(res, storage, old, new, ctx, subresource, check_rv=True)

    def _apply(self, res: Resource, storage: Resource, namespace: str | None, name: str, old: dict | None,
               body: bytes, ctx: Ctx, subresource: str, force: bool) -> dict:
        if not ctx.field_manager:
            raise BadRequest("PATCH, application/apply-patch+yaml requires fieldManager to be set")
        applied = patch.parse_apply_body(body)
        applied = self.decode_body(res, applied, ctx, namespace, name=name)
        current = self.to_version(old, res) if old is not None else None
        merged = fieldmanager.apply(self, res, current, applied, ctx.field_manager, force, subresource,
                                    self.clock.timestamp())
        if old is None:
            if subresource:
                raise NotFound(res.group_resource, name)
            merged["metadata"].pop("resourceVersion", None)
            return self.create(res, namespace, merged, ctx, decoded=True, managed_done=True)
        new = conversion.convert(merged, storage.storage_version)
        if new is merged:
            new = dict(merged)
        new["metadata"] = dict(new["metadata"])
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        return self._write_update(res, storage, old, new, ctx, subresource, True, managed_done=True)

    # ---- delete ------------------------------------------------------------------------------
    def delete(self, res: Resource, namespace: str | None, name: str, opts: DeleteOptions, ctx: Ctx) -> dict:
        """Delete one object; returns the object (if it still exists or was returned) or a Status."""
        self._check_namespace(res, namespace)
        ns = namespace if res.namespaced else ""
        storage = self.storage_of(res)
        with self.store.lock:
            obj = self.store.get(res.bucket, ns, name)
            if obj is None:
                raise NotFound(res.group_resource, name)
            if opts.uid and opts.uid != obj["metadata"]["uid"]:
                raise errors.Conflict(res.group_resource, name,
                                      f"Precondition failed: UID in precondition: {opts.uid}, UID in object meta: "
                                      f"{obj['metadata']['uid']}")
            if opts.resource_version and opts.resource_version != obj["metadata"]["resourceVersion"]:
                raise errors.Conflict(res.group_resource, name,
                                      "Precondition failed: ResourceVersion in precondition: "
                                      f"{opts.resource_version}, ResourceVersion in object meta: "
                                      f"{obj['metadata']['resourceVersion']}")
            self._admit("delete", storage, obj, obj, ctx)
            custom = self.deleters.get(res.bucket)
            if custom is not None:
                result = custom(storage, obj, opts, ctx)
                if result is not None:
                    return self.to_version(result, res) if result.get("kind") != "Status" else result
            return self.delete_object(res, storage, obj, opts, ctx)

    def delete_object(self, res: Resource, storage: Resource, obj: dict, opts: DeleteOptions, ctx: Ctx) -> dict:
        """The generic deletion: finalizers and propagation policy decide between marking and removing."""
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        propagation = opts.propagation or default_propagation(res)
        if propagation == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        elif propagation == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
        if propagation != "Orphan" and "orphan" in finalizers and opts.propagation:
            finalizers.remove("orphan")
        if finalizers:
            if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []):
                return self.to_version(obj, res)  # already being deleted: nothing changes
            marked = dict(obj)
            marked["metadata"] = dict(meta, finalizers=finalizers)
            marked["metadata"].setdefault("deletionTimestamp", self.clock.timestamp())
            marked["metadata"].setdefault("deletionGracePeriodSeconds", 0)
            if marked["metadata"].get("generation") is not None:
                marked["metadata"]["generation"] = marked["metadata"]["generation"] + 1
            if opts.dry_run or ctx.dry_run:
                return self.to_version(marked, res)
            stored = self.store.update(storage.bucket, marked, check_rv=False)
            self._after_write("update", storage, stored, obj)
            return self.to_version(stored, res)
        if opts.dry_run or ctx.dry_run:
            gone = obj
        else:
            gone = self.store.delete(storage.bucket, meta.get("namespace", ""), meta["name"])
            self._after_write("delete", storage, gone, obj)
        if (res.group, res.plural) in RETURNS_DELETED_OBJECT:
            return self.to_version(gone, res)
        return success_status(res, gone)

    def delete_collection(self, res: Resource, namespace: str | None, label_selector: str | None,
                          field_selector: str | None, opts: DeleteOptions, ctx: Ctx) -> list[dict]:
        items, rv, _, _ = self.list(res, namespace, label_selector, field_selector)
        deleted = []
        for item in items:
            meta = item["metadata"]
            try:
                self.delete(res, meta.get("namespace"), meta["name"], opts, ctx)
            except NotFound:
                continue
            deleted.append(item)
        return deleted

    # ---- pipeline pieces ------------------------------------------------------------------------
    def _admit(self, op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        for plugin in self.admission:
            plugin(op, res, obj, old, ctx)

    def _validate(self, res: Resource, obj: dict, old: dict | None, subresource: str = "") -> None:
        problems: list[FieldError] = validation.validate(self, res, obj, old, subresource)
        if problems:
            raise Invalid(res.kind, res.group, obj["metadata"].get("name", ""), problems)

    def _after_write(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        for hook in self.after_write:
            try:
                hook(op, res, obj, old)
            except StatusError:
                raise
            except Exception:  # a reaction must never corrupt the write that triggered it
                log.exception("after-write hook failed for %s %s", op, res.group_resource)


def _allow_unconditional_update(res: Resource) -> bool:
    """AllowUnconditionalUpdate of the resource's strategy: every built-in registry here but kube-aggregator's."""
    return res.group_resource not in _CONDITIONAL_UPDATES_ONLY


_CONDITIONAL_UPDATES_ONLY = frozenset({"apiservices.apiregistration.k8s.io"})


def default_propagation(res: Resource) -> str:
    return "Background"


# Resources whose registry in kube-apiserver sets ReturnDeletedObject: an immediate DELETE answers with the
# object as it was, not a Status. kube-apiserver's OpenAPI document says which (their DELETE's 200 response is
# the object), and the generated clients type the body by it: the official Python client fails on a Status
# where it expects a V1Pod. Every other resource answers a Status once the object is gone; one still held
# (graceful pods, finalizers) is answered with the object by every registry.
RETURNS_DELETED_OBJECT = frozenset({
    ("", "pods"), ("", "services"), ("", "persistentvolumes"), ("", "persistentvolumeclaims"),
    ("", "podtemplates"), ("", "resourcequotas"), ("", "serviceaccounts"),
    ("storage.k8s.io", "csidrivers"), ("storage.k8s.io", "csinodes"), ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "volumeattachments"), ("storage.k8s.io", "volumeattributesclasses"),
    ("resource.k8s.io", "deviceclasses"), ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"), ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "devicetaintrules"),
})


def success_status(res: Resource, obj: dict) -> dict:
    details = {"name": obj["metadata"]["name"], "kind": res.plural, "uid": obj["metadata"].get("uid")}
    if res.group:
        details["group"] = res.group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _encode_continue(start_key: str, rv: int) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start_key + "\u0000"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError
        return data["start"].rstrip("\u0000"), int(data["rv"])
    except Exception:
        raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion (version "
                         "meta.k8s.io/v1)") from None


def _short_json(obj) -> str:
    text = orjson.dumps(obj).decode()
    return text if len(text) < 200 else text[:200] + "..."


__all__ = ["ResourceAPI", "Ctx", "DeleteOptions", "MethodNotAllowed"]
