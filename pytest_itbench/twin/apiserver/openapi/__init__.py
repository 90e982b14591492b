"""OpenAPI v3: ``/openapi/v3`` and one document per served group-version, as kube-apiserver serves them.

The root lists every group-version the catalog serves (CRD group-versions
included, the moment they are served) with a ``serverRelativeURL`` carrying
the document's hash, the uppercase hex SHA-512 of its JSON as kube-openapi
computes it. kubectl caches documents by that URL, so a changed document
must change its hash. As upstream, a document is served with that hash as
its ETag; a request whose ``hash`` is stale is redirected to the current
URL, and one with the current hash may be cached for good.

Documents are built when first asked for and cached by what they are made
of (the catalog entries of the group-version and the schemas of its custom
kinds), process-wide: twins serving the same resources share them, and a
CRD appearing in one group-version leaves the others' documents alone. What
a document is made of is looked at again whenever ``Catalog.generation``
moves; the CRD controller republishes a CRD's catalog entries whenever its
schemas change, so that covers schema changes too.
"""

from __future__ import annotations

import email.utils
import functools
import hashlib
import time
from dataclasses import dataclass

import orjson
from aiohttp import web

from ...errors import NotAcceptable
from ...schema import builtin_definitions
from ..handlers import not_found_resource
from .paths import group_version_paths
from .schemas import components
from ..resources import Resource
from ..server import KUBERNETES_VERSION

_BEARER = {"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization",
                           "type": "apiKey"}}
_ONE_YEAR = 365 * 24 * 3600


@dataclass(frozen=True)
class Document:
    body: bytes
    etag: str


@dataclass(frozen=True)
class CustomKind:
    """A custom resource kind of a group-version and its schema, as registered from the CRD."""

    kind: str
    plural: str
    definition: str  # component name, e.g. com.example.v1.Widget
    schema: bytes  # JSON, keys sorted


@dataclass(frozen=True)
class Source:
    """Everything one group-version document is made of."""

    group: str
    version: str
    resources: tuple[Resource, ...]
    custom_kinds: tuple[CustomKind, ...]

    @property
    def path(self) -> str:
        return f"apis/{self.group}/{self.version}" if self.group else f"api/{self.version}"


class OpenAPIService:
    def __init__(self, server):
        self.server = server
        self._generation: int | None = None
        self._sources: dict[str, Source] = {}

    def respond(self, request: web.Request, parts: list[str]) -> web.StreamResponse:
        if not parts or parts[0] != "v3":
            raise not_found_resource()
        sources = self._current_sources()
        if len(parts) == 1:
            return _serve(request, root_document(tuple(sources.values())))
        if not _accepts_json(request.headers.get("Accept")):
            raise NotAcceptable("only application/json is served for OpenAPI v3 documents")
        source = sources.get("/".join(parts[1:]))
        if source is None:
            raise not_found_resource()
        doc = group_version_document(source)
        wanted = request.query.get("hash")
        if wanted and wanted != doc.etag:
            return web.Response(status=301, headers={"Location": _url(source.path, doc.etag)})
        return _serve(request, doc, immutable=bool(wanted), vary=True)

    def _current_sources(self) -> dict[str, Source]:
        catalog = self.server.catalog
        generation = catalog.generation
        if generation != self._generation:
            sources = [self._source(group, version) for group, versions in catalog.group_versions().items()
                       for version in versions]
            self._sources, self._generation = {s.path: s for s in sources}, generation
        return self._sources

    def _source(self, group: str, version: str) -> Source:
        schemas = self.server.schemas
        resources = tuple(self.server.catalog.in_group_version(group, version))
        custom = []
        for res in resources:
            name = schemas.definition_name(group, version, res.kind) if res.crd else None
            if name is not None:
                schema = orjson.dumps(schemas.definition(name), option=orjson.OPT_SORT_KEYS)
                custom.append(CustomKind(res.kind, res.plural, name, schema))
        return Source(group, version, resources, tuple(custom))


@functools.lru_cache(maxsize=256)
def group_version_document(source: Source) -> Document:
    custom: dict[str, dict] = {}
    custom_names: dict[tuple[str, str, str], str] = {}
    for kind in source.custom_kinds:
        custom[kind.definition] = orjson.loads(kind.schema)
        custom_names[(source.group, source.version, kind.kind)] = kind.definition
        list_name = kind.definition + "List"
        custom[list_name] = _custom_list_schema(source.group, source.version, kind)
        custom_names[(source.group, source.version, kind.kind + "List")] = list_name
    builtin = _builtin_kinds()

    def definition_name(group: str, version: str, kind: str) -> str | None:
        return custom_names.get((group, version, kind)) or builtin.get((group, version, kind))

    paths = group_version_paths(source.group, source.version, list(source.resources), definition_name)
    only_custom = bool(source.resources) and all(r.crd for r in source.resources)
    info = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"} if only_custom else \
        {"title": "Kubernetes", "version": KUBERNETES_VERSION["gitVersion"]}
    doc = {"components": {"schemas": components(paths.referenced, custom), "securitySchemes": _BEARER},
           "info": info, "openapi": "3.0.0", "paths": paths.paths}
    return _document(doc)


@functools.lru_cache(maxsize=16)
def root_document(sources: tuple[Source, ...]) -> Document:
    paths = {s.path: {"serverRelativeURL": _url(s.path, group_version_document(s).etag)}
             for s in sorted(sources, key=lambda s: s.path)}
    return _document({"paths": paths})


def _document(doc: dict) -> Document:
    body = orjson.dumps(doc)
    return Document(body, hashlib.sha512(body).hexdigest().upper())


def _custom_list_schema(group: str, version: str, custom: CustomKind) -> dict:
    """The list kind apiextensions publishes beside a custom kind (its CRD declares no schema for it)."""
    type_meta = builtin_definitions()["io.k8s.api.apps.v1.DeploymentList"]["properties"]
    items_doc = f"List of {custom.plural}. More info: " \
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    return {
        "description": f"{custom.kind}List is a list of {custom.kind}",
        "properties": {
            "apiVersion": {"description": type_meta["apiVersion"]["description"], "type": "string"},
            "items": {"description": items_doc, "items": {"$ref": f"#/$defs/{custom.definition}"}, "type": "array"},
            "kind": {"description": type_meta["kind"]["description"], "type": "string"},
            "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
                         "description": type_meta["metadata"]["description"]},
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": group, "kind": custom.kind + "List", "version": version}],
    }


@functools.lru_cache(maxsize=1)
def _builtin_kinds() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in builtin_definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def _url(path: str, etag: str) -> str:
    return f"/openapi/v3/{path}?hash={etag}"


def _accepts_json(header: str | None) -> bool:
    for clause in (header or "*/*").split(","):
        media = clause.split(";")[0].strip().lower()
        kind, _, subtype = media.partition("/")
        if kind in ("application", "*") and subtype in ("json", "*"):
            return True
    return False


def _serve(request: web.Request, doc: Document, *, immutable: bool = False, vary: bool = False) -> web.Response:
    headers = {"Etag": f'"{doc.etag}"'}
    if vary:
        headers["Vary"] = "Accept"
    if immutable:
        # HTTP cache metadata for the client's clock, hence wall time rather than the simulation clock.
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = email.utils.formatdate(time.time() + _ONE_YEAR, usegmt=True)
    if _matches(request.headers.get("If-None-Match"), doc.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=doc.body, headers=headers, content_type="application/json")


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/").strip('"') for t in if_none_match.split(",")]
    return "*" in tags or etag in tags
