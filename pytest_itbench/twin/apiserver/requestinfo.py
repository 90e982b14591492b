"""Turn a request path and method into a RequestInfo, as apiserver's RequestInfoFactory does."""

from __future__ import annotations

from dataclasses import dataclass

# Namespace subresources: /api/v1/namespaces/{name}/{status|finalize} address the namespace itself.
_NAMESPACE_SUBRESOURCES = {"status", "finalize"}


@dataclass
class RequestInfo:
    is_resource: bool
    path: str
    verb: str  # get list watch create update patch delete deletecollection; or the HTTP verb, lowercased
    api_prefix: str = ""
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = ()


def request_info(method: str, path: str, query) -> RequestInfo:
    method = method.upper()
    http_verb = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}.get(method, method.lower())
    parts = [p for p in path.strip("/").split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        return RequestInfo(False, path, method.lower())
    prefix = parts[0]
    rest = parts[1:]
    if prefix == "api":
        if not rest:
            return RequestInfo(False, path, method.lower())
        group, version, rest = "", rest[0], rest[1:]
    else:
        if len(rest) < 2:
            return RequestInfo(False, path, method.lower())
        group, version, rest = rest[0], rest[1], rest[2:]
    info = RequestInfo(True, path, http_verb, prefix, group, version)
    if not rest:
        info.is_resource = False
        info.verb = method.lower()
        return info
    if rest[0] == "watch":
        # Deprecated /watch/ prefixed paths.
        rest = rest[1:]
        info.verb = "watch"
    if rest and rest[0] == "namespaces":
        if len(rest) > 1:
            info.namespace = rest[1]
            if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
    info.parts = tuple(rest)
    if rest:
        info.resource = rest[0]
    if len(rest) >= 2:
        info.name = rest[1]
    if len(rest) >= 3:
        info.subresource = rest[2]
    if info.resource == "namespaces" and info.namespace and not info.name:
        # /api/v1/namespaces/{name} and its subresources
        info.name = info.namespace
    if info.resource == "namespaces":
        info.namespace = ""
    if info.verb != "watch":
        if not info.name:
            if http_verb == "get":
                info.verb = "watch" if str(query.get("watch", "")).lower() in ("true", "1") else "list"
            elif http_verb == "delete":
                info.verb = "deletecollection"
    elif info.name:
        pass
    return info
