"""The shell's ``test`` / ``[`` builtin over a container's files, after POSIX's rules by argument count.

dash and BusyBox ash both build it in; their error messages differ, and both
exit 2 on an error (``[ 1 -eq x ]``), 1 for false and 0 for true.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fs import Directory, File, FileSystem

_UNARY_FILE = {"-e", "-f", "-d", "-r", "-w", "-x", "-s", "-h", "-L", "-b", "-c", "-p", "-S", "-g", "-u", "-k"}
_UNARY = _UNARY_FILE | {"-z", "-n", "-t"}
_BINARY_STRING = {"=", "!=", "==", "<", ">"}
_BINARY_NUMBER = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
_BINARY_FILE = {"-nt", "-ot", "-ef"}
_BINARY = _BINARY_STRING | _BINARY_NUMBER | _BINARY_FILE


class TestError(Exception):
    """The expression is malformed; the message is dash's (``dash``) or ash's (``ash``)."""

    def __init__(self, dash: str, ash: str):
        super().__init__(dash)
        self.dash = dash
        self.ash = ash


@dataclass
class _Files:
    fs: FileSystem
    cwd: str


def evaluate(args: list[str], fs: FileSystem, cwd: str) -> bool:
    """Whether ``test ARGS`` holds; raises :class:`TestError` on a malformed expression."""
    parser = _Parser(args, _Files(fs, cwd))
    if not args:
        return False
    result = parser.expression()
    if parser.i < len(args):
        word = args[parser.i]
        raise TestError(f"{args[parser.i - 1] if parser.i else word}: unexpected operator",
                        f"{word}: unknown operand")
    return result


class _Parser:
    """dash's recursive descent: ``-o`` binds looser than ``-a``, ``!`` and parentheses bind tightest; the
    one-, two- and three-argument forms are read as POSIX says before any operator."""

    def __init__(self, args: list[str], files: _Files):
        self.args = args
        self.i = 0
        self.files = files

    def left(self) -> int:
        return len(self.args) - self.i

    def expression(self) -> bool:
        result = self.conjunction()
        while self.left() > 0 and self.args[self.i] == "-o":
            self.i += 1
            result = self.conjunction() or result
        return result

    def conjunction(self) -> bool:
        result = self.negation()
        while self.left() > 0 and self.args[self.i] == "-a":
            self.i += 1
            result = self.negation() and result
        return result

    def negation(self) -> bool:
        if self.left() > 1 and self.args[self.i] == "!":
            self.i += 1
            return not self.negation()
        return self.primary()

    def primary(self) -> bool:
        args, i = self.args, self.i
        if self.left() == 0:
            raise TestError("argument expected", "argument expected")
        word = args[i]
        if word == "(" and self.left() > 1 and not (self.left() >= 3 and args[i + 1] in _BINARY):
            self.i += 1
            result = self.expression()
            if self.left() == 0 or args[self.i] != ")":
                raise TestError("closing paren expected", "closing paren expected")
            self.i += 1
            return result
        if self.left() >= 3 and args[i + 1] in _BINARY:
            self.i += 3
            return self.binary(word, args[i + 1], args[i + 2])
        if word in _UNARY and self.left() >= 2:
            self.i += 2
            return self.unary(word, args[i + 1])
        if self.left() >= 2 and args[i + 1] not in ("-a", "-o", ")"):
            if args[i + 1] in _BINARY:
                raise TestError(f"{args[i + 1]}: argument expected", f"{args[i + 1]}: argument expected")
            raise TestError(f"{word}: unexpected operator", f"{args[i + 1]}: unknown operand")
        self.i += 1
        return word != ""

    def unary(self, op: str, operand: str) -> bool:
        if op == "-z":
            return operand == ""
        if op == "-n":
            return operand != ""
        if op == "-t":
            return False  # an exec's descriptors here are pipes, not terminals
        node = self.files.fs.get(operand, self.files.cwd) if operand else None
        if op in ("-h", "-L"):
            return False  # the twin's container files are followed, not inspected as links
        if node is None:
            return False
        if op == "-f":
            return isinstance(node, File)
        if op == "-d":
            return isinstance(node, Directory)
        if op == "-s":
            return isinstance(node, File) and bool(node.content)
        if op in ("-e", "-r", "-w"):
            return True
        if op == "-x":
            return isinstance(node, Directory) or bool(getattr(node, "mode", 0) & 0o111)
        return False  # device, pipe, socket, setuid and sticky tests: no such files in the model

    def binary(self, left: str, op: str, right: str) -> bool:
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        if op == "<":
            return left < right
        if op == ">":
            return left > right
        if op in _BINARY_NUMBER:
            a, b = _number(left), _number(right)
            return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
        first = self.files.fs.get(left, self.files.cwd)
        second = self.files.fs.get(right, self.files.cwd)
        if op == "-ef":
            return first is not None and first is second
        return False  # modification times of the model's files are not kept apart


def _number(text: str) -> int:
    stripped = text.strip()
    body = stripped[1:] if stripped[:1] in "+-" else stripped
    if not body.isdigit():
        raise TestError(f"Illegal number: {text}", f"{text}: bad number")
    return int(stripped)
