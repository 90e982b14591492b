"""``seq`` and the gzip family (``gzip``, ``gunzip``, ``zcat``) as GNU and BusyBox run them.

gzip writes what a real gzip would on a pipe: the stream's header with no
name and a zero time (stdin has neither) and Unix as its system, so the
bytes are the same on every run.
"""

from __future__ import annotations

import gzip as gzip_format
import posixpath
import zlib
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from .fs import File

if TYPE_CHECKING:
    from .programs import Invocation


def seq(inv: "Invocation") -> int:
    """``seq [-w] [-s SEP] [FIRST [INCREMENT]] LAST``."""
    args, separator, pad = list(inv.argv[1:]), "\n", False
    while args and args[0].startswith("-") and len(args[0]) > 1 and not _is_number(args[0]):
        flag = args.pop(0)
        if flag == "-w":
            pad = True
        elif flag.startswith("-s"):
            separator = flag[2:] if len(flag) > 2 else (args.pop(0) if args else "")
        elif flag == "--":
            break
        else:
            inv.err(f"seq: invalid option -- '{flag[1:2]}'\nTry 'seq --help' for more information.\n" if inv.gnu
                    else "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
            return 1
    if not 1 <= len(args) <= 3:
        inv.err("seq: missing operand\nTry 'seq --help' for more information.\n" if inv.gnu and not args
                else f"seq: extra operand ‘{args[3]}’\nTry 'seq --help' for more information.\n" if inv.gnu
                else "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
        return 1
    numbers = []
    for arg in args:
        try:
            numbers.append(Decimal(arg))
        except InvalidOperation:
            inv.err(f"seq: invalid floating point argument: ‘{arg}’\nTry 'seq --help' for more information.\n"
                    if inv.gnu else f"seq: invalid number '{arg}'\n")
            return 1
    first, step, last = (Decimal(1), Decimal(1), numbers[0]) if len(numbers) == 1 else \
        (numbers[0], Decimal(1), numbers[1]) if len(numbers) == 2 else tuple(numbers)
    if step == 0:
        inv.err("seq: invalid Zero increment value: ‘0’\nTry 'seq --help' for more information.\n" if inv.gnu
                else "")
        return 1
    places = max(-min(n.as_tuple().exponent, 0) for n in (first, step))
    values, value = [], first
    while (step > 0 and value <= last) or (step < 0 and value >= last):
        values.append(f"{value:.{places}f}")
        value += step
    if pad and values:
        width = max(len(v) for v in values)
        values = [v.zfill(width) if not v.startswith("-") else "-" + v[1:].zfill(width - 1) for v in values]
    if values:
        inv.out(separator.join(values) + "\n")
    return 0


def _is_number(text: str) -> bool:
    try:
        Decimal(text)
        return True
    except InvalidOperation:
        return False


def compress(data: bytes) -> bytes:
    """A gzip stream as ``gzip`` writes one on a pipe (level 6, no name, time 0, OS Unix)."""
    stream = bytearray(gzip_format.compress(data, compresslevel=6, mtime=0))
    stream[9] = 3  # the OS byte: Python writes 255 (unknown), gzip on Linux 3 (Unix)
    return bytes(stream)


def gzip(inv: "Invocation") -> int:
    """``gzip [-c] [-d] [-f] [-k] [FILE...]``; ``gunzip`` is ``gzip -d``, ``zcat`` is ``gzip -dc``."""
    name = inv.name
    flags = {"d"} if name == "gunzip" else {"d", "c"} if name == "zcat" else set()
    files = []
    for arg in inv.argv[1:]:
        if arg.startswith("-") and len(arg) > 1 and not files:
            letters = {"--stdout": "c", "--decompress": "d", "--force": "f", "--keep": "k"}.get(arg, arg[1:])
            for letter in letters:
                if letter in "123456789":
                    continue  # the level: the stream stays valid at any level
                if letter not in "cdfkqn":
                    inv.err(f"{name}: invalid option -- '{letter}'\n")
                    return 1
                flags.add(letter)
        else:
            files.append(arg)
    decompress = "d" in flags
    status = 0
    for path in files or ["-"]:
        data, problem = inv.read(path)
        if data is None:
            inv.err(f"{name}: {path}: {problem}\n" if inv.gnu else f"{name}: can't open '{path}': {problem}\n")
            status = 1
            continue
        try:
            result = _gunzip(data) if decompress else compress(data)
        except (OSError, EOFError, zlib.error):
            # Debian's gunzip and zcat are scripts that run gzip: it is gzip that complains
            inv.err(f"\ngzip: {'stdin' if path == '-' else path}: not in gzip format\n" if inv.gnu
                    else f"{name}: invalid magic\n")
            status = 1
            continue
        if path == "-" or "c" in flags:
            inv.out(result)
            continue
        if decompress and not path.endswith(".gz"):
            inv.err(f"{name}: {path}: unknown suffix -- ignored\n")
            status = 2 if inv.gnu else 1
            continue
        target = path[:-3] if decompress else path + ".gz"
        fs = inv.sandbox.fs
        fs.add(_absolute(inv, target), File(result))
        if "k" not in flags:
            fs.nodes.pop(_absolute(inv, path), None)
    return status


def _gunzip(data: bytes) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        raise OSError("not in gzip format")
    return gzip_format.decompress(data)


def _absolute(inv: "Invocation", path: str) -> str:
    return posixpath.normpath(posixpath.join(inv.cwd, path))


STREAM_TOOLS = {"seq": seq, "gzip": gzip, "gunzip": gzip, "zcat": gzip}
