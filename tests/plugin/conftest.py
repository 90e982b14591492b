"""Nested pytest projects for the plugin's own tests: tiny scenarios, an evaluator, agents of each kind.

A tiny scenario is a FinOps or CISO scenario with no application and no faults, so its trial only
provisions a twin (about a second). The project's ``conftest.py`` scores it through the plugin's own
hook: the agent passes when its submission's ``notes`` equal the scenario's ``ground_truth.answer``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYTHON = sys.executable

# The evaluator of the tiny scenarios, as a user's conftest.py would add one.
EVALUATOR = '''
from pytest_itbench.results import CheckResult


def pytest_itbench_evaluate(trial):
    if trial.scenario.domain == "sre":
        return None
    submission = trial.submission
    got = submission.notes if submission is not None else ""
    want = str(trial.scenario.ground_truth["answer"])
    return [CheckResult("answer", got == want, f"submitted {got!r}, expected {want!r}")]
'''


def scenario_text(sid: str, *, domain: str = "finops", complexity: str = "easy", answer: str = "42",
                  tags: tuple[str, ...] = (), expected_alerts: tuple[str, ...] = (), time_limit: str = "60s") -> str:
    lines = [f"id: {sid}", f"title: The {sid} scenario", f"domain: {domain}", f"complexity: {complexity}",
             f"tags: [{', '.join(tags)}]", f"task: Write {answer} into the notes of your submission.",
             f"time_limit: {time_limit}", "evaluation:", "  require: [answer]",
             f"ground_truth: {{answer: '{answer}'}}"]
    if expected_alerts:
        lines.append(f"expected_alerts: [{', '.join(expected_alerts)}]")
    return "\n".join(lines) + "\n"


# An SRE scenario that validates (for collection only: its trial would deploy the astronomy shop).
SRE_SCENARIO = """\
id: shop-catalog-down
title: The product catalog is scaled to zero
domain: sre
application: astronomy-shop
complexity_inputs: {chain_length: 2, resolution_steps: 1, technologies: 1}
faults:
  - fault: scaled-to-zero-kubernetes-workload
    target: {kind: Deployment, namespace: astronomy-shop, name: product-catalog}
expected_alerts: [HighRequestErrorRate]
task: Find the root cause and restore the service.
ground_truth:
  groups:
    - {id: catalog, kind: Deployment, namespace: astronomy-shop, filter: ["^product-catalog$"], root_cause: true}
"""


class Project:
    """A nested pytest project in a directory: scenarios, agents, and pytest run over them in a subprocess."""

    def __init__(self, path: Path):
        self.path = path
        self.write("conftest.py", EVALUATOR)

    def write(self, name: str, text: str) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def scenario(self, name: str, sid: str | None = None, **kw) -> Path:
        """``name.yaml`` holding a tiny scenario (its id defaults to the file's stem)."""
        return self.write(f"{name}.yaml", scenario_text(sid or Path(name).name, **kw))

    def program(self, name: str, text: str) -> Path:
        """An executable agent program (a shell script, usually)."""
        path = self.write(name, text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    def subprocess(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        """pytest in a fresh interpreter (xdist, signals): output in ``.stdout``, status in ``.returncode``."""
        return subprocess.run([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=self.path,
                              capture_output=True, text=True, timeout=timeout, env=clean_env())


class Bench(Project):
    """A Project in ``pytester.path``, run in this process through pytester (fast: the twin's threads
    and ports are this process's)."""

    def __init__(self, pytester: pytest.Pytester):
        self.pytester = pytester
        super().__init__(pytester.path)

    def python_agent(self, module: str, text: str) -> None:
        """A Python module importable by the nested run (``--itbench-agent=module:attr``)."""
        self.write(f"{module}.py", text)
        self.pytester.syspathinsert()

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest("-p", "no:cacheprovider", *args)


def clean_env() -> dict[str, str]:
    """The environment for a nested pytest: no PYTEST_ADDOPTS or xdist worker settings of the outer run."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


@pytest.fixture
def bench(pytester) -> Bench:
    return Bench(pytester)


# An exec: agent that hands in the answer the tiny scenarios expect.
ANSWERING_SCRIPT = """\
#!/bin/sh
printf '{"notes": "42"}' > "$ITBENCH_OUTPUT"
"""


def pytest_configure(config):
    config.addinivalue_line("markers", "end_to_end: runs the real SRE catalog on the twin (slow: about a minute)")
