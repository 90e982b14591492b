"""Silences: matchers over a time window that mute the alerts they match (Alertmanager's ``silence`` package).

A silence is *pending* before its start, *active* until its end, then
*expired*; expired silences are kept for the data retention (120 h) and then
forgotten. Updating a silence in a way that would rewrite history (other
matchers, a new start once it is active) expires it and creates a new one.
IDs are version-4 UUIDs drawn from the twin's seeded generator.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, replace
from typing import Mapping, Optional

from .matchers import MatchType, Matcher, matches_all

RETENTION = 120 * 3600.0  # --data.retention


class SilenceNotFound(LookupError):
    def __init__(self) -> None:
        super().__init__("silence not found")


class InvalidSilence(ValueError):
    pass


@dataclass(frozen=True)
class Silence:
    id: str
    matchers: tuple[Matcher, ...]
    starts_at: float
    ends_at: float
    updated_at: float
    created_by: str
    comment: str

    def state(self, now: float) -> str:
        """``types.CalcSilenceState``. (Silencing uses the same boundaries: Alertmanager's clock has moved on by the
        time it checks a silence expired "now", the twin's may not have.)"""
        if now < self.starts_at:
            return "pending"
        if now < self.ends_at:
            return "active"
        return "expired"

    def matches(self, labels: Mapping[str, str]) -> bool:
        return matches_all(list(self.matchers), labels)


def _matches_empty(m: Matcher) -> bool:
    if m.type is MatchType.EQUAL:
        return m.value == ""
    if m.type is MatchType.REGEX:
        return m.matches("")
    return False


def _validate(silence: Silence) -> None:
    if not silence.matchers:
        raise InvalidSilence("silence invalid: at least one matcher required")
    for i, m in enumerate(silence.matchers):
        if not m.name:
            raise InvalidSilence(f'silence invalid: invalid label matcher {i}: invalid label name ""')
    if all(_matches_empty(m) for m in silence.matchers):
        raise InvalidSilence("silence invalid: at least one matcher must not match the empty string")
    if silence.ends_at < silence.starts_at:
        raise InvalidSilence("silence invalid: end time must not be before start time")


class Silences:
    def __init__(self, rng: random.Random):
        self._rng = rng
        self._silences: dict[str, Silence] = {}

    def _gc(self, now: float) -> None:
        self._silences = {k: s for k, s in self._silences.items() if s.ends_at + RETENTION > now}

    def get(self, silence_id: str, now: float) -> Optional[Silence]:
        self._gc(now)
        return self._silences.get(silence_id)

    def all(self, now: float) -> list[Silence]:
        self._gc(now)
        return list(self._silences.values())

    def set(self, silence: Silence, now: float) -> str:
        """Create (no id) or update a silence (``Silences.Set``); returns its id."""
        self._gc(now)
        previous = self._silences.get(silence.id) if silence.id else None
        if silence.id and previous is None:
            raise SilenceNotFound()
        if previous is not None:
            if self._can_update(previous, silence, now):
                return self._store(replace(silence, updated_at=now))
            if previous.state(now) != "expired":
                self.expire(previous.id, now)
        new_id = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        starts_at = max(silence.starts_at, now)
        return self._store(replace(silence, id=new_id, starts_at=starts_at, updated_at=now))

    def _store(self, silence: Silence) -> str:
        _validate(silence)
        self._silences[silence.id] = silence
        return silence.id

    @staticmethod
    def _can_update(old: Silence, new: Silence, now: float) -> bool:
        if [(m.type, m.name, m.value) for m in old.matchers] != [(m.type, m.name, m.value) for m in new.matchers]:
            return False
        state = old.state(now)
        if state == "active":
            return int(new.starts_at) == int(old.starts_at) and new.ends_at >= now
        if state == "pending":
            return new.starts_at >= now
        return False

    def expire(self, silence_id: str, now: float) -> None:
        silence = self._silences.get(silence_id)
        if silence is None:
            raise SilenceNotFound()
        state = silence.state(now)
        if state == "active":
            self._silences[silence_id] = replace(silence, ends_at=now, updated_at=now)
        elif state == "pending":
            self._silences[silence_id] = replace(silence, starts_at=now, ends_at=now, updated_at=now)

    def silencing(self, labels: Mapping[str, str], now: float) -> list[str]:
        """IDs of the active silences that mute ``labels``, sorted (an alert's ``silencedBy``)."""
        self._gc(now)
        return sorted(s.id for s in self._silences.values() if s.state(now) == "active" and s.matches(labels))
