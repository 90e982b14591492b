"""Errors as they travel up a call chain: what a server answers, and how each client library words it.

A failure has a cause (``refused``, ``no_such_host``, ``dns_timeout``, ``unreachable``,
``deadline``, ``reset``, ``protocol``, ``status``), a text, and, once a server has answered, a
gRPC code or an HTTP status. The sheet's client wordings are templates over these placeholders:

``{address}`` the ``ip:port`` dialled, ``{host}`` and ``{port}`` as configured, ``{dns}`` the
resolver (``10.96.0.10:53``), ``{code}`` the gRPC code as Go prints it (``Internal``), ``{CODE}``
as its enum name (``INTERNAL``), ``{number}`` its number, ``{message}`` the server's message,
``{status}`` the HTTP status and ``{reason}`` its reason phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .sheet import GRPC_CODES, ClientWording, ErrorSpec

# OpenTelemetry's rule for gRPC server spans: only these codes mark the span as an error.
_SERVER_ERROR_CODES = frozenset({"UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
                                 "DATA_LOSS"})
_GO_NAMES = {"OK": "OK", "CANCELLED": "Canceled", "UNKNOWN": "Unknown", "INVALID_ARGUMENT": "InvalidArgument",
             "DEADLINE_EXCEEDED": "DeadlineExceeded", "NOT_FOUND": "NotFound", "ALREADY_EXISTS": "AlreadyExists",
             "PERMISSION_DENIED": "PermissionDenied", "RESOURCE_EXHAUSTED": "ResourceExhausted",
             "FAILED_PRECONDITION": "FailedPrecondition", "ABORTED": "Aborted", "OUT_OF_RANGE": "OutOfRange",
             "UNIMPLEMENTED": "Unimplemented", "INTERNAL": "Internal", "UNAVAILABLE": "Unavailable",
             "DATA_LOSS": "DataLoss", "UNAUTHENTICATED": "Unauthenticated"}
_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout"}
# How a failure reached by a call maps onto a gRPC code when a server passes it on without choosing one.
CAUSE_CODES = {"refused": "UNAVAILABLE", "no_such_host": "UNAVAILABLE", "dns_timeout": "UNAVAILABLE",
               "unreachable": "UNAVAILABLE", "reset": "UNAVAILABLE", "deadline": "DEADLINE_EXCEEDED",
               "protocol": "UNKNOWN", "auth": "UNAUTHENTICATED"}


@dataclass(frozen=True)
class ErrorText:
    """A failure as one party reports it."""

    message: str
    cause: str  # see the module docstring
    grpc: str | None = None  # code name, once a gRPC server answered
    http: int | None = None  # status, once an HTTP server answered
    span_error: bool = True  # the reporting span is marked as an error

    @property
    def status_code(self) -> str:
        return "STATUS_CODE_ERROR" if self.span_error else "STATUS_CODE_UNSET"


def server_error(spec: ErrorSpec, cause_text: str, cause: str) -> ErrorText:
    """The answer a server gives when it fails as ``spec`` says, ``{error}`` being ``cause_text``."""
    message = spec.message.replace("{error}", cause_text)
    if spec.grpc is not None:
        marked = spec.grpc in _SERVER_ERROR_CODES if spec.span_error is None else spec.span_error
        return ErrorText(message, cause, grpc=spec.grpc, span_error=marked)
    marked = (spec.http or 500) >= 500 if spec.span_error is None else spec.span_error
    return ErrorText(message, cause, http=spec.http, span_error=marked)


def client_error(wording: ClientWording, cause: str, fields: dict[str, str]) -> ErrorText:
    """A connection-level failure (no server answered) in the client's words."""
    return ErrorText(render(getattr(wording, cause), fields), cause)


def client_view(wording: ClientWording, answer: ErrorText, fields: dict[str, str]) -> ErrorText:
    """A server's error answer as the calling client reports it."""
    if answer.grpc is None and answer.http is None:
        return answer  # not an answer: the failure already is the client's own
    values = dict(fields, message=answer.message)
    if answer.grpc is not None:
        values.update(code=_GO_NAMES[answer.grpc], CODE=answer.grpc, number=str(GRPC_CODES.index(answer.grpc)))
    if answer.http is not None:
        values.update(status=str(answer.http), reason=_REASONS.get(answer.http, ""))
    return ErrorText(render(wording.status, values), answer.cause, answer.grpc, answer.http)


PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


def render(template: str, values: dict[str, str]) -> str:
    """``{name}`` placeholders from ``values``; unknown ones stay as written. A placeholder is a name in braces, so
    the braces of JSON or of ``Status{code=...}`` around one are text (``{"msg":"{error}"}`` fills ``{error}``)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
