"""Parsing the part of the POSIX shell language that exec'd one-liners use.

``sh -c 'for f in $(ls /etc/cart); do grep -q port "$f" && echo "$f"; done'``:
simple commands with quoting, ``$VAR`` / ``${VAR}`` / ``$?`` / ``$#`` /
``$@`` / ``$1`` expansion, ``~``, command substitution (``$(...)`` and
backquotes, nested), variable assignments, pipelines (``!`` negates),
``;`` / newline / ``&&`` / ``||`` lists, ``#`` comments, the redirections
``>``, ``>>``, ``>|``, ``<``, ``2>``, ``2>&1`` and ``1>&2``, and the compound
commands ``while`` / ``until`` loops, ``for NAME [in WORDS]`` loops,
``if`` / ``elif`` / ``else``, ``{ LIST; }`` groups and ``( LIST )`` subshells,
each of which may stand in a pipeline and take redirections. Expansion
happens when a command runs (see :mod:`exec_commands`), so words keep which
parts were quoted. Anything else (``case``, function definitions, here-documents,
arithmetic ``$((...))``, ``${VAR:-default}`` and the other parameter
operators, file descriptors above 2) is reported as :class:`Unsupported`
rather than misread.

Syntax errors carry dash's wording (``Syntax error: "done" unexpected``); the
shell that prints them turns them into BusyBox ash's when the image has ash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class ShellSyntaxError(Exception):
    """The script is not valid shell (the message is dash's wording, without the ``sh: 1:`` prefix).

    ``line`` is the script line dash reports it on; ``at_end`` says the script ended too early (more input
    could complete it: an unclosed quote, loop or substitution)."""

    def __init__(self, message: str, line: int = 1, at_end: bool = False):
        super().__init__(message)
        self.line = line
        self.at_end = at_end


class Unsupported(Exception):
    """The script uses a construct the twin's shell does not interpret."""


@dataclass(frozen=True)
class Part:
    text: str  # literal text; a variable's name; a command substitution's source
    quoted: bool  # quoted text is neither field-split nor globbed
    variable: bool = False  # ``text`` is a variable name to expand
    command: tuple["AndOr", ...] | None = field(default=None, compare=False)  # a command substitution's lists

    @property
    def expands(self) -> bool:
        return self.variable or self.command is not None


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
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class ForLoop:
    """``for NAME in WORDS; do BODY; done``; ``words`` is None without ``in`` (the positional parameters)."""

    name: str
    words: list[Word] | None
    body: list["AndOr"]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class If:
    """``if C1; then B1; elif C2; then B2; else B3; fi``: ``branches`` [(C1, B1), (C2, B2)], ``otherwise`` B3."""

    branches: list[tuple[list["AndOr"], list["AndOr"]]]
    otherwise: list["AndOr"] | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Group:
    """``{ BODY; }`` (runs in the shell) or ``( BODY )`` (``subshell``: in a copy of the shell's state)."""

    body: list["AndOr"]
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)


Compound = Loop | ForLoop | If | Group


@dataclass
class Pipeline:
    commands: list[Command | Compound]
    negated: bool = False  # ``! pipeline``: the status is inverted


@dataclass
class AndOr:
    """Pipelines joined by ``&&`` / ``||``; ``ops[i]`` joins pipeline ``i`` and ``i + 1``."""

    pipelines: list[Pipeline]
    ops: list[str]
    line: int  # the script line it starts on, for error messages


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
                       "{", "}", "!", "function"})
_SPECIAL_PARAMETERS = "?$#@*0123456789"


def parse(script: str, line: int = 1) -> list[AndOr]:
    """The script as a list of and-or lists, in order; ``line`` is the number of its first line."""
    return _Parser(_Lexer(script, line).tokens()).program()


# ---- tokens -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "op" (; & | && || newline ( )), "redirect" or "eof"
    value: object  # a Word, an operator, (fd, op), or None
    line: int


class _Lexer:
    """Splits a script into tokens; command substitutions are lexed and parsed as they are met."""

    def __init__(self, script: str, line: int = 1):
        self.s = script
        self.i = 0
        self.base = line

    def line(self, pos: int | None = None) -> int:
        return self.base + self.s.count("\n", 0, self.i if pos is None else pos)

    def tokens(self, in_substitution: bool = False) -> list[_Token]:
        """Tokens up to the end of the script, or (``in_substitution``) up to the ``)`` that closes a ``$(``."""
        s, n = self.s, len(self.s)
        out: list[_Token] = []
        parts: list[Part] = []
        in_word = False
        word_line = 0
        depth = 0

        def flush() -> None:
            nonlocal parts, in_word
            if in_word:
                out.append(_Token("word", Word(tuple(_merge(parts))), word_line))
            parts, in_word = [], False

        def start_word() -> None:
            nonlocal in_word, word_line
            if not in_word:
                in_word, word_line = True, self.line()

        while self.i < n:
            ch = s[self.i]
            if ch in " \t":
                flush()
                self.i += 1
            elif ch == "#" and not in_word:
                while self.i < n and s[self.i] != "\n":
                    self.i += 1
            elif ch == "\n":
                flush()
                out.append(_Token("op", "\n", self.line()))
                self.i += 1
            elif ch in ";&|":
                flush()
                pair = s[self.i:self.i + 2]
                if pair in ("&&", "||"):
                    out.append(_Token("op", pair, self.line()))
                    self.i += 2
                elif pair == ";;":
                    raise Unsupported("case clauses")
                else:
                    out.append(_Token("op", ch, self.line()))
                    self.i += 1
            elif ch in "()":
                flush()
                line = self.line()
                self.i += 1
                if ch == "(":
                    depth += 1
                elif in_substitution and depth == 0:
                    out.append(_Token("eof", None, line))
                    return out
                else:
                    depth -= 1
                out.append(_Token("op", ch, line))
            elif ch in "<>" or (ch.isdigit() and not in_word and s[self.i + 1:self.i + 2] in ("<", ">")):
                flush()
                out.append(_Token("redirect", self._redirection(), self.line()))
            elif ch == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("Syntax error: Unterminated quoted string", self.line(n), at_end=True)
                start_word()
                parts.append(Part(s[self.i + 1:end], True))
                self.i = end + 1
            elif ch == '"':
                start_word()
                self.i += 1
                self._double_quoted(parts)
            elif ch == "\\":
                if s[self.i + 1:self.i + 2] == "\n":
                    self.i += 2
                    continue
                start_word()
                parts.append(Part(s[self.i + 1:self.i + 2], True))
                self.i += 2
            elif ch == "$":
                start_word()
                self._dollar(parts, quoted=False)
            elif ch == "`":
                start_word()
                parts.append(self._backquoted(quoted=False))
            elif ch == "~" and not in_word and (self.i + 1 >= n or s[self.i + 1] in "/ \t\n;&|()<>"):
                start_word()
                parts.append(Part("HOME", True, variable=True))  # tilde expansion: not split, not globbed
                self.i += 1
            else:
                start_word()
                parts.append(Part(ch, False))
                self.i += 1
        flush()
        if in_substitution:
            raise ShellSyntaxError('Syntax error: end of file unexpected (expecting ")")', self.line(n), at_end=True)
        out.append(_Token("eof", None, self.line(n)))
        return out

    def _redirection(self) -> tuple[int, str]:
        s = self.s
        fd = -1
        if s[self.i].isdigit():
            fd = int(s[self.i])
            if fd > 2:
                raise Unsupported(f"redirections of file descriptor {fd}")
            self.i += 1
        pair = s[self.i:self.i + 2]
        if pair == "<<":
            raise Unsupported("here-documents")
        if pair in ("<&", "<>"):
            raise Unsupported(f"the redirection {pair}")
        if s[self.i] == "<":
            self.i += 1
            return (0 if fd < 0 else fd, "<")
        self.i += 2 if pair in (">>", ">&", ">|") else 1
        op = {">>": ">>", ">&": ">&"}.get(pair, ">")  # >| is > (the twin's shell has no noclobber)
        return (1 if fd < 0 else fd, op)

    def _double_quoted(self, parts: list[Part]) -> None:
        s, n = self.s, len(self.s)
        start = len(parts)
        while self.i < n:
            ch = s[self.i]
            if ch == '"':
                if len(parts) == start:
                    parts.append(Part("", True))  # "" is an empty field of its own
                self.i += 1
                return
            if ch == "\\" and self.i + 1 < n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    parts.append(Part(s[self.i + 1], True))
                self.i += 2
            elif ch == "$":
                self._dollar(parts, quoted=True)
            elif ch == "`":
                parts.append(self._backquoted(quoted=True))
            else:
                parts.append(Part(ch, True))
                self.i += 1
        raise ShellSyntaxError("Syntax error: Unterminated quoted string", self.line(n), at_end=True)

    def _dollar(self, parts: list[Part], quoted: bool) -> None:
        s = self.s
        rest = s[self.i + 1:]
        if rest.startswith("(("):
            raise Unsupported("arithmetic expansion $((...))")
        if rest.startswith("("):
            start = self.i + 2
            self.i = start
            lists = _Parser(self.tokens(in_substitution=True)).program()
            parts.append(Part(s[start:self.i - 1], quoted, command=tuple(lists)))
            return
        if rest.startswith("{"):
            end = rest.find("}")
            name = rest[1:end] if end > 0 else ""
            if not (_NAME.fullmatch(name) or name.isdigit() or (len(name) == 1 and name in _SPECIAL_PARAMETERS)):
                raise Unsupported(f"the parameter expansion ${{{name}}}" if end > 0 else "an unterminated ${")
            parts.append(Part(str(int(name)) if name.isdigit() else name, quoted, variable=True))
            self.i += end + 2
            return
        match = _NAME.match(rest)
        if match:
            parts.append(Part(match.group(0), quoted, variable=True))
            self.i += 1 + match.end()
            return
        if rest[:1] and rest[0] in _SPECIAL_PARAMETERS:
            parts.append(Part(rest[0], quoted, variable=True))
            self.i += 2
            return
        if rest[:1] in ("!", "-"):
            raise Unsupported(f"the special parameter ${rest[0]}")
        parts.append(Part("$", quoted))
        self.i += 1

    def _backquoted(self, quoted: bool) -> Part:
        """A `...` substitution: inside it, a backslash quotes only $, ` and \\ (and " within double quotes)."""
        s, n = self.s, len(self.s)
        i = self.i + 1
        text: list[str] = []
        while i < n:
            ch = s[i]
            if ch == "\\" and i + 1 < n:
                following = s[i + 1]
                if following in "$`\\" or (quoted and following == '"'):
                    text.append(following)
                    i += 2
                    continue
                if following == "\n":
                    i += 2
                    continue
                text.append(ch)
                i += 1
                continue
            if ch == "`":
                break
            text.append(ch)
            i += 1
        else:
            raise ShellSyntaxError("Syntax error: EOF in backquote substitution", self.line(n), at_end=True)
        inner = "".join(text)
        lists = parse(inner, self.line())
        self.i = i + 1
        return Part(inner, quoted, command=tuple(lists))


def _merge(parts: list[Part]) -> list[Part]:
    """Join neighbouring literal characters of the same quoting into one part."""
    merged: list[Part] = []
    for part in parts:
        if merged and not part.expands and not merged[-1].expands and merged[-1].quoted == part.quoted:
            merged[-1] = Part(merged[-1].text + part.text, part.quoted)
        else:
            merged.append(part)
    return merged


# ---- grammar ------------------------------------------------------------------------------------------------------

class _Parser:
    """Recursive descent over the tokens, after the POSIX grammar, with dash's syntax error messages."""

    def __init__(self, tokens: list[_Token]):
        self.tokens = tokens
        self.i = 0

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def next(self) -> _Token:
        token = self.tokens[self.i]
        if token.kind != "eof":
            self.i += 1
        return token

    def is_op(self, *ops: str) -> bool:
        token = self.peek()
        return token.kind == "op" and token.value in ops

    def skip_newlines(self) -> None:
        while self.is_op("\n"):
            self.next()

    def unexpected(self, token: _Token, expecting: str | None = None) -> ShellSyntaxError:
        if token.kind == "eof":
            what = "end of file"
        elif token.kind == "redirect":
            what = "redirection"
        elif token.kind == "op":
            what = "newline" if token.value == "\n" else f'"{token.value}"'
        else:
            keyword = _reserved(token)
            what = f'"{keyword}"' if keyword else "word"
        message = f"Syntax error: {what} unexpected" + (f' (expecting "{expecting}")' if expecting else "")
        return ShellSyntaxError(message, token.line, at_end=token.kind == "eof")

    # ---- lists ----
    def program(self) -> list[AndOr]:
        lists = self.compound_list(())
        token = self.peek()
        if token.kind != "eof":
            raise self.unexpected(token)
        return lists

    def compound_list(self, terminators: tuple[str, ...]) -> list[AndOr]:
        """And-or lists separated by ``;``, ``&`` or newlines, up to a terminator, ``)`` or the end."""
        lists: list[AndOr] = []
        self.skip_newlines()
        while True:
            token = self.peek()
            if token.kind == "eof" or self.is_op(")") or _reserved(token) in terminators:
                return lists
            lists.append(self.and_or())
            if not self.is_op(";", "&", "\n"):
                return lists
            self.next()
            self.skip_newlines()

    def and_or(self) -> AndOr:
        line = self.peek().line
        pipelines, ops = [self.pipeline()], []
        while self.is_op("&&", "||"):
            ops.append(self.next().value)
            self.skip_newlines()
            pipelines.append(self.pipeline())
        return AndOr(pipelines, ops, line)

    def pipeline(self) -> Pipeline:
        negated = False
        if _reserved(self.peek()) == "!":
            self.next()
            negated = True
        commands = [self.command()]
        while self.is_op("|"):
            self.next()
            self.skip_newlines()
            commands.append(self.command())
        return Pipeline(commands, negated)

    # ---- commands ----
    def command(self) -> Command | Compound:
        token = self.peek()
        keyword = _reserved(token)
        if keyword in ("while", "until"):
            return self.redirected(self.loop())
        if keyword == "for":
            return self.redirected(self.for_loop())
        if keyword == "if":
            return self.redirected(self.if_clause())
        if keyword == "{":
            self.next()
            body = self.closing(self.compound_list(("}",)), "}")
            return self.redirected(Group(body, subshell=False))
        if keyword == "case":
            raise Unsupported("case statements")
        if keyword == "function":
            raise Unsupported("function definitions")
        if keyword is not None and keyword != "!":
            raise self.unexpected(token)
        if self.is_op("("):
            self.next()
            body = self.compound_list(())
            closing = self.peek()
            if not self.is_op(")"):
                raise self.unexpected(closing, ")")
            if not body:
                raise self.unexpected(closing)
            self.next()
            return self.redirected(Group(body, subshell=True))
        return self.simple_command()

    def closing(self, body: list[AndOr], keyword: str) -> list[AndOr]:
        """``body`` once the reserved word that ends it is read (a syntax error if it is missing or empty)."""
        token = self.peek()
        if _reserved(token) != keyword:
            raise self.unexpected(token, keyword)
        if not body:
            raise self.unexpected(token)
        self.next()
        return body

    def loop(self) -> Loop:
        until = self.next().value.parts[0].text == "until"
        condition = self.closing(self.compound_list(("do",)), "do")
        body = self.closing(self.compound_list(("done",)), "done")
        return Loop(until, condition, body)

    def for_loop(self) -> ForLoop:
        self.next()
        token = self.next()
        name = _literal(token)
        if name is None or not _NAME.fullmatch(name):
            raise ShellSyntaxError("Syntax error: Bad for loop variable", token.line, at_end=token.kind == "eof")
        self.skip_newlines()
        words: list[Word] | None = None
        if _literal(self.peek()) == "in":
            self.next()
            words = []
            while self.peek().kind == "word":
                words.append(self.next().value)
            if not self.is_op(";", "\n"):
                raise self.unexpected(self.peek())
            self.next()
        elif self.is_op(";"):
            self.next()
        self.skip_newlines()
        token = self.peek()
        if _reserved(token) != "do":
            raise self.unexpected(token, "do")
        self.next()
        body = self.closing(self.compound_list(("done",)), "done")
        return ForLoop(name, words, body)

    def if_clause(self) -> If:
        self.next()
        branches = []
        while True:
            condition = self.closing(self.compound_list(("then",)), "then")
            body = self.compound_list(("elif", "else", "fi"))
            token = self.peek()
            keyword = _reserved(token)
            if keyword not in ("elif", "else", "fi"):
                raise self.unexpected(token, "fi")
            if not body:
                raise self.unexpected(token)
            self.next()
            branches.append((condition, body))
            if keyword != "elif":
                break
        otherwise = None
        if keyword == "else":
            otherwise = self.closing(self.compound_list(("fi",)), "fi")
        return If(branches, otherwise)

    def redirected(self, compound: Compound) -> Compound:
        while self.peek().kind == "redirect":
            compound.redirects.append(self.redirect())
        return compound

    def redirect(self) -> Redirect:
        fd, op = self.next().value
        target = self.peek()
        if target.kind != "word":
            raise self.unexpected(target)
        self.next()
        word: Word = target.value
        if op == ">&":
            text = _literal(target)
            if text not in ("1", "2"):
                raise Unsupported(f"the redirection >&{''.join(p.text for p in word.parts)}")
            return Redirect(fd, op, int(text))
        return Redirect(fd, op, word)

    def simple_command(self) -> Command:
        command = Command()
        while True:
            token = self.peek()
            if token.kind == "redirect":
                command.redirects.append(self.redirect())
            elif token.kind == "word":
                self.next()
                word: Word = token.value
                first = word.parts[0] if word.parts else None
                match = _ASSIGNMENT.match(first.text) if first is not None and not first.quoted \
                    and not first.expands else None
                if not command.words and match:
                    rest = Part(first.text[match.end():], False)
                    command.assignments.append((match.group(1), Word((rest, *word.parts[1:]))))
                else:
                    command.words.append(word)
            elif self.is_op("(") and len(command.words) == 1 and not command.assignments:
                raise Unsupported("function definitions")
            else:
                break
        if not (command.words or command.assignments or command.redirects):
            raise self.unexpected(self.peek())
        return command


def _literal(token: _Token) -> str | None:
    """The text of a word token made of unquoted literal characters only."""
    if token.kind != "word":
        return None
    parts = token.value.parts
    if len(parts) == 1 and not parts[0].quoted and not parts[0].expands:
        return parts[0].text
    return None


def _reserved(token: _Token) -> str | None:
    """The reserved word ``token`` is, when it is one unquoted word (only meaningful where a command starts)."""
    text = _literal(token)
    return text if text in _RESERVED else None


def ash_wording(message: str) -> str:
    """A syntax error in BusyBox ash's words: ``syntax error: unexpected "done"`` for dash's
    ``Syntax error: "done" unexpected``."""
    text = message.removeprefix("Syntax error: ")
    match = re.fullmatch(r'(end of file|newline|word|redirection|"[^"]*") unexpected( \(expecting "[^"]*"\))?', text)
    if match:
        text = f"unexpected {match.group(1)}{match.group(2) or ''}"
    elif not text.startswith("EOF"):
        text = text[:1].lower() + text[1:]
    return "syntax error: " + text
