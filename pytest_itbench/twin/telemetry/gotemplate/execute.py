"""Execution of a parsed Go template, following ``text/template``'s exec.go with ``missingkey=zero``.

Errors are worded as Go words them, with the location and the node being
evaluated: ``template: NAME:1:57: executing "NAME" at <gt $value 1>: error
calling gt: incompatible types for comparison``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .functions import LAZY, Function, accepts, truth
from .gofmt import sprint
from .lexer import go_quote
from .nodes import (ActionNode, BoolNode, BranchNode, ChainNode, CommandNode, DotNode, FieldNode, IdentifierNode,
                    ListNode, LoopControlNode, NilNode, Node, NumberNode, PipeNode, StringNode, TextNode,
                    VariableNode)
from .values import MISSING, NO_VALUE, GoError, GoStruct, GoValue, go_type_name, is_true, map_zero


class TemplateExecError(Exception):
    """An execution error, with Go's ``template: NAME:LINE:COL: executing ...`` wording."""


class _LoopControl(Exception):
    def __init__(self, keyword: str):
        self.keyword = keyword


class Executor:
    def __init__(self, name: str, text: str, functions: Mapping[str, Function]):
        self.name = name
        self.text = text
        self.functions = functions
        self.out: list[str] = []
        self.vars: list[tuple[str, Any]] = []
        self.node: Optional[Node] = None

    def run(self, root: ListNode, data: Any) -> str:
        self.vars = [("$", data)]
        self.walk(data, root)
        return "".join(self.out)

    # ---- errors ---------------------------------------------------------------------------------------
    def at(self, node: Node) -> None:
        self.node = node

    def error(self, message: str) -> None:
        if self.node is None:
            raise TemplateExecError(f"template: {self.name}: {message}")
        before = self.text[:self.node.pos]
        newline = before.rfind("\n")
        column = self.node.pos if newline < 0 else self.node.pos - newline - 1
        location = f"{self.name}:{before.count(chr(10)) + 1}:{column}"
        raise TemplateExecError(f"template: {location}: executing {go_quote(self.name)} at <{self.node}>: {message}")

    # ---- variables ------------------------------------------------------------------------------------
    def var_value(self, name: str) -> Any:
        for var_name, value in reversed(self.vars):
            if var_name == name:
                return value
        self.error(f"undefined variable: {name}")

    def set_var(self, name: str, value: Any) -> None:
        for i in range(len(self.vars) - 1, -1, -1):
            if self.vars[i][0] == name:
                self.vars[i] = (name, value)
                return
        self.error(f"undefined variable: {name}")

    # ---- walking -----------------------------------------------------------------------------------------
    def walk(self, dot: Any, node: Node) -> None:
        self.at(node)
        if isinstance(node, TextNode):
            self.out.append(node.text)
        elif isinstance(node, ListNode):
            for child in node.nodes:
                self.walk(dot, child)
        elif isinstance(node, ActionNode):
            value = self.eval_pipeline(dot, node.pipe)
            if not node.pipe.decl:
                self.print_value(node, value)
        elif isinstance(node, BranchNode):
            if node.keyword == "range":
                self.walk_range(dot, node)
            else:
                self.walk_if_or_with(dot, node)
        elif isinstance(node, LoopControlNode):
            raise _LoopControl(node.keyword)
        else:
            self.error(f"unknown node: {node}")

    def walk_if_or_with(self, dot: Any, node: BranchNode) -> None:
        mark = len(self.vars)
        value = self.eval_pipeline(dot, node.pipe)
        is_truthy, ok = is_true(value)
        if not ok:
            self.error(f"if/with can't use {sprint([value])}")
        if is_truthy:
            self.walk(value if node.keyword == "with" else dot, node.body)
        elif node.else_body is not None:
            self.walk(dot, node.else_body)
        del self.vars[mark:]

    def walk_range(self, dot: Any, node: BranchNode) -> None:
        self.at(node)
        mark = len(self.vars)
        value = self.eval_pipeline(dot, node.pipe)
        body_mark = len(self.vars)
        if isinstance(value, list):
            pairs = list(enumerate(value))
        elif isinstance(value, dict):
            pairs = [(k, value[k]) for k in sorted(value)]
        elif isinstance(value, int) and not isinstance(value, bool):
            pairs = [(i, i) for i in range(value)]
        elif value is NO_VALUE:
            pairs = []
        else:
            self.error(f"range can't iterate over {sprint([value])}")
        for index, element in pairs:
            if node.pipe.decl:
                self.vars[body_mark - 1] = (self.vars[body_mark - 1][0], element)
            if len(node.pipe.decl) > 1:
                self.vars[body_mark - 2] = (self.vars[body_mark - 2][0], index)
            try:
                self.walk(element, node.body)
            except _LoopControl as control:
                if control.keyword == "break":
                    del self.vars[body_mark:]
                    break
            del self.vars[body_mark:]
        if not pairs and node.else_body is not None:
            self.walk(dot, node.else_body)
        del self.vars[mark:]

    def print_value(self, node: Node, value: Any) -> None:
        self.at(node)
        self.out.append("<no value>" if value is NO_VALUE else sprint([value]))

    # ---- evaluation ------------------------------------------------------------------------------------
    def eval_pipeline(self, dot: Any, pipe: PipeNode) -> Any:
        self.at(pipe)
        value: Any = MISSING
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
        for variable in pipe.decl:
            if pipe.is_assign:
                self.set_var(variable.idents[0], value)
            else:
                self.vars.append((variable.idents[0], value))
        return value

    def not_a_function(self, args: list, final: Any) -> None:
        if len(args) > 1 or final is not MISSING:
            self.error(f"can't give argument to non-function {args[0]}")

    def eval_command(self, dot: Any, cmd: CommandNode, final: Any) -> Any:
        first = cmd.args[0]
        if isinstance(first, FieldNode):
            self.at(first)
            return self.eval_field_chain(dot, dot, first, first.idents, cmd.args, final)
        if isinstance(first, ChainNode):
            return self.eval_chain(dot, first, cmd.args, final)
        if isinstance(first, IdentifierNode):
            return self.eval_function(dot, first, cmd, cmd.args, final)
        if isinstance(first, PipeNode):
            self.not_a_function(cmd.args, final)
            return self.eval_pipeline(dot, first)
        if isinstance(first, VariableNode):
            return self.eval_variable(dot, first, cmd.args, final)
        self.at(first)
        self.not_a_function(cmd.args, final)
        if isinstance(first, BoolNode):
            return first.value
        if isinstance(first, DotNode):
            return dot
        if isinstance(first, NilNode):
            self.error("nil is not a command")
        if isinstance(first, NumberNode):
            return self.ideal_constant(first)
        if isinstance(first, StringNode):
            return first.text
        self.error(f"can't evaluate command {go_quote(str(first))}")

    def ideal_constant(self, number: NumberNode) -> Any:
        """A number literal where no type is expected: float if written as one, else int."""
        self.at(number)
        text = number.text.lower()
        hex_int = text.lstrip("+-").startswith("0x") and "p" not in text
        if number.is_float and not hex_int and not text.startswith("'") and any(c in text for c in ".ep"):
            return number.float_value
        if number.is_int:
            return number.int_value
        self.error(f"{number.text} overflows int")

    def eval_chain(self, dot: Any, chain: ChainNode, args: list, final: Any) -> Any:
        self.at(chain)
        if isinstance(chain.node, NilNode):
            self.error(f"indirection through explicit nil in {chain}")
        receiver = self.eval_arg(dot, None, chain.node)
        return self.eval_field_chain(dot, receiver, chain, chain.fields, args, final)

    def eval_variable(self, dot: Any, variable: VariableNode, args: Optional[list], final: Any) -> Any:
        self.at(variable)
        value = self.var_value(variable.idents[0])
        if len(variable.idents) == 1:
            self.not_a_function(args or [variable], final)
            return value
        return self.eval_field_chain(dot, value, variable, variable.idents[1:], args, final)

    def eval_field_chain(self, dot: Any, receiver: Any, node: Node, idents: list[str], args: Optional[list],
                         final: Any) -> Any:
        for ident in idents[:-1]:
            receiver = self.eval_field(dot, ident, node, None, MISSING, receiver)
        return self.eval_field(dot, idents[-1], node, args, final, receiver)

    def eval_field(self, dot: Any, name: str, node: Node, args: Optional[list], final: Any, receiver: Any) -> Any:
        if receiver is NO_VALUE:
            return NO_VALUE
        type_name = go_type_name(receiver)
        if receiver is None:
            self.error(f"nil pointer evaluating interface {{}}.{name}")
        if isinstance(receiver, GoValue) and name in receiver.methods:
            method = receiver.methods[name]
            return self.eval_call(dot, Function(lambda *a: method.call(receiver, *a), method.params), node, name,
                                  args, final)
        has_args = (args is not None and len(args) > 1) or final is not MISSING
        if isinstance(receiver, GoStruct) and name in receiver.field_names:
            if has_args:
                self.error(f"{name} has arguments but cannot be invoked as function")
            return receiver.field(name)
        if isinstance(receiver, dict):
            if has_args:
                self.error(f"{name} is not a method but has arguments")
            return receiver.get(name, map_zero(receiver))
        self.error(f"can't evaluate field {name} in type {type_name}")

    def eval_function(self, dot: Any, node: IdentifierNode, cmd: Node, args: Optional[list], final: Any) -> Any:
        self.at(node)
        function = self.functions.get(node.name)
        if function is None:
            self.error(f"{go_quote(node.name)} is not a defined function")
        if node.name in LAZY:
            return self.eval_lazy(dot, node.name, args, final)
        return self.eval_call(dot, function, cmd, node.name, args, final)

    def eval_lazy(self, dot: Any, name: str, args: Optional[list], final: Any) -> Any:
        """``and`` and ``or``: arguments are evaluated only until the result is known."""
        operands = (args or [])[1:]
        if len(operands) + (final is not MISSING) < 1:
            self.error(f"wrong number of args for {name}: want at least 1 got {len(operands)}")
        value: Any = NO_VALUE
        for operand in operands:
            value = self.eval_arg(dot, "any", operand)
            if truth(value) == (name == "or"):
                return value
        if final is not MISSING:
            value = self.validate_type(final, "any")
        return value

    def eval_call(self, dot: Any, function: Function, node: Node, name: str, args: Optional[list],
                  final: Any) -> Any:
        operands = (args or [])[1:]
        count = len(operands) + (final is not MISSING)
        fixed = len(function.params)
        if function.variadic is not None:
            if count < fixed:
                self.error(f"wrong number of args for {name}: want at least {fixed} got {len(operands)}")
        elif count != fixed:
            self.error(f"wrong number of args for {name}: want {fixed} got {count}")
        values = []
        for i, operand in enumerate(operands):
            values.append(self.eval_arg(dot, function.params[i] if i < fixed else function.variadic, operand))
        if final is not MISSING:
            param = function.params[count - 1] if count - 1 < fixed else function.variadic
            values.append(self.validate_type(final, param))
        try:
            return function.call(*values)
        except GoError as exc:
            self.at(node)
            self.error(f"error calling {name}: {exc}")

    def validate_type(self, value: Any, param: Optional[str]) -> Any:
        if value is NO_VALUE:
            if param is None or param == "any":
                return None if param == "any" else NO_VALUE
            if accepts(param, None):
                return None
            self.error(f"invalid value; expected {param}")
        if param is not None and not accepts(param, value):
            self.error(f"wrong type for value; expected {param}; got {go_type_name(value)}")
        return value

    def eval_arg(self, dot: Any, param: Optional[str], node: Node) -> Any:
        self.at(node)
        if isinstance(node, DotNode):
            return self.validate_type(dot, param)
        if isinstance(node, NilNode):
            if param is not None and accepts(param, None):
                return None
            self.error(f"cannot assign nil to {param}")
        if isinstance(node, FieldNode):
            return self.validate_type(self.eval_field_chain(dot, dot, node, node.idents, [node], MISSING), param)
        if isinstance(node, VariableNode):
            return self.validate_type(self.eval_variable(dot, node, None, MISSING), param)
        if isinstance(node, PipeNode):
            return self.validate_type(self.eval_pipeline(dot, node), param)
        if isinstance(node, IdentifierNode):
            return self.validate_type(self.eval_function(dot, node, node, None, MISSING), param)
        if isinstance(node, ChainNode):
            return self.validate_type(self.eval_chain(dot, node, None, MISSING), param)
        if param == "bool":
            if isinstance(node, BoolNode):
                return node.value
            self.error(f"expected bool; found {node}")
        if param == "string":
            if isinstance(node, StringNode):
                return node.text
            self.error(f"expected string; found {node}")
        if param == "float64":
            if isinstance(node, NumberNode) and node.is_float:
                return node.float_value
            self.error(f"expected float; found {node}")
        if param == "int":
            if isinstance(node, NumberNode) and node.is_int:
                return node.int_value
            self.error(f"expected integer; found {node}")
        if param == "any" or param is None:
            if isinstance(node, BoolNode):
                return node.value
            if isinstance(node, NumberNode):
                return self.ideal_constant(node)
            if isinstance(node, StringNode):
                return node.text
        self.error(f"can't handle {node} for arg of type {param}")
