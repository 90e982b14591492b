"""Managed fields and server-side apply, as kube-apiserver's field manager keeps them.

Every write goes through here. A non-apply write (operation ``Update``) gives
its manager the fields it changed and takes them from the others; an entry left
with no fields is dropped. An apply merges the applied configuration into the
live object by the schema's list and map types, removes what this manager
applied before and no longer applies (unless someone else owns it), and
refuses with 409 to change a field another manager owns unless forced. Fields
a write sets by defaulting are owned by an updater (the write's object holds
them) but never by an applier (only its configuration counts).

Two rules exist for the ``kubectl`` manager only, so that moving from
client-side to server-side apply works: a conflict on a field whose live value
still equals the last-applied-configuration annotation is not a conflict, and
that annotation is rewritten on each server-side apply when the object has it.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import BadRequest, StatusError
from ...store import clone
from .. import conversion
from .. import gojson
from .fieldpath import FieldSet, field, path_string
from .managedfields import (
    APPLY, UPDATE, Entry, Managed, ManagedFieldsError, cap_update_managers, decode, describe, encode, identity,
)
from ..resources import Resource
from .go_encoding import as_go_encodes, drop_nulls, keep_value_structs
from .shapes import MISSING, Shape, TypedError, shape_of
from .typed import Comparison, compare, ensure_named_fields_are_members, equal, merge, remove_items, to_field_set

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"
KUBECTL = "kubectl"  # the manager kubectl apply --server-side uses, which gets the last-applied rules

# Fields no manager owns: identity and bookkeeping the server sets.
_STRIPPED = FieldSet([(field("apiVersion"),), (field("kind"),), (field("metadata"),)] + [
    (field("metadata"), field(name)) for name in ("name", "namespace", "creationTimestamp", "selfLink", "uid",
                                                  "clusterName", "generation", "managedFields", "resourceVersion")])

# Writes through these subresources do not pass the field manager (the binding sets spec.nodeName directly).
_UNTRACKED_SUBRESOURCES = {"binding"}


class ApplyConflict(StatusError):
    code, reason = 409, "Conflict"


class _Conflicts(Exception):
    def __init__(self, pairs: list[tuple[Entry, tuple]]):
        super().__init__()
        self.pairs = pairs


def on_update(api, res: Resource, old: dict | None, new: dict, manager: str, subresource: str, now: str) -> None:
    """Record that ``manager`` changed fields of ``new`` in a non-apply write (``old`` is None for a create)."""
    if subresource in _UNTRACKED_SUBRESOURCES:
        return
    meta = new["metadata"]
    live = _decode_or_empty(old["metadata"].get("managedFields")) if old is not None else {}
    requested = meta.pop("managedFields", MISSING)
    if subresource or requested is MISSING or requested is None:
        managed = live
    elif requested == [] or requested == [{}]:
        managed = {}  # the documented way to clear managed fields
    else:
        managed = _decode_or_empty(requested) or live
    if not managed and old is not None:
        return  # objects nobody tracked stay untracked until an apply
    context = _Context(api, res, subresource)
    try:
        managed = context.record_update(old, new, managed, manager or "unknown", now)
    except TypedError:
        return  # upstream logs this and leaves the object without managed fields
    _store(new, managed)


def apply(api, res: Resource, current: dict | None, applied: dict, manager: str, force: bool, subresource: str,
          now: str) -> dict:
    """Server-side apply of ``applied`` by ``manager`` to ``current`` (None: create); returns the new object."""
    if "managedFields" in (applied.get("metadata") or {}):
        raise BadRequest("metadata.managedFields must be nil")
    context = _Context(api, res, subresource)
    try:
        managed = decode(current["metadata"].get("managedFields")) if current is not None else {}
    except ManagedFieldsError as exc:
        raise StatusError(f"failed to decode managed fields: {exc}", code=500, reason="") from None
    if not managed and current is not None:
        # Whatever the object holds before its first apply belongs to a placeholder manager.
        managed = context.record_update(None, current, {}, BEFORE_FIRST_APPLY, now)
    live = _comparable(current)
    try:
        try:
            obj, managed = context.apply_once(live, applied, managed, manager, force, now)
        except _Conflicts as conflicts:
            obj, managed = _forgive_last_applied(context, live, applied, managed, manager, now, conflicts)
    except TypedError as exc:
        raise StatusError(f"failed to create typed patch object ({_describe_object(res, applied)}): {exc}",
                          code=500, reason="") from None
    if res.crd is None:
        obj = as_go_encodes(obj, context.shape)
        keep_value_structs(obj, live, context.shape)
    if manager == KUBECTL:
        _refresh_last_applied(obj, applied)
    _store(obj, managed)
    return obj


def _forgive_last_applied(context: "_Context", live: dict, applied: dict, managed: Managed, manager: str, now: str,
                          conflicts: _Conflicts) -> tuple[dict, Managed]:
    """kubectl's conflicts on fields still as last applied client-side are no conflicts: apply with force."""
    if manager != KUBECTL:
        raise _conflict_error(conflicts.pairs)
    allowed = _last_applied_fields(context, live)
    if allowed is None:
        raise _conflict_error(conflicts.pairs)
    remaining = [(entry, path) for entry, path in conflicts.pairs if not allowed.has(path)]
    if remaining:
        raise _conflict_error(remaining)
    return context.apply_once(live, applied, managed, manager, True, now)


class _Context:
    """One write's view: the resource's schema in the request's version and the fields its strategy resets."""

    def __init__(self, api, res: Resource, subresource: str):
        self.api = api
        self.res = res
        self.version = res.api_version
        self.subresource = subresource
        node = api.node_for(res)
        self.shape = shape_of(node)
        self.ignored = _reset_fields(res, subresource, node.properties() if node is not None else {})

    # ---- Update ------------------------------------------------------------------------------------
    def record_update(self, old: dict | None, new: dict, managed: Managed, manager: str, now: str) -> Managed:
        key = identity(manager, UPDATE, self.version, self.subresource)
        old_view, new_view = _comparable(old), _comparable(new)
        comparison = compare(old_view, new_view, self.shape).exclude(self.ignored)
        managed = self.settle_others(old_view, new_view, managed, comparison, workflow=None, force=True)
        mine = comparison.changed().recursive_difference(self.ignored).difference(_STRIPPED)
        if not mine.empty():
            previous = managed.get(key)
            fields = mine.union(previous.fields) if previous else mine
            managed = {**managed, key: Entry(manager, UPDATE, self.version, self.subresource, fields, now)}
        return cap_update_managers(managed)

    # ---- Apply --------------------------------------------------------------------------------------
    def apply_once(self, live: dict, applied: dict, managed: Managed, manager: str, force: bool,
                   now: str) -> tuple[dict, Managed]:
        key = identity(manager, APPLY, "", self.subresource)
        applied_fields = to_field_set(applied, self.shape).recursive_difference(self.ignored)
        merged = merge(live, applied, self.shape)
        last = managed.get(key)
        entries = {**managed, key: Entry(manager, APPLY, self.version, self.subresource, applied_fields,
                                         last.time if last else None)}
        merged = self.prune(merged, entries, last)
        comparison = compare(live, merged, self.shape).exclude(self.ignored)
        entries = self.settle_others(live, merged, entries, comparison, workflow=key, force=force)
        changed = not equal(live, merged)
        mine = entries[key].fields.difference(_STRIPPED)
        if mine.empty():
            del entries[key]
        else:
            entries[key] = replace(entries[key], fields=mine, time=now if changed else entries[key].time)
        obj = drop_nulls(merged) if changed else clone(live)
        return obj, entries

    def prune(self, merged: dict, entries: Managed, last: Entry | None) -> dict:
        """Remove what the applier owned last time and no longer applies, unless someone else owns it."""
        if last is None or last.fields.empty() or last.api_version != self.version:
            return merged
        shape = self.shape
        last_fields = ensure_named_fields_are_members(last.fields, shape)
        pruned = remove_items(merged, last_fields, shape)
        owned = FieldSet()
        for entry in entries.values():
            if entry.api_version == self.version:
                owned = owned.union(entry.fields)
        merged_fields = _named(merged, shape)
        pruned = remove_items(merged, merged_fields.difference(_named(pruned, shape).union(
            ensure_named_fields_are_members(owned, shape))), shape)
        dangling = merged_fields.difference(_named(pruned, shape)).intersection(last_fields)
        return remove_items(merged, dangling, shape) or {}

    # ---- both ---------------------------------------------------------------------------------------
    def settle_others(self, old: dict, new: dict, managed: Managed, comparison: Comparison, workflow: str | None,
                      force: bool) -> Managed:
        """Take changed fields from the other managers (or refuse, unforced) and forget removed ones."""
        comparisons: dict[str, Comparison | None] = {self.version: comparison}
        conflicts: dict[str, FieldSet] = {}
        out = dict(managed)
        for key, entry in managed.items():
            if key == workflow:
                continue
            if entry.api_version not in comparisons:
                comparisons[entry.api_version] = self._compare_at(entry.api_version, old, new)
            at_version = comparisons[entry.api_version]
            if at_version is None:
                del out[key]  # a version the server no longer serves
                continue
            taken = entry.fields.intersection(at_version.changed())
            if not taken.empty():
                conflicts[key] = taken
            if taken.empty() and entry.fields.intersection(at_version.removed).empty():
                continue  # untouched: the same Entry object, whose encoding is remembered
            out[key] = entry.with_fields(entry.fields.difference(taken).difference(at_version.removed))
        if conflicts and not force:
            raise _Conflicts([(managed[key], path) for key in sorted(conflicts) for path in conflicts[key].paths()])
        return {key: entry for key, entry in out.items() if not entry.fields.empty()}

    def _compare_at(self, api_version: str, old: dict, new: dict) -> Comparison | None:
        """The comparison as an entry recorded at another version of the same resource sees it."""
        other = self.api.catalog.for_api_version(api_version, self.res.kind)
        if other is None or other.bucket != self.res.bucket:
            return None
        shape = shape_of(self.api.node_for(other))
        converted = [conversion.convert(dict(obj, apiVersion=self.version, kind=self.res.kind), api_version)
                     for obj in (old, new)]
        return compare(*converted, shape).exclude(self.ignored)


def _named(value, shape: Shape) -> FieldSet:
    return ensure_named_fields_are_members(to_field_set(value, shape), shape)


def _reset_fields(res: Resource, subresource: str, properties: dict) -> FieldSet:
    """What the write's strategy resets and so nobody can own: status, or all but status on /status."""
    if subresource == "status":
        names = [n for n in properties if n not in ("status", "metadata", "apiVersion", "kind")] or ["spec"]
        return FieldSet([(field(n),) for n in names])
    if res.has_status:
        return FieldSet([(field("status"),)])
    return FieldSet()


def _comparable(obj: dict | None) -> dict:
    """The object without its managed fields (a create compares against an empty object)."""
    if obj is None:
        return {}
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _decode_or_empty(entries) -> Managed:
    try:
        return decode(entries)
    except ManagedFieldsError:
        return {}


def _store(obj: dict, managed: Managed) -> None:
    entries = encode(managed)
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _conflict_error(pairs: list[tuple[Entry, tuple]]) -> ApplyConflict:
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {describe(entry)}",
               "field": path_string(path)} for entry, path in pairs]
    if len(pairs) == 1:
        entry, path = pairs[0]
        message = f"Apply failed with 1 conflict: conflict with {describe(entry)}: {path_string(path)}"
    else:
        lines: list[str] = []
        for key in sorted({entry.identity for entry, _ in pairs}):
            group = [(entry, path) for entry, path in pairs if entry.identity == key]
            lines.append(f"conflicts with {describe(group[0][0])}:")
            lines += [f"- {path_string(path)}" for _, path in group]
        message = f"Apply failed with {len(pairs)} conflicts: " + "\n".join(lines)
    return ApplyConflict(message, details={"causes": causes})


# ---- the last-applied-configuration annotation -----------------------------------------------------------

def _last_applied_fields(context: _Context, live: dict) -> FieldSet | None:
    """Fields of the last client-side apply whose live value is still what was applied (None: no annotation)."""
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not text:
        return None
    try:
        last = gojson.loads(text)
    except gojson.GoJSONError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != context.version:
        return None
    try:
        fields = to_field_set(last, context.shape)
        comparison = compare(last, live, context.shape)
    except TypedError:
        return None
    return fields.difference(comparison.modified).difference(comparison.added).difference(comparison.removed)


def _refresh_last_applied(obj: dict, applied: dict) -> None:
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not annotations or not annotations.get(LAST_APPLIED):
        return
    config = clone(applied)
    config_annotations = (config.get("metadata") or {}).get("annotations")
    if isinstance(config_annotations, dict):
        config_annotations.pop(LAST_APPLIED, None)
    annotations[LAST_APPLIED] = gojson.dumps(config) + "\n"


def _describe_object(res: Resource, obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}; {res.group}/{res.version}, Kind={res.kind}"
