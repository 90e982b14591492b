"""The scale subresource of custom resources: an ``autoscaling/v1`` Scale read from and written to the CRD's paths.

A CRD's ``subresources.scale`` names where the replicas live
(``specReplicasPath``, ``statusReplicasPath``) and, optionally, where the
serialized label selector lives (``labelSelectorPath``). A read builds the
Scale from those paths (a missing value reads as 0 or ""); a write sets the
spec path and saves the custom resource, which is then defaulted and
validated like any other write. Like the resource itself, the scale
subresource takes JSON and merge patches but not strategic merge patches.
"""

from __future__ import annotations

from typing import Callable

from aiohttp import web

from ... import errors
from ...errors import BadRequest, Conflict, Invalid, NotFound, UnsupportedMediaType
from ...store import clone
from ..patching import patch as patching
from ..negotiation import Accept, respond
from ..registry import Ctx
from ..requestinfo import RequestInfo
from ..resources import Resource

ScalePaths = Callable[[Resource], "dict | None"]


class CustomScale:
    def __init__(self, server, scale_paths: ScalePaths):
        self.server = server
        self.scale_paths = scale_paths

    async def handle(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx,
                     accept: Accept) -> web.StreamResponse:
        paths = self.scale_paths(res)
        if paths is None:
            raise NotFound(res.group_resource, info.name)
        api = self.server.api
        handlers = self.server.handlers
        current = api.get(res, info.namespace, info.name)
        if info.verb == "get":
            return respond(scale_of(current, paths), accept)
        handlers.write_options(request, ctx)
        now = scale_of(current, paths)
        if info.verb == "update":
            wanted, _ = await handlers.read_body(request)
        else:
            content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type not in (patching.JSON_PATCH, patching.MERGE):
                raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                           f"include: {patching.JSON_PATCH}, {patching.MERGE}")
            wanted = patching.apply_patch(clone(now), await request.read(), content_type, None, custom=True,
                                          kind="Scale")
        replicas = _replicas(wanted, info.name)
        want_rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != current["metadata"]["resourceVersion"]:
            raise Conflict(res.group_resource, info.name)
        updated = clone(current)
        _set(updated, paths["specReplicasPath"], replicas)
        updated["metadata"].pop("resourceVersion", None)
        stored = api.update(res, info.namespace, info.name, updated, ctx, subresource="scale", decoded=True,
                            check_rv=False)
        return respond(scale_of(stored, paths), accept)


def scale_of(obj: dict, paths: dict) -> dict:
    meta = obj["metadata"]
    status: dict = {"replicas": _int(_get(obj, paths.get("statusReplicasPath", "")))}
    selector = _get(obj, paths.get("labelSelectorPath") or "")
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": _int(_get(obj, paths.get("specReplicasPath", "")))},
        "status": status,
    }


def _replicas(scale, name: str) -> int:
    if not isinstance(scale, dict):
        raise BadRequest('Scale in version "v1" cannot be handled as a Scale: expected an object')
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise BadRequest(f'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
                         f'{type(replicas).__name__} into Go struct field ScaleSpec.spec.replicas of type int32')
    if replicas < 0:
        raise Invalid("Scale", "autoscaling", name, [errors.invalid("spec.replicas", replicas,
                                                                    "must be greater than or equal to 0")])
    return replicas


def _get(obj: dict, path: str):
    cur = obj
    for key in [p for p in path.split(".") if p]:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur


def _set(obj: dict, path: str, value) -> None:
    keys = [p for p in path.split(".") if p]
    cur = obj
    for key in keys[:-1]:
        nxt = cur.get(key)
        if not isinstance(nxt, dict):
            nxt = cur[key] = {}
        cur = nxt
    cur[keys[-1]] = value


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
