"""Topology-aware NTAM (ITBench's Normalized Topology-Aware Match), for fault localisation and for the chain.

A prediction at rank i (0-based) scores

- ``w**i`` when it names a truth answer, and otherwise
- ``s(p) * t**d``, with ``d`` its fewest hops to any entity of the truth in the topology graph (taken
  undirected) and ``s(p) = (ln((|E|+1) / (deg p+1)) + 1) / (ln(|E|+1) + 1)`` its specificity: 1 for an
  entity with no edges, less the more edges it has (``|E|``: the graph's edges; a hub like a Namespace
  scores little for being near everything). A prediction that is not in the graph, or not connected to
  the truth, scores 0.

The sum is divided by the best a list of the truth's length can score, ``sum(w**j for j < |T|)``,
capped at 1, and multiplied by ``exp(-g * abs(|P| - |T|))`` for naming more or fewer entities than
the truth has. Defaults ``w=0.7, t=0.8, g=1``; a scenario sets them under ``evaluation.ntam``, the
command line with ``--itbench-ntam-w/-t/-g`` (which wins).

What counts: the truth is a set of *answers* (ground-truth groups; groups joined by aliases are one
answer, as in :mod:`.diagnosis`). A prediction names an answer when it matches one of the answer's
groups (kind, namespace, name pattern). Predictions are taken in the submitted order; one that names
only answers already named (a Pod after its aliased Deployment) or repeats a name is dropped, so it
neither scores nor counts in ``|P|``. An unreadable name (not ``namespace/Kind/name``) counts and scores 0.

- **FL-NTAM**: the contributing predictions (``contributing_factor`` true or absent) against the
  root-cause answers.
- **FPC-NTAM**: every named entity, then the ends of the submitted propagations not named before,
  against the answers of the groups the truth's propagations name (every group when it has none); an
  entity that names a ground-truth group off the chain is left out, neither scored nor counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..scenario.schema import SreGroundTruth
from .diagnosis import Entity, answers, matches
from .topology_graph import Graph

DEFAULT_W, DEFAULT_T, DEFAULT_G = 0.7, 0.8, 1.0


@dataclass(frozen=True)
class Parameters:
    w: float = DEFAULT_W  # rank decay of a correct prediction
    t: float = DEFAULT_T  # decay per hop of a near miss
    g: float = DEFAULT_G  # penalty rate for a list longer or shorter than the truth

    def __post_init__(self):
        for name, low, high in (("w", 0.0, 1.0), ("t", 0.0, 1.0), ("g", 0.0, math.inf)):
            value = getattr(self, name)
            if not (low <= value <= high) or (name != "g" and value == 0.0):
                raise ValueError(f"NTAM {name} must be in {'(0, 1]' if name != 'g' else '[0, inf)'}, got {value}")

    @classmethod
    def combine(cls, scenario: dict[str, float] | None, command_line: dict[str, float] | None) -> "Parameters":
        """Defaults, overridden by the scenario's ``evaluation.ntam``, overridden by the command line."""
        values = {"w": DEFAULT_W, "t": DEFAULT_T, "g": DEFAULT_G}
        for layer in (scenario or {}, command_line or {}):
            values.update({k: float(v) for k, v in layer.items() if v is not None})
        return cls(**values)


@dataclass(frozen=True)
class Placed:
    """One prediction as NTAM sees it."""

    name: str
    in_truth: bool
    hops: int | None = None  # fewest hops to the truth (predictions outside the truth), None if unknown
    degree: int | None = None  # its degree in the graph, None if it is not in the graph


@dataclass(frozen=True)
class Term:
    placed: Placed
    rank: int
    specificity: float | None
    score: float


@dataclass(frozen=True)
class NtamScore:
    value: float
    terms: tuple[Term, ...]
    best: float  # sum(w**j for j < |T|)
    truth_size: int
    penalty: float  # exp(-g * abs(|P| - |T|))

    def describe(self) -> str:
        parts = []
        for term in self.terms:
            p = term.placed
            how = "in truth" if p.in_truth else (f"{p.hops} hops" if p.hops is not None and p.degree is not None
                                                 else "not near the truth")
            parts.append(f"{p.name} ({how}) {term.score:.3f}")
        return (f"{self.value:.3f} = min(1, {sum(t.score for t in self.terms):.3f} / {self.best:.3f}) x "
                f"{self.penalty:.3f}" + (f" [{'; '.join(parts)}]" if parts else ""))


def specificity(degree: int, edge_count: int) -> float:
    """``(ln((|E|+1)/(deg+1)) + 1) / (ln(|E|+1) + 1)``."""
    return (math.log((edge_count + 1) / (degree + 1)) + 1) / (math.log(edge_count + 1) + 1)


def score(predictions: Sequence[Placed], truth_size: int, edge_count: int,
          params: Parameters = Parameters()) -> NtamScore:
    """NTAM of predictions already placed against a truth of ``truth_size`` answers."""
    if truth_size < 1:
        raise ValueError("NTAM needs a truth of at least one answer")
    terms = []
    for rank, p in enumerate(predictions):
        if p.in_truth:
            terms.append(Term(p, rank, None, params.w ** rank))
        elif p.hops is None or p.degree is None:
            terms.append(Term(p, rank, None, 0.0))
        else:
            s = specificity(p.degree, edge_count)
            terms.append(Term(p, rank, s, s * params.t ** p.hops))
    best = sum(params.w ** j for j in range(truth_size))
    penalty = math.exp(-params.g * abs(len(predictions) - truth_size))
    total = sum(t.score for t in terms)
    return NtamScore(min(1.0, total / best) * penalty, tuple(terms), best, truth_size, penalty)


def _entity_of(node) -> Entity:
    return Entity(node.namespace or None, node.kind, node.name)


def place(names: Iterable[str], truth: SreGroundTruth, wanted: set[int], graph: Graph | None, *,
          skip_other_answers: bool = False) -> list[Placed]:
    """Predictions (``namespace/Kind/name``) placed against the answers ``wanted`` and the graph.

    With ``skip_other_answers``, a prediction that names only ground-truth answers outside ``wanted`` is
    left out (FPC: an entity of the truth that is not on the chain is not a mistake).
    """
    answer_of = answers(truth)
    groups = [g for g in truth.groups if answer_of[g.id] in wanted]
    truth_nodes: list[str] = []
    if graph is not None:
        truth_nodes = [i for i, n in graph.nodes.items() if any(matches(g, _entity_of(n)) for g in groups)]
    named: set[int] = set()
    seen: set[str] = set()
    placed: list[Placed] = []
    for raw in names:
        name = str(raw).strip()
        if name in seen:
            continue
        seen.add(name)
        entity = Entity.parse(name)
        if entity is None:
            placed.append(Placed(name, False))
            continue
        hits = {answer_of[g.id] for g in groups if matches(g, entity)}
        if not hits and skip_other_answers and any(matches(g, entity) for g in truth.groups):
            continue
        if hits:
            if hits <= named:
                continue  # an alias of what it already named
            named |= hits
            placed.append(Placed(name, True))
            continue
        placed.append(_near(name, entity, graph, truth_nodes))
    return placed


def _near(name: str, entity: Entity, graph: Graph | None, truth_nodes: list[str]) -> Placed:
    if graph is None:
        return Placed(name, False)
    candidates = graph.find(entity.kind, entity.name, entity.namespace)
    best: tuple[int, int] | None = None  # (hops, degree) of the candidate nearest the truth
    for node in candidates:
        reach = graph.hops_from(node)
        hops = [reach[t] for t in truth_nodes if t in reach]
        if hops and (best is None or min(hops) < best[0]):
            best = (min(hops), graph.degree(node))
    if best is None:
        degree = graph.degree(candidates[0]) if candidates else None
        return Placed(name, False, None, degree)
    return Placed(name, False, best[0], best[1])


def fault_localisation_names(diagnosis: dict[str, Any]) -> list[str]:
    return [str(e.get("name", "")) for e in diagnosis.get("entities") or []
            if isinstance(e, dict) and e.get("contributing_factor", True) is not False]


def chain_names(diagnosis: dict[str, Any]) -> list[str]:
    names = [str(e.get("name", "")) for e in diagnosis.get("entities") or [] if isinstance(e, dict)]
    for p in diagnosis.get("propagations") or []:
        if isinstance(p, dict):
            names += [str(p.get(end, "")) for end in ("source", "target") if p.get(end)]
    return list(dict.fromkeys(names))


def root_cause_answers(truth: SreGroundTruth) -> set[int]:
    answer_of = answers(truth)
    return {answer_of[g.id] for g in truth.groups if g.root_cause}


def chain_answers(truth: SreGroundTruth) -> set[int]:
    answer_of = answers(truth)
    if not truth.propagations:
        return set(answer_of.values())
    return {answer_of[end] for p in truth.propagations for end in (p.source, p.target)}


def fault_localisation(truth: SreGroundTruth, diagnosis: dict[str, Any], graph: Graph | None,
                       params: Parameters = Parameters()) -> NtamScore:
    wanted = root_cause_answers(truth)
    placed = place(fault_localisation_names(diagnosis), truth, wanted, graph)
    return score(placed, len(wanted), graph.edge_count if graph else 0, params)


def propagation_chain(truth: SreGroundTruth, diagnosis: dict[str, Any], graph: Graph | None,
                      params: Parameters = Parameters()) -> NtamScore:
    wanted = chain_answers(truth)
    placed = place(chain_names(diagnosis), truth, wanted, graph, skip_other_answers=True)
    return score(placed, len(wanted), graph.edge_count if graph else 0, params)
