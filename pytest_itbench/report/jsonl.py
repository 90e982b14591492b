"""``--itbench-results=PATH``: one JSON object per trial, a line each.

Who writes: only the process that sees every report, that is the xdist controller, or the single
process without xdist. The plugin appends from ``pytest_runtest_logreport`` when
``carry.is_controller(config)``; workers never touch the file. With one writer per session there is
nothing to lock, and a session stopped with Ctrl-C keeps every trial that finished before it.

The file is appended to, never truncated (benchmark runs are expensive to repeat); each record names
its session, so runs sharing a file can be told apart. A record is written with one ``write`` on a
file opened for appending, so two sessions sharing a file on a local disk do not interleave lines.

A record is ``TrialResult.to_dict()`` (scenario, agent, seed, run, outcome, checks, figures, phases,
attachments, start and end times) with ``versions`` completed from this process (pytest-itbench,
Python, pytest, the kubernetes client; the backend's comes from the run), plus ``schema``, ``session``,
``nodeid`` and ``recorded_at``. The JSON is strict: a non-finite figure (ITBench's infinite time of a
failure) is written as null.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import orjson

from pytest_itbench.report.versions import runtime_versions
from pytest_itbench.results import TrialResult

SCHEMA = "pytest-itbench/trial/1"
_ENVELOPE = ("schema", "session", "nodeid", "recorded_at")


class ResultsFile:
    def __init__(self, path: str | Path, session: str | None = None):
        self.path = Path(path)
        self.session = session or uuid.uuid4().hex

    def append(self, result: TrialResult, nodeid: str, session: str | None = None) -> None:
        """``session``: of a trial recorded for a session that could not (its in-flight journal); default this one."""
        record = {
            "schema": SCHEMA,
            "session": session or self.session,
            "nodeid": nodeid,
            "recorded_at": datetime.now(timezone.utc).isoformat(),
            **result.to_dict(),
            "versions": {**runtime_versions(), **result.versions},
        }
        # orjson writes NaN and infinities as null, which keeps every line strict JSON.
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())  # on disk as the trial ends: a session killed later loses none of its trials


def load(path: str | Path) -> list[TrialResult]:
    """The trials recorded in a results file, in the order they finished."""
    results = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not a JSON object ({exc.msg})") from None
        results.append(TrialResult.from_dict({k: v for k, v in record.items() if k not in _ENVELOPE}))
    return results
