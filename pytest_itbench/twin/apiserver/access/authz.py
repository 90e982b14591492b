"""Authorization attributes and the Forbidden messages of kube-apiserver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...errors import Forbidden
from ...selectors import FieldSelector, SelectorError
from .authn import UserInfo
from ..requestinfo import RequestInfo


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do, as authorizer.Attributes describes it."""

    verb: str
    is_resource: bool
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""

    @classmethod
    def from_request(cls, info: RequestInfo, query: Mapping[str, str] | None = None) -> "Attributes":
        if not info.is_resource:
            return cls(verb=info.verb, is_resource=False, path=info.path)
        namespace = info.namespace
        if info.resource == "namespaces" and info.name:
            # RBAC evaluates a namespace's own requests inside that namespace.
            namespace = info.name
        name = info.name
        if not name and info.verb in ("list", "watch") and query:
            # A list or watch pinned to one name (kubectl get NAME -w) is authorized as that name,
            # so rules with resourceNames can allow it.
            name = _pinned_name(query.get("fieldSelector"))
        return cls(verb=info.verb, is_resource=True, api_group=info.group, api_version=info.version,
                   namespace=namespace, resource=info.resource, subresource=info.subresource, name=name,
                   path=info.path)


def _pinned_name(field_selector: str | None) -> str:
    if not field_selector:
        return ""
    try:
        name = FieldSelector.parse(field_selector).exact_value("metadata.name") or ""
    except SelectorError:
        return ""
    if name in (".", "..") or "/" in name or "%" in name:
        return ""
    return name


class _PathForbidden(Forbidden):
    """A denied non-resource request: its Status carries empty details, as kube-apiserver sends it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.details = {}


def forbidden(user: UserInfo, attrs: Attributes, reason: str = "") -> Forbidden:
    """The 403 a real API server sends for a denied request."""
    if not attrs.is_resource:
        message = f'forbidden: User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
        if reason:
            message += f": {reason}"
        return _PathForbidden(message)
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    message = (f'{subject} is forbidden: User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group '
               f'"{attrs.api_group}" {scope}')
    if reason:
        message += f": {reason}"
    return Forbidden(message, resource=qualified, name=attrs.name or None)
