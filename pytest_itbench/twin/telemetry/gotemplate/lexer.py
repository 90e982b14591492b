"""The lexer of Go's text/template: text and ``{{ }}`` actions, as ``text/template/parse`` splits them.

Positions are offsets into the template text (characters; Go counts bytes,
which is the same for the ASCII that alert templates are written in). A
lexical error ends the stream with an ``ERROR`` item, so the parser reports
it where Go's parser meets it.
"""

from __future__ import annotations

from dataclasses import dataclass

LEFT_DELIM, RIGHT_DELIM = "{{", "}}"
_SPACES = " \t\r\n"

# Item types. Keywords sort after KEYWORD, as in Go, so their String() is "<word>".
TEXT, LEFT, RIGHT, SPACE, IDENTIFIER, FIELD, VARIABLE, STRING, RAW_STRING = (
    "text", "left", "right", "space", "identifier", "field", "variable", "string", "raw string")
CHAR_CONSTANT, NUMBER, BOOL, NIL, DOT, PIPE, LEFT_PAREN, RIGHT_PAREN = (
    "char constant", "number", "bool", "nil", "dot", "pipe", "(", ")")
DECLARE, ASSIGN, CHAR, ERROR, EOF = ":=", "=", "char", "error", "EOF"
KEYWORDS = {"block", "break", "continue", "define", "else", "end", "if", "range", "template", "with"}


@dataclass(frozen=True)
class Item:
    type: str
    value: str
    pos: int
    line: int

    def __str__(self) -> str:
        """How Go's parser names an item in "unexpected ..." messages."""
        if self.type == EOF:
            return "EOF"
        if self.type == ERROR:
            return self.value
        if self.type in KEYWORDS:
            return f"<{self.value}>"
        if len(self.value) > 10:
            return go_quote(self.value[:10]) + "..."
        return go_quote(self.value)


def go_quote(text: str) -> str:
    """``strconv.Quote``: double quotes with Go's escapes (non-printable runes as \\x, \\u or \\U)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def describe_rune(ch: str) -> str:
    """Go's ``%#U``: ``U+0040 '@'``."""
    code = ord(ch)
    text = f"U+{code:04X}"
    return f"{text} '{ch}'" if ch.isprintable() else text


def _alphanumeric(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdigit()


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.start = 0
        self.line = 1
        self.start_line = 1
        self.items: list[Item] = []
        self.paren_depth = 0

    # ---- scanning primitives ------------------------------------------------------------------------
    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def next(self) -> str:
        ch = self.peek()
        if ch:
            self.pos += 1
            if ch == "\n":
                self.line += 1
        return ch

    def backup(self) -> None:
        self.pos -= 1
        if self.text[self.pos] == "\n":
            self.line -= 1

    def accept(self, chars: str) -> bool:
        ch = self.peek()
        if ch and ch in chars:
            self.next()
            return True
        return False

    def accept_run(self, chars: str) -> None:
        while self.accept(chars):
            pass

    def emit(self, type: str, value: str | None = None) -> None:
        self.items.append(Item(type, self.text[self.start:self.pos] if value is None else value, self.start,
                               self.start_line))
        self.ignore()

    def ignore(self) -> None:
        self.start = self.pos
        self.start_line = self.line

    def skip_to(self, pos: int) -> None:
        while self.pos < pos:
            self.next()
        self.ignore()

    def error(self, message: str) -> None:
        self.items.append(Item(ERROR, message, self.start, self.start_line))

    # ---- states -----------------------------------------------------------------------------------
    def run(self) -> list[Item]:
        while self.lex_text():
            if not self.lex_action():
                break
        return self.items

    def lex_text(self) -> bool:
        """Text up to the next action; False at the end of input."""
        found = self.text.find(LEFT_DELIM, self.pos)
        if found < 0:
            self.emit_text_until(len(self.text))
            self.items.append(Item(EOF, "", self.pos, self.line))
            return False
        trim = self._left_trim_at(found + len(LEFT_DELIM))
        end = found
        if trim:
            while end > self.pos and self.text[end - 1] in _SPACES:
                end -= 1
        self.emit_text_until(end)
        self.skip_to(found)
        return True

    def emit_text_until(self, end: int) -> None:
        while self.pos < end:
            self.next()
        if self.pos > self.start:
            self.emit(TEXT)

    def _left_trim_at(self, pos: int) -> bool:
        return self.text.startswith("-", pos) and pos + 1 < len(self.text) and self.text[pos + 1] in _SPACES

    def _right_delim_at(self, pos: int) -> tuple[bool, bool]:
        """Whether a right delimiter starts at ``pos``, and whether it carries the trim marker."""
        if (pos < len(self.text) and self.text[pos] in _SPACES and self.text.startswith("-", pos + 1)
                and self.text.startswith(RIGHT_DELIM, pos + 2)):
            return True, True
        return self.text.startswith(RIGHT_DELIM, pos), False

    def lex_action(self) -> bool:
        """From a left delimiter to its right delimiter; False after an error."""
        trim = self._left_trim_at(self.pos + len(LEFT_DELIM))
        after = self.pos + len(LEFT_DELIM) + (2 if trim else 0)
        if self.text.startswith("/*", after):
            return self.lex_comment(after)
        self.pos += len(LEFT_DELIM)
        self.emit(LEFT, LEFT_DELIM)
        if trim:
            self.skip_to(after)
        self.paren_depth = 0
        return self.lex_inside_action()

    def lex_comment(self, start: int) -> bool:
        end = self.text.find("*/", start + 2)
        if end < 0:
            self.error("unclosed comment")
            return False
        is_delim, trim = self._right_delim_at(end + 2)
        if not is_delim:
            self.skip_to(end + 2)
            self.error("comment ends before closing delimiter")
            return False
        self.skip_to(end + 2 + (2 if trim else 0) + len(RIGHT_DELIM))
        if trim:
            self._skip_spaces()
        return True

    def _skip_spaces(self) -> None:
        while self.peek() and self.peek() in _SPACES:
            self.next()
        self.ignore()

    def lex_inside_action(self) -> bool:
        while True:
            is_delim, trim = self._right_delim_at(self.pos)
            if is_delim:
                if self.paren_depth:
                    self.error("unclosed left paren")
                    return False
                if trim:
                    self.skip_to(self.pos + 2)
                self.pos += len(RIGHT_DELIM)
                self.emit(RIGHT, RIGHT_DELIM)
                if trim:
                    self._skip_spaces()
                return True
            ch = self.next()
            if not ch:
                self.error("unclosed action")
                return False
            if ch in _SPACES:
                self.lex_space()
            elif ch == "=":
                self.emit(ASSIGN)
            elif ch == ":":
                if self.next() != "=":
                    self.error("expected :=")
                    return False
                self.emit(DECLARE)
            elif ch == "|":
                self.emit(PIPE)
            elif ch == '"':
                if not self.lex_quote():
                    return False
            elif ch == "`":
                if not self.lex_raw_quote():
                    return False
            elif ch == "$":
                self.lex_name(VARIABLE)
            elif ch == "'":
                if not self.lex_char():
                    return False
            elif ch == ".":
                if self.peek().isdigit():
                    self.backup()
                    if not self.lex_number():
                        return False
                elif not self.lex_field():
                    return False
            elif ch in "+-" or ch.isdigit():
                self.backup()
                if not self.lex_number():
                    return False
            elif _alphanumeric(ch):
                if not self.lex_identifier():
                    return False
            elif ch == "(":
                self.paren_depth += 1
                self.emit(LEFT_PAREN)
            elif ch == ")":
                self.paren_depth -= 1
                if self.paren_depth < 0:
                    self.error("unexpected right paren")
                    return False
                self.emit(RIGHT_PAREN)
            elif ord(ch) < 0x80 and ch.isprintable():
                self.emit(CHAR)
            else:
                self.error(f"bad character {describe_rune(ch)}")
                return False

    def lex_space(self) -> None:
        count = 1
        while self.peek() and self.peek() in _SPACES:
            self.next()
            count += 1
        # A space followed by "-}}" belongs to the trim marker of the closing delimiter.
        if self._right_delim_at(self.pos - 1) == (True, True):
            self.backup()
            if count == 1:
                self.ignore()
                return
        self.emit(SPACE)

    def lex_quote(self) -> bool:
        while True:
            ch = self.next()
            if ch == "\\":
                ch = self.next()
                if ch and ch != "\n":
                    continue
            if not ch or ch == "\n":
                self.error("unterminated quoted string")
                return False
            if ch == '"':
                self.emit(STRING)
                return True

    def lex_raw_quote(self) -> bool:
        end = self.text.find("`", self.pos)
        if end < 0:
            self.error("unterminated raw quoted string")
            return False
        while self.pos <= end:
            self.next()
        self.emit(RAW_STRING)
        return True

    def lex_char(self) -> bool:
        while True:
            ch = self.next()
            if ch == "\\":
                ch = self.next()
                if ch and ch != "\n":
                    continue
            if not ch or ch == "\n":
                self.error("unterminated character constant")
                return False
            if ch == "'":
                self.emit(CHAR_CONSTANT)
                return True

    def lex_name(self, type: str) -> None:
        while _alphanumeric(self.peek()):
            self.next()
        self.emit(type)

    def lex_field(self) -> bool:
        if not _alphanumeric(self.peek()):
            self.emit(DOT)
            return True
        while _alphanumeric(self.peek()):
            self.next()
        if not self.at_terminator():
            self.error(f"bad character {describe_rune(self.peek())}")
            return False
        self.emit(FIELD)
        return True

    def lex_identifier(self) -> bool:
        while _alphanumeric(self.peek()):
            self.next()
        if not self.at_terminator():
            self.error(f"bad character {describe_rune(self.peek())}")
            return False
        word = self.text[self.start:self.pos]
        if word in KEYWORDS:
            self.emit(word)
        elif word in ("true", "false"):
            self.emit(BOOL)
        elif word == "nil":
            self.emit(NIL)
        else:
            self.emit(IDENTIFIER)
        return True

    def at_terminator(self) -> bool:
        ch = self.peek()
        if not ch or ch in _SPACES or ch in ".,|:()":
            return True
        return self.text.startswith(RIGHT_DELIM, self.pos)

    def lex_number(self) -> bool:
        self.accept("+-")
        digits = "0123456789_"
        if self.accept("0"):
            if self.accept("xX"):
                digits = "0123456789abcdefABCDEF_"
            elif self.accept("oO"):
                digits = "01234567_"
            elif self.accept("bB"):
                digits = "01_"
        self.accept_run(digits)
        if self.accept("."):
            self.accept_run(digits)
        if len(digits) == 11 and self.accept("eE"):
            self.accept("+-")
            self.accept_run("0123456789_")
        if len(digits) == 23 and self.accept("pP"):
            self.accept("+-")
            self.accept_run("0123456789_")
        self.accept("i")
        if _alphanumeric(self.peek()):
            self.next()
            self.error(f"bad number syntax: {go_quote(self.text[self.start:self.pos])}")
            return False
        self.emit(NUMBER)
        return True


def lex(text: str) -> list[Item]:
    """The items of ``text``, ending with ``EOF`` or ``ERROR``."""
    return _Lexer(text).run()
