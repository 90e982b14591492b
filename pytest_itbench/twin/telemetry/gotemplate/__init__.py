"""Go's text/template in Python, as far as Prometheus' alert templates use it.

    template = Template.parse("__alert_X", "{{ $labels.pod }} is {{ $value | humanize }}", functions.keys())
    template.execute(data, functions)

Parsing and execution follow Go's ``text/template`` (grammar, value printing
through fmt, ``missingkey=zero``, argument type checks) and raise errors worded
as Go words them, because Prometheus puts those words into annotations.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

from .execute import Executor, TemplateExecError
from .functions import BUILTINS, Function
from .nodes import ListNode
from .parser import TemplateParseError, parse
from .values import (NO_VALUE, GoDuration, GoError, GoMap, GoStruct, GoTime, GoValue, Method, SafeHTML,
                     go_type_name)


class Template:
    """A parsed template; parse once, execute with functions bound to each execution's context."""

    def __init__(self, name: str, text: str, root: ListNode):
        self.name = name
        self.text = text
        self.root = root

    @classmethod
    def parse(cls, name: str, text: str, function_names: Collection[str]) -> "Template":
        """Parse ``text``, whose calls may name Go's builtins and ``function_names``.

        Raises :class:`TemplateParseError`."""
        return cls(name, text, parse(name, text, {*BUILTINS, *function_names}))

    def execute(self, data: Any, functions: Mapping[str, Function]) -> str:
        """Run with ``data`` as dot and ``functions`` added to the builtins. Raises :class:`TemplateExecError`."""
        return Executor(self.name, self.text, {**BUILTINS, **functions}).run(self.root, data)


__all__ = ["Function", "GoDuration", "GoError", "GoMap", "GoStruct", "GoTime", "GoValue", "Method", "NO_VALUE",
           "SafeHTML", "Template", "TemplateExecError", "TemplateParseError", "go_type_name"]
