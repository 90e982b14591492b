"""Rego policies evaluated with rego-cpp (the ``regopy`` package), one child process per evaluation.

    >>> result = evaluate("package check\\ndefault result := false\\nresult if input.ok", {"ok": True})
    >>> result.defined, result.value
    (True, True)

Why a child process: rego-cpp cannot be interrupted from another thread, so a policy that loops runs
until it is killed; and some misuses of regopy abort the whole process (asking an undefined result for
a binding does). The evaluation therefore runs in a fresh interpreter (``python -I -c``) that is killed at
the time limit; whatever happens there comes back as a :class:`RegoResult` or a :class:`RegoError`,
never as the caller's death. The child reads the result only from the output's JSON text and walks error
nodes by kind, so it never asks an undefined result for a value.

Differences from OPA worth knowing (rego-cpp 1.x): a rule whose body is a false comparison
(``result := input.x > 1`` with ``x = 0``) is undefined rather than ``false``, and division by zero is
undefined rather than an error; write ``default result := false`` as ITBench's policies do.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

DEFAULT_QUERY = "data.check.result"
MODULE_NAME = "policy.rego"


class RegoError(Exception):
    """The policy could not be evaluated: a syntax or compile error, an evaluation error (with rego-cpp's
    message), a time limit that ran out (:class:`RegoTimeout`) or an engine crash."""

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code  # rego-cpp's error code when it gave one (rego_parse_error, eval_conflict_error, ...)


class RegoTimeout(RegoError):
    """The evaluation ran past its time limit and was stopped."""


@dataclass(frozen=True)
class RegoResult:
    """What a query gave: ``defined`` is False when the query has no result (``value`` is then None).

    ``value`` is the first expression of the first result (for ``data.check.result``, the rule's value);
    ``bindings`` the variables that result bound; ``results`` every result as rego-cpp gave them.
    """

    defined: bool
    value: Any = None
    bindings: dict = field(default_factory=dict)
    results: list = field(default_factory=list)


def evaluate(policy_text: str, input: Any, query: str = DEFAULT_QUERY, *, timeout: float = 10.0,
             data: Any = None) -> RegoResult:
    """Evaluate ``query`` against ``policy_text`` (one Rego module) with ``input`` as the input document.

    ``data`` optionally loads a base document. Raises :class:`RegoError` for a policy that does not parse
    or compile, an evaluation error, a crash of the engine, and :class:`RegoTimeout` past ``timeout`` s.
    """
    try:
        request = json.dumps({"module": policy_text, "input": input, "query": query, "data": data,
                              "name": MODULE_NAME})
    except (TypeError, ValueError) as exc:
        raise RegoError(f"the input is not a JSON document: {exc}") from exc
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=request, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # subprocess.run has killed and reaped the child
        raise RegoTimeout(f"the Rego evaluation did not finish within {timeout:g} s and was stopped "
                          "(a policy that loops or recurses without end?)") from None
    return _answer(proc)


def _answer(proc: subprocess.CompletedProcess) -> RegoResult:
    reply = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARK):
            reply = json.loads(line[len(_MARK):])
            break
    if reply is None:
        detail = _tail(proc.stderr)
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = f"signal {-proc.returncode}"
            raise RegoError(f"the Rego engine crashed ({name})" + (f": {detail}" if detail else ""))
        raise RegoError(f"the Rego engine stopped without an answer (exit status {proc.returncode})"
                        + (f": {detail}" if detail else ""))
    if "error" in reply:
        raise RegoError(reply["error"], code=reply.get("code"))
    if not reply["defined"]:
        return RegoResult(False)
    results = reply["results"]
    first = results[0] if results else {}
    expressions = first.get("expressions") or [None]
    return RegoResult(True, expressions[0], dict(first.get("bindings") or {}), results)


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


_MARK = "@@rego-result@@ "

# The child: reads {"module", "input", "query", "data", "name"} on stdin and prints one marked JSON line.
# rego-cpp prints its own diagnostics on stderr; the answer is built from its error nodes instead.
_CHILD = r'''
import json, re, sys
MARK = "@@rego-result@@ "
VALUE = "itbench_value__"
def reply(obj):
    sys.stdout.write(MARK + json.dumps(obj) + "\n")
    sys.stdout.flush()
try:
    from regopy import Interpreter, RegoError
    from regopy import rego_shared as rs
except Exception as exc:
    reply({"error": "the regopy package is not importable: %s" % exc}); sys.exit(0)
request = json.loads(sys.stdin.read())
source, name = request["module"], request["name"]

def position(offset):
    before = source[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1

def sized(text, at):
    """rego-cpp's length-prefixed strings in its S-expressions: '16:this is unclosed'."""
    colon = text.index(":", at)
    n = int(text[at:colon])
    return text[colon + 1:colon + 1 + n], colon + 1 + n

def from_sexpr(text):
    """Messages 'file:line:col: message' out of the error tree rego-cpp gives for a bad module or call."""
    messages, code = [], None
    for m in re.finditer(r"\(error\b", text):
        end = m.end()
        file, offset = None, None
        if re.match(r" (\d+):", text[end:]):
            file, end = sized(text, end + 1)
            span = re.match(r"\|(\d+)\|", text[end:])
            if span:
                offset = int(span.group(1))
        msg_at = text.find("(errormsg ", end)
        if msg_at < 0:
            continue
        msg, _ = sized(text, msg_at + len("(errormsg "))
        code_m = re.search(r"\(errorcode (\d+):", text[end:])
        if code_m and code is None:
            code = sized(text, end + code_m.start(1))[0]
        if file == name and offset is not None:
            line, col = position(offset)
            messages.append("%s:%d:%d: %s" % (file, line, col, msg))
        else:
            messages.append(msg)
    return "; ".join(dict.fromkeys(messages)), code

def from_nodes(impl):
    """Messages and the first code of an ErrorSeq node, read child by child (never as a value)."""
    messages, code = [], None
    def walk(node):
        nonlocal code
        kind = rs.rego.regoNodeType(node)
        if kind == 1801:
            messages.append(rs.rego_node_value(node))
        elif kind == 1803 and code is None:
            code = rs.rego_node_value(node)
        for i in range(rs.rego_node_size(node)):
            walk(rs.rego_node_get(node, i))
    walk(impl)
    return "; ".join(dict.fromkeys(m for m in messages if m)), code

try:
    rego = Interpreter()
    if request.get("data") is not None:
        rego.add_data_json(json.dumps(request["data"]))
    rego.add_module(name, source)
    rego.set_input(request["input"])
except RegoError as exc:
    message, code = from_sexpr(str(exc))
    reply({"error": message or str(exc).strip(), "code": code}); sys.exit(0)
query = request["query"].strip()
# rego-cpp answers a query whose value is false as undefined; bound to a variable, false stays a value.
wrapped = re.fullmatch(r"(data|input)(\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])*", query) is not None
impl = rs.rego_query(rego._impl, (VALUE + " := " + query) if wrapped else query)
if not rs.rego_output_ok(impl):
    message, code = from_nodes(rs.rego_output_node(impl))
    reply({"error": message or "the Rego evaluation failed", "code": code}); sys.exit(0)
text = rs.rego_output_string(impl).strip()
if text == "undefined":
    reply({"defined": False}); sys.exit(0)
try:
    results = json.loads(text)
except ValueError:  # an error term printed in place of a value
    message, code = from_sexpr(text)
    reply({"error": message or text, "code": code}); sys.exit(0)
if isinstance(results, dict):
    results = [results]
if wrapped:
    results = [{"expressions": [r.get("bindings", {}).get(VALUE)],
                "bindings": {k: v for k, v in (r.get("bindings") or {}).items() if k != VALUE}} for r in results]
reply({"defined": bool(results), "results": results})
'''

__all__ = ["DEFAULT_QUERY", "RegoError", "RegoResult", "RegoTimeout", "evaluate"]
