"""PromQL: parse into a typed tree, type-check against a table of signatures, evaluate over a store.

The parser is the ``promql-parser`` package; ``signatures.py`` and
``functions.py`` are the tables of function types and implementations;
``engine.py`` runs instant and range queries with Prometheus' semantics.
"""

from .engine import Engine, QueryResult
from .errors import EvaluationError, InvalidQuery, ParseError, PromQLError, QueryTimeout
from .parse import parse, parse_selector
from .values import Matrix, Sample, Scalar, Series, String, Value, Vector, result_json

__all__ = ["Engine", "EvaluationError", "InvalidQuery", "Matrix", "ParseError", "PromQLError", "QueryResult",
           "QueryTimeout", "Sample", "Scalar", "Series", "String", "Value", "Vector", "parse", "parse_selector",
           "result_json"]
