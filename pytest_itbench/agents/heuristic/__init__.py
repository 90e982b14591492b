"""``heuristic``: a deterministic, rule-based baseline agent built on the toolkit (see :mod:`.agent`)."""

from .agent import HeuristicAgent

__all__ = ["HeuristicAgent"]
