"""PromQL errors, each carrying the HTTP API's error type, as Prometheus classifies them."""

from __future__ import annotations


class PromQLError(Exception):
    """Root of the engine's errors. ``error_type`` is what ``/api/v1/query`` reports."""

    error_type = "execution"


class InvalidQuery(PromQLError):
    """The query cannot run as asked (``bad_data``), e.g. a range vector as a range query."""

    error_type = "bad_data"


class ParseError(InvalidQuery):
    """The query does not parse or does not type-check."""

    def __init__(self, message: str):
        super().__init__(f"parse error: {message}")
        self.detail = message


class EvaluationError(PromQLError):
    """The query is valid but cannot be evaluated on this data (``execution``)."""


class QueryTimeout(PromQLError):
    error_type = "timeout"

    def __init__(self, where: str = "expression evaluation"):
        super().__init__(f"query timed out in {where}")

