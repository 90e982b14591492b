"""Held-out variants: ``--itbench-variant=N`` moves a scenario's fault to another eligible target.

Variant 0 is the scenario as written (the public catalog). For N > 0 a scenario with a ``variants:``
section draws one of its eligible targets other than the public one, and everything that names the
target follows the draw: the fault's target (and its ``container`` argument, by position in the pod
template), the ground truth (entity filters, propagations, recommended actions), the task text and the
expected alerts (the scenario's, or the drawn target's own ``expected_alerts``). A scenario without a
``variants:`` section has only variant 0 and runs unchanged under any N.

The draw depends on (N, scenario id) only, never on the trial's seed, so every run and every session of
variant N sees the same incident and pass@k over runs stays meaningful. Variants 1 to k (k eligible
targets besides the public one) are k different targets; from k + 1 on the draw starts a new round in
another order.

Names move by token: the public target's name is replaced where it stands as a name (``^cart$``,
``deployment/cart``, ``^cart-`` for its pods), not inside longer names (``valkey-cart``) nor where it
begins another object's name of the application (``frontend`` in ``frontend-proxy``).

The module knows nothing of the cluster; the application's manifests (plain dicts) are handed in.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .schema import FaultSpec, Scenario, VariantTarget

PUBLIC = 0


@dataclass(frozen=True)
class Draw:
    """What variant N of a scenario is: the fault that moved, from where to where."""

    variant: int  # the variant that runs: N, or 0 for a scenario whose target cannot move
    fault: int = 0
    kind: str = ""
    public: str = ""  # the target's name at variant 0
    drawn: str = ""  # the target's name at this variant


def trial_id(scenario_id: str, variant: int) -> str:
    """A trial's scenario identity in the reports: the id, with ``@vN`` for a held-out variant."""
    return scenario_id if variant == PUBLIC else f"{scenario_id}@v{variant}"


def task_id(scenario: Scenario, variant: int) -> str:
    """The id the agent is told: the scenario's at variant 0; at a held-out variant an opaque one, since the
    public id names the public target (``astronomy-product-catalog-scaled-to-zero``)."""
    if variant == PUBLIC:
        return scenario.id
    digest = hashlib.sha256(f"itbench-variant/{scenario.id}/{variant}".encode()).hexdigest()[:12]
    return f"{scenario.domain}-held-out-{digest}"


def check_variant_number(value: int) -> None:
    if value < 0:
        raise ValueError(f"a variant is 0 (the public catalog) or a positive number, not {value}")


# ---- eligibility -------------------------------------------------------------------------------------------------
def _objects(documents: Iterable[dict], kind: str, namespace: str | None) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in documents
            if d.get("kind") == kind and (d["metadata"].get("namespace") or namespace) == namespace}


def _stateless(obj: dict) -> bool:
    volumes = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("volumes") or ()
    claims = ((obj.get("spec") or {}).get("volumeClaimTemplates") or ())
    return not claims and not any("persistentVolumeClaim" in v for v in volumes)


def eligible(scenario: Scenario, documents: Sequence[dict]) -> list[VariantTarget]:
    """The targets variant N > 0 draws from (the public target left out), in a stable order."""
    spec = scenario.variants
    if spec is None:
        return []
    target = scenario.faults[spec.fault].target
    if spec.select is None:
        found = spec.listed()
    else:
        objects = _objects(documents, target.kind, target.namespace)
        wanted = spec.select
        found = [VariantTarget(name=name) for name, obj in sorted(objects.items())
                 if all(((obj["metadata"].get("labels") or {}).get(k)) == v for k, v in wanted.matchLabels.items())
                 and (not wanted.stateless or _stateless(obj)) and name not in wanted.exclude]
    return [t for t in found if t.name != target.name]


def problems(scenario: Scenario, documents: Sequence[dict] | None) -> Iterable[tuple[tuple, str]]:
    """What is wrong with a scenario's ``variants:``, as (field path, message) for the loader's file:line."""
    spec = scenario.variants
    if spec is None:
        return
    if spec.fault >= len(scenario.faults):
        yield ("variants", "fault"), (f"{spec.fault} is not the index of one of the scenario's "
                                      f"{len(scenario.faults)} fault(s) (0 is the first)")
        return
    target = scenario.faults[spec.fault].target
    if target is None:
        yield ("variants", "fault"), f"faults[{spec.fault}] has no target to move"
        return
    if documents is None:
        return
    objects = _objects(documents, target.kind, target.namespace)
    where = f"{target.kind} in namespace {target.namespace}" if target.namespace else target.kind
    if target.name not in objects:
        yield ("faults", spec.fault, "target"), (f"a movable target must be an object of the application; it has "
                                                 f"no {where} called {target.name!r}")
        return
    for i, entry in enumerate(spec.listed()):
        if entry.name not in objects:
            yield (("variants", "targets", i), f"the application {scenario.application} has no {where} called "
                   f"{entry.name!r}; it has: {', '.join(sorted(objects))}")
    if spec.select is not None:
        for i, name in enumerate(spec.select.exclude):
            if name not in objects:
                yield (("variants", "select", "exclude", i), f"the application {scenario.application} has no "
                       f"{where} called {name!r}")
    found = eligible(scenario, documents)
    if not found:
        yield ("variants",), (f"no eligible target besides the public one ({target.name}): a held-out variant "
                              f"needs at least one other")
        return
    for entry in found:
        if entry.name not in objects:
            continue
        try:
            rendered, _ = render(scenario, 1, documents, forced=entry.name)
        except ValueError as exc:
            yield ("variants",), f"target {entry.name}: {exc}"
            continue
        left = _mentions(rendered.task, target.name, documents)
        if left:
            yield ("task",), (f"at the variant drawing {entry.name}, the task text still names the public target "
                              f"({left!r}); name it as {target.name} so that it moves, or not at all")


def _mentions(text: str, name: str, documents: Sequence[dict]) -> str:
    """The public name in prose (``product catalog`` for product-catalog) or as a token, if the text has it."""
    prose = name.replace("-", " ")
    if prose != name and re.search(rf"(?<![\w-]){re.escape(prose)}(?![\w-])", text, re.IGNORECASE):
        return prose
    if _token_pattern(name, _names(documents)).search(text):
        return name
    return ""


# ---- the draw ------------------------------------------------------------------------------------------------------
def _rank(scenario_id: str, round_: int, name: str) -> bytes:
    return hashlib.sha256(f"itbench-variant/{scenario_id}/{round_}/{name}".encode()).digest()


def pick(scenario_id: str, variant: int, names: Sequence[str]) -> str:
    """The name variant N (> 0) draws: variants 1..k go through a permutation of the k names, then a new round."""
    if variant <= PUBLIC or not names:
        raise ValueError("only a held-out variant (N > 0) of a scenario with eligible targets draws")
    round_, position = divmod(variant - 1, len(names))
    order = sorted(sorted(set(names)), key=lambda n: _rank(scenario_id, round_, n))
    return order[position]


def draw(scenario: Scenario, variant: int, documents: Sequence[dict]) -> Draw:
    check_variant_number(variant)
    if variant == PUBLIC or scenario.variants is None:
        return Draw(PUBLIC)
    found = eligible(scenario, documents)
    if not found:
        return Draw(PUBLIC)
    spec = scenario.variants
    target = scenario.faults[spec.fault].target
    return Draw(variant, spec.fault, target.kind, target.name, pick(scenario.id, variant, [t.name for t in found]))


# ---- rendering -----------------------------------------------------------------------------------------------------
def render(scenario: Scenario, variant: int, documents: Sequence[dict], *,
           forced: str | None = None) -> tuple[Scenario, Draw]:
    """The scenario as variant N runs it, and the draw; variant 0 (or nothing movable) returns it unchanged."""
    chosen = draw(scenario, variant, documents) if forced is None else None
    if forced is not None:
        check_variant_number(variant)
        spec = scenario.variants
        target = scenario.faults[spec.fault].target
        chosen = Draw(variant, spec.fault, target.kind, target.name, forced)
    if chosen.variant == PUBLIC:
        return scenario, chosen
    spec = scenario.variants
    entry = next((t for t in eligible(scenario, documents) if t.name == chosen.drawn), VariantTarget(name=chosen.drawn))
    fault = scenario.faults[spec.fault]
    objects = _objects(documents, fault.target.kind, fault.target.namespace)
    names = _names(documents)
    renames = {chosen.public: chosen.drawn}
    args = dict(fault.args)
    if isinstance(args.get("container"), str):
        old_container = args["container"]
        new_container = _same_container(objects.get(chosen.public), objects.get(chosen.drawn), old_container)
        if new_container is None:
            raise ValueError(f"{fault.target.kind} {chosen.drawn} has no container in the place of "
                             f"{old_container!r} (the fault's container argument)")
        args["container"] = new_container
        if new_container != old_container:
            renames[old_container] = new_container
    moved = FaultSpec(fault=fault.fault, target=fault.target.model_copy(update={"name": chosen.drawn}),
                      args=_substitute(args, renames, names))
    faults = list(scenario.faults)
    faults[spec.fault] = moved
    data = scenario.model_dump(mode="python")
    data.update(
        faults=[f.model_dump(mode="python") for f in faults],
        task=_substitute(scenario.task, renames, names),
        title=f"{_substitute(scenario.title, renames, names)} (variant {chosen.variant})",
        ground_truth=_substitute(scenario.ground_truth, renames, names),
        expected_alerts=list(entry.expected_alerts if entry.expected_alerts is not None
                             else scenario.expected_alerts),
    )
    return Scenario.model_validate(data), chosen


def _same_container(public: dict | None, drawn: dict | None, container: str) -> str | None:
    """The drawn workload's container in the place the public workload's ``container`` holds."""
    def names(obj):
        spec = (((obj or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        return [c.get("name") for c in spec.get("containers") or ()]
    old, new = names(public), names(drawn)
    if container in new and container not in old:
        return container
    if container not in old:
        return container  # not a name of the public workload's containers: leave it to the fault's own check
    position = old.index(container)
    return new[position] if position < len(new) else None


def _names(documents: Sequence[dict]) -> frozenset[str]:
    return frozenset(d["metadata"]["name"] for d in documents if (d.get("metadata") or {}).get("name"))


def _token_pattern(name: str, names: frozenset[str]) -> re.Pattern:
    # Longer names of the application that start with this one (frontend-proxy for frontend) are left alone.
    longer = sorted((n[len(name):] for n in names if n.startswith(name + "-")), key=len, reverse=True)
    guard = "".join(f"(?!{re.escape(rest)}(?![A-Za-z0-9-]))" for rest in longer)
    return re.compile(rf"(?<![A-Za-z0-9-]){re.escape(name)}(?![A-Za-z0-9]){guard}")


def _substitute(value: Any, renames: dict[str, str], names: frozenset[str]) -> Any:
    """Every name of ``renames`` replaced at once (a drawn name is never renamed again)."""
    if isinstance(value, str):
        olds = sorted(renames, key=len, reverse=True)
        pattern = re.compile("|".join(f"(?P<n{i}>{_token_pattern(old, names).pattern})" for i, old in enumerate(olds)))
        return pattern.sub(lambda m: renames[olds[int(m.lastgroup[1:])]], value)
    if isinstance(value, dict):
        return {k: _substitute(v, renames, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_substitute(v, renames, names) for v in value]
    return value
