"""API errors as the Kubernetes API server reports them.

Each error carries the HTTP code, the ``Status.reason`` and the message a real
kube-apiserver would send, so that kubectl prints ``Error from server
(NotFound): ...`` and the official client raises the matching exception. The
store and the resource logic raise these; the HTTP layer turns them into
``Status`` bodies. Messages follow k8s.io/apimachinery/pkg/api/errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class StatusError(Exception):
    """An error the API answers with a ``Status`` object."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str, *, details: dict | None = None, code: int | None = None,
                 reason: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason

    def status(self) -> dict:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        # metav1.Status's field order (details before code), as clients that compare the text expect; empty
        # details are sent, as Go sends a non-nil pointer to an empty StatusDetails.
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(resource: str, name: str | None) -> dict:
    """Details of a Status about a (group-qualified) resource, as NewNotFound builds them."""
    plural, _, group = resource.partition(".")
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


class NotFound(StatusError):
    code, reason = 404, "NotFound"

    def __init__(self, resource: str, name: str):
        super().__init__(f'{resource} "{name}" not found', details=_details(resource, name))


class AlreadyExists(StatusError):
    code, reason = 409, "AlreadyExists"

    def __init__(self, resource: str, name: str):
        super().__init__(f'{resource} "{name}" already exists', details=_details(resource, name))


class Conflict(StatusError):
    code, reason = 409, "Conflict"

    def __init__(self, resource: str, name: str, detail: str = "the object has been modified; please apply your "
                                                               "changes to the latest version and try again"):
        super().__init__(f'Operation cannot be fulfilled on {resource} "{name}": {detail}',
                         details=_details(resource, name))


class BadRequest(StatusError):
    code, reason = 400, "BadRequest"

    def __init__(self, message: str):
        super().__init__(message)


class Unauthorized(StatusError):
    code, reason = 401, "Unauthorized"

    def __init__(self, message: str = "Unauthorized"):
        super().__init__(message)


class Forbidden(StatusError):
    code, reason = 403, "Forbidden"

    def __init__(self, message: str, resource: str = "", name: str | None = None):
        super().__init__(message, details=_details(resource, name) if resource else None)


class MethodNotAllowed(StatusError):
    code, reason = 405, "MethodNotAllowed"

    def __init__(self, message: str = "the server does not allow this method on the requested resource"):
        super().__init__(message)


class NotAcceptable(StatusError):
    code, reason = 406, "NotAcceptable"


class Gone(StatusError):
    code, reason = 410, "Expired"

    def __init__(self, message: str):
        super().__init__(message)


class RequestEntityTooLarge(StatusError):
    code, reason = 413, "RequestEntityTooLarge"

    def __init__(self, message: str = "Request entity too large: limit is 3145728"):
        super().__init__(message)


class UnsupportedMediaType(StatusError):
    code, reason = 415, "UnsupportedMediaType"


class TooManyRequests(StatusError):
    code, reason = 429, "TooManyRequests"


class InternalError(StatusError):
    code, reason = 500, "InternalError"

    def __init__(self, message: str):
        super().__init__(f"Internal error occurred: {message}", details={"causes": [{"message": message}]})


class ServiceUnavailable(StatusError):
    code, reason = 503, "ServiceUnavailable"


# ---- field errors (k8s.io/apimachinery/pkg/util/validation/field) -----------------

_FIELD_TYPES = {
    "Required": ("FieldValueRequired", "Required value"),
    "Invalid": ("FieldValueInvalid", "Invalid value"),
    "NotSupported": ("FieldValueNotSupported", "Unsupported value"),
    "Duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "Forbidden": ("FieldValueForbidden", "Forbidden"),
    "TooLong": ("FieldValueTooLong", "Too long"),
    "TooMany": ("FieldValueTooMany", "Too many"),
    "NotFound": ("FieldValueNotFound", "Not found"),
    "TypeInvalid": ("FieldValueTypeInvalid", "Invalid value"),
    "Internal": ("InternalError", "Internal error"),
}

_NO_VALUE = object()
# Error types whose message never shows the bad value (field.Error.ErrorBody).
_VALUELESS_TYPES = ("Required", "Forbidden", "TooLong", "Internal")


class GoLiteral(str):
    """A bad value already written the way Go's %#v prints it (``map[string]string{"app":"web"}``)."""


def go_value(value: Any) -> str:
    """Render a value the way field.Error prints it (Go's %#v for simple values)."""
    if isinstance(value, GoLiteral):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass
class FieldError:
    """One validation failure at a field path, e.g. ``spec.replicas``."""

    type: str
    field: str
    value: Any = _NO_VALUE
    detail: str = ""
    extra: dict = field(default_factory=dict)

    def message(self) -> str:
        _, text = _FIELD_TYPES[self.type]
        parts = [text]
        if self.type not in _VALUELESS_TYPES and self.value is not _NO_VALUE:
            parts[0] = f"{text}: {go_value(self.value)}"
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def __str__(self) -> str:
        return f"{self.field}: {self.message()}" if self.field else self.message()

    def cause(self) -> dict:
        return {"reason": _FIELD_TYPES[self.type][0], "message": self.message(), "field": self.field}


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("Required", path, detail=detail)


def invalid(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("Invalid", path, value, detail)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    quoted = ", ".join(json.dumps(s) for s in supported)
    return FieldError("NotSupported", path, value, f"supported values: {quoted}")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, detail=detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("Duplicate", path, value)


def too_long(path: str, value: Any, limit: int) -> FieldError:
    return FieldError("TooLong", path, value, f"may not be more than {limit} bytes")


class Invalid(StatusError):
    """422: the object failed validation; one cause per field error."""

    code, reason = 422, "Invalid"

    def __init__(self, kind: str, group: str, name: str, errors: list[FieldError]):
        qualified = f"{kind}.{group}" if group else kind
        if len(errors) == 1:
            summary = str(errors[0])
        else:
            summary = "[" + ", ".join(str(e) for e in errors) + "]"
        details: dict[str, Any] = {"name": name, "kind": kind, "causes": [e.cause() for e in errors]}
        if group:
            details["group"] = group
        super().__init__(f'{qualified} "{name}" is invalid: {summary}', details=details)
        self.errors = errors
