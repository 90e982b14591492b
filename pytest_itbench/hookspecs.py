"""The plugin's own hooks: how a conftest.py or another plugin changes what a trial does.

    # conftest.py: an extra check on every SRE trial
    def pytest_itbench_evaluate(trial):
        if trial.scenario.domain == "sre":
            return [CheckResult("no-pods-deleted", passed=..., detail="...", required=False)]

Every implementation's checks are gathered; a hook wrapper may rewrite or drop the others' checks
(``result = yield``; ``return [c for c in result ...]``), which is how a check is replaced.
"""

from __future__ import annotations

from pluggy import HookspecMarker

spec = HookspecMarker("pytest")


@spec(firstresult=True)
def pytest_itbench_make_agent(spec: str, scenario, scenario_dir: str, config):
    """Build the agent ``--itbench-agent=SPEC`` names for one trial; the first non-None wins.

    The built-in implementation resolves built-ins, entry points, ``module:attr`` and ``exec:``; the
    scenario is handed to the oracle alone.
    """


@spec
def pytest_itbench_evaluate(trial):
    """Score a finished trial: return a list of ``CheckResult`` (or None when this domain is not yours).

    ``trial`` is a :class:`pytest_itbench.run.Trial` after its agent ran: ``trial.scenario``,
    ``trial.submission``, ``trial.cluster`` (admin access through ``api_client()``, its URLs and clock),
    ``trial.result.figures`` (write figures there: mttd, mttr, f1, ...). Checks named in the scenario's
    ``evaluation.require`` decide the outcome; the others are informative.
    """


@spec
def pytest_itbench_trial_finished(result, item):
    """A trial's result is final (outcome, checks, figures, phases); called in the process that ran it."""
