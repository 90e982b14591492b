"""Parsing the small part of the POSIX shell language that exec'd one-liners use.

``sh -c 'env | grep DB_ && cat /etc/config/app.yaml 2>/dev/null || echo missing'``:
simple commands with quoting, ``$VAR`` / ``${VAR}`` / ``$?`` expansion,
variable assignments, pipelines, ``;`` / newline / ``&&`` / ``||`` lists,
``#`` comments, the redirections ``>``, ``>>``, ``<``, ``2>``, ``2>&1``
and ``1>&2``, and the loops ``while LIST; do LIST; done`` and ``until LIST;
do LIST; done`` (what init containers wait with). Expansion happens when a
command runs (see :mod:`exec_commands`), so words keep which parts were
quoted. Anything else (subshells, command substitution, ``if``, ``for``,
``case``) is reported as :class:`Unsupported` rather than misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class ShellSyntaxError(Exception):
    """The script is not valid shell (the message is dash's wording, without the ``sh: 1:`` prefix)."""


class Unsupported(Exception):
    """The script uses a construct the twin's shell does not interpret."""


@dataclass(frozen=True)
class Part:
    text: str
    quoted: bool  # quoted text is neither field-split nor globbed
    variable: bool = False  # ``text`` is a variable name to expand


@dataclass(frozen=True)
class Word:
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Redirect:
    fd: int  # 0, 1 or 2
    op: str  # "<", ">", ">>" or ">&"
    target: Word | int  # a file name, or the fd duplicated by ">&"


@dataclass
class Command:
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Loop:
    """``while`` / ``until`` CONDITION ``do`` BODY ``done``: the body runs while the condition's status is 0
    (``while``) or until it is (``until``)."""

    until: bool
    condition: list["AndOr"]
    body: list["AndOr"]


@dataclass
class Pipeline:
    commands: list[Command | Loop]


@dataclass
class AndOr:
    """Pipelines joined by ``&&`` / ``||``; ``ops[i]`` joins pipeline ``i`` and ``i + 1``."""

    pipelines: list[Pipeline]
    ops: list[str]
    line: int  # the script line it starts on, for error messages


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_LOOP_WORDS = {"while", "until", "do", "done"}
_UNSUPPORTED_WORDS = {"if", "then", "else", "elif", "fi", "for", "case", "esac", "function", "{", "}"}


class _ListBuilder:
    """Collects one list of and-or lists: the whole script, or a loop's condition or body."""

    def __init__(self, line: int):
        self.lists: list[AndOr] = []
        self.pipelines: list[Pipeline] = []
        self.ops: list[str] = []
        self.commands: list[Command | Loop] = []
        self.current: Command | Loop = Command()
        self.pending: tuple[int, str] | None = None  # a redirection operator waiting for its target
        self.continued = False  # after | && ||, newlines do not end the list
        self.start = line

    def command_empty(self) -> bool:
        current = self.current
        return isinstance(current, Command) and not (current.words or current.assignments or current.redirects)

    def at_command_start(self) -> bool:
        return self.command_empty() and self.pending is None

    def idle(self) -> bool:
        """Nothing collected since the last list ended."""
        return not (self.pipelines or self.commands) and self.command_empty()

    def end_command(self, token: str) -> None:
        if self.pending is not None:
            raise ShellSyntaxError(f"Syntax error: {_describe(token)} unexpected")
        if not self.command_empty():
            self.commands.append(self.current)
        self.current = Command()

    def operator(self, value: str) -> None:
        if value == "\n" and self.continued and self.command_empty():
            return
        self.end_command(value)
        if value in ("|", "&&", "||"):
            if not self.commands:
                raise ShellSyntaxError(f"Syntax error: {_describe(value)} unexpected")
            if value != "|":
                self.pipelines.append(Pipeline(self.commands))
                self.commands = []
                self.ops.append(value)
            self.continued = True
            return
        if self.continued or (not self.commands and not self.pipelines and value != "\n"):
            raise ShellSyntaxError(f"Syntax error: {_describe(value)} unexpected")
        self.end_list()

    def end_list(self) -> None:
        if self.commands:
            self.pipelines.append(Pipeline(self.commands))
            self.commands = []
        if self.pipelines:
            self.lists.append(AndOr(self.pipelines, self.ops, self.start))
        self.pipelines, self.ops = [], []

    def finish(self, token: str) -> list[AndOr]:
        """The collected lists, at ``token`` (``do``, ``done`` or the end of the script)."""
        self.end_command(token)
        if self.continued:
            raise ShellSyntaxError(f"Syntax error: {_describe(token)} unexpected")
        self.end_list()
        return self.lists


@dataclass
class _OpenLoop:
    """A loop being parsed: the enclosing list's builder, and what has been read of the loop so far."""

    outer: _ListBuilder
    until: bool
    condition: list[AndOr] | None = None  # set once ``do`` is read


def parse(script: str) -> list[AndOr]:
    """The script as a list of and-or lists, in order."""
    line = 1
    builder = _ListBuilder(line)
    loops: list[_OpenLoop] = []

    for kind, value in _tokenize(script):
        if kind == "op":
            if value == "\n":
                line += 1
            if isinstance(builder.current, Loop) and value not in ("\n", ";", "&&", "||"):
                raise Unsupported(f"the operator {value!r} after a loop")
            builder.operator(value)
            continue
        if builder.idle():
            builder.start = line
        builder.continued = False
        if kind == "redirect":
            if builder.pending is not None:
                raise ShellSyntaxError("Syntax error: redirection unexpected")
            if isinstance(builder.current, Loop):
                raise Unsupported("redirections of a loop")
            builder.pending = value
            continue
        word: Word = value
        keyword = _keyword(word) if builder.at_command_start() and not isinstance(builder.current, Loop) else None
        if isinstance(builder.current, Loop):
            raise ShellSyntaxError("Syntax error: word unexpected")
        if keyword in ("while", "until"):
            if builder.commands:
                raise Unsupported("a loop in a pipeline")
            loops.append(_OpenLoop(builder, keyword == "until"))
            builder = _ListBuilder(line)
            continue
        if keyword == "do" and loops and loops[-1].condition is None:
            condition = builder.finish("do")
            if not condition:
                raise ShellSyntaxError('Syntax error: "do" unexpected')
            loops[-1].condition = condition
            builder = _ListBuilder(line)
            continue
        if keyword == "done" and loops and loops[-1].condition is not None:
            body = builder.finish("done")
            if not body:
                raise ShellSyntaxError('Syntax error: "done" unexpected')
            open_loop = loops.pop()
            builder = open_loop.outer
            builder.current = Loop(open_loop.until, open_loop.condition, body)
            continue
        if keyword in _LOOP_WORDS:
            raise ShellSyntaxError(f'Syntax error: "{keyword}" unexpected')
        current = builder.current
        if builder.pending is not None:
            fd, op = builder.pending
            builder.pending = None
            if op == ">&":
                target = "".join(p.text for p in word.parts)
                if target not in ("1", "2"):
                    raise Unsupported(f"the redirection >&{target}")
                current.redirects.append(Redirect(fd, op, int(target)))
            else:
                current.redirects.append(Redirect(fd, op, word))
            continue
        first = word.parts[0] if word.parts else None
        if not current.words and first is not None and not first.quoted and not first.variable:
            match = _ASSIGNMENT.match(first.text)
            if match:
                rest = Part(first.text[match.end():], False)
                current.assignments.append((match.group(1), Word((rest, *word.parts[1:]))))
                continue
            if first.text in _UNSUPPORTED_WORDS and len(word.parts) == 1:
                raise Unsupported(f"the shell keyword {first.text!r}")
        current.words.append(word)
    if loops:
        expecting = "do" if loops[-1].condition is None else "done"
        raise ShellSyntaxError(f'Syntax error: end of file unexpected (expecting "{expecting}")')
    builder.end_command("\n")
    if builder.continued:
        raise ShellSyntaxError("Syntax error: end of file unexpected")
    return builder.finish("\n")


def _keyword(word: Word) -> str | None:
    """The reserved word ``word`` is, when it is one unquoted word at the start of a command."""
    if len(word.parts) == 1 and not word.parts[0].quoted and not word.parts[0].variable:
        text = word.parts[0].text
        if text in _LOOP_WORDS:
            return text
    return None


def _describe(token: str) -> str:
    return "newline" if token == "\n" else f'"{token}"'


def _tokenize(script: str) -> list[tuple[str, object]]:
    tokens: list[tuple[str, object]] = []
    i, n = 0, len(script)
    parts: list[Part] = []
    in_word = False

    def flush() -> None:
        nonlocal parts, in_word
        if in_word:
            tokens.append(("word", Word(tuple(_merge(parts)))))
        parts, in_word = [], False

    while i < n:
        ch = script[i]
        if ch in " \t":
            flush()
            i += 1
        elif ch == "#" and not in_word:
            while i < n and script[i] != "\n":
                i += 1
        elif ch == "\n":
            flush()
            tokens.append(("op", "\n"))
            i += 1
        elif ch in ";&|":
            flush()
            pair = script[i:i + 2]
            if pair in ("&&", "||"):
                tokens.append(("op", pair))
                i += 2
            elif pair == ";;":
                raise Unsupported("case clauses")
            else:
                tokens.append(("op", ch))
                i += 1
        elif ch in "<>" or (ch in "012" and not in_word and script[i + 1:i + 2] in ("<", ">")):
            flush()
            fd = -1
            if ch in "012":
                fd = int(ch)
                i += 1
                ch = script[i]
            if ch == "<":
                tokens.append(("redirect", (0 if fd < 0 else fd, "<")))
                i += 1
            elif script[i:i + 2] == ">>":
                tokens.append(("redirect", (1 if fd < 0 else fd, ">>")))
                i += 2
            elif script[i:i + 2] == ">&":
                tokens.append(("redirect", (1 if fd < 0 else fd, ">&")))
                i += 2
            else:
                tokens.append(("redirect", (1 if fd < 0 else fd, ">")))
                i += 1
        elif ch in "()`":
            raise Unsupported("subshells and command substitution" if ch != "`" else "command substitution")
        elif ch == "'":
            end = script.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("Syntax error: Unterminated quoted string")
            parts.append(Part(script[i + 1:end], True))
            in_word = True
            i = end + 1
        elif ch == '"':
            i = _double_quoted(script, i + 1, parts)
            in_word = True
        elif ch == "\\":
            if i + 1 < n and script[i + 1] == "\n":
                i += 2
                continue
            parts.append(Part(script[i + 1:i + 2], True))
            in_word = True
            i += 2
        elif ch == "$":
            i = _dollar(script, i, parts, quoted=False)
            in_word = True
        else:
            parts.append(Part(ch, False))
            in_word = True
            i += 1
    flush()
    return tokens


def _double_quoted(script: str, i: int, parts: list[Part]) -> int:
    n = len(script)
    while i < n:
        ch = script[i]
        if ch == '"':
            if not parts or parts[-1].variable or not parts[-1].quoted:
                parts.append(Part("", True))
            return i + 1
        if ch == "\\" and i + 1 < n and script[i + 1] in '$`"\\\n':
            if script[i + 1] != "\n":
                parts.append(Part(script[i + 1], True))
            i += 2
        elif ch == "$":
            i = _dollar(script, i, parts, quoted=True)
        elif ch == "`":
            raise Unsupported("command substitution")
        else:
            parts.append(Part(ch, True))
            i += 1
    raise ShellSyntaxError("Syntax error: Unterminated quoted string")


def _dollar(script: str, i: int, parts: list[Part], quoted: bool) -> int:
    rest = script[i + 1:]
    if rest.startswith("("):
        raise Unsupported("command substitution")
    if rest.startswith("{"):
        end = rest.find("}")
        name = rest[1:end] if end > 0 else ""
        if not (_NAME.fullmatch(name) or name in ("?", "$")):
            raise Unsupported(f"the parameter expansion ${{{name}}}" if end > 0 else "an unterminated ${")
        parts.append(Part(name, quoted, variable=True))
        return i + end + 2
    match = _NAME.match(rest)
    if match:
        parts.append(Part(match.group(0), quoted, variable=True))
        return i + 1 + match.end()
    if rest[:1] in ("?", "$"):
        parts.append(Part(rest[0], quoted, variable=True))
        return i + 2
    parts.append(Part("$", quoted))
    return i + 1


def _merge(parts: list[Part]) -> list[Part]:
    """Join neighbouring literal characters of the same quoting into one part."""
    merged: list[Part] = []
    for part in parts:
        if merged and not part.variable and not merged[-1].variable and merged[-1].quoted == part.quoted:
            merged[-1] = Part(merged[-1].text + part.text, part.quoted)
        else:
            merged.append(part)
    return merged
