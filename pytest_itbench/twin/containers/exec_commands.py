"""Running an exec'd command in a simulated container, from the pod's own state only.

:func:`sandbox_for` gathers what the container can see (environment, files,
hostname, processes); :func:`run` starts ``argv`` in it the way the
container runtime would: a program that is not in the image fails to start
with containerd's (runc's) message, anything else runs and exits with a
status. ``sh`` / ``bash`` run scripts through a small interpreter
(:mod:`shell`), with the error wording of dash, bash or BusyBox ash.

Which programs an image has is judged from its name: Alpine and BusyBox
images have BusyBox (and no bash), distroless and pause images have no
programs at all, anything else is taken to be Debian-based.
"""

from __future__ import annotations

import itertools
import posixpath
from dataclasses import dataclass
from typing import Iterator

from . import conditions, shell
from .env import environment, pod_hostname, run_as_user
from .fs import Directory, File, TokenIssuer, filesystem
from . import ContainerRef
from .net_tools import NET_TOOLS
from .network import Network
from .programs import BUSYBOX, DEBIAN, DISTROLESS, PROGRAMS, Invocation, Process, Sandbox
from .stdin import Stdin, drive
from ..store import Store

_BIN_DIRS = ("/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
_SHELLS = {DEBIAN: ("sh", "bash"), BUSYBOX: ("sh", "ash"), DISTROLESS: ()}


class ExecStartError(Exception):
    """The runtime could not start the process (the message is runc's, as containerd reports it)."""


@dataclass
class ExecResult:
    output: list[tuple[int, bytes]]  # (1 = stdout, 2 = stderr, data) in the order written
    exit_code: int


def image_flavor(image: str) -> str:
    name = image.split("@")[0].rsplit("/", 1)[-1]
    if "distroless" in image or name.startswith("pause"):
        return DISTROLESS
    if "alpine" in image or "busybox" in image:
        return BUSYBOX
    return DEBIAN


def sandbox_for(store: Store, pod: dict, ref: ContainerRef, issue_token: TokenIssuer, now: float,
                exec_pid: int, network: Network | None = None) -> Sandbox:
    """The container as an exec sees it now; ``network`` answers its connections (the store's view if None)."""
    container = ref.spec
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if not argv:
        # The image's entrypoint is not cluster state; its name is the best guess at PID 1.
        argv = [_image_name(container.get("image", ""))]
    fs = filesystem(store, pod, ref, issue_token)
    workdir = container.get("workingDir") or "/"
    if not isinstance(fs.nodes.get(workdir), Directory):
        fs.add(workdir, Directory())
    user = run_as_user(pod, container)
    return Sandbox(env=environment(store, pod, ref), fs=fs, hostname=pod_hostname(pod),
                   flavor=image_flavor(container.get("image", "")), workdir=workdir,
                   user="root" if user == 0 else str(user), processes=[Process(1, argv)], started=fs.mtime,
                   now=now, exec_pid=exec_pid, pod=pod, store=store, network=network)


def _image_name(image: str) -> str:
    return image.split("@")[0].rsplit("/", 1)[-1].split(":")[0] or "sh"


@dataclass
class Execution:
    """A started process: ``steps`` runs it, yielding :data:`~.stdin.WAITING` whenever it needs input that has
    not arrived, and returns its exit status; ``output`` grows as it writes."""

    output: list[tuple[int, bytes]]
    steps: Iterator


def start(sandbox: Sandbox, argv: list[str], stdin: Stdin) -> Execution:
    """Start ``argv`` in the container reading ``stdin``; raises :class:`ExecStartError` if the runtime cannot."""
    program = _lookup(sandbox, argv[0], sandbox.env.get("PATH", ""))
    if program is None:
        raise ExecStartError(_start_failure(argv[0]))
    inv = Invocation(list(argv), b"", dict(sandbox.env), sandbox.workdir, sandbox)
    return Execution(inv.output, _process(program, inv, stdin))


def run(sandbox: Sandbox, argv: list[str], stdin: bytes) -> ExecResult:
    """Run ``argv`` to the end with all of its input given; raises :class:`ExecStartError` if it cannot start."""
    execution = start(sandbox, argv, Stdin(stdin))
    status = drive(execution.steps)
    return ExecResult(execution.output, status)


def _process(program, inv: Invocation, stdin: Stdin):
    """A program run as a process reading ``stdin`` as it arrives (a generator; see :class:`Execution`)."""
    if program is _shell:
        return (yield from _shell_steps(inv, stdin))
    if program is _env:
        return (yield from _env_steps(inv, stdin))
    if inv.name == "cat" and all(arg == "-" for arg in inv.argv[1:]):
        # cat writes out each read as soon as it has it; it ends at end of file.
        while True:
            yield from stdin.wait_for_data()
            data = stdin.read()
            if not data:
                return 0
            inv.out(data)
    if stdin_use(inv.sandbox, inv.argv, inv.cwd) is not None:
        yield from stdin.wait_for_end()  # the rest read their input to the end before they write
        inv.stdin = stdin.read()
    return program(inv)


# ---- which commands read standard input -------------------------------------------------------------------

def stdin_use(sandbox: Sandbox, argv: list[str], cwd: str = "/") -> str | None:
    """How the program ``argv`` reads its standard input: ``"all"`` (to the end), or ``None`` (not at all)."""
    if not argv:
        return None
    name = posixpath.basename(argv[0])
    args = argv[1:]
    if name in _SHELLS.get(sandbox.flavor, ()):
        return _shell_stdin_use(sandbox, args, cwd)
    if name == "env":
        while args and "=" in args[0] and not args[0].startswith("="):
            args = args[1:]
        return stdin_use(sandbox, args, cwd) if args else None
    if name in ("cat", "wc", "gzip", "gunzip", "zcat"):
        operands = [a for a in args if not a.startswith("-") or a == "-"]
    elif name in ("head", "tail"):
        operands = _operands(args, takes_value=("-n", "-c"))
    elif name == "grep":
        operands = _operands(args, takes_value=("-e",))
        if not any(a == "-e" or (a.startswith("-e") and len(a) > 2) for a in args):
            operands = operands[1:]  # the first is the pattern
    else:
        return None
    return "all" if not operands or "-" in operands else None


def _operands(args: list[str], takes_value: tuple[str, ...]) -> list[str]:
    operands, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg in takes_value:
            i += 2
            continue
        if arg == "--":
            return operands + args[i + 1:]
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
        i += 1
    return operands


def _shell_stdin_use(sandbox: Sandbox, args: list[str], cwd: str) -> str | None:
    args = list(args)
    while args and args[0] in _SHELL_FLAGS:
        args = args[1:]
    if args and args[0] == "-c":
        return "all" if len(args) > 1 and script_reads_stdin(sandbox, args[1], cwd) else None
    if not args:
        return "all"  # the script comes from standard input
    node = sandbox.fs.get(args[0], cwd)
    if isinstance(node, File):
        return "all" if script_reads_stdin(sandbox, node.content.decode(errors="replace"), cwd) else None
    return None


def script_reads_stdin(sandbox: Sandbox, script: str, cwd: str = "/") -> bool:
    """Whether some command of ``script`` reads the shell's standard input: one that reads stdin (``cat``,
    ``read x``, ``grep x``), first in its pipeline and not redirected from a file. A script the shell
    cannot parse fails before it reads anything."""
    try:
        lists = shell.parse(script)
    except (shell.ShellSyntaxError, shell.Unsupported):
        return False
    return any(_and_or_reads_stdin(sandbox, and_or, cwd) for and_or in lists)


def _and_or_reads_stdin(sandbox: Sandbox, and_or: shell.AndOr, cwd: str) -> bool:
    for pipeline in and_or.pipelines:
        first = pipeline.commands[0]
        if not isinstance(first, shell.Command):
            if not any(r.op == "<" and r.fd == 0 for r in first.redirects) and any(
                    _and_or_reads_stdin(sandbox, a, cwd) for a in _compound_lists(first)):
                return True
        elif not any(r.op == "<" and r.fd == 0 for r in first.redirects):
            argv = [_literal(word) for word in first.words]
            if argv and argv[0] is not None:
                # A word with an expansion stands for an operand whose value is not known here.
                argv = [a if a is not None else "$" for a in argv]
                if argv[0] == "read" or stdin_use(sandbox, argv, cwd) is not None:
                    return True
    return False


def _quoted(word: str) -> str:
    """A word as set -x traces it: in single quotes when the shell would read it differently bare."""
    if word and all(ch.isalnum() or ch in "@%+=:,./-_" for ch in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _compound_lists(command: shell.Compound) -> list[shell.AndOr]:
    """Every and-or list a compound command runs directly."""
    if isinstance(command, shell.Loop):
        return command.condition + command.body
    if isinstance(command, shell.If):
        lists = [a for condition, body in command.branches for a in condition + body]
        return lists + (command.otherwise or [])
    return command.body


def _literal(word: shell.Word) -> str | None:
    if any(part.expands for part in word.parts):
        return None
    return "".join(part.text for part in word.parts)


def needs_stdin(sandbox: Sandbox, argv: list[str]) -> bool:
    """Whether the command reads standard input at all (an interactive session, with a terminal)."""
    return stdin_use(sandbox, argv, sandbox.workdir) is not None


def _start_failure(command: str) -> str:
    if "/" in command:
        detail = f"stat {command}: no such file or directory"
    else:
        detail = "executable file not found in $PATH"
    return f'OCI runtime exec failed: exec failed: unable to start container process: exec: "{command}": {detail}: unknown'


def _lookup(sandbox: Sandbox, command: str, path: str):
    """The program ``command`` names, searched in ``PATH`` as execve would, or ``None``."""
    name = posixpath.basename(command)
    available = _available(sandbox.flavor)
    if "/" in command:
        directory = posixpath.dirname(posixpath.normpath(posixpath.join(sandbox.workdir, command)))
        return available.get(name) if directory in _BIN_DIRS else None
    if any(d in _BIN_DIRS for d in path.split(":")):
        return available.get(name)
    return None


def _available(flavor: str) -> dict:
    if flavor == DISTROLESS:
        return {}
    programs = dict(PROGRAMS)
    if flavor == BUSYBOX:
        programs.update(NET_TOOLS)  # applets of BusyBox; Debian's base images have no nc or nslookup
    for name in _SHELLS[flavor]:
        programs[name] = _shell
    programs["env"] = _env
    return programs


# ---- env with arguments runs a command ------------------------------------------------------------------

def _env(inv: Invocation) -> int:
    return drive(_env_steps(inv, Stdin(inv.stdin)))


def _env_steps(inv: Invocation, stdin: Stdin):
    args = inv.argv[1:]
    env = dict(inv.env)
    while args and "=" in args[0] and not args[0].startswith("="):
        name, _, value = args[0].partition("=")
        env[name] = value
        args = args[1:]
    if not args:
        inv.env = env
        return PROGRAMS["env"](inv)
    program = _lookup(inv.sandbox, args[0], env.get("PATH", ""))
    if program is None:
        inv.err(f"env: ‘{args[0]}’: No such file or directory\n" if inv.gnu
                else f"env: can't execute '{args[0]}': No such file or directory\n")
        return 127
    child = Invocation(args, b"", env, inv.cwd, inv.sandbox, inv.output)
    return (yield from _process(program, child, stdin))


# ---- shells ---------------------------------------------------------------------------------------------------

_SHELL_FLAGS = ("-e", "-x", "-l", "-i", "-s", "--login", "--norc", "--noprofile")


def _shell(inv: Invocation) -> int:
    return drive(_shell_steps(inv, Stdin(inv.stdin)))


def _shell_steps(inv: Invocation, stdin: Stdin):
    args = inv.argv[1:]
    while args and args[0] in _SHELL_FLAGS:
        args = args[1:]
    if args and args[0] == "-c":
        if len(args) < 2:
            inv.err(f"{inv.argv[0]}: -c: option requires an argument\n" if inv.name == "bash"
                    else f"{inv.argv[0]}: 0: -c requires an argument\n" if inv.gnu
                    else f"{inv.argv[0]}: -c requires an argument\n")
            return 2
        # sh -c SCRIPT [NAME [ARG...]]: NAME is $0, the rest $1...
        positional = args[2:] or [inv.argv[0]]
        return (yield from ShellSession(inv, stdin, positional).steps(args[1]))
    if args:
        data, problem = inv.read(args[0])
        if data is None:
            inv.err(_shell_message(inv, 0, f"cannot open {args[0]}: No such file" if inv.name != "bash"
                                   else f"{args[0]}: {problem}"))
            return 127 if inv.name == "bash" else 2
        return (yield from ShellSession(inv, stdin, args).steps(data.decode(errors="replace")))
    return (yield from ShellSession(inv, stdin).steps_from_stdin())


def _shell_message(inv: Invocation, line: int, text: str) -> str:
    """An error as the shell prints it: dash ``sh: 1: X``, bash ``bash: line 1: X``, ash ``sh: X``."""
    if inv.name == "bash":
        return f"{inv.argv[0]}: line {line}: {text}\n" if line else f"{inv.argv[0]}: {text}\n"
    if inv.gnu:
        return f"{inv.argv[0]}: {line}: {text}\n"
    return f"{inv.argv[0]}: {text}\n"


MAX_IDLE_ITERATIONS = 10_000  # a loop that neither waits nor repeats a state is given up on after this many turns


@dataclass(frozen=True)
class Forever:
    """A loop found to repeat the same turn for ever: it began its first repeated turn at ``since`` (the
    session's clock), and each turn wrote ``output`` and took ``every`` seconds (0 when it never waits)."""

    since: float
    every: float
    first_output: int  # index into the session's output where the repeated turn's writes begin
    last_output: int


class ShellSession:
    """Runs a parsed script: variables, cwd and ``$?`` persist across its commands.

    The interpreter is a generator (:meth:`steps`) so that a timed run can suspend it where a command
    looks at the world (see :mod:`timed_shell`), and an exec where a command waits for input that has not
    arrived (it yields :data:`~.stdin.WAITING`); :meth:`run` drives it to the end at once.

    The commands share the shell's standard input (``stdin``, by default ``inv.stdin`` in full): each one
    that reads it takes what it reads, so ``read x; cat`` gives ``x`` the first line and ``cat`` the rest.
    """

    def __init__(self, inv: Invocation, stdin: Stdin | None = None, positional: list[str] | None = None):
        self.inv = inv
        self.stdin = stdin if stdin is not None else Stdin(inv.stdin)
        self.sink = inv.output  # where a command that is last in its pipeline writes (a compound may redirect it)
        self.variables = dict(inv.env)
        self.exported = set(inv.env)
        self.positional = list(positional or [inv.argv[0]])  # $0, $1, ...
        self.cwd = inv.cwd
        self.status = 0
        self.line = 0
        self.exit_requested: int | None = None
        self.control: tuple[str, int] | None = None  # a pending ``break N`` / ``continue N``
        self.loop_depth = 0
        self.substituted: dict[int, tuple[str, int]] = {}  # a running command's substitutions: output, status
        # set -e and -x, from the command line (sh -e -c ...) or the set builtin
        self.options = {flag[1] for flag in itertools.takewhile(_SHELL_FLAGS.__contains__, inv.argv[1:])
                        if flag in ("-e", "-x")}
        self.tested = 0  # > 0 while a condition runs (if, while, until, the left of && and ||, after !): no set -e
        self.observations: list[tuple[tuple[str, ...], int]] = []  # what asked the world outside, with the answer
        self.forever: Forever | None = None  # set when a loop turns out never to end

    def run(self, script: str) -> int:
        steps = self.steps(script)
        try:
            while True:
                next(steps)
        except StopIteration as done:
            return done.value

    def steps(self, script: str):
        """The script run as a generator; it yields where a timed run may need to wait, returns the status."""
        try:
            lists = shell.parse(script)
        except shell.ShellSyntaxError as exc:
            self.inv.err(_shell_message(self.inv, exc.line, self._syntax_wording(exc)))
            return 2
        except shell.Unsupported as exc:
            self.inv.err(f"{self.inv.argv[0]}: the itbench twin's shell cannot interpret {exc}\n")
            return 2
        yield from self._lists(lists)
        if self.exit_requested is not None:
            return self.exit_requested
        return self.status

    def steps_from_stdin(self):
        """Commands read from standard input, each run as soon as it is complete (``kubectl exec -i POD -- sh``).

        bash reads a pipe a byte at a time, so a command that reads stdin gets the lines after its own; dash
        and BusyBox ash read what has arrived into their buffer, so such a command only gets what comes later.
        """
        pending, line_offset = "", 0
        while True:
            if self.inv.name == "bash":
                yield from self.stdin.wait_for_line()
                chunk = self.stdin.read_line()
            else:
                yield from self.stdin.wait_for_data()
                chunk = self.stdin.read()
            if chunk:
                pending += chunk.decode(errors="replace")
                complete, _, rest = pending.rpartition("\n")
                if not _ or complete.endswith("\\"):
                    continue
                complete += "\n"
            else:
                complete, rest = pending, ""
                if not complete.strip():
                    break
            try:
                lists = shell.parse(complete)
            except shell.ShellSyntaxError as exc:
                if chunk and exc.at_end:
                    continue  # the command goes on on the next line
                self.inv.err(_shell_message(self.inv, line_offset + exc.line, self._syntax_wording(exc)))
                return 2
            except shell.Unsupported as exc:
                self.inv.err(f"{self.inv.argv[0]}: the itbench twin's shell cannot interpret {exc}\n")
                return 2
            for and_or in lists:
                and_or.line += line_offset
            line_offset += complete.count("\n")
            pending = rest
            yield from self._lists(lists)
            if self.exit_requested is not None:
                return self.exit_requested
            if not chunk or self.forever is not None:
                break
        return self.status

    def _syntax_wording(self, exc: shell.ShellSyntaxError) -> str:
        return str(exc) if self.inv.gnu or self.inv.name == "bash" else shell.ash_wording(str(exc))

    def _stopped(self) -> bool:
        """Whether the commands that follow are skipped: ``exit``, a loop found endless, ``break``/``continue``."""
        return self.exit_requested is not None or self.forever is not None or self.control is not None

    def _lists(self, lists: list[shell.AndOr]):
        for and_or in lists:
            self.line = and_or.line
            self.status = yield from self._and_or(and_or)
            if self._stopped():
                break
        return self.status

    def _and_or(self, and_or: shell.AndOr):
        last = len(and_or.pipelines) - 1
        status = yield from self._tested(self._pipeline(and_or.pipelines[0]), last > 0)
        ran = 0
        for i, (op, pipeline) in enumerate(zip(and_or.ops, and_or.pipelines[1:]), 1):
            if self._stopped():
                break
            if (op == "&&") == (status == 0):
                status = yield from self._tested(self._pipeline(pipeline), i < last)
                ran = i
        # set -e: a failure ends the shell unless it was tested (the left of && or ||, a negated pipeline)
        if ("e" in self.options and status != 0 and not self.tested and ran == last
                and not and_or.pipelines[last].negated and not self._stopped()):
            self.exit_requested = status
        return status

    def _tested(self, steps, tested: bool = True):
        """Runs ``steps`` as a condition when ``tested``: set -e does not apply inside it."""
        self.tested += tested
        try:
            return (yield from steps)
        finally:
            self.tested -= tested

    def _pipeline(self, pipeline: shell.Pipeline):
        data = b""
        status = 0
        last = len(pipeline.commands) - 1
        for i, command in enumerate(pipeline.commands):
            stdin = self.stdin if i == 0 else Stdin(data)
            # The last command writes where the shell does, as it writes; the others into the next one's pipe.
            output: list[tuple[int, bytes]] = self.sink if i == last else []
            if isinstance(command, shell.Command):
                outer, self.substituted = self.substituted, {}
                yield from self._substitute(command.words + [w for _, w in command.assignments]
                                            + [r.target for r in command.redirects if isinstance(r.target, shell.Word)])
                status = yield from self._command(command, stdin, output)
                self.substituted = outer
            elif last > 0:  # each command of a longer pipeline runs in a subshell
                status = yield from self._in_subshell(self._compound(command, stdin, output))
            else:
                status = yield from self._compound(command, stdin, output)
            if i < last:
                data = b"".join(chunk for fd, chunk in output if fd == 1)
                self.sink.extend((fd, chunk) for fd, chunk in output if fd != 1)
            if self.exit_requested is not None or self.forever is not None:
                return status
        return (0 if status else 1) if pipeline.negated else status

    # ---- compound commands --------------------------------------------------------------------------------
    def _compound(self, command: shell.Compound, stdin: Stdin, output: list[tuple[int, bytes]]):
        """A loop, ``if``, group or subshell, its body reading ``stdin`` and writing to ``output``, as its own
        redirections say."""
        outer, self.substituted = self.substituted, {}
        yield from self._substitute([r.target for r in command.redirects if isinstance(r.target, shell.Word)])
        sink: list[tuple[int, bytes]] = output
        if command.redirects:
            sink = []  # what the body writes is routed once it ends
            redirected = self._redirect(command.redirects, stdin, output)
            if redirected is None:
                self.substituted = outer
                return 2 if self.inv.name != "bash" else 1
            stdin = redirected[0]
        saved = self.stdin, self.sink
        self.stdin, self.sink = stdin, sink
        try:
            if isinstance(command, shell.Loop):
                status = yield from self._loop(command)
            elif isinstance(command, shell.ForLoop):
                status = yield from self._for(command)
            elif isinstance(command, shell.If):
                status = yield from self._if(command)
            elif command.subshell:
                status = yield from self._in_subshell(self._lists(command.body))
            else:
                status = yield from self._lists(command.body)
        finally:
            self.stdin, self.sink = saved
        if command.redirects:
            self._deliver(sink, output, command.redirects)
        self.substituted = outer
        return status

    def _in_subshell(self, steps):
        """Runs ``steps`` in a copy of the shell's state: its variables, directory, ``exit`` and loop control
        end with it (the container's files do not: they are the container's)."""
        saved = (dict(self.variables), set(self.exported), self.cwd, list(self.positional), self.loop_depth)
        self.loop_depth = 0
        try:
            status = yield from steps
        finally:
            self.variables, self.exported, self.cwd, self.positional, self.loop_depth = saved
            self.control = None
        if self.exit_requested is not None:
            status, self.exit_requested = self.exit_requested, None
        return status

    def _if(self, clause: shell.If):
        for condition, body in clause.branches:
            status = yield from self._tested(self._lists(condition))
            if self._stopped():
                return status
            if status == 0:
                return (yield from self._lists(body))
        if clause.otherwise is not None:
            return (yield from self._lists(clause.otherwise))
        return 0

    def _for(self, loop: shell.ForLoop):
        if loop.words is None:
            values = self.positional[1:]
        else:
            outer, self.substituted = self.substituted, {}
            yield from self._substitute(loop.words)
            values = [f for word in loop.words for f in self._expand(word)]
            self.substituted = outer
        status = 0
        self.loop_depth += 1
        try:
            for value in values:
                self.variables[loop.name] = value
                status = yield from self._lists(loop.body)
                if self._loop_control() == "break" or self.exit_requested is not None:
                    break
        finally:
            self.loop_depth -= 1
        return status

    def _loop_control(self) -> str | None:
        """After a loop's body: ``"break"`` if the loop ends here (``break``, or a ``continue N`` of an outer
        loop), ``"continue"`` for its next turn, None if no loop control is pending."""
        if self.control is None:
            return None
        kind, levels = self.control
        if levels > 1:
            self.control = (kind, levels - 1)  # the enclosing loop takes the rest
            return "break"
        self.control = None
        return kind

    # ---- command substitution ---------------------------------------------------------------------------
    def _substitute(self, words: list[shell.Word]):
        """Runs the command substitutions of ``words``, keeping their output for :meth:`_expand`."""
        for word in words:
            for part in word.parts:
                if part.command is not None and id(part) not in self.substituted:
                    self.substituted[id(part)] = yield from self._substitution(part.command)

    def _substitution(self, lists: tuple[shell.AndOr, ...]):
        """``$(...)``: the lists run in a subshell; their standard output, less its trailing newlines, and status."""
        captured: list[tuple[int, bytes]] = []
        saved_sink, saved_line = self.sink, self.line
        self.sink = captured
        try:
            status = yield from self._in_subshell(self._lists(list(lists)))
        finally:
            self.sink, self.line = saved_sink, saved_line
        self.sink.extend((fd, chunk) for fd, chunk in captured if fd != 1)  # stderr is the shell's
        text = b"".join(chunk for fd, chunk in captured if fd == 1).decode(errors="replace")
        return text.rstrip("\n"), status

    # A loop's condition and body run in turn. A turn that left the session as the turn before did, and could
    # not have been answered differently from outside (it asked nothing, or it runs at one instant, as an exec
    # does, and got the same answers), will repeat for ever: that is recorded (``forever``) and the run ends
    # there, rather than spinning.
    def _loop(self, loop: shell.Loop):
        self.loop_depth += 1
        try:
            return (yield from self._loop_turns(loop))
        finally:
            self.loop_depth -= 1

    def _loop_turns(self, loop: shell.Loop):
        status = 0
        previous = None
        idle_turns = 0
        while True:
            turn_start = (self._clock(), len(self.inv.output))
            observed = len(self.observations)
            condition = yield from self._tested(self._lists(loop.condition))
            control = self._loop_control()
            if self.exit_requested is not None or self.forever is not None or control == "break":
                return condition
            if control is None and (condition == 0) == loop.until:
                return status
            if control is None:
                status = yield from self._lists(loop.body)
                control = self._loop_control()
                if self.exit_requested is not None or self.forever is not None or control == "break":
                    return status
            answers = tuple(self.observations[observed:])
            yield from self._turn_done(self._clock() - turn_start[0], bool(answers))
            if self._world_may_change() and answers:
                previous, idle_turns = None, 0
                continue
            state = (answers, self._state())
            idle_turns += 1
            if state == previous or idle_turns >= MAX_IDLE_ITERATIONS:
                self.forever = Forever(turn_start[0], self._clock() - turn_start[0], turn_start[1],
                                       len(self.inv.output))
                return status
            previous = state

    def _turn_done(self, seconds: float, observed: bool):
        """A loop's turn ended; a timed run may pace it."""
        return
        yield

    def _clock(self) -> float:
        return 0.0

    def _world_may_change(self) -> bool:
        """Whether the cluster can change between two turns of a loop (not within one instant, as an exec runs)."""
        return False

    def _state(self) -> tuple:
        """What the next turn of a loop depends on, inside the container."""
        return (tuple(sorted(self.variables.items())), tuple(sorted(self.exported)), self.cwd, self.status,
                tuple(sorted(self.inv.sandbox.fs.nodes.items())))

    def _expand(self, word: shell.Word) -> list[str]:
        """The fields a word expands to (unquoted expansions are split on whitespace)."""
        fields: list[str] = []
        current, has_text = "", False
        for part in word.parts:
            if not part.expands:
                current += part.text
                has_text = has_text or part.quoted or bool(part.text)
                continue
            if part.quoted and part.text == "@" and part.variable:
                # "$@": each positional parameter a field of its own, the first and last joined to the text around
                params = self.positional[1:]
                if not params:
                    continue
                current += params[0]
                for param in params[1:]:
                    fields.append(current)
                    current = param
                has_text = True
                continue
            value = self._value(part)
            if part.quoted:
                current += value
                has_text = True
                continue
            pieces = value.split()
            if not pieces:
                continue
            if value[:1].isspace() and has_text:
                fields.append(current)
                current, has_text = "", False
            current += pieces[0]
            has_text = True
            for piece in pieces[1:]:
                fields.append(current)
                current = piece
            if value[-1:].isspace():
                fields.append(current)
                current, has_text = "", False
        if has_text:
            fields.append(current)
        return fields

    def _expand_unsplit(self, word: shell.Word) -> str:
        """A word as an assignment's value or a redirection's target sees it: expanded, never split."""
        return "".join(part.text if not part.expands else self._value(part) for part in word.parts)

    def _value(self, part: shell.Part) -> str:
        """What a variable, special parameter or command substitution expands to."""
        if part.command is not None:
            if id(part) not in self.substituted:
                # Not run ahead (a word expanded outside a command): at once, reading no input, so never waiting.
                saved, self.stdin = self.stdin, Stdin()
                try:
                    self.substituted[id(part)] = drive(self._substitution(part.command))
                finally:
                    self.stdin = saved
            return self.substituted[id(part)][0]
        name = part.text
        if name == "?":
            return str(self.status)
        if name == "$":
            return str(self.inv.sandbox.exec_pid)
        if name == "#":
            return str(len(self.positional) - 1)
        if name in ("@", "*"):
            return " ".join(self.positional[1:])
        if name.isdigit():
            index = int(name)
            return self.positional[index] if index < len(self.positional) else ""
        return self.variables.get(name, "")

    def _command(self, command: shell.Command, stdin: Stdin, output: list[tuple[int, bytes]]):
        """Runs one simple command once the input it reads is there (see :meth:`_simple_command`)."""
        if stdin.closed or any(r.op == "<" and r.fd == 0 for r in command.redirects):
            return self._simple_command(command, stdin, output)
        argv = [f for word in command.words for f in self._expand(word)]
        use = self._stdin_use(argv)
        if use == "line":
            yield from stdin.wait_for_line()
        elif use == "stream" and self._finds(argv[0]) and not any(r.op in (">", ">>") for r in command.redirects):
            # cat passes on each read at once: run it on every chunk as it comes, until end of file. (Into a
            # file it makes no difference when, and a rerun would truncate it: that runs once, at the end.)
            while True:
                yield from stdin.wait_for_data()
                at_end = stdin.closed
                status = self._simple_command(command, stdin, output)
                if at_end or status != 0:
                    return status
        elif use is not None:
            yield from stdin.wait_for_end()
        return self._simple_command(command, stdin, output)

    def _stdin_use(self, argv: list[str]) -> str | None:
        """How a command reads the shell's stdin: ``"line"`` (``read``), ``"stream"`` (``cat``: each chunk as
        it comes), ``"all"`` (to the end of file first) or ``None``."""
        if not argv:
            return None
        if argv[0] == "read":
            return "line"
        use = stdin_use(self.inv.sandbox, argv, self.cwd)
        if use == "all" and posixpath.basename(argv[0]) == "cat" and all(a == "-" for a in argv[1:]):
            return "stream"
        return use

    def _finds(self, name: str) -> bool:
        return _lookup(self.inv.sandbox, name, self.variables.get("PATH", "")) is not None

    def _simple_command(self, command: shell.Command, stdin: Stdin | bytes, output: list[tuple[int, bytes]]) -> int:
        """Runs one simple command at once, on what of its input has arrived (see :meth:`_command`, which waits
        for it, and which a timed run extends)."""
        inv = self.inv
        values = {name: self._expand_unsplit(word) for name, word in command.assignments}
        argv = [f for word in command.words for f in self._expand(word)]
        if isinstance(stdin, bytes):
            stdin = Stdin(stdin)
        redirected = self._redirect(command.redirects, stdin, output)
        if redirected is None:
            return 2 if inv.name != "bash" else 1
        stdin, sink = redirected
        if "x" in self.options:  # dash traces words as they are, BusyBox ash quotes them
            quote = (lambda word: word) if inv.gnu else _quoted
            trace = [f"{name}={quote(value)}" for name, value in values.items()] + [quote(a) for a in argv]
            output.append((2, ("+ " + " ".join(trace) + "\n").encode()))
        if not argv:
            self.variables.update(values)
            # An assignment's status is that of its last command substitution (x=$(false) fails).
            return next(reversed(self.substituted.values()))[1] if self.substituted else 0
        env = {k: v for k, v in self.variables.items() if k in self.exported}
        env.update(values)
        use = self._stdin_use(argv)
        data = stdin.read_line() if use == "line" else stdin.read() if use is not None else b""
        child = Invocation(argv, data, env, self.cwd, inv.sandbox, sink)
        builtin = getattr(self, "_builtin_" + argv[0].replace(":", "colon").replace("[", "bracket"), None)
        if builtin is not None and "/" not in argv[0]:
            status = builtin(child)
        else:
            program = _lookup(inv.sandbox, argv[0], self.variables.get("PATH", ""))
            if program is None:
                status = self._not_found(child)
            else:
                status = program(child)
        if posixpath.basename(argv[0]) in NET_TOOLS:
            self.observations.append((tuple(argv), status))  # its answer may differ on a loop's next turn
        self._spent(child.elapsed)
        self._deliver(sink, output, command.redirects)
        return status

    def _spent(self, seconds: float) -> None:
        """A program took ``seconds`` (an exec does not keep time)."""

    def _not_found(self, child: Invocation) -> int:
        name = child.argv[0]
        if "/" in name:
            child.err(_shell_message(self.inv, self.line, f"{name}: not found" if self.inv.name != "bash"
                                     else f"{name}: No such file or directory"))
        elif self.inv.name == "bash":
            child.err(_shell_message(self.inv, self.line, f"{name}: command not found"))
        else:
            child.err(_shell_message(self.inv, self.line, f"{name}: not found"))
        return 127

    # Redirections: stdin from a file, stdout/stderr to /dev/null, to each other, or to a file.
    def _redirect(self, redirects: list[shell.Redirect], stdin: Stdin,
                  output: list[tuple[int, bytes]]) -> tuple[Stdin, list[tuple[int, bytes]]] | None:
        for redirect in redirects:
            if redirect.op == "<":
                path = self._expand_unsplit(redirect.target)
                node = self.inv.sandbox.fs.get(path, self.cwd)
                if not isinstance(node, File):
                    output.append((2, _shell_message(self.inv, self.line, f"cannot open {path}: No such file"
                                                     if self.inv.name != "bash"
                                                     else f"{path}: No such file or directory").encode()))
                    return None
                stdin = Stdin(node.content)
            elif redirect.op in (">", ">>"):
                path = self._expand_unsplit(redirect.target)
                if path == "/dev/null":
                    continue
                real_dir = self.inv.sandbox.fs.resolve(posixpath.dirname(posixpath.join(self.cwd, path)) or "/")
                if real_dir is None or not isinstance(self.inv.sandbox.fs.nodes.get(real_dir), Directory):
                    output.append((2, _shell_message(self.inv, self.line, f"cannot create {path}: Directory "
                                                     "nonexistent" if self.inv.name != "bash"
                                                     else f"{path}: No such file or directory").encode()))
                    return None
        return stdin, []

    def _deliver(self, sink: list[tuple[int, bytes]], output: list[tuple[int, bytes]],
                 redirects: list[shell.Redirect]) -> None:
        """Route what the command wrote according to its redirections (applied left to right)."""
        route = {1: ("fd", 1), 2: ("fd", 2)}
        for redirect in redirects:
            if redirect.op == ">&":
                route[redirect.fd] = route[redirect.target]
            elif redirect.op in (">", ">>"):
                path = self._expand_unsplit(redirect.target)
                route[redirect.fd] = ("null", 0) if path == "/dev/null" else ("file", (path, redirect.op))
        files: dict[str, bytes] = {}
        for fd, chunk in sink:
            kind, target = route.get(fd, ("fd", fd))
            if kind == "fd":
                output.append((target, chunk))
            elif kind == "file":
                path, op = target
                files[path] = files.get(path, b"") + chunk
        fs = self.inv.sandbox.fs
        for redirect in redirects:
            if redirect.op in (">", ">>"):
                path = self._expand_unsplit(redirect.target)
                if path == "/dev/null":
                    continue
                previous = fs.get(path, self.cwd)
                start = previous.content if redirect.op == ">>" and isinstance(previous, File) else b""
                fs.add(posixpath.join(self.cwd, path), File(start + files.pop(path, b"")))

    # ---- builtins --------------------------------------------------------------------------------------------
    def _builtin_cd(self, inv: Invocation) -> int:
        target = inv.argv[1] if len(inv.argv) > 1 else self.variables.get("HOME", "/")
        real = self.inv.sandbox.fs.resolve(target, self.cwd)
        if real is None or not isinstance(self.inv.sandbox.fs.nodes.get(real), Directory):
            if self.inv.name == "bash":
                inv.err(_shell_message(self.inv, self.line, f"cd: {target}: No such file or directory"))
                return 1
            inv.err(_shell_message(self.inv, self.line, f"cd: can't cd to {target}"
                                   + ("" if inv.gnu else ": No such file or directory")))
            return 2
        self.cwd = posixpath.normpath(posixpath.join(self.cwd, target))
        self.variables["PWD"] = self.cwd
        return 0

    def _builtin_pwd(self, inv: Invocation) -> int:
        inv.out(self.cwd + "\n")
        return 0

    def _builtin_echo(self, inv: Invocation) -> int:
        return PROGRAMS["echo"](inv)

    def _builtin_true(self, inv: Invocation) -> int:
        return 0

    def _builtin_false(self, inv: Invocation) -> int:
        return 1

    def _builtin_colon(self, inv: Invocation) -> int:
        return 0

    def _builtin_export(self, inv: Invocation) -> int:
        for arg in inv.argv[1:]:
            name, eq, value = arg.partition("=")
            if eq:
                self.variables[name] = value
            self.exported.add(name)
        return 0

    def _builtin_unset(self, inv: Invocation) -> int:
        for name in inv.argv[1:]:
            self.variables.pop(name, None)
            self.exported.discard(name)
        return 0

    def _builtin_read(self, inv: Invocation) -> int:
        """``read [-r] NAME...``: one line, split on whitespace, the last name taking the rest; 1 at end of file."""
        names = [a for a in inv.argv[1:] if a != "-r"]
        line = inv.stdin.decode(errors="replace")
        text = line.removesuffix("\n")
        if "-r" not in inv.argv[1:]:
            text = text.replace("\\", "")
        if not names:
            if self.inv.name != "bash":
                inv.err(_shell_message(self.inv, self.line, "read: arg count"))
                return 2
            self.variables["REPLY"] = text  # bash keeps the line as it is
        else:
            fields = text.split(None, len(names) - 1)
            for i, name in enumerate(names):
                self.variables[name] = fields[i].strip() if i < len(fields) else ""
        return 0 if line.endswith("\n") else 1

    def _builtin_break(self, inv: Invocation) -> int:
        return self._control("break", inv)

    def _builtin_continue(self, inv: Invocation) -> int:
        return self._control("continue", inv)

    def _control(self, kind: str, inv: Invocation) -> int:
        """``break [N]`` / ``continue [N]``: N enclosing loops (all of them if fewer); outside a loop, nothing."""
        count = inv.argv[1] if len(inv.argv) > 1 else "1"
        if not count.isdigit() or int(count) < 1:
            bash = self.inv.name == "bash"
            inv.err(_shell_message(self.inv, self.line, f"{kind}: Illegal number: {count}" if not bash
                                   else f"{kind}: {count}: loop count out of range" if count.lstrip("-").isdigit()
                                   else f"{kind}: {count}: numeric argument required"))
            if bash:
                return 1
            self.exit_requested = 2  # an error in a special builtin ends a POSIX shell
            return 2
        if self.loop_depth:
            self.control = (kind, min(int(count), self.loop_depth))
        return 0

    def _builtin_test(self, inv: Invocation) -> int:
        return self._test(inv, inv.argv[1:])

    def _builtin_bracket(self, inv: Invocation) -> int:
        if inv.argv[-1] != "]":
            inv.err(self._builtin_error("[", "missing ]"))
            return 2
        return self._test(inv, inv.argv[1:-1])

    def _test(self, inv: Invocation, args: list[str]) -> int:
        try:
            return 0 if conditions.evaluate(args, self.inv.sandbox.fs, self.cwd) else 1
        except conditions.TestError as exc:
            inv.err(self._builtin_error(inv.argv[0], exc.dash) if inv.gnu or self.inv.name == "bash"
                    else _shell_message(self.inv, self.line, exc.ash))
            return 2

    def _builtin_error(self, name: str, text: str) -> str:
        """A builtin's error: dash ``sh: 1: [: missing ]``, bash ``bash: line 1: [: missing ]``, ash ``sh: missing ]``."""
        if self.inv.gnu or self.inv.name == "bash":
            return _shell_message(self.inv, self.line, f"{name}: {text}")
        return _shell_message(self.inv, self.line, text)

    def _builtin_set(self, inv: Invocation) -> int:
        """``set [-eux] [+eux] [--] [ARG...]``: options, and the positional parameters when arguments follow."""
        args = inv.argv[1:]
        while args and args[0][:1] in "-+" and args[0] not in ("-", "--"):
            flag = args.pop(0)
            for letter in flag[1:]:
                if letter not in "ex":
                    if letter == "o" or not letter.isalpha():
                        inv.err(self._builtin_error("set", f"Illegal option {flag}"))
                        self.exit_requested = 2 if self.inv.name != "bash" else None
                        return 2
                    continue  # options the twin's shell does not model (-u, -f, -v, -a, ...) change nothing
                (self.options.add if flag[0] == "-" else self.options.discard)(letter)
        if args and args[0] in ("-", "--"):
            args.pop(0)
            self.positional[1:] = args
        elif args:
            self.positional[1:] = args
        elif len(inv.argv) == 1:
            inv.out("".join(f"{k}='{v}'\n" for k, v in sorted(self.variables.items())))
        return 0

    def _builtin_shift(self, inv: Invocation) -> int:
        count = int(inv.argv[1]) if len(inv.argv) > 1 and inv.argv[1].isdigit() else 1
        if count > len(self.positional) - 1:
            inv.err(self._builtin_error("shift", f"can't shift that many"))
            self.exit_requested = 2 if self.inv.name != "bash" else None
            return 2 if self.inv.name != "bash" else 1
        del self.positional[1:1 + count]
        return 0

    def _builtin_exit(self, inv: Invocation) -> int:
        code = inv.argv[1] if len(inv.argv) > 1 else str(self.status)
        self.exit_requested = int(code) % 256 if code.lstrip("-").isdigit() else 2
        return self.exit_requested
