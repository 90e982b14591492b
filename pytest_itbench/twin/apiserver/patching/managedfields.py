"""``metadata.managedFields``: decoding, encoding and the bookkeeping rules on the entries themselves.

An entry is identified by (manager, operation, subresource) plus, for Update
entries only, the apiVersion: an applier has one Apply entry whatever version
it applied last. Entries are written sorted as kube-apiserver sorts them
(Apply before Update, then oldest first, then by manager name).
"""

from __future__ import annotations

from collections import OrderedDict

from dataclasses import dataclass, replace
from datetime import datetime

from .. import gojson
from .fieldpath import FieldSet, FieldsV1Error

APPLY = "Apply"
UPDATE = "Update"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


@dataclass(frozen=True)
class Entry:
    manager: str
    operation: str
    api_version: str
    subresource: str
    fields: FieldSet
    time: str | None = None

    @property
    def identity(self) -> str:
        return identity(self.manager, self.operation, self.api_version, self.subresource)

    def with_fields(self, fields: FieldSet) -> "Entry":
        return replace(self, fields=fields)

    def encode(self) -> dict:
        out = {"manager": self.manager} if self.manager else {}
        out.update(operation=self.operation, apiVersion=self.api_version)
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self.fields.to_fields_v1()
        if self.subresource:
            out["subresource"] = self.subresource
        return out


Managed = dict[str, Entry]  # by identity


def identity(manager: str, operation: str, api_version: str, subresource: str) -> str:
    """The manager's identity as upstream builds it: the entry's JSON without time and fields."""
    parts = {"manager": manager, "operation": operation} if manager else {"operation": operation}
    if operation != APPLY and api_version:
        parts["apiVersion"] = api_version
    if subresource:
        parts["subresource"] = subresource
    return "{" + ",".join(f"{gojson.dumps(k)}:{gojson.dumps(v)}" for k, v in parts.items()) + "}"


def describe(entry: Entry) -> str:
    """How conflict messages name a manager: ``"kubectl-edit" using apps/v1``."""
    text = gojson.quote(entry.manager)
    if entry.subresource:
        text += f" with subresource {gojson.quote(entry.subresource)}"
    if entry.operation == UPDATE:
        text += f" using {entry.api_version}"
    return text


class ManagedFieldsError(ValueError):
    pass


class _Memo:
    """Remembers the decoded form of stored entries and the encoded form of unchanged ones.

    Every write decodes the object's managedFields and encodes them again, though
    most entries do not change; stored objects are never mutated, so an entry dict
    seen before decodes the same way, and an Entry left untouched encodes to the
    dict it came from. Keys are object ids, kept valid by holding the objects.
    """

    def __init__(self, size: int = 50_000):
        self._size = size
        self._decoded: OrderedDict[int, tuple[dict, Entry]] = OrderedDict()
        self._encoded: OrderedDict[int, tuple[Entry, dict]] = OrderedDict()

    def decoded(self, raw: dict) -> Entry | None:
        hit = self._decoded.get(id(raw))
        return hit[1] if hit is not None and hit[0] is raw else None

    def encoded(self, entry: Entry) -> dict | None:
        hit = self._encoded.get(id(entry))
        return hit[1] if hit is not None and hit[0] is entry else None

    def clear(self) -> None:
        self._decoded.clear()
        self._encoded.clear()

    def remember(self, raw: dict, entry: Entry) -> None:
        for cache, key, value in ((self._decoded, id(raw), (raw, entry)), (self._encoded, id(entry), (entry, raw))):
            cache[key] = value
            if len(cache) > self._size:
                cache.popitem(last=False)


_MEMO = _Memo()


def forget() -> None:
    """Drop what the memo holds (a stopped twin's objects): it is only a cache, shared by the process's twins."""
    _MEMO.clear()


def decode(entries) -> Managed:
    """The entries of ``metadata.managedFields``; raises :class:`ManagedFieldsError` on a malformed one."""
    managed: Managed = {}
    if not entries:
        return managed
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    for index, raw in enumerate(entries):
        known = _MEMO.decoded(raw) if isinstance(raw, dict) else None
        if known is not None:
            managed[known.identity] = known
            continue
        if not isinstance(raw, dict):
            raise ManagedFieldsError(f"managed fields entry {index} is not an object")
        operation = raw.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        api_version = raw.get("apiVersion")
        if not api_version:
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = raw.get("fieldsType")
        if not fields_type:
            raise ManagedFieldsError(f"missing fieldsType in managed fields entry {index}")
        if fields_type != "FieldsV1":
            raise ManagedFieldsError(f'invalid fieldsType "{fields_type}" in managed fields entry {index}')
        try:
            fields = FieldSet.from_fields_v1(raw.get("fieldsV1") or {})
        except FieldsV1Error as exc:
            raise ManagedFieldsError(f"error decoding set: {exc}") from None
        entry = Entry(str(raw.get("manager") or ""), operation, api_version, str(raw.get("subresource") or ""),
                      fields, raw.get("time"))
        managed[entry.identity] = entry
        _MEMO.remember(raw, entry)
    return managed


def encode(managed: Managed) -> list[dict]:
    entries = sorted(managed.values(), key=lambda e: (e.operation, _seconds(e.time), e.manager, e.api_version,
                                                     e.subresource))
    out = []
    for entry in entries:
        raw = _MEMO.encoded(entry)
        if raw is None:
            raw = entry.encode()
            _MEMO.remember(raw, entry)
        out.append(raw)
    return out


def _seconds(time: str | None) -> float:
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def cap_update_managers(managed: Managed) -> Managed:
    """Fold the oldest Update entries into ``ancient-changes`` (one per apiVersion) beyond ten."""
    updaters = [key for key, entry in managed.items() if entry.operation == UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managed
    managed = dict(managed)
    updaters.sort(key=lambda key: (_seconds(managed[key].time), key))
    first_of_version: dict[str, str] = {}
    remaining = len(updaters)
    for key in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[key]
        bucket = identity(ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        first = first_of_version.get(entry.api_version)
        if first is None:
            first_of_version[entry.api_version] = key
            continue
        if bucket not in managed:
            moved = managed.pop(first)
            managed[bucket] = Entry(ANCIENT_CHANGES, UPDATE, moved.api_version, "", moved.fields, moved.time)
        managed[bucket] = replace(managed[bucket], fields=entry.fields.union(managed[bucket].fields),
                                  time=entry.time)
        del managed[key]
        remaining -= 1
    return managed
