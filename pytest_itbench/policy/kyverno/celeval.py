"""``validate.cel``: CEL expressions over object, oldObject, request and namespaceObject.

Evaluated with the ``common-expression-language`` package, plus the string helpers of the
Kubernetes CEL environment that policies use most.
"""

from __future__ import annotations

import re

import cel

from .errors import PolicyError


class CelError(Exception):
    """An expression that fails at evaluation time (a missing field, a type error)."""


def _k8s_functions(ctx: "cel.Context") -> None:
    ctx.add_function("lowerAscii", lambda s: s.lower())
    ctx.add_function("upperAscii", lambda s: s.upper())
    ctx.add_function("split", lambda s, sep: s.split(sep))
    ctx.add_function("join", lambda items, sep="": sep.join(items))
    ctx.add_function("trim", lambda s: s.strip())
    ctx.add_function("replace", lambda s, old, new: s.replace(old, new))
    ctx.add_function("indexOf", lambda s, sub: s.find(sub))
    ctx.add_function("lastIndexOf", lambda s, sub: s.rfind(sub))
    ctx.add_function("find", lambda s, rx: (m.group(0) if (m := re.search(rx, s)) else ""))
    ctx.add_function("findAll", lambda s, rx: [m.group(0) for m in re.finditer(rx, s)])


def compile_check(expression: str, where: str) -> None:
    try:
        cel.compile(expression)
    except ValueError as e:
        raise PolicyError(f"{where}: invalid CEL expression: {e}") from e


def evaluate(expression: str, variables: dict):
    ctx = cel.Context()
    for name, value in variables.items():
        ctx.add_variable(name, value)
    _k8s_functions(ctx)
    try:
        return cel.evaluate(expression, ctx)
    except ValueError as e:
        raise PolicyError(f"invalid CEL expression {expression!r}: {e}") from e
    except (RuntimeError, TypeError, KeyError, IndexError) as e:
        raise CelError(f"{type(e).__name__}: {e}") from e
