"""Routing and inhibition: which receivers an alert goes to, how alerts group, which alerts mute others.

A route matches an alert when all its matchers do; the alert goes down to
the first matching child (and further children while ``continue`` is set);
a route none of whose children match takes the alert itself. Children
inherit the parent's receiver and grouping. An inhibition rule mutes a
target alert while an unresolved source alert has the same values for the
``equal`` labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .alerts import Alert
from .matchers import Matcher, matches_all


@dataclass
class Route:
    """A route as configured; unset fields (None) are inherited from the parent route."""

    receiver: Optional[str] = None
    group_by: Optional[tuple[str, ...]] = None
    matchers: list[Matcher] = field(default_factory=list)
    continue_: bool = False
    routes: list["Route"] = field(default_factory=list)
    group_wait: Optional[float] = None
    group_interval: Optional[float] = None
    repeat_interval: Optional[float] = None

    def match(self, labels: Mapping[str, str], inherited: Optional["RouteMatch"] = None) -> list["RouteMatch"]:
        """``Route.Match``: where an alert ends up, with the receiver and grouping in effect there."""
        if not matches_all(self.matchers, labels):
            return []
        here = RouteMatch(self, self.receiver if self.receiver is not None else (inherited.receiver if inherited
                                                                                    else ""),
                          self.group_by if self.group_by is not None else (inherited.group_by if inherited else ()))
        found: list[RouteMatch] = []
        for child in self.routes:
            matched = child.match(labels, here)
            found.extend(matched)
            if matched and not child.continue_:
                break
        return found or [here]


@dataclass(frozen=True)
class RouteMatch:
    route: Route
    receiver: str
    group_by: tuple[str, ...]

    def group_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        return {name: value for name, value in labels.items() if name in self.group_by}


@dataclass
class InhibitRule:
    source_matchers: list[Matcher]
    target_matchers: list[Matcher]
    equal: tuple[str, ...]

    def inhibitor(self, labels: Mapping[str, str], alerts: list[Alert], now: float) -> Optional[str]:
        """The fingerprint of an alert that mutes ``labels`` under this rule, if any."""
        if not matches_all(self.target_matchers, labels):
            return None
        # An alert matching both sides cannot be muted by another such alert.
        two_sided = matches_all(self.source_matchers, labels)
        candidates = []
        for source in alerts:
            if source.resolved(now) or not matches_all(self.source_matchers, source.labels):
                continue
            if any(source.labels.get(n, "") != labels.get(n, "") for n in self.equal):
                continue
            if two_sided and matches_all(self.target_matchers, source.labels):
                continue
            candidates.append(source.fingerprint)
        return min(candidates) if candidates else None
