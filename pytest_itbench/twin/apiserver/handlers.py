"""HTTP handlers for resource requests: read the request, call ResourceAPI, write the response."""

from __future__ import annotations

from aiohttp import web

from ..errors import BadRequest, MethodNotAllowed, NotFound, StatusError
from .patching import patch as patching
from . import tables
from .negotiation import Accept, decode_body, parse_accept, respond
from .registry import Ctx, DeleteOptions
from .requestinfo import RequestInfo
from .resources import Resource
from .watch import serve_watch

_FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


def not_found_resource() -> StatusError:
    return StatusError("the server could not find the requested resource", code=404, reason="NotFound",
                       details={})


class ResourceHandlers:
    """Resource verbs over HTTP. ``server`` is the APIServer that owns the pieces."""

    def __init__(self, server):
        self.server = server

    # ---- entry ------------------------------------------------------------------------------
    async def handle(self, request: web.Request, info: RequestInfo, ctx: Ctx) -> web.StreamResponse:
        server = self.server
        res = server.catalog.lookup(info.group, info.version, info.resource)
        if res is None:
            raise not_found_resource()
        if info.namespace and not res.namespaced:
            raise not_found_resource()
        accept = parse_accept(request.headers.get("Accept"))
        if info.subresource:
            return await server.subresources.handle(request, info, res, ctx, accept)
        if res.virtual:
            return await server.virtual.handle(request, info, res, ctx, accept)
        verb = info.verb
        # Named verbs need a name; create goes to the collection (as the server's routes are laid out).
        if (verb in ("update", "patch") and not info.name) or (verb == "create" and info.name):
            raise MethodNotAllowed()
        if verb not in res.verbs and verb != "watch" or (verb == "watch" and "watch" not in res.verbs):
            raise MethodNotAllowed()
        method = getattr(self, "do_" + verb, None)
        if method is None:
            raise MethodNotAllowed()
        return await method(request, info, res, ctx, accept)

    # ---- helpers ------------------------------------------------------------------------------
    def table(self, res: Resource, objs: list[dict], include_object: str = "Metadata", with_columns: bool = True,
              **meta) -> dict:
        printer = self.server.printer_for(res)
        return tables.render(printer, objs, now=self.server.clock.now(), include_object=include_object,
                             with_columns=with_columns, **meta)

    @staticmethod
    def write_options(request: web.Request, ctx: Ctx) -> None:
        q = request.query
        dry = q.getall("dryRun", [])
        for value in dry:
            if value != "All":
                raise BadRequest(f'Invalid dry run value: "{value}": valid values are "All"')
        ctx.dry_run = bool(dry)
        if "fieldManager" in q:
            manager = q["fieldManager"]
            if len(manager) > 128:
                raise BadRequest("fieldManager: Too long: must have at most 128 bytes")
            ctx.field_manager = manager
        if "fieldValidation" in q:
            value = q["fieldValidation"]
            if value not in _FIELD_VALIDATION:
                raise BadRequest(f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", '
                                 f'"Strict", "Warn"')
            ctx.field_validation = value

    async def read_body(self, request: web.Request):
        raw = await request.read()
        return decode_body(raw, request.headers.get("Content-Type"))

    def object_response(self, res: Resource, obj: dict, accept: Accept, ctx: Ctx, status: int = 200):
        if obj.get("kind") == "Status":
            return respond(obj, accept, status, ctx.warnings)
        if accept.table:
            return respond(self.table(res, [obj]), accept, status, ctx.warnings)
        if accept.partial_metadata:
            return respond(tables.core.partial_metadata(obj), accept, status, ctx.warnings)
        return respond(obj, accept, status, ctx.warnings)

    # ---- verbs ------------------------------------------------------------------------------
    async def do_get(self, request, info, res, ctx, accept):
        obj = self.server.api.get(res, info.namespace, info.name)
        return self.object_response(res, obj, accept, ctx)

    async def do_list(self, request, info, res, ctx, accept):
        q = request.query
        limit = q.get("limit")
        try:
            limit_n = int(limit) if limit else None
        except ValueError:
            raise BadRequest(f'invalid limit "{limit}"') from None
        items, rv, token, remaining = self.server.api.list(
            res, info.namespace or None, q.get("labelSelector"), q.get("fieldSelector"), limit_n, q.get("continue"))
        if accept.table:
            body = self.table(res, items, q.get("includeObject", "Metadata"), resource_version=rv,
                              continue_token=token, remaining=remaining)
            return respond(body, accept)
        meta: dict = {"resourceVersion": rv}
        if token:
            meta["continue"] = token
        if remaining:
            meta["remainingItemCount"] = remaining
        if accept.partial_metadata:
            body = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                    "items": [tables.core.partial_metadata(o) for o in items]}
            return respond(body, accept)
        body = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta,
                "items": [_strip_type(res, o) for o in items]}
        return respond(body, accept)

    async def do_watch(self, request, info, res, ctx, accept):
        def render(r, objs, first):
            return self.table(r, objs, request.query.get("includeObject", "Metadata"), with_columns=first)
        return await serve_watch(request, self.server, res, info.namespace or None, accept, render)

    async def do_create(self, request, info, res, ctx, accept):
        self.write_options(request, ctx)
        body, dups = await self.read_body(request)
        api = self.server.api
        obj = api.decode_body(res, body, ctx, info.namespace or None, duplicate_fields=dups)
        created = api.create(res, info.namespace or None, obj, ctx, decoded=True)
        return self.object_response(res, created, accept, ctx, 201)

    async def do_update(self, request, info, res, ctx, accept):
        self.write_options(request, ctx)
        body, dups = await self.read_body(request)
        api = self.server.api
        existed = api.store.get(res.bucket, info.namespace if res.namespaced else "", info.name) is not None
        obj = api.decode_body(res, body, ctx, info.namespace or None, name=info.name, duplicate_fields=dups)
        updated = api.update(res, info.namespace or None, info.name, obj, ctx, decoded=True)
        return self.object_response(res, updated, accept, ctx, 200 if existed else 201)

    async def do_patch(self, request, info, res, ctx, accept, subresource: str = ""):
        self.write_options(request, ctx)
        content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type not in patching.PATCH_TYPES:
            from ..errors import UnsupportedMediaType
            raise UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"{', '.join(patching.PATCH_TYPES)}")
        raw = await request.read()
        if len(raw) > 3 * 1024 * 1024:
            from ..errors import RequestEntityTooLarge
            raise RequestEntityTooLarge()
        force = request.query.get("force", "").lower() in ("true", "1")
        if force and content_type != patching.APPLY:
            raise BadRequest("force is only allowed for apply patches")
        api = self.server.api
        existed = api.store.get(res.bucket, info.namespace if res.namespaced else "", info.name) is not None
        obj = api.patch(res, info.namespace or None, info.name, raw, content_type, ctx, subresource=subresource,
                        force=force)
        return self.object_response(res, obj, accept, ctx, 200 if existed or subresource else 201)

    async def do_delete(self, request, info, res, ctx, accept):
        opts = await self.delete_options(request, ctx)
        result = self.server.api.delete(res, info.namespace or None, info.name, opts, ctx)
        # kube-apiserver answers 200 whether or not the object is gone (a pod in its grace period, an object
        # held by finalizers): 202 only for a pending deletion asked for with orphanDependents=false, kept
        # that way so as not to break the clients that relied on it.
        pending = result.get("kind") != "Status" and not opts.dry_run and \
            self.server.store.get(res.bucket, info.namespace if res.namespaced else "", info.name) is not None
        return self.object_response(res, result, accept, ctx,
                                    202 if pending and opts.orphan_dependents is False else 200)

    async def do_deletecollection(self, request, info, res, ctx, accept):
        opts = await self.delete_options(request, ctx)
        q = request.query
        deleted = self.server.api.delete_collection(res, info.namespace or None, q.get("labelSelector"),
                                                    q.get("fieldSelector"), opts, ctx)
        body = {"kind": res.list_kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.server.store.resource_version)},
                "items": [_strip_type(res, o) for o in deleted]}
        return respond(body, accept)

    async def delete_options(self, request: web.Request, ctx: Ctx) -> DeleteOptions:
        q = request.query
        opts = DeleteOptions()
        raw = await request.read()
        body = {}
        if raw.strip():
            parsed, _ = decode_body(raw, request.headers.get("Content-Type"))
            if not isinstance(parsed, dict):
                raise BadRequest("the body of a delete must be a DeleteOptions object")
            body = parsed
        opts.propagation = body.get("propagationPolicy") or q.get("propagationPolicy")
        orphan = body.get("orphanDependents", q.get("orphanDependents"))
        if isinstance(orphan, str):
            orphan = {"true": True, "false": False}.get(orphan)
        opts.orphan_dependents = orphan if isinstance(orphan, bool) else None
        if orphan is True:
            opts.propagation = opts.propagation or "Orphan"
        if opts.propagation and opts.propagation not in ("Background", "Foreground", "Orphan"):
            raise BadRequest(f'DeleteOptions.propagationPolicy: Unsupported value: "{opts.propagation}": '
                             'supported values: "Background", "Foreground", "Orphan"')
        grace = body.get("gracePeriodSeconds", q.get("gracePeriodSeconds"))
        if grace is not None:
            try:
                opts.grace_period = int(grace)
            except (TypeError, ValueError):
                raise BadRequest(f'invalid gracePeriodSeconds "{grace}"') from None
        pre = body.get("preconditions") or {}
        opts.uid = pre.get("uid")
        opts.resource_version = pre.get("resourceVersion")
        dry = list(body.get("dryRun") or []) + q.getall("dryRun", [])
        for value in dry:
            if value != "All":
                raise BadRequest(f'Invalid dry run value: "{value}": valid values are "All"')
        opts.dry_run = bool(dry)
        ctx.dry_run = opts.dry_run
        return opts


def _strip_type(res: Resource, obj: dict) -> dict:
    """Built-in list items go out without kind and apiVersion, as the API server encodes typed lists."""
    if res.crd is None and ("kind" in obj or "apiVersion" in obj):
        return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
    return obj


__all__ = ["ResourceHandlers", "NotFound"]
