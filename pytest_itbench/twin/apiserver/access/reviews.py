"""Access and identity reviews: SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
LocalSubjectAccessReview, TokenReview and SelfSubjectReview.

None of them is stored: each create answers with the request's object and a
status, as kube-apiserver's review registries do (201 Created). Access
reviews ask the same authorizer that guards every request; who may create
which review is RBAC's business like any other create.
"""

from __future__ import annotations

import base64
import json

from aiohttp import web

from ... import errors
from ...errors import BadRequest, FieldError, Invalid
from .authn import UserInfo
from .authz import Attributes
from ..negotiation import Accept, respond
from ..registry import Ctx
from ..requestinfo import RequestInfo
from ..resources import Resource

# The API audience of a kubeadm cluster: its service-account issuer.
API_AUDIENCES = ["https://kubernetes.default.svc.cluster.local"]


def register(server) -> None:
    """Register the review handlers with the server's virtual resources."""
    reviews = Reviews(server)
    handlers = {
        ("authorization.k8s.io", "selfsubjectaccessreviews"): reviews.self_subject_access_review,
        ("authorization.k8s.io", "selfsubjectrulesreviews"): reviews.self_subject_rules_review,
        ("authorization.k8s.io", "subjectaccessreviews"): reviews.subject_access_review,
        ("authorization.k8s.io", "localsubjectaccessreviews"): reviews.local_subject_access_review,
        ("authentication.k8s.io", "tokenreviews"): reviews.token_review,
        ("authentication.k8s.io", "selfsubjectreviews"): reviews.self_subject_review,
    }
    for (group, plural), handler in handlers.items():
        server.virtual.register(server.catalog.lookup(group, "v1", plural).bucket, handler)


class Reviews:
    def __init__(self, server):
        self.server = server

    async def _read(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx) -> dict:
        handlers = self.server.handlers
        handlers.write_options(request, ctx)
        body, duplicates = await handlers.read_body(request)
        return self.server.api.decode_body(res, body, ctx, info.namespace or None, duplicate_fields=duplicates)

    @staticmethod
    def _reply(review: dict, accept: Accept, ctx: Ctx) -> web.Response:
        review["metadata"] = dict(review.get("metadata") or {}, creationTimestamp=None)
        return respond(review, accept, 201, ctx.warnings)

    def _decide(self, review: dict, user: UserInfo, attrs: Attributes, accept: Accept, ctx: Ctx) -> web.Response:
        allowed, reason = self.server.authorizer.authorize(user, attrs)
        status: dict = {"allowed": allowed}
        if reason:
            status["reason"] = reason
        review["status"] = status
        return self._reply(review, accept, ctx)

    # ---- access reviews ------------------------------------------------------------------------------------
    async def self_subject_access_review(self, request, info, res, ctx, accept):
        review = await self._read(request, info, res, ctx)
        spec = review.get("spec") or {}
        problems = _attribute_errors(spec) + _metadata_errors(review, "must be empty")
        if problems:
            raise Invalid(res.kind, res.group, "", problems)
        return self._decide(review, ctx.user, _attributes(spec), accept, ctx)

    async def subject_access_review(self, request, info, res, ctx, accept):
        review = await self._read(request, info, res, ctx)
        spec = review.get("spec") or {}
        problems = _attribute_errors(spec) + _subject_errors(spec) + _metadata_errors(review, "must be empty")
        if problems:
            raise Invalid(res.kind, res.group, "", problems)
        return self._decide(review, _subject(spec), _attributes(spec), accept, ctx)

    async def local_subject_access_review(self, request, info, res, ctx, accept):
        review = await self._read(request, info, res, ctx)
        spec = review.get("spec") or {}
        namespace = review["metadata"].get("namespace", "")
        problems = _attribute_errors(spec) + _subject_errors(spec)
        problems += _metadata_errors(review, "must be empty except for namespace", ignore=("namespace",))
        resource_attributes = spec.get("resourceAttributes")
        if resource_attributes is not None and resource_attributes.get("namespace", "") != namespace:
            problems.append(errors.invalid("spec.resourceAttributes.namespace",
                                           resource_attributes.get("namespace", ""), "must match metadata.namespace"))
        if spec.get("nonResourceAttributes") is not None:
            problems.append(errors.invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                                           "disallowed on this kind of request"))
        if problems:
            raise Invalid(res.kind, res.group, "", problems)
        return self._decide(review, _subject(spec), _attributes(spec), accept, ctx)

    async def self_subject_rules_review(self, request, info, res, ctx, accept):
        review = await self._read(request, info, res, ctx)
        namespace = (review.get("spec") or {}).get("namespace") or ""
        if not namespace:
            raise BadRequest("no namespace on request")
        resolved = self.server.authorizer.rules_for(ctx.user, namespace)
        resource_rules, non_resource_rules = [], []
        for rule in resolved.policy_rules():
            if rule.get("resources"):
                resource_rules.append(_rule_info(rule, ("verbs", "apiGroups", "resources", "resourceNames")))
            if rule.get("nonResourceURLs"):
                non_resource_rules.append(_rule_info(rule, ("verbs", "nonResourceURLs")))
        # RBAC enumerates every permission it grants, so the list is complete; a binding to a missing role
        # is reported, not guessed at.
        status: dict = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                        "incomplete": False}
        if resolved.errors:
            status["evaluationError"] = resolved.error_text()
        out = {"kind": res.kind, "apiVersion": res.api_version, "metadata": {}, "spec": {}, "status": status}
        return self._reply(out, accept, ctx)

    # ---- identity reviews -------------------------------------------------------------------------------------
    async def token_review(self, request, info, res, ctx, accept):
        review = await self._read(request, info, res, ctx)
        spec = review.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise BadRequest("token is required for TokenReview in authentication")
        review["status"] = self._token_status(token, list(spec.get("audiences") or API_AUDIENCES))
        return self._reply(review, accept, ctx)

    def _token_status(self, token: str, audiences: list[str]) -> dict:
        user = self.server.authenticator.authenticate(f"Bearer {token}")
        if user is None:
            return {"user": {}, "error": "invalid bearer token"}
        token_audiences = _jwt_audiences(token)
        if token_audiences is not None:
            granted = [a for a in token_audiences if a in audiences]
            if not granted:
                return {"user": {}, "error": f"token audiences {_go_strings(token_audiences)} is invalid for the "
                                             f"target audiences {_go_strings(audiences)}"}
            audiences = granted
        return {"authenticated": True, "user": _user_info(user), "audiences": audiences}

    async def self_subject_review(self, request, info, res, ctx, accept):
        await self._read(request, info, res, ctx)
        out = {"kind": res.kind, "apiVersion": res.api_version,
               "metadata": {"creationTimestamp": self.server.clock.timestamp()},
               "status": {"userInfo": _user_info(ctx.user)}}
        return respond(out, accept, 201, ctx.warnings)


# ---- helpers ---------------------------------------------------------------------------------------------------

def _attributes(spec: dict) -> Attributes:
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(verb=resource.get("verb", ""), is_resource=True, api_group=resource.get("group", ""),
                          api_version=resource.get("version") or "*", namespace=resource.get("namespace", ""),
                          resource=resource.get("resource", ""), subresource=resource.get("subresource", ""),
                          name=resource.get("name", ""))
    non_resource = spec["nonResourceAttributes"]
    return Attributes(verb=non_resource.get("verb", ""), is_resource=False, path=non_resource.get("path", ""))


def _attribute_errors(spec: dict) -> list[FieldError]:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        return [errors.invalid("spec.nonResourceAttributes", non_resource,
                               "cannot be specified in combination with resourceAttributes")]
    if resource is None and non_resource is None:
        return [errors.invalid("spec.resourceAttributes", "null",
                               "exactly one of nonResourceAttributes or resourceAttributes must be specified")]
    return []


def _subject_errors(spec: dict) -> list[FieldError]:
    if not spec.get("user") and not spec.get("groups"):
        return [errors.invalid("spec.user", spec.get("user", ""), "at least one of user or group must be specified")]
    return []


def _metadata_errors(review: dict, detail: str, ignore: tuple[str, ...] = ()) -> list[FieldError]:
    meta = review.get("metadata") or {}
    set_fields = {k: v for k, v in meta.items() if v not in (None, "", [], {}) and k not in ignore + ("managedFields",)}
    return [errors.invalid("metadata", meta, detail)] if set_fields else []


def _subject(spec: dict) -> UserInfo:
    """The user a SubjectAccessReview asks about: exactly the groups it names, no implicit ones."""
    return UserInfo(spec.get("user", ""), spec.get("uid", ""), tuple(spec.get("groups") or ()),
                    dict(spec.get("extra") or {}))


def _rule_info(rule: dict, keys: tuple[str, ...]) -> dict:
    out = {"verbs": list(rule.get("verbs") or ())}
    out.update({key: list(rule[key]) for key in keys[1:] if rule.get(key)})
    return out


def _user_info(user: UserInfo) -> dict:
    info: dict = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = user.extra
    return info


def _jwt_audiences(token: str) -> list[str] | None:
    """The ``aud`` claim of a JWT-shaped token; None for opaque tokens, which serve any audience asked for."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    audiences = claims.get("aud") if isinstance(claims, dict) else None
    if isinstance(audiences, str):
        return [audiences]
    return list(audiences) if isinstance(audiences, list) else None


def _go_strings(values: list[str]) -> str:
    """A string list as Go's %q prints it."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"
