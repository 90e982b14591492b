"""Reading the JSONL trajectory an ``exec:`` agent appended to ``$ITBENCH_TRAJECTORY``.

A trajectory is a record, not the answer: a bad line is reported in ``Trajectory.problems`` and
skipped, and never fails the trial.
"""

from __future__ import annotations

import json
import os

from .base import Step, Trajectory

MAX_BYTES = 16 * 1024 * 1024  # an agent that logs without bound must not exhaust the harness' memory
MAX_PROBLEMS = 20  # past this, one line says how many more there were


def read_steps(path: str | os.PathLike, trajectory: Trajectory, *, whole_lines: bool = False) -> None:
    """Append the steps of the JSONL file at ``path`` (if any) to ``trajectory``.

    ``whole_lines``: read only up to the last newline, as while the agent may be writing its next line.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return
    name = os.path.basename(os.fspath(path))
    problems: list[str] = []
    if len(data) > MAX_BYTES:
        data = data[:data.rfind(b"\n", 0, MAX_BYTES) + 1]
        problems.append(f"{name}: longer than {MAX_BYTES} bytes; only the lines before that were read")
    elif whole_lines:
        data = data[:data.rfind(b"\n") + 1]
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
            problems.append(f"{name}:{number}: not JSON ({exc}); skipped")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{name}:{number}: a step is a JSON object, got {type(obj).__name__}; skipped")
            continue
        try:
            step = Step.from_dict(obj)
        except ValueError as exc:
            problems.append(f"{name}:{number}: {exc}; skipped")
            continue
        unknown = sorted(set(obj) - {*Step.TEXTS, *Step.COUNTS, *Step.TIMES})
        if unknown:
            problems.append(f"{name}:{number}: ignored unknown fields {', '.join(unknown)} (a step has "
                            f"{', '.join((*Step.TEXTS, *Step.COUNTS, *Step.TIMES))})")
        trajectory.steps.append(step)
    if len(problems) > MAX_PROBLEMS:
        problems[MAX_PROBLEMS:] = [f"{name}: and {len(problems) - MAX_PROBLEMS} more problems"]
    trajectory.problems.extend(problems)
