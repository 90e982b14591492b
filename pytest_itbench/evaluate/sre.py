"""The SRE evaluator: diagnosis (root cause, entities) and mitigation (alerts clear, traffic healthy),
with MTTD and MTTR, registered as an implementation of ``pytest_itbench_evaluate``."""

from __future__ import annotations

import math

import pytest

from ..results import MTTD, MTTR, NTAM, Attachment, CheckResult
from ..scenario.schema import SreGroundTruth
from . import chain as chain_scoring
from . import diagnosis as diagnosis_scoring
from . import mitigation as mitigation_check
from . import ntam as ntam_scoring
from .signals import Prometheus
from .topology_graph import Graph, TopologyUnavailable, read_topology


@pytest.hookimpl
def pytest_itbench_evaluate(trial):
    if trial.scenario.domain != "sre":
        return None
    checks = [_diagnosis(trial), _mitigation(trial)]
    return checks


def _diagnosis(trial) -> CheckResult:
    truth = SreGroundTruth.model_validate(trial.scenario.ground_truth)
    submitted = trial.submission.diagnosis if trial.submission is not None else None
    figures = trial.result.figures
    if not submitted:
        figures[MTTD] = math.inf
        figures[NTAM] = figures["ntam_fl"] = figures["ntam_fpc"] = 0.0
        if truth.propagations:
            figures["chain_f1"] = 0.0
        return CheckResult("diagnosis", False, "no diagnosis was submitted", value=0.0)
    scored = diagnosis_scoring.score(truth, submitted)
    summary = _topology_aware(trial, truth, submitted, _topology(trial))
    figures["diagnosis_f1"] = round(scored.root_cause.f1, 4)
    figures["entity_f1"] = round(scored.entities.f1, 4)
    figures["entity_at_1"] = 1.0 if scored.entity_at_1 else 0.0
    if scored.passed:
        diagnosed_at = trial.submission.diagnosed_at
        figures[MTTD] = round(diagnosed_at if diagnosed_at is not None else trial.agent_seconds, 3)
    else:
        figures[MTTD] = math.inf
    return CheckResult("diagnosis", scored.passed, f"{diagnosis_scoring.describe(scored)}; {summary}",
                       value=round(scored.root_cause.f1, 4))


def _mitigation(trial) -> CheckResult:
    cluster = trial.cluster
    outcome = mitigation_check.evaluate(
        Prometheus(cluster.urls["prometheus"]), cluster.now, cluster.advance, namespace=trial.namespace,
        alerts=trial.scenario.expected_alerts, window=trial.scenario.evaluation.stability_window,
        agent_started=trial.agent_started, baseline=trial.baseline)
    if outcome.passed and outcome.clear_since is not None:
        trial.result.figures[MTTR] = round(max(0.0, outcome.clear_since - trial.agent_started), 3)
    else:
        trial.result.figures[MTTR] = math.inf
    return CheckResult("mitigation", outcome.passed, outcome.detail)


def _topology(trial) -> tuple[Graph | None, str]:
    """The cluster's topology as the agent left it: the monitor's graph, else one built from the API."""
    cluster = trial.cluster
    try:
        return read_topology(cluster.urls.get("topology"), cluster.api_client()), ""
    except TopologyUnavailable as exc:
        return None, f"no topology ({exc}); near misses score 0"


def _topology_aware(trial, truth: SreGroundTruth, submitted: dict, topology: tuple[Graph | None, str]) -> str:
    """FL-NTAM (figure ``ntam``, and ``ntam_fl``), FPC-NTAM (``ntam_fpc``) and the chain's F1 (``chain_f1``)."""
    graph, problem = topology
    settings = trial.scenario.evaluation.ntam
    params = ntam_scoring.Parameters.combine(settings.model_dump() if settings else None,
                                             getattr(trial.options, "ntam", None))
    fl = ntam_scoring.fault_localisation(truth, submitted, graph, params)
    fpc = ntam_scoring.propagation_chain(truth, submitted, graph, params)
    figures = trial.result.figures
    figures[NTAM] = figures["ntam_fl"] = round(fl.value, 4)
    figures["ntam_fpc"] = round(fpc.value, 4)
    chain = chain_scoring.score(truth, submitted)
    if chain is not None:
        figures["chain_f1"] = round(chain.f1, 4)
    text = f"FL-NTAM {fl.describe()}\nFPC-NTAM {fpc.describe()}"
    if chain is not None:
        text += f"\n{chain.describe()}"
    source = f"graph: {graph.source}, {len(graph.nodes)} nodes, {graph.edge_count} edges" if graph else problem
    text += f"\nw={params.w:g} t={params.t:g} g={params.g:g}; {source}"
    trial.result.attachments.append(Attachment("topology-aware scores", "text", content=text))
    return f"FL-NTAM {fl.value:.2f}, FPC-NTAM {fpc.value:.2f}" + (f", chain F1 {chain.f1:.2f}" if chain else "")
