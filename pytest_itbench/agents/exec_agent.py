"""``exec:COMMAND``: an agent in any language, run as a separate process group.

The program learns everything from environment variables and files (docs/agents.md):
``KUBECONFIG``, ``ITBENCH_TASK`` (the Task as JSON), ``ITBENCH_<SIGNAL>_URL`` for each signal offered,
``ITBENCH_WORKDIR`` (also its cwd), ``ITBENCH_OUTPUT`` (where it writes its submission JSON),
``ITBENCH_TRAJECTORY`` (JSONL steps it may append), ``ITBENCH_DEADLINE`` (epoch seconds). Of the
parent's environment it gets PATH, HOME and LANG, and the names given in ``pass_env``
(``--itbench-agent-env``); nothing else, so the harness' credentials never reach it. The values passed
are masked in its logs, trajectory and output before anything reads them (secrets.py).

At the deadline the whole group gets SIGTERM, then SIGKILL after ``grace`` seconds. Whatever the
outcome, no process of the group is left running when ``run`` returns or raises.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from . import process_group
from .base import Submission, Task, Trajectory
from .errors import (DOCS, AgentCrashed, AgentExited, AgentOutputInvalid, AgentOutputMissing, AgentSpecError,
                     AgentTimedOut)
from .secrets import Secrets
from .trajectory_file import read_steps

INHERITED = ("PATH", "HOME", "LANG")
MAX_OUTPUT = 16 * 1024 * 1024
TAIL_LINES, TAIL_CHARS = 40, 4000


class ExecAgent:
    """Runs ``command`` (a shell-style string or an argv list) for each task."""

    def __init__(self, command: str | Sequence[str], *, name: str | None = None, grace: float = 5.0,
                 pass_env: Sequence[str] = (), launch_dir: str | os.PathLike | None = None):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise AgentSpecError(f"exec: needs a command, as in exec:./my_agent.sh or exec:python3 agent.py "
                                 f"(see {DOCS})")
        self.argv = _anchor(argv, Path(launch_dir or os.getcwd()))
        self.name = name or "exec:" + (command if isinstance(command, str) else shlex.join(argv))
        self.grace = grace
        self.pass_env = tuple(pass_env)
        self.process_group: int | None = None  # while the agent runs: its process group (its leader's pid)
        self._files: _Files | None = None

    def __repr__(self) -> str:
        return f"ExecAgent({shlex.join(self.argv)!r})"

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        files = self._files = _Files(Path(task.workdir).resolve())
        files.prepare(task)
        started = time.monotonic()
        timed_out = False
        try:
            with open(files.stdout, "wb") as out, open(files.stderr, "wb") as err:
                proc = subprocess.Popen(self.argv, cwd=files.workdir, env=self._environment(task, files),
                                        stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        except OSError as exc:
            raise AgentCrashed(f"{self.name} could not be started: {exc.strerror or exc}",
                               evidence={"command": shlex.join(self.argv)},
                               advice="A script needs a #! line and the executable bit (chmod +x), or run it "
                                      f"through its interpreter, as in exec:bash ./agent.sh. See {DOCS}.") from None
        self.process_group = proc.pid
        try:
            try:
                proc.wait(timeout=task.remaining())
            except subprocess.TimeoutExpired:
                timed_out = True
        finally:
            # Always, also on Ctrl-C: the leader's children may outlive it (a backgrounded command),
            # and with its own session nothing else would ever stop them.
            left, survivors = process_group.end(proc.pid, self.grace)
            proc.wait()
            self.process_group = None
            # Before anything reads them: the values of the variables passed through never reach a record.
            secrets = Secrets(self.pass_env, strict=False)
            for path in (files.stdout, files.stderr, files.trajectory, files.output):
                secrets.file(path)
            # Here, so that a turn cut by Ctrl-C keeps the steps (and tokens) the agent had recorded.
            read_steps(files.trajectory, trajectory)
        elapsed = time.monotonic() - started
        if left and not timed_out:
            trajectory.problems.append(f"the agent left {len(left)} process(es) running after it exited "
                                       f"(pids {', '.join(map(str, left))}); they were ended")
        if survivors:
            trajectory.problems.append(f"processes {', '.join(map(str, survivors))} of the agent's group "
                                       f"survived SIGKILL (stuck in the kernel)")
        return self._verdict(task, files, proc.returncode, timed_out, elapsed)

    def recorded_so_far(self) -> Trajectory:
        """The steps the agent has appended to ``$ITBENCH_TRAJECTORY`` until now, while it runs (the trial's
        in-flight journal reads them; ``run`` reads the file into the trajectory only once the agent ended)."""
        found = Trajectory()
        if self._files is not None:
            read_steps(self._files.trajectory, found, whole_lines=True)
        return found

    def _environment(self, task: Task, files: "_Files") -> dict[str, str]:
        env = {k: os.environ[k] for k in (*INHERITED, *self.pass_env) if k in os.environ}
        env.update(
            KUBECONFIG=os.path.abspath(task.kubeconfig),
            # kubectl's discovery cache from another cluster (or another trial) would answer for this one.
            KUBECACHEDIR=tempfile.mkdtemp(prefix="kubecache-", dir=files.workdir),
            ITBENCH_TASK=str(files.task),
            ITBENCH_WORKDIR=str(files.workdir),
            ITBENCH_OUTPUT=str(files.output),
            ITBENCH_TRAJECTORY=str(files.trajectory),
            ITBENCH_DEADLINE=f"{task.deadline:.3f}",
        )
        for signal_name, url in task.urls.items():  # a withheld signal has no variable at all
            env[f"ITBENCH_{signal_name.upper()}_URL"] = url
        return env

    def _verdict(self, task: Task, files: "_Files", code: int, timed_out: bool, elapsed: float) -> Submission:
        evidence = {"command": shlex.join(self.argv), "stderr (last lines)": _tail(files.stderr),
                    "stdout (last lines)": _tail(files.stdout)}
        logs = f"Its full output is in {files.stdout} and {files.stderr}."
        output = _read_output(files.output)
        if timed_out:
            raise AgentTimedOut(
                f"{self.name} was still running at its deadline ({task.time_limit:g} s); its process group "
                f"was sent SIGTERM, then SIGKILL after {self.grace:g} s",
                time_limit=task.time_limit, evidence={**evidence, "output": _excerpt(output)},
                advice=f"An agent must write $ITBENCH_OUTPUT and exit before $ITBENCH_DEADLINE. {logs}")
        if code != 0:
            raise AgentExited(
                f"{self.name} {_describe_exit(code)} after {elapsed:.1f} s",
                exit_code=code, evidence={**evidence, "output": _excerpt(output)},
                advice=f"An agent that finished exits 0 after writing its submission to $ITBENCH_OUTPUT "
                       f"(see {DOCS}, 'Exit status'). {logs}")
        if output is None:
            raise AgentOutputMissing(
                f"{self.name} exited 0 after {elapsed:.1f} s without writing its submission to {files.output}",
                evidence=evidence,
                advice='Write JSON to the path in $ITBENCH_OUTPUT, e.g. {"entities": [...], "propagations": [...], '
                       f'"alerts_explained": [...]}}; write {{}} to submit nothing. {logs}')
        return _parse_submission(self.name, output, files.output, evidence)


class _Files:
    """Where the agent's task, output, trajectory and logs live: all in its workdir."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.task = workdir / "task.json"
        self.output = workdir / "output.json"
        self.trajectory = workdir / "trajectory.jsonl"
        self.stdout = workdir / "stdout.log"
        self.stderr = workdir / "stderr.log"

    def prepare(self, task: Task) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        # A leftover from an earlier run in the same workdir must not pass for this run's answer.
        for stale in (self.output, self.trajectory):
            stale.unlink(missing_ok=True)
        self.task.write_text(json.dumps(task.to_dict(), indent=2) + "\n", encoding="utf-8")


def _anchor(argv: list[str], launch_dir: Path) -> list[str]:
    """Make the program, and any word naming an existing file or directory, absolute.

    The agent runs in its workdir, not where pytest was started, so ``exec:./agent.sh`` or
    ``exec:python3 agent.py`` would otherwise find nothing.
    """
    program = argv[0]
    if os.sep in program:
        path = Path(os.path.abspath(launch_dir / program))  # not resolve(): $0 keeps a symlink's name
        if not path.is_file():
            raise AgentSpecError(f"exec: program {program!r} not found (looked for {path})")
        if not os.access(path, os.X_OK):
            raise AgentSpecError(f"exec: {path} is not executable: run chmod +x {program}, or name its "
                                 f"interpreter, as in exec:bash {shlex.join(argv)}")
        resolved = str(path)
    else:
        found = shutil.which(program)
        if found is None:
            raise AgentSpecError(f"exec: program {program!r} is not on PATH; give its path, as in "
                                 f"exec:./{program}")
        resolved = found
    rest = [os.path.abspath(launch_dir / word) if _names_file(launch_dir, word) else word for word in argv[1:]]
    return [resolved, *rest]


def _names_file(launch_dir: Path, word: str) -> bool:
    return bool(word) and not word.startswith("-") and os.path.exists(launch_dir / word)


def _read_output(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_OUTPUT + 1)
    except FileNotFoundError:
        return None


def _parse_submission(name: str, raw: bytes, path: Path, evidence: dict[str, str]) -> Submission:
    advice = f"The submission format is in {DOCS}, 'What the agent hands in'."
    if len(raw) > MAX_OUTPUT:
        raise AgentOutputInvalid(f"{name} wrote more than {MAX_OUTPUT} bytes to {path}; a submission is a "
                                 f"small JSON object", evidence=evidence, advice=advice)
    try:
        data = json.loads(raw)
    except ValueError as exc:
        problem = "it is empty" if not raw.strip() else f"it is not JSON: {exc}"
        raise AgentOutputInvalid(f"{name} wrote {path}, but {problem}",
                                 evidence={**evidence, "output": _excerpt(raw)}, advice=advice) from None
    try:
        return Submission.from_dict(data)
    except ValueError as exc:
        raise AgentOutputInvalid(f"{name} wrote {path}, but it is not a submission: {exc}",
                                 evidence={**evidence, "output": _excerpt(raw)}, advice=advice) from None


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _tail(path: Path) -> str:
    """The last lines of a log, bounded in size however long the log grew."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_CHARS))
            text = fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""
    lines = text.splitlines()
    if size > TAIL_CHARS:
        lines = lines[1:]  # the first line was cut by the seek
    return "\n".join(lines[-TAIL_LINES:])


def _excerpt(raw: bytes | None) -> str:
    if raw is None:
        return ""
    text = raw.decode("utf-8", "replace")
    return text if len(text) <= TAIL_CHARS else text[:TAIL_CHARS] + f"\n... ({len(text) - TAIL_CHARS} more characters)"
