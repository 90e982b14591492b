"""The programs an exec can run in a container: coreutils-like tools over the container's view.

Each program reads its arguments and stdin from an :class:`Invocation`,
writes to its stdout and stderr, and returns an exit status, with the
messages and exit codes of GNU coreutils / procps (Debian-based images) or
BusyBox (Alpine and BusyBox images), depending on the image.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import re
import tarfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from .clock_tools import CLOCK_TOOLS
from .fs import Directory, File, FileSystem, Link
from .stream_tools import STREAM_TOOLS

DEBIAN, BUSYBOX, DISTROLESS = "debian", "busybox", "distroless"


@dataclass
class Process:
    pid: int
    argv: list[str]


@dataclass
class Sandbox:
    """What commands in one container can see."""

    env: dict[str, str]
    fs: FileSystem
    hostname: str
    flavor: str
    workdir: str
    user: str
    processes: list[Process]  # PID 1 and anything else already running
    started: float  # when the container started
    now: float  # when the exec starts
    exec_pid: int  # the PID the exec'd process gets
    pod: dict | None = None  # the pod it runs in, for the network's view of where connections come from
    store: object | None = None  # the cluster state, for a network judged from the store alone
    network: object | None = None  # a :class:`~.network.Network`; built from ``store`` when first needed


@dataclass
class Invocation:
    argv: list[str]
    stdin: bytes
    env: dict[str, str]
    cwd: str
    sandbox: Sandbox
    output: list[tuple[int, bytes]] = field(default_factory=list)  # (fd, data) in the order written
    elapsed: float = 0.0  # seconds the program spent waiting (a connect timing out), for timed runs

    @property
    def name(self) -> str:
        return posixpath.basename(self.argv[0])

    @property
    def gnu(self) -> bool:
        return self.sandbox.flavor != BUSYBOX

    def out(self, text: str | bytes) -> None:
        self.output.append((1, text.encode() if isinstance(text, str) else text))

    def err(self, text: str) -> None:
        self.output.append((2, text.encode()))

    def read(self, path: str) -> tuple[bytes | None, str | None]:
        """A file's bytes, or an error text (``No such file or directory``, ``Is a directory``)."""
        if path == "-":
            return self.stdin, None
        node = self.sandbox.fs.get(path, self.cwd)
        if node is None:
            return None, "No such file or directory"
        if isinstance(node, Directory):
            return None, "Is a directory"
        assert isinstance(node, File)
        return node.content, None


Program = Callable[[Invocation], int]


def env(inv: Invocation) -> int:
    inv.out("".join(f"{k}={v}\n" for k, v in inv.env.items()))
    return 0


def printenv(inv: Invocation) -> int:
    names = inv.argv[1:]
    if not names:
        return env(inv)
    status = 0
    for name in names:
        if name in inv.env:
            inv.out(inv.env[name] + "\n")
        else:
            status = 1
    return status


def echo(inv: Invocation) -> int:
    args = inv.argv[1:]
    newline = True
    if args and args[0] == "-n":
        newline, args = False, args[1:]
    inv.out(" ".join(args) + ("\n" if newline else ""))
    return 0


def cat(inv: Invocation) -> int:
    status = 0
    for path in inv.argv[1:] or ["-"]:
        data, problem = inv.read(path)
        if data is not None:
            inv.out(data)
            continue
        status = 1
        if inv.gnu:
            inv.err(f"cat: {path}: {problem}\n")
        elif problem == "Is a directory":
            inv.err("cat: read error: Is a directory\n")
        else:
            inv.err(f"cat: can't open '{path}': {problem}\n")
    return status


def hostname(inv: Invocation) -> int:
    inv.out(inv.sandbox.hostname + "\n")
    return 0


def pwd(inv: Invocation) -> int:
    inv.out(inv.cwd + "\n")
    return 0


def true(inv: Invocation) -> int:
    return 0


def false(inv: Invocation) -> int:
    return 1


# ---- cp ---------------------------------------------------------------------------------------------

def cp(inv: Invocation) -> int:
    flags, paths = _split_flags(inv.argv[1:])
    unknown = set(flags) - set("rRapfvdLP")
    if unknown:
        return _bad_option(inv, "cp", sorted(unknown)[0], 1)
    if len(paths) < 2:
        inv.err("cp: missing destination file operand after '" + (paths[0] if paths else "") + "'\n"
                "Try 'cp --help' for more information.\n" if inv.gnu and paths else
                "cp: missing file operand\nTry 'cp --help' for more information.\n" if inv.gnu else
                "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: cp [-arPLHpfinlsTu] "
                "SOURCE DEST\n")
        return 1
    fs = inv.sandbox.fs
    *sources, target = paths
    into = isinstance(fs.get(target, inv.cwd), Directory)
    if len(sources) > 1 and not into:
        inv.err(f"cp: target '{target}' is not a directory\n" if inv.gnu else f"cp: '{target}' is not a directory\n")
        return 1
    recursive = bool(set(flags) & set("rRa"))
    status = 0
    for source in sources:
        real = fs.resolve(source, inv.cwd)
        if real is None:
            inv.err(f"cp: cannot stat '{source}': No such file or directory\n" if inv.gnu
                    else f"cp: can't stat '{source}': No such file or directory\n")
            status = 1
            continue
        destination = posixpath.join(target, posixpath.basename(source.rstrip("/"))) if into else target
        full = posixpath.normpath(posixpath.join(inv.cwd, destination))
        if isinstance(fs.nodes[real], Directory) and not recursive:
            inv.err(f"cp: -r not specified; omitting directory '{source}'\n" if inv.gnu
                    else f"cp: omitting directory '{source}'\n")
            status = 1
            continue
        parent = fs.resolve(posixpath.dirname(full))
        if parent is None or not isinstance(fs.nodes.get(parent), Directory):
            inv.err(f"cp: cannot create regular file '{destination}': No such file or directory\n" if inv.gnu
                    else f"cp: can't create '{destination}': No such file or directory\n")
            status = 1
            continue
        _copy(fs, real, posixpath.join(parent, posixpath.basename(full)))
    return status


def _copy(fs: FileSystem, real: str, destination: str) -> None:
    node = fs.nodes[real]
    if isinstance(node, Directory):
        fs.add(destination, Directory(node.mode))
        for child in fs.children(real):
            child_real = fs.resolve(posixpath.join(real, child))
            if child_real is not None and not child.startswith(".."):  # the atomic writer's own entries stay
                _copy(fs, child_real, posixpath.join(destination, child))
        return
    fs.add(destination, File(node.content, node.mode))


# ---- ls -------------------------------------------------------------------------------------------

def ls(inv: Invocation) -> int:
    flags, paths = _split_flags(inv.argv[1:])
    unknown = set(flags) - set("aAl1dh")
    if unknown:
        return _bad_option(inv, "ls", sorted(unknown)[0], 2 if inv.gnu else 1)
    fs = inv.sandbox.fs
    status, files, directories = 0, [], []
    for path in paths or ["."]:
        real = fs.resolve(path, inv.cwd, follow_last="l" not in flags or path.endswith("/"))
        if real is None:
            status = 2 if inv.gnu else 1
            inv.err(f"ls: cannot access '{path}': No such file or directory\n" if inv.gnu
                    else f"ls: {path}: No such file or directory\n")
        elif isinstance(fs.nodes[real], Directory) and "d" not in flags:
            directories.append((path, real))
        else:
            files.append((path, real))
    blocks = []
    if files:
        blocks.append(_listing(inv, [(p, r) for p, r in files], flags, total=False))
    for path, real in directories:
        names = fs.children(real)
        if "a" in flags:
            names = [".", ".."] + names
        elif "A" not in flags:
            names = [n for n in names if not n.startswith(".")]
        entries = [(n, posixpath.normpath(posixpath.join(real, n))) for n in names]
        listing = _listing(inv, entries, flags, total=True)
        if len(paths) > 1:
            listing = f"{path}:\n{listing}"
        blocks.append(listing)
    inv.out("\n".join(blocks))
    return status


def _listing(inv: Invocation, entries: list[tuple[str, str]], flags: list[str], total: bool) -> str:
    if "l" not in flags:
        return "".join(f"{name}\n" for name, _ in entries)
    fs = inv.sandbox.fs
    rows = []
    blocks = 0
    for name, real in entries:
        node = fs.nodes.get(real) or Directory()
        size = _size(node)
        blocks += 0 if isinstance(node, Link) else 4 * -(-size // 4096)  # 1 KiB blocks of 4 KiB pages
        rows.append((_mode_text(node), "2" if isinstance(node, Directory) else "1", str(size),
                     name + (f" -> {node.target}" if isinstance(node, Link) else "")))
    size_width = max((len(r[2]) for r in rows), default=1)
    stamp = datetime.fromtimestamp(fs.mtime, tz=timezone.utc)
    when = f"{stamp:%b} {stamp.day:>2} {stamp:%H:%M}"
    owner = "root root" if inv.gnu else "root     root    "
    lines = [f"{mode} {links} {owner} {size:>{size_width}} {when} {name}\n" for mode, links, size, name in rows]
    return (f"total {blocks}\n" if total else "") + "".join(lines)


def _size(node: File | Directory | Link) -> int:
    if isinstance(node, File):
        return len(node.content)
    if isinstance(node, Link):
        return len(node.target)
    return 4096


def _mode_text(node: File | Directory | Link) -> str:
    if isinstance(node, Link):
        return "lrwxrwxrwx"
    mode = node.mode
    bits = "".join(ch if mode & (1 << (8 - i)) else "-" for i, ch in enumerate("rwxrwxrwx"))
    if mode & 0o1000:
        bits = bits[:8] + ("t" if mode & 1 else "T")
    return ("d" if isinstance(node, Directory) else "-") + bits


# ---- ps -------------------------------------------------------------------------------------------

def ps(inv: Invocation) -> int:
    sandbox = inv.sandbox
    processes = sandbox.processes + [Process(sandbox.exec_pid, inv.argv)]
    args = "".join(inv.argv[1:]).lstrip("-")

    def start(process: Process) -> str:
        when = sandbox.started if process.pid == 1 else sandbox.now
        return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%H:%M")
    if not inv.gnu:
        lines = ["PID   USER     TIME  COMMAND"]
        lines += [f"{p.pid:>5} {sandbox.user:<8} {'0:00':>5} {' '.join(p.argv)}" for p in processes]
    elif "e" in args and "f" in args:
        lines = ["UID          PID    PPID  C STIME TTY          TIME CMD"]
        lines += [f"{sandbox.user:<8} {p.pid:>7} {0:>7}  0 {start(p)} ?        00:00:00 {' '.join(p.argv)}"
                  for p in processes]
    elif "a" in args and "u" in args:
        lines = ["USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"]
        lines += [f"{sandbox.user:<8} {p.pid:>7}  0.0  0.0   {4400 if p.pid != 1 else 11404:>5} "
                  f"{1800 if p.pid != 1 else 7424:>5} ?        {'Rs' if p.pid != 1 else 'Ss':<4} {start(p)}   0:00 "
                  f"{' '.join(p.argv)}" for p in processes]
    else:
        lines = ["    PID TTY          TIME CMD"]
        lines += [f"{p.pid:>7} ?        00:00:00 {posixpath.basename(p.argv[0])[:15]}" for p in processes]
    inv.out("\n".join(lines) + "\n")
    return 0


# ---- text filters -----------------------------------------------------------------------------------

def grep(inv: Invocation) -> int:
    flags, rest = _split_flags(inv.argv[1:], takes_value="e")
    unknown = set(f for f in flags if not f.startswith("e=")) - set("ivcnqEFwlHh")
    if unknown:
        return _bad_option(inv, "grep", sorted(unknown)[0], 2)
    patterns = [f[2:] for f in flags if f.startswith("e=")]
    if not patterns:
        if not rest:
            inv.err("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"
                    if inv.gnu else "grep: no pattern\n")
            return 2
        patterns, rest = [rest[0]], rest[1:]
    source = "|".join(re.escape(p) if "F" in flags else _posix_regex(p, "E" in flags) for p in patterns)
    if "w" in flags:
        source = rf"\b(?:{source})\b"
    try:
        regex = re.compile(source, re.IGNORECASE if "i" in flags else 0)
    except re.error:
        inv.err("grep: Invalid regular expression\n")
        return 2
    files = rest or ["-"]
    prefix = (len(files) > 1 or "H" in flags) and "h" not in flags
    matched, status = False, 0
    for path in files:
        data, problem = inv.read(path)
        if data is None:
            inv.err(f"grep: {path}: {problem}\n")
            status = 2
            continue
        count = 0
        for number, line in enumerate(data.decode(errors="replace").splitlines(), 1):
            if bool(regex.search(line)) == ("v" in flags):
                continue
            count += 1
            matched = True
            if "q" in flags or "l" in flags or "c" in flags:
                continue
            label = ("(standard input)" if path == "-" else path) + ":" if prefix else ""
            inv.out(f"{label}{f'{number}:' if 'n' in flags else ''}{line}\n")
        if "c" in flags:
            inv.out((f"{path}:" if prefix else "") + f"{count}\n")
        elif "l" in flags and count:
            inv.out(("(standard input)" if path == "-" else path) + "\n")
    if status and not ("q" in flags and matched):
        return status
    return 0 if matched else 1


def _posix_regex(pattern: str, extended: bool) -> str:
    """A basic or extended POSIX regex in Python's syntax (the common subset)."""
    if extended:
        return pattern
    # In a BRE, \| \+ \? \( \) are the operators and the bare characters are literal.
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "|+?(){}":
            out.append(pattern[i + 1])
            i += 2
            continue
        out.append("\\" + ch if ch in "|+?(){}" else ch)
        i += 1
    return "".join(out)


def head(inv: Invocation) -> int:
    return _head_or_tail(inv, lambda lines, n: lines[:n])


def tail(inv: Invocation) -> int:
    return _head_or_tail(inv, lambda lines, n: lines[-n:] if n else [])


def _head_or_tail(inv: Invocation, pick: Callable[[list[bytes], int], list[bytes]]) -> int:
    args, count, files = inv.argv[1:], 10, []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-n" and i + 1 < len(args):
            count_text, i = args[i + 1], i + 2
        elif arg.startswith("-n"):
            count_text, i = arg[2:], i + 1
        elif re.fullmatch(r"-\d+", arg):
            count_text, i = arg[1:], i + 1
        else:
            files.append(arg)
            i += 1
            continue
        if not count_text.lstrip("+").isdigit():
            inv.err(f"{inv.name}: invalid number of lines: ‘{count_text}’\n" if inv.gnu
                    else f"{inv.name}: invalid number '{count_text}'\n")
            return 1
        count = int(count_text.lstrip("+"))
    status = 0
    for path in files or ["-"]:
        data, problem = inv.read(path)
        if data is None:
            inv.err(f"{inv.name}: cannot open '{path}' for reading: {problem}\n" if inv.gnu
                    else f"{inv.name}: can't open '{path}': {problem}\n")
            status = 1
            continue
        if len(files) > 1:
            inv.out(f"==> {path} <==\n")
        inv.out(b"".join(pick(data.splitlines(keepends=True), count)))
    return status


def wc(inv: Invocation) -> int:
    flags, files = _split_flags(inv.argv[1:])
    wanted = [f for f in "lwc" if f in flags] or ["l", "w", "c"]
    status = 0
    for path in files or ["-"]:
        data, problem = inv.read(path)
        if data is None:
            inv.err(f"wc: {path}: {problem}\n")
            status = 1
            continue
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        values = [str(counts[f]) for f in wanted]
        width = 7 if path == "-" and len(wanted) > 1 else 1
        label = "" if path == "-" else f" {path}"
        inv.out(" ".join(v.rjust(width) for v in values) + label + "\n")
    return status


# ---- tar (what kubectl cp runs to copy files out of a pod) ------------------------------------------------------

def tar(inv: Invocation) -> int:
    args = list(inv.argv[1:])
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # the old style: "tar cf - path"
    modes, archive, directory, members = set(), None, inv.cwd, []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-C" and i + 1 < len(args):
            directory = posixpath.join(directory, args[i + 1])
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            for letter in arg[1:]:
                if letter == "f":
                    i += 1
                    archive = args[i] if i < len(args) else None
                else:
                    modes.add(letter)
        else:
            members.append(arg)
        i += 1
    if "c" not in modes or archive != "-":
        inv.err("tar: the itbench twin's tar only creates archives on standard output (tar cf - PATH)\n")
        return 2
    buffer = io.BytesIO()
    status = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as out:
        stripped = False
        for member in members:
            real = inv.sandbox.fs.resolve(member, directory, follow_last=False)
            if real is None:
                inv.err(f"tar: {member}: Cannot stat: No such file or directory\n")
                status = 2
                continue
            name = posixpath.normpath(member)
            if name.startswith("/"):
                name, stripped = name.lstrip("/"), True
            _add_to_tar(out, inv.sandbox.fs, real, name, inv.sandbox.fs.mtime)
        if stripped and inv.gnu:
            inv.err("tar: Removing leading `/' from member names\n")
    data = buffer.getvalue()
    inv.out(gzip.compress(data, mtime=0) if "z" in modes else data)
    if status:
        inv.err("tar: Exiting with failure status due to previous errors\n")
    return status


def _add_to_tar(out: tarfile.TarFile, fs: FileSystem, real: str, name: str, mtime: float) -> None:
    node = fs.nodes[real]
    info = tarfile.TarInfo(name)
    info.mtime = int(mtime)
    info.uname = info.gname = "root"
    if isinstance(node, Link):
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, node.target, 0o777
        out.addfile(info)
    elif isinstance(node, File):
        info.size, info.mode = len(node.content), node.mode
        out.addfile(info, io.BytesIO(node.content))
    else:
        info.type, info.mode = tarfile.DIRTYPE, node.mode
        out.addfile(info)
        for child in fs.children(real):
            _add_to_tar(out, fs, posixpath.join(real, child), posixpath.join(name, child), mtime)


# ---- helpers -------------------------------------------------------------------------------------------

def _split_flags(args: list[str], takes_value: str = "") -> tuple[list[str], list[str]]:
    """Single-letter flags (``-la`` is ``l`` and ``a``; ``-e X`` is ``e=X``) and the other arguments."""
    flags, rest = [], []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i + 1:]
            break
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for j, letter in enumerate(letters):
                if letter in takes_value:
                    value = letters[j + 1:] or (args[i + 1] if i + 1 < len(args) else "")
                    if not letters[j + 1:]:
                        i += 1
                    flags.append(f"{letter}={value}")
                    break
                flags.append(letter)
        else:
            rest.append(arg)
        i += 1
    return flags, rest


def _bad_option(inv: Invocation, program: str, option: str, status: int) -> int:
    if inv.gnu:
        inv.err(f"{program}: invalid option -- '{option}'\nTry '{program} --help' for more information.\n")
    else:
        inv.err(f"{program}: unrecognized option: {option}\n")
    return status


PROGRAMS: dict[str, Program] = {
    "cat": cat, "cp": cp, "echo": echo, "env": env, "false": false, "grep": grep, "head": head, "hostname": hostname,
    "ls": ls, "printenv": printenv, "ps": ps, "pwd": pwd, "tail": tail, "tar": tar, "true": true, "wc": wc,
    **CLOCK_TOOLS, **STREAM_TOOLS,
}
