"""The id of a selection, and a stable partition of it into shards.

The selection is what a session was asked to run: each collected trial (scenario id, variant, run) with the
hash of its scenario file's text, and the options that change what a trial is (agent, seed, runs, variant,
noise, time limit, withheld signals, backend). Its id goes into every result, so that results of different
selections (another catalog version, another seed) are never merged or resumed as one.

Shards partition the selection by scenario id: every run and variant of a scenario lands in the same shard (so
pass@k stays computable per shard), the shards are disjoint, and together they are the whole selection. The
scenarios are ordered by a hash of their id (not by name: neighbours in the catalog are alike, and a shard
should get a mix) and dealt round-robin, so shard sizes differ by at most one scenario.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SHARD = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``K/N`` with 1 <= K <= N; raises ValueError saying what it takes."""
    match = SHARD.fullmatch(text.strip())
    if not match:
        raise ValueError("must be K/N, as in 2/8 (the second of eight shards)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"K must be between 1 and N (got {index}/{count})")
    return Shard(index, count)


def shard_of_each(scenario_ids: Iterable[str], count: int) -> dict[str, int]:
    """The shard (1..count) of each distinct scenario id."""
    ordered = sorted(set(scenario_ids), key=lambda s: (zlib.crc32(s.encode()), s))
    return {scenario: i % count + 1 for i, scenario in enumerate(ordered)}


def selection_id(trials: Iterable[tuple[str, int, int, str]], options: Mapping[str, object]) -> str:
    """``trials``: (scenario id, variant, run, the scenario file's text hash); ``options``: JSON-safe values."""
    data = {"trials": sorted(trials), "options": {k: options[k] for k in sorted(options)}}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_hash(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()[:16]
