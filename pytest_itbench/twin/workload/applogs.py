"""Containers' log lines from the sheets' templates, at the rate requests produce them.

Each template of each container accumulates the expected number of lines its requests write; a
step writes the whole lines due (the fraction carries over), spread over the step, up to a cap
per template and step: a busy service's log is thinned the way a sampled log pipeline thins it,
while a rare failure always shows up. Placeholders: ``{error}`` (the failure's text), names of
the sheet's ``values`` lists (a random item), and ``{uuid}``, ``{hex16}``, ``{hex32}``,
``{int}``, ``{amount}``, ``{time}`` (the line's own time, RFC 3339).
"""

from __future__ import annotations

import functools
import math
import random
import uuid as uuidlib
from datetime import datetime, timezone

from ..logs import LogStore
from .errors import PLACEHOLDER, render
from .instances import Instance

MAX_LINES_PER_STEP = 12


class AppLogs:
    def __init__(self, logs: LogStore, rng: random.Random):
        self.logs = logs
        self.rng = rng
        self._due: dict[tuple[Instance, str, str], float] = {}  # (instance, template, error) -> lines owed

    def write(self, instance: Instance, template: str, expected: float, start: float, end: float, *,
              stream: str = "stdout", error: str = "") -> None:
        """Write the lines ``expected`` more occurrences of ``template`` owe, between ``start`` and ``end``."""
        if expected <= 0:
            return
        key = (instance, template, error)
        owed = self._due.get(key, 0.0) + expected
        whole = math.floor(owed)
        self._due[key] = owed - whole
        for _ in range(min(whole, MAX_LINES_PER_STEP)):
            at = start + (end - start) * self.rng.random()
            self.logs.append(instance.namespace, instance.pod, instance.container,
                             self.line(instance, template, at, error), stream=stream, at=at)

    def line(self, instance: Instance, template: str, at: float, error: str = "") -> str:
        names = _placeholders(template)
        if not names:
            return template
        values = {"error": error}
        if "time" in names:
            values["time"] = datetime.fromtimestamp(at, tz=timezone.utc).isoformat()
        for name in names:
            if name in values:
                continue
            choices = instance.sheet.values.get(name)
            if choices:
                values[name] = self.rng.choice(choices)
            elif name in _GENERATED:
                values[name] = _GENERATED[name](self.rng)
        return render(template, values)

    def forget(self, alive: set[Instance]) -> None:
        """Drop what stopped instances still owed."""
        self._due = {k: v for k, v in self._due.items() if k[0] in alive}


_GENERATED = {
    "uuid": lambda rng: str(uuidlib.UUID(int=rng.getrandbits(128), version=4)),
    "hex16": lambda rng: f"{rng.getrandbits(64):016x}",
    "hex32": lambda rng: f"{rng.getrandbits(128):032x}",
    "int": lambda rng: str(rng.randint(1, 10)),
    "amount": lambda rng: f"{rng.randint(5, 900)}.{rng.randint(0, 99):02d}",
}


@functools.lru_cache(maxsize=1024)
def _placeholders(template: str) -> tuple[str, ...]:
    return tuple(PLACEHOLDER.findall(template))
