"""Subresources: status, scale, binding, eviction, finalize, token; log and exec are delegated."""

from __future__ import annotations

import json

from aiohttp import web

from .. import errors
from ..errors import BadRequest, Conflict, Invalid, MethodNotAllowed, NotFound, StatusError, TooManyRequests
from ..selectors import LabelSelector
from ..store import clone
from .patching import patch as patching
from .negotiation import Accept, respond
from .pod_binding import bind_pod
from .registry import Ctx, DeleteOptions
from .requestinfo import RequestInfo
from .resources import Resource


def _status_success(code: int = 201) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


class Subresources:
    def __init__(self, server):
        self.server = server

    async def handle(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx,
                     accept: Accept) -> web.StreamResponse:
        sub = res.subresource(info.subresource)
        if sub is None or not info.name:
            raise StatusError("the server could not find the requested resource", code=404, reason="NotFound",
                              details={})
        verb = info.verb
        if verb not in sub.verbs:
            raise MethodNotAllowed()
        handler = getattr(self, "do_" + sub.name, None)
        if handler is None:
            raise MethodNotAllowed()
        return await handler(request, info, res, ctx, accept)

    # ---- status ------------------------------------------------------------------------------
    async def do_status(self, request, info, res, ctx, accept):
        handlers = self.server.handlers
        if info.verb == "get":
            return await handlers.do_get(request, info, res, ctx, accept)
        if info.verb == "update":
            handlers.write_options(request, ctx)
            body, dups = await handlers.read_body(request)
            api = self.server.api
            obj = api.decode_body(res, body, ctx, info.namespace or None, name=info.name, duplicate_fields=dups)
            updated = api.update(res, info.namespace or None, info.name, obj, ctx, subresource="status",
                                 decoded=True)
            return handlers.object_response(res, updated, accept, ctx)
        return await handlers.do_patch(request, info, res, ctx, accept, subresource="status")

    # ---- scale ---------------------------------------------------------------------------------
    def _scale_of(self, res: Resource, obj: dict) -> dict:
        meta = obj["metadata"]
        status = obj.get("status") or {}
        selector = (obj.get("spec") or {}).get("selector")
        scale = {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
            "status": {"replicas": status.get("replicas", 0)},
        }
        if selector and res.kind == "ReplicationController" and not res.group:
            selector = {"matchLabels": selector}  # an RC selects by a plain label map
        if selector:
            parsed = LabelSelector.from_object(selector)
            if parsed is not None:
                scale["status"]["selector"] = str(parsed)
        return scale

    async def do_scale(self, request, info, res, ctx, accept):
        if res.crd is not None:
            return await self.server.crds.scale.handle(request, info, res, ctx, accept)
        api = self.server.api
        handlers = self.server.handlers
        current = api.get(res, info.namespace, info.name)
        if info.verb == "get":
            return respond(self._scale_of(res, current), accept)
        handlers.write_options(request, ctx)
        raw = await request.read()
        scale_now = self._scale_of(res, current)
        if info.verb == "update":
            body, _ = await handlers.read_body(request)
            if not isinstance(body, dict):
                raise BadRequest("Scale in version \"v1\" cannot be handled as a Scale: expected an object")
            new_scale = body
        else:
            content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type == patching.APPLY:
                raise StatusError("apply is not supported on the scale subresource", code=415,
                                  reason="UnsupportedMediaType")
            node = api.schemas.for_kind("autoscaling", "v1", "Scale")
            new_scale = patching.apply_patch(clone(scale_now), raw, content_type, node, custom=False, kind="Scale")
        replicas = (new_scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise BadRequest(f"Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal "
                             f"{type(replicas).__name__} into Go struct field ScaleSpec.spec.replicas of type int32")
        if replicas < 0:
            raise Invalid("Scale", "autoscaling", info.name, [errors.invalid(
                "spec.replicas", replicas, "must be greater than or equal to 0")])
        want_rv = (new_scale.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != current["metadata"]["resourceVersion"]:
            raise Conflict(res.group_resource, info.name)
        updated = clone(current)
        updated.setdefault("spec", {})["replicas"] = replicas
        updated["metadata"].pop("resourceVersion", None)
        stored = api.update(res, info.namespace, info.name, updated, ctx, subresource="scale", decoded=True,
                            check_rv=False)
        return respond(self._scale_of(res, stored), accept)

    # ---- binding --------------------------------------------------------------------------------
    async def do_binding(self, request, info, res, ctx, accept):
        body, _ = await self.server.handlers.read_body(request)
        self.bind(info.namespace, info.name, body, ctx)
        return respond(_status_success(), accept, 201)

    def bind(self, namespace: str, name: str, body, ctx: Ctx) -> None:
        if not isinstance(body, dict) or not (body.get("target") or {}).get("name"):
            raise Invalid("Binding", "", name, [errors.required("target.name")])
        meta = body.get("metadata") or {}
        bind_pod(self.server.api, namespace, name, body["target"]["name"], ctx,
                 annotations=meta.get("annotations") or {}, uid=meta.get("uid"))

    # ---- eviction --------------------------------------------------------------------------------
    async def do_eviction(self, request, info, res, ctx, accept):
        body, _ = await self.server.handlers.read_body(request)
        if not isinstance(body, dict) or body.get("kind") != "Eviction":
            raise BadRequest("the body of an eviction must be a policy/v1 Eviction")
        if (body.get("metadata") or {}).get("name") not in (None, info.name):
            raise BadRequest(f"name in URL does not match name in Eviction object")
        options = body.get("deleteOptions") or {}
        self.evict(info.namespace, info.name, options, ctx)
        return respond(_status_success(), accept, 201)

    def evict(self, namespace: str, name: str, options: dict, ctx: Ctx) -> None:
        api = self.server.api
        pods = api.catalog.lookup("", "v1", "pods")
        pdbs = api.catalog.lookup("policy", "v1", "poddisruptionbudgets")
        with api.store.lock:
            pod = api.get(pods, namespace, name)
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Running",) and not pod["metadata"].get("deletionTimestamp"):
                budgets = []
                for pdb in api.store.list(pdbs.bucket, namespace)[0]:
                    selector = LabelSelector.from_object((pdb.get("spec") or {}).get("selector"))
                    if selector is not None and not selector.empty and \
                            selector.matches(pod["metadata"].get("labels")):
                        budgets.append(pdb)
                if len(budgets) > 1:
                    raise errors.InternalError("This pod has more than one PodDisruptionBudget, which the eviction "
                                               "subresource does not support.")
                if budgets:
                    pdb = budgets[0]
                    status = pdb.get("status") or {}
                    if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1) or \
                            status.get("disruptionsAllowed", 0) <= 0:
                        message = (f"The disruption budget {pdb['metadata']['name']} needs "
                                   f"{status.get('desiredHealthy', 0)} healthy pods and has "
                                   f"{status.get('currentHealthy', 0)} currently")
                        raise TooManyRequests(
                            "Cannot evict pod as it would violate the pod's disruption budget.",
                            details={"causes": [{"reason": "DisruptionBudget", "message": message}]})
                    updated = clone(pdb)
                    st = updated.setdefault("status", {})
                    st["disruptionsAllowed"] = st.get("disruptionsAllowed", 0) - 1
                    st.setdefault("disruptedPods", {})[name] = api.clock.timestamp()
                    api.store.update(pdbs.bucket, updated, check_rv=False)
            opts = DeleteOptions(grace_period=options.get("gracePeriodSeconds"),
                                 propagation=options.get("propagationPolicy"))
            pre = options.get("preconditions") or {}
            opts.uid = pre.get("uid")
            opts.resource_version = pre.get("resourceVersion")
            api.delete(pods, namespace, name, opts, ctx)

    # ---- namespace finalize ------------------------------------------------------------------------
    async def do_finalize(self, request, info, res, ctx, accept):
        handlers = self.server.handlers
        body, _ = await handlers.read_body(request)
        api = self.server.api
        if not isinstance(body, dict):
            raise BadRequest("the body of a finalize must be a Namespace")
        finalizers = (body.get("spec") or {}).get("finalizers") or []
        with api.store.lock:
            ns = api.store.must_get(res.bucket, "", info.name)
            updated = clone(ns)
            updated.setdefault("spec", {})["finalizers"] = list(finalizers)
            stored = api.store.update(res.bucket, updated, check_rv=False)
            api._after_write("update", res, stored, ns)
        current = api.store.get(res.bucket, "", info.name) or stored
        return handlers.object_response(res, current, accept, ctx)

    # ---- service account token ------------------------------------------------------------------------
    async def do_token(self, request, info, res, ctx, accept):
        body, _ = await self.server.handlers.read_body(request)
        api = self.server.api
        api.get(res, info.namespace, info.name)  # 404 for a missing service account
        spec = (body or {}).get("spec") or {}
        seconds = spec.get("expirationSeconds") or 3600
        if not isinstance(seconds, int) or seconds < 600:
            raise Invalid("TokenRequest", "authentication.k8s.io", info.name, [errors.invalid(
                "spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")])
        token = self.server.issue_service_account_token(info.namespace, info.name, spec.get("audiences") or [],
                                                        seconds)
        now = api.clock.now()
        out = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"name": info.name, "namespace": info.namespace,
                            "creationTimestamp": None},
               "spec": {"audiences": spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"],
                        "expirationSeconds": seconds, "boundObjectRef": spec.get("boundObjectRef")},
               "status": {"token": token, "expirationTimestamp": api.clock.timestamp(now + seconds)}}
        return respond(out, accept, 201)

    # ---- pod log and exec ------------------------------------------------------------------------------
    async def do_log(self, request, info, res, ctx, accept):
        return await self.server.pod_io.log(request, info, res, ctx)

    async def do_exec(self, request, info, res, ctx, accept):
        return await self.server.pod_io.exec(request, info, res, ctx)

    async def do_portforward(self, request, info, res, ctx, accept):
        if self.server.port_forward is None:  # an API server without pods' streams (set by the twin)
            raise StatusError("the server could not find the requested resource", code=404, reason="NotFound",
                              details={})
        return await self.server.port_forward.handle(request, info, res, ctx)


__all__ = ["Subresources", "NotFound", "json"]
