"""The parser of Go's text/template, following ``text/template/parse``: grammar, checks and messages.

Supported: text, comments, trim markers, pipelines with declarations and
assignments, ``if``/``else if``/``else``, ``range`` (with ``break`` and
``continue``), ``with``, parenthesised pipelines and field chains. Named
templates (``define``, ``template``, ``block``) are refused: alert templates
are single texts and Prometheus' rule templates never use them.
"""

from __future__ import annotations

import ast as python_ast
import re
from typing import Collection, Optional

from . import lexer as lx
from .lexer import Item
from .nodes import (ActionNode, BoolNode, BranchNode, ChainNode, CommandNode, DotNode, ElseNode, EndNode, FieldNode,
                    IdentifierNode, ListNode, LoopControlNode, NilNode, Node, NumberNode, Operand, PipeNode,
                    StringNode, TextNode, VariableNode)


class TemplateParseError(Exception):
    """A parse error, worded as Go words it: ``template: NAME:LINE: message``."""


class _Parser:
    def __init__(self, name: str, text: str, functions: Collection[str]):
        self.name = name
        self.items = lx.lex(text)
        self.index = 0
        self.line = 1  # line of the last item read, for error messages
        self.functions = functions
        self.vars = ["$"]
        self.range_depth = 0

    # ---- tokens -----------------------------------------------------------------------------------
    def next(self) -> Item:
        item = self.items[min(self.index, len(self.items) - 1)]
        self.index += 1
        self.line = item.line
        return item

    def backup(self, count: int = 1) -> None:
        self.index -= count

    def peek(self) -> Item:
        return self.items[min(self.index, len(self.items) - 1)]

    def next_non_space(self) -> Item:
        item = self.next()
        while item.type == lx.SPACE:
            item = self.next()
        return item

    def peek_non_space(self) -> Item:
        item = self.next_non_space()
        self.backup()
        return item

    def error(self, message: str) -> None:
        raise TemplateParseError(f"template: {self.name}:{self.line}: {message}")

    def expect(self, type: str, context: str) -> Item:
        item = self.next_non_space()
        if item.type != type:
            self.unexpected(item, context)
        return item

    def unexpected(self, item: Item, context: str) -> None:
        if item.type == lx.ERROR:
            self.error(item.value)
        self.error(f"unexpected {item} in {context}")

    # ---- structure ---------------------------------------------------------------------------------
    def parse(self) -> ListNode:
        root = ListNode(self.peek().pos)
        while self.peek().type != lx.EOF:
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                self.error(f"unexpected {node}")
            root.nodes.append(node)
        return root

    def item_list(self) -> tuple[ListNode, Node]:
        """Nodes up to ``{{end}}`` or ``{{else}}``, which is returned separately."""
        nodes = ListNode(self.peek_non_space().pos)
        while self.peek_non_space().type != lx.EOF:
            node = self.text_or_action()
            if isinstance(node, (EndNode, ElseNode)):
                return nodes, node
            nodes.nodes.append(node)
        self.error("unexpected EOF")
        raise AssertionError("unreachable")

    def text_or_action(self) -> Node:
        item = self.next_non_space()
        if item.type == lx.TEXT:
            return TextNode(item.pos, item.value)
        if item.type == lx.LEFT:
            return self.action()
        self.unexpected(item, "input")
        raise AssertionError("unreachable")

    def action(self) -> Node:
        item = self.next_non_space()
        keyword = item.type
        if keyword == "else":
            return self.else_control()
        if keyword == "end":
            return EndNode(self.expect(lx.RIGHT, "end").pos)
        if keyword in ("if", "range", "with"):
            return self.branch(keyword)
        if keyword in ("break", "continue"):
            return self.loop_control(item)
        if keyword in ("define", "template", "block"):
            self.error(f"{{{{{keyword}}}}} is not supported in alert templates")
        self.backup()
        start = self.peek()
        return ActionNode(start.pos, start.line, self.pipeline("command"))

    def loop_control(self, item: Item) -> Node:
        token = self.next_non_space()
        if token.type != lx.RIGHT:
            self.unexpected(token, f"{{{{{item.value}}}}}")
        if self.range_depth == 0:
            self.error(f"{{{{{item.value}}}}} outside {{{{range}}}}")
        return LoopControlNode(item.pos, item.value)

    def else_control(self) -> Node:
        peeked = self.peek_non_space()
        if peeked.type == "if":  # "{{else if ...": the if is parsed by the enclosing branch
            return ElseNode(peeked.pos, peeked.line)
        token = self.expect(lx.RIGHT, "else")
        return ElseNode(token.pos, token.line)

    def branch(self, keyword: str) -> Node:
        mark = len(self.vars)
        if keyword == "range":
            self.range_depth += 1
        pipe = self.pipeline(keyword)
        body, end = self.item_list()
        else_body: Optional[ListNode] = None
        if isinstance(end, ElseNode):
            if keyword == "range":
                self.range_depth -= 1  # break and continue are not allowed in range's else branch
            if keyword in ("if", "with") and self.peek().type == "if":
                self.next()
                else_body = ListNode(end.pos, [self.branch("if")])
            else:
                else_body, end = self.item_list()
                if not isinstance(end, EndNode):
                    self.error(f"expected end; found {end}")
        elif keyword == "range":
            self.range_depth -= 1
        del self.vars[mark:]
        return BranchNode(pipe.pos, keyword, pipe.line, pipe, body, else_body)

    # ---- pipelines ---------------------------------------------------------------------------------------
    def pipeline(self, context: str) -> PipeNode:
        start = self.peek_non_space()
        pipe = PipeNode(start.pos, start.line)
        self.declarations(pipe, context)
        while True:
            item = self.next_non_space()
            if item.type in (lx.RIGHT, lx.RIGHT_PAREN):
                self.check_pipeline(pipe, context)
                if item.type == lx.RIGHT_PAREN:
                    self.backup()
                return pipe
            if item.type in (lx.BOOL, lx.CHAR_CONSTANT, lx.DOT, lx.FIELD, lx.IDENTIFIER, lx.NUMBER, lx.NIL,
                             lx.RAW_STRING, lx.STRING, lx.VARIABLE, lx.LEFT_PAREN):
                self.backup()
                pipe.cmds.append(self.command())
            else:
                self.unexpected(item, context)

    def declarations(self, pipe: PipeNode, context: str) -> None:
        while True:
            variable = self.peek_non_space()
            if variable.type != lx.VARIABLE:
                return
            before = self.index
            self.next_non_space()
            following = self.peek_non_space()
            if following.type in (lx.ASSIGN, lx.DECLARE):
                pipe.is_assign = following.type == lx.ASSIGN
                self.next_non_space()
                pipe.decl.append(VariableNode(variable.pos, [variable.value]))
                self.vars.append(variable.value)
                return
            if following.type == lx.CHAR and following.value == ",":
                self.next_non_space()
                pipe.decl.append(VariableNode(variable.pos, [variable.value]))
                self.vars.append(variable.value)
                if context == "range" and len(pipe.decl) < 2:
                    if self.peek_non_space().type in (lx.VARIABLE, lx.RIGHT, lx.RIGHT_PAREN):
                        continue
                    self.error("range can only initialize variables")
                self.error(f"too many declarations in {context}")
            self.index = before  # an operand, not a declaration
            return

    def check_pipeline(self, pipe: PipeNode, context: str) -> None:
        if not pipe.cmds:
            self.error(f"missing value for {context}")
        for stage, cmd in enumerate(pipe.cmds[1:], start=2):
            if isinstance(cmd.args[0], (BoolNode, DotNode, NilNode, NumberNode, StringNode)):
                self.error(f"non executable command in pipeline stage {stage}")

    def command(self) -> CommandNode:
        cmd = CommandNode(self.peek_non_space().pos)
        while True:
            self.peek_non_space()
            operand = self.operand()
            if operand is not None:
                cmd.args.append(operand)
            item = self.next()
            if item.type == lx.SPACE:
                continue
            if item.type == lx.ERROR:
                self.error(item.value)
            if item.type in (lx.RIGHT, lx.RIGHT_PAREN):
                self.backup()
            elif item.type != lx.PIPE:
                self.error(f"unexpected {item} in operand")
            break
        if not cmd.args:
            self.error("empty command")
        return cmd

    def operand(self) -> Optional[Operand]:
        node = self.term()
        if node is None:
            return None
        if self.peek().type == lx.FIELD:
            chain = ChainNode(self.peek().pos, node)
            while self.peek().type == lx.FIELD:
                chain.fields.append(self.next().value[1:])
            if isinstance(node, FieldNode):
                return FieldNode(chain.pos, node.idents + chain.fields)
            if isinstance(node, VariableNode):
                return VariableNode(chain.pos, node.idents + chain.fields)
            if isinstance(node, (BoolNode, StringNode, NumberNode, NilNode, DotNode)):
                self.error(f"unexpected . after term {_go_quote(str(node))}")
            return chain
        return node

    def term(self) -> Optional[Operand]:
        item = self.next_non_space()
        if item.type == lx.ERROR:
            self.error(item.value)
        if item.type == lx.IDENTIFIER:
            if item.value not in self.functions:
                self.error(f"function {_go_quote(item.value)} not defined")
            return IdentifierNode(item.pos, item.value)
        if item.type == lx.DOT:
            return DotNode(item.pos)
        if item.type == lx.NIL:
            return NilNode(item.pos)
        if item.type == lx.VARIABLE:
            if item.value not in self.vars:
                self.error(f"undefined variable {_go_quote(item.value)}")
            return VariableNode(item.pos, [item.value])
        if item.type == lx.FIELD:
            return FieldNode(item.pos, [item.value[1:]])
        if item.type == lx.BOOL:
            return BoolNode(item.pos, item.value == "true")
        if item.type in (lx.NUMBER, lx.CHAR_CONSTANT):
            return self.number(item)
        if item.type == lx.LEFT_PAREN:
            pipe = self.pipeline("parenthesized pipeline")
            closing = self.next()
            if closing.type != lx.RIGHT_PAREN:
                self.error(f"unclosed right paren: unexpected {closing}")
            return pipe
        if item.type in (lx.STRING, lx.RAW_STRING):
            return StringNode(item.pos, item.value, self.unquote(item.value))
        self.backup()
        return None

    def unquote(self, quoted: str) -> str:
        if quoted.startswith("`"):
            return quoted[1:-1].replace("\r", "")
        try:
            return _unquote_go(quoted)
        except ValueError:
            self.error("invalid syntax")
            raise AssertionError("unreachable")

    def number(self, item: Item) -> NumberNode:
        text = item.value
        node = NumberNode(item.pos, text)
        if item.type == lx.CHAR_CONSTANT:
            try:
                value = _unquote_go('"' + text[1:-1] + '"') if text[1:-1] != '"' else '"'
            except ValueError:
                self.error(f"malformed character constant: {text}")
            if len(value) != 1:
                self.error(f"malformed character constant: {text}")
            node.is_int = node.is_float = True
            node.int_value = ord(value)
            node.float_value = float(node.int_value)
            return node
        if text.endswith("i"):
            self.error(f"complex numbers are not supported: {text}")
        integer = _parse_go_int(text)
        if integer is not None and -2 ** 63 <= integer < 2 ** 64:
            node.is_int = integer < 2 ** 63
            node.int_value = integer
            node.is_float = True
            node.float_value = float(integer)
            if not node.is_int:
                self.error(f"{text} overflows int")
            return node
        try:
            value = _parse_go_float(text)
        except ValueError:
            self.error(f"illegal number syntax: {_go_quote(text)}")
            raise AssertionError("unreachable")
        if not any(c in text for c in ".eEpP"):
            self.error(f"integer overflow: {_go_quote(text)}")
        node.is_float = True
        node.float_value = value
        if value == int(value) and abs(value) < 2 ** 63:
            node.is_int = True
            node.int_value = int(value)
        return node


def _go_quote(text: str) -> str:
    return lx.go_quote(text)


_OCTAL_LEGACY = re.compile(r"[+-]?0[0-7_]+$")


def _parse_go_int(text: str) -> Optional[int]:
    """``strconv.ParseInt(text, 0, 64)`` without the range check; None if not an integer literal."""
    try:
        if _OCTAL_LEGACY.match(text):
            return int(text.replace("0", "0o", 1) if text[0] == "0" else text[0] + "0o" + text[2:], 0)
        return int(text, 0)
    except ValueError:
        return None


def _parse_go_float(text: str) -> float:
    lowered = text.lower()
    if "0x" in lowered:
        return float.fromhex(lowered.replace("_", ""))
    return float(text)


def _unquote_go(quoted: str) -> str:
    """``strconv.Unquote`` of a double-quoted Go string (its escapes are a subset of Python's)."""
    body = quoted[1:-1]
    if "\\" not in body:
        return body
    if "\\" in re.sub(r'\\[abfnrtv\\"xuU0-7]', "", body):  # an escape Go does not have
        raise ValueError(quoted)
    value = python_ast.literal_eval(quoted)
    if not isinstance(value, str):
        raise ValueError(quoted)
    return value


def parse(name: str, text: str, functions: Collection[str]) -> ListNode:
    """The tree of ``text``; ``functions`` are the names a call may use."""
    return _Parser(name, text, functions).parse()
