"""The API server: the aiohttp application that ties authentication, authorization and handlers together."""

from __future__ import annotations

import base64
import functools
import json
import logging
import time
import uuid

import orjson
from aiohttp import web

from ..clock import SimClock
from ..errors import InternalError, RequestEntityTooLarge, StatusError, Unauthorized
from ..schema import SchemaRegistry
from ..store import Store
from . import discovery
from .audit import AuditLog
from .access.authn import TokenAuthenticator, UserInfo, user_for
from .access.authz import Attributes, forbidden
from .handlers import ResourceHandlers, not_found_resource
from .access.impersonation import impersonated
from .negotiation import MAX_BODY, parse_accept, respond
from .access.rbac import RBACAuthorizer
from .registry import Ctx, ResourceAPI
from .requestinfo import request_info
from .resources import Catalog, Resource
from .subresources import Subresources
from .virtual import VirtualResources
from .watch import WatchHub

log = logging.getLogger(__name__)

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.4",
    "gitCommit": "a78aa47129b8539636eb86a9d00e31b2720fe06b",
    "gitTreeState": "clean",
    "buildDate": "2024-12-10T11:37:36Z",
    "goVersion": "go1.22.9",
    "compiler": "gc",
    "platform": "linux/amd64",
}


class APIServer:
    """Everything a request needs: store, catalog, schemas, auth, and the handlers."""

    def __init__(self, store: Store, clock: SimClock, catalog: Catalog | None = None,
                 schemas: SchemaRegistry | None = None):
        self.store = store
        self.clock = clock
        self.catalog = catalog or Catalog()
        self.schemas = schemas or SchemaRegistry()
        self.api = ResourceAPI(store, self.catalog, self.schemas, clock)
        self.authenticator = TokenAuthenticator(store.rng)
        self.authorizer = RBACAuthorizer(self.api)
        self.handlers = ResourceHandlers(self)
        self.subresources = Subresources(self)
        self.watches = WatchHub()
        self.audit = AuditLog(clock)  # every write request, as kube-apiserver's audit log has it
        self.virtual = VirtualResources(self)  # reviews, metrics and bindings register here
        self.pod_io = None  # pod logs and exec (set by the twin)
        self.port_forward = None  # pods/portforward (set by the twin)
        self.crds = None  # CustomResourceDefinitions: custom resources' scale subresource (set by the twin)
        self.printers: dict = {}  # printer overrides (CRD columns), by (group, version, kind) or (group, kind)
        self.started = time.monotonic()

    # ---- identities ------------------------------------------------------------------------------
    def token_for(self, identity: str, groups: tuple[str, ...] = ()) -> str:
        return self.authenticator.issue(user_for(identity, groups))

    def issue_service_account_token(self, namespace: str, name: str, audiences: list[str], seconds: int) -> str:
        """A JWT-shaped bearer token for a service account (TokenRequest)."""
        user = user_for(f"system:serviceaccount:{namespace}:{name}")
        raw = self.authenticator.issue(user)
        now = int(self.clock.now())
        claims = {"aud": audiences or ["https://kubernetes.default.svc.cluster.local"], "exp": now + seconds,
                  "iat": now, "iss": "https://kubernetes.default.svc.cluster.local",
                  "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name}},
                  "nbf": now, "sub": user.name}
        header = {"alg": "RS256", "kid": raw[:16]}
        token = ".".join(_b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims))
        token += "." + _b64(raw.encode())
        self.authenticator.alias(token, raw)
        return token

    @functools.cached_property
    def openapi(self):
        """OpenAPI v3 documents, loaded on the first request for them (kubectl get never asks)."""
        from .openapi import OpenAPIService
        return OpenAPIService(self)

    # ---- printing ------------------------------------------------------------------------------------
    def printer_for(self, res: Resource):
        from . import tables
        override = self.printers.get((res.group, res.version, res.kind)) or self.printers.get((res.group, res.kind))
        if override is not None:
            return override
        return tables.printer_for(res.group, res.kind)

    # ---- the app -----------------------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY + 64 * 1024, middlewares=[self._middleware])
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        app.on_shutdown.append(self._on_shutdown)
        app.on_response_prepare.append(_standard_headers)
        return app

    async def _on_shutdown(self, app) -> None:
        self.watches.stop_all()

    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        try:
            return await handler(request)
        except StatusError as exc:
            return _status_response(exc)
        except web.HTTPRequestEntityTooLarge:
            return _status_response(RequestEntityTooLarge())
        except web.HTTPException:
            raise
        except (ConnectionResetError,):
            raise
        except Exception as exc:  # the server never dies on a request
            log.exception("internal error serving %s %s", request.method, request.path)
            return _status_response(InternalError(f"{type(exc).__name__}: {exc}"))

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        user = self.authenticator.authenticate(request.headers.get("Authorization"))
        if user is None:
            raise Unauthorized()
        user = impersonated(user, request.headers, self.authorizer)
        info = request_info(request.method, request.path, request.query)
        if info.is_resource and self.audit.records(info.verb):
            return await self._audited(request, info, user)
        return await self._serve(request, info, user)

    async def _serve(self, request: web.Request, info, user: UserInfo) -> web.StreamResponse:
        attrs = Attributes.from_request(info, request.query)
        allowed, reason = self.authorizer.authorize(user, attrs)
        if not allowed:
            raise forbidden(user, attrs, reason)
        ctx = Ctx(user=user, user_agent=request.headers.get("User-Agent", ""))
        if info.is_resource:
            return await self.handlers.handle(request, info, ctx)
        return await self._non_resource(request, info.path, user)

    async def _audited(self, request: web.Request, info, user: UserInfo) -> web.StreamResponse:
        """Serve a write and record its audit event at ResponseComplete, whether it succeeded or not."""
        audit_id = self.audit.new_id()
        received = self.clock.now()
        code, body, failure = 500, None, None
        try:
            response = await self._serve(request, info, user)
            code = response.status
            body = getattr(response, "body", None)
            response.headers["Audit-Id"] = audit_id
            return response
        except StatusError as exc:
            code, failure = exc.code, exc.status()
            raise
        finally:
            raw = await request.read() if request.can_read_body or request.body_exists else b""
            self.audit.record(audit_id=audit_id, uri=request.path_qs, info=info, user=user,
                              source_ip=request.remote or "", user_agent=request.headers.get("User-Agent", ""),
                              received=received, code=code, request_body=raw,
                              content_type=request.headers.get("Content-Type"),
                              response_body=body if isinstance(body, (bytes, bytearray)) else None,
                              failure=failure)

    async def _non_resource(self, request: web.Request, path: str, user: UserInfo) -> web.StreamResponse:
        path = path.rstrip("/") or "/"
        accept_header = request.headers.get("Accept", "")
        if request.method not in ("GET", "HEAD"):
            raise not_found_resource()
        if path == "/version":
            return web.json_response(KUBERNETES_VERSION)
        if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/api":
            accept = parse_accept(accept_header)
            if accept.discovery:
                return _discovery_response(discovery.aggregated(self.catalog, True, accept.discovery),
                                           accept.discovery)
            return web.json_response(discovery.api_versions())
        if path == "/apis":
            accept = parse_accept(accept_header)
            if accept.discovery:
                return _discovery_response(discovery.aggregated(self.catalog, False, accept.discovery),
                                           accept.discovery)
            return web.json_response(discovery.api_group_list(self.catalog))
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.api_resource_list(self.catalog, "", parts[1])
            if doc is not None:
                return web.json_response(doc)
        if parts[0] == "apis" and len(parts) == 2:
            doc = discovery.api_group(self.catalog, parts[1])
            if doc is not None:
                return web.json_response(doc)
        if parts[0] == "apis" and len(parts) == 3:
            doc = discovery.api_resource_list(self.catalog, parts[1], parts[2])
            if doc is not None:
                return web.json_response(doc)
        if parts[0] == "openapi":
            return self.openapi.respond(request, parts[1:])
        if path == "/":
            return web.json_response({"paths": sorted(self._root_paths())})
        raise not_found_resource()

    def _root_paths(self) -> list[str]:
        paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version", "/openapi/v3"]
        for group, versions in self.catalog.group_versions().items():
            if group:
                paths.append(f"/apis/{group}")
                paths += [f"/apis/{group}/{v}" for v in versions]
        return paths


async def _standard_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Headers every kube-apiserver response carries."""
    response.headers.setdefault("Audit-Id", str(uuid.uuid4()))
    response.headers.setdefault("Cache-Control", "no-cache, private")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _status_response(exc: StatusError) -> web.Response:
    resp = web.Response(body=orjson.dumps(exc.status()) + b"\n", status=exc.code)
    resp.content_type = "application/json"
    return resp


def _discovery_response(doc: dict, version: str) -> web.Response:
    resp = web.Response(body=orjson.dumps(doc))
    resp.headers["Content-Type"] = discovery.aggregated_content_type(version)
    return resp


__all__ = ["APIServer", "KUBERNETES_VERSION", "respond"]
