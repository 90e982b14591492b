"""User impersonation (``kubectl --as``, ``--as-group``, ``--as-uid``): the Impersonate-* request headers.

As kube-apiserver's impersonation filter does, each thing asked for must be
authorized for the real user (verb ``impersonate`` on users, groups,
serviceaccounts, authentication.k8s.io uids and userextras/<key>); the
request then runs as the impersonated user. A service account's groups come
with it; every impersonated user but system:anonymous is in
system:authenticated unless the groups asked for say otherwise.
"""

from __future__ import annotations

from typing import Mapping
from urllib.parse import unquote

from ...errors import BadRequest
from .authn import UserInfo
from .authz import Attributes, forbidden

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def impersonated(user: UserInfo, headers: Mapping[str, str], authorizer) -> UserInfo:
    """The user a request acts as: ``user`` itself, or whom its Impersonate-* headers name."""
    name = headers.get(USER_HEADER, "")
    groups_asked = headers.getall(GROUP_HEADER, [])  # type: ignore[attr-defined]
    uid = headers.get(UID_HEADER, "")
    extras: dict[str, list[str]] = {}
    for header, value in headers.items():
        if header.lower().startswith(EXTRA_PREFIX):
            extras.setdefault(unquote(header[len(EXTRA_PREFIX):].lower()), []).append(value)
    if not (name or groups_asked or uid or extras):
        return user
    if not name:
        raise BadRequest("requested impersonation of groups, extra fields or a uid without impersonating a user")

    checks: list[Attributes] = []
    groups: list[str] = []
    service_account = _service_account(name)
    if service_account is not None:
        namespace, account = service_account
        checks.append(_impersonate("", "serviceaccounts", account, namespace=namespace))
        if not groups_asked:
            groups += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    else:
        checks.append(_impersonate("", "users", name))
    for group in groups_asked:
        checks.append(_impersonate("", "groups", group))
        groups.append(group)
    for key, values in extras.items():
        checks += [_impersonate("authentication.k8s.io", "userextras", value, subresource=key) for value in values]
    if uid:
        checks.append(_impersonate("authentication.k8s.io", "uids", uid))
    for attrs in checks:
        allowed, reason = authorizer.authorize(user, attrs)
        if not allowed:
            raise forbidden(user, attrs, reason)

    if name == "system:anonymous":
        if "system:unauthenticated" not in groups:
            groups.append("system:unauthenticated")
    elif not {"system:authenticated", "system:unauthenticated"} & set(groups):
        groups.append("system:authenticated")
    return UserInfo(name, uid, tuple(groups), extras)


def _impersonate(group: str, resource: str, name: str, *, namespace: str = "", subresource: str = "") -> Attributes:
    return Attributes(verb="impersonate", is_resource=True, api_group=group, namespace=namespace, resource=resource,
                      subresource=subresource, name=name)


def _service_account(name: str) -> tuple[str, str] | None:
    if not name.startswith(_SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, _, account = name[len(_SERVICE_ACCOUNT_PREFIX):].partition(":")
    if not namespace or not account or ":" in account:
        return None
    return namespace, account
