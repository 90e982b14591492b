"""Phase progress under ``-v``: each lifecycle phase of a trial, with its time, while the test runs.

The run tells a ``PhaseProgress`` when a phase starts and ends; the lines go through pytest's terminal
reporter with output capture lifted for the moment, as pytest's live logging does, so they appear
between the test's node id and its outcome word. Where no terminal would show them (without ``-v``,
and on xdist workers, whose output nobody sees) it stays silent: the phase times still reach the
JSONL file, JUnit properties and Allure parameters through the result.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from pytest_itbench.report.carry import is_controller


class PhaseProgress:
    def __init__(self, config: Any, title: str):
        """``title`` names the trial in each line, e.g. ``sre-scaled-to-zero run 2``."""
        self.title = title
        shown = is_controller(config) and config.getoption("verbose") > 0
        self._reporter = config.pluginmanager.get_plugin("terminalreporter") if shown else None
        self._capture = config.pluginmanager.get_plugin("capturemanager")

    def started(self, phase: str, note: str = "") -> None:
        """Announce a phase that may take long (the agent, awaiting alerts), so a quiet terminal is explained."""
        self._line(f"{phase} ..." + (f" {note}" if note else ""))

    def finished(self, phase: str, seconds: float, ok: bool = True) -> None:
        self._line(f"{phase:<14} {seconds:8.2f}s" + ("" if ok else "  failed"))

    def _line(self, text: str) -> None:
        if self._reporter is None:
            return
        lifted = self._capture.global_and_fixture_disabled() if self._capture is not None else nullcontext()
        with lifted:
            self._reporter.write_line(f"    {self.title}: {text}")
