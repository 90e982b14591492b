"""The parse tree of a Go text/template, with each node printed as Go's ``Node.String()`` prints it.

Execution errors quote the node being evaluated (``executing "x" at <gt $value 1>``),
so the printed forms matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass
class Node:
    pos: int


@dataclass
class TextNode(Node):
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass
class ListNode(Node):
    nodes: list["Node"] = field(default_factory=list)

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


@dataclass
class IdentifierNode(Node):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass
class VariableNode(Node):
    idents: list[str]  # "$x", then field names

    def __str__(self) -> str:
        return ".".join(self.idents)


@dataclass
class DotNode(Node):
    def __str__(self) -> str:
        return "."


@dataclass
class NilNode(Node):
    def __str__(self) -> str:
        return "nil"


@dataclass
class FieldNode(Node):
    idents: list[str]

    def __str__(self) -> str:
        return "".join("." + i for i in self.idents)


@dataclass
class BoolNode(Node):
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass
class NumberNode(Node):
    text: str
    is_int: bool = False
    is_float: bool = False
    int_value: int = 0
    float_value: float = 0.0

    def __str__(self) -> str:
        return self.text


@dataclass
class StringNode(Node):
    quoted: str  # as written, quotes included
    text: str

    def __str__(self) -> str:
        return self.quoted


@dataclass
class PipeNode(Node):
    line: int
    is_assign: bool = False
    decl: list[VariableNode] = field(default_factory=list)
    cmds: list["CommandNode"] = field(default_factory=list)

    def __str__(self) -> str:
        text = ""
        if self.decl:
            text = ", ".join(str(v) for v in self.decl) + (" = " if self.is_assign else " := ")
        return text + " | ".join(str(c) for c in self.cmds)


@dataclass
class ChainNode(Node):
    node: "Operand"
    fields: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = f"({self.node})" if isinstance(self.node, PipeNode) else str(self.node)
        return text + "".join("." + f for f in self.fields)


Operand = Union[IdentifierNode, VariableNode, DotNode, NilNode, FieldNode, BoolNode, NumberNode, StringNode,
                PipeNode, ChainNode]


@dataclass
class CommandNode(Node):
    args: list[Operand] = field(default_factory=list)

    def __str__(self) -> str:
        return " ".join(f"({a})" if isinstance(a, PipeNode) else str(a) for a in self.args)


@dataclass
class ActionNode(Node):
    line: int
    pipe: PipeNode

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@dataclass
class BranchNode(Node):
    """``if``, ``range`` and ``with``: a pipeline, a body and an optional else branch."""

    keyword: str
    line: int
    pipe: PipeNode
    body: ListNode
    else_body: Optional[ListNode]

    def __str__(self) -> str:
        text = "{{" + self.keyword + " " + str(self.pipe) + "}}" + str(self.body)
        if self.else_body is not None:
            text += "{{else}}" + str(self.else_body)
        return text + "{{end}}"


@dataclass
class LoopControlNode(Node):
    """``break`` or ``continue`` inside a ``range``."""

    keyword: str

    def __str__(self) -> str:
        return "{{" + self.keyword + "}}"


@dataclass
class EndNode(Node):
    """``{{end}}``: only seen by the parser."""

    def __str__(self) -> str:
        return "{{end}}"


@dataclass
class ElseNode(Node):
    """``{{else}}``: only seen by the parser."""

    line: int

    def __str__(self) -> str:
        return "{{else}}"
