"""Content negotiation: request bodies in, JSON/YAML/Table out.

Bodies may be JSON or YAML. Protobuf bodies (which kubectl 1.32+ sends for
``create <generator>``) are refused with 415 and a message saying JSON is
required; the twin reports v1.31, so the kubectl dispatcher picks a kubectl
that sends JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import orjson
import yaml
from aiohttp import web
from multidict import CIMultiDict

from ..errors import BadRequest, NotAcceptable, UnsupportedMediaType

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's limit for JSON/YAML bodies (3 MiB)
PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class Accept:
    table: bool = False
    table_version: str = "v1"
    yaml: bool = False
    partial_metadata: bool = False
    discovery: str = ""  # "v2" or "v2beta1" when aggregated discovery is asked for


def parse_accept(header: str | None) -> Accept:
    if not header:
        return Accept()
    json_ok = False
    result = Accept()
    for clause in header.split(","):
        fields = [f.strip() for f in clause.split(";")]
        media = fields[0].lower()
        params = {}
        for f in fields[1:]:
            k, _, v = f.partition("=")
            params[k.strip()] = v.strip()
        as_ = params.get("as")
        if media in ("application/json", "*/*", "application/*", "application/json;stream=watch"):
            if as_ == "Table" and params.get("g") == "meta.k8s.io" and not result.table:
                return Accept(table=True, table_version=params.get("v", "v1"))
            if as_ == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
                if params.get("v") in ("v2", "v2beta1"):
                    return Accept(discovery=params["v"])
                continue
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return Accept(partial_metadata=True)
            if as_ is None:
                json_ok = True
        elif media in ("application/yaml", "text/yaml"):
            if as_ is None and not json_ok:
                return Accept(yaml=True)
        elif media == PROTOBUF:
            continue
        elif media.startswith("text/") or media == "application/json-patch+json":
            json_ok = True
    if not json_ok and header.strip():
        raise NotAcceptable("only the following media types are accepted: application/json, application/yaml, "
                            "application/vnd.kubernetes.protobuf")
    return result


def decode_body(raw: bytes, content_type: str | None) -> tuple[object, list[str]]:
    """Parse a request body; returns the value and any duplicate field paths seen."""
    media = (content_type or "application/json").split(";")[0].strip().lower()
    if media == PROTOBUF:
        raise UnsupportedMediaType(
            "the body of the request was in protobuf, which this server does not accept: send JSON "
            "(Content-Type: application/json) or YAML; kubectl 1.31 and earlier send JSON")
    if not raw:
        raise BadRequest("the request body is empty: a JSON or YAML object is required")
    if len(raw) > MAX_BODY:
        raise _too_large()
    if media in ("application/yaml", "text/yaml", "application/apply-patch+yaml"):
        try:
            return load_yaml(raw), []
        except yaml.YAMLError as exc:
            raise BadRequest(f"error converting YAML to JSON: {_first_line(exc)}") from None
    if media not in ("application/json", "", "*/*", "text/plain"):
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                   f"include: application/json, application/yaml, {PROTOBUF}")
    duplicates: list[str] = []
    try:
        value = json.loads(raw, object_pairs_hook=_pairs_hook(duplicates))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"couldn't get version/kind; json parse error: {exc}") from None
    return value, duplicates


class DuplicateKey(str):
    """A key given twice in one JSON object; ``container`` is that object, so decoding can tell its path."""

    container: dict


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~20x faster


def load_yaml(raw: bytes | str):
    return yaml.load(raw, Loader=_YAML_LOADER)


def _pairs_hook(duplicates: list[str]):
    def hook(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                duplicate = DuplicateKey(key)
                duplicate.container = out
                duplicates.append(duplicate)
            out[key] = value
        return out
    return hook


def warning_headers(warnings: list[str] | None) -> CIMultiDict:
    """One ``Warning: 299 - "text"`` header per warning, as the API server sends them."""
    headers: CIMultiDict = CIMultiDict()
    for w in warnings or ():
        headers.add("Warning", f"299 - {json.dumps(w)}")
    return headers


def _too_large():
    from ..errors import RequestEntityTooLarge
    return RequestEntityTooLarge(f"Request entity too large: limit is {MAX_BODY}")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def respond(value: dict, accept: Accept, status: int = 200, warnings: list[str] | None = None,
            content_type: str | None = None) -> web.Response:
    headers = warning_headers(warnings)
    if accept.yaml and content_type is None:
        body = yaml.safe_dump(value, sort_keys=False).encode()
        return web.Response(body=body, status=status, content_type="application/yaml", headers=headers)
    body = orjson.dumps(value) + b"\n"  # apimachinery's JSON serializer is a json.Encoder: one line each
    resp = web.Response(body=body, status=status, headers=headers)
    resp.content_type = content_type or "application/json"
    return resp
