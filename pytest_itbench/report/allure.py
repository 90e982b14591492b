"""Allure results: labels, parameters and evidence for each trial, and the session's environment.

Used only when allure-pytest is installed (the ``allure`` extra) and ``--alluredir`` is given:
``results_dir(config)`` is None otherwise, and nothing here imports allure before it is needed.

Per trial, ``annotate(result)`` must run while allure-pytest holds the test open, which it does from
the item's setup until its logfinish: in the test body, in a fixture, or in the plugin's
``pytest_runtest_makereport`` for that item. It sets epic = domain, feature = the CISO class or the
application, story = scenario id, severity from complexity, a tag per fault; the per-run figures,
phase times and seed as parameters with ``excluded=True`` (Allure's history id hashes every parameter
not excluded, so a test keeps one history across runs whatever its MTTR was); and attaches the verdict,
the error and the trial's own attachments (``TrialResult.attachments``); then each step of the
trajectory becomes an Allure step (see ``_trajectory_steps``).

allure-pytest maps outcomes so: an ``AssertionError`` or ``pytest.fail`` is *failed*, any other
exception *broken*. So an agent's miss (the plugin fails with ``junit.failure_message``) is failed, and
an environment error (raised as an error that is not an AssertionError) is broken;
``categories.json`` names the two, and ``write_session_files`` writes it with
``environment.properties`` from the controller at the end of the session (after allure-pytest's
``--clean-alluredir``, which runs at configure).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from pytest_itbench.agents.base import Step
from pytest_itbench.report.trajectory_analysis import failure_of, tool_of
from pytest_itbench.report.versions import runtime_versions
from pytest_itbench.results import Attachment, TrialResult

STEP_TITLE_CHARS = 150  # an Allure step's title: the action's first line, cut to this

SEVERITY = {"easy": "minor", "medium": "normal", "hard": "critical"}

CATEGORIES = [
    {
        "name": "Agent failures",
        "description": "The environment worked and the agent missed: a required check failed (diagnosis, "
                       "mitigation, policy posture), or the agent crashed, overran its time or handed in "
                       "something unreadable.",
        "matchedStatuses": ["failed"],
    },
    {
        "name": "Environment errors",
        "description": "The environment broke (provisioning, deployment, fault injection, an expected alert "
                       "that never fired, the harness itself); the trial says nothing about the agent.",
        "matchedStatuses": ["broken"],
    },
]


def results_dir(config: Any) -> Path | None:
    """The Allure results directory, or None when allure-pytest is absent or ``--alluredir`` not given."""
    value = config.getoption("allure_report_dir", default=None)
    return Path(config.invocation_params.dir, value) if value else None


def annotate(result: TrialResult) -> None:
    import allure

    allure.dynamic.epic(result.domain)
    feature = result.category or result.application
    if feature:
        allure.dynamic.feature(feature)
    allure.dynamic.story(result.scenario_id)
    allure.dynamic.severity(allure.severity_level(SEVERITY.get(result.complexity, "normal")))
    if result.faults:
        allure.dynamic.tag(*result.faults)
    allure.dynamic.parameter("seed", result.seed, excluded=True)
    if result.variant:  # a held-out variant is another test in Allure's history; variant 0 keeps its history id
        allure.dynamic.parameter("variant", result.variant)
    for name, value in sorted(result.figures.items()):
        if value is not None:
            allure.dynamic.parameter(name, value, excluded=True)
    for phase, seconds in result.phases.items():
        # numbers, not text: Allure shows a string parameter in quotes
        allure.dynamic.parameter(f"{phase} (s)", round(seconds, 3), excluded=True)
    if result.checks:
        allure.attach(result.verdict(), name="verdict", attachment_type=allure.attachment_type.TEXT)
    if result.error:
        allure.attach(result.error, name="error", attachment_type=allure.attachment_type.TEXT)
    for attachment in result.attachments:
        _attach(attachment)
    _trajectory_steps(result)  # last: an attachment made while a step is open goes to that step


def _trajectory_steps(result: TrialResult) -> None:
    """Each trajectory step as an Allure step: numbered, titled by its action, with its tool, duration and
    tokens as parameters, its thought and observation attached, failed when the step failed.

    Allure times a step by when it is reported, and a trial is reported after its agent finished, so the
    step's real duration is a parameter. The steps are opened and closed through allure-commons' hooks,
    as ``allure.step`` does, so that a failed step gets its reason as message without raising anything.
    """
    import allure
    from allure_commons import plugin_manager

    for number, step in enumerate(_recorded_steps(result), 1):
        label = (step.action or step.thought).strip().splitlines()
        title = f"{number}. " + (label[0][:STEP_TITLE_CHARS] if label else "(no action)")
        params = {"tool": tool_of(step) or "-", "duration (s)": f"{max(0.0, step.ended - step.started):.3f}"}
        if step.tokens_in or step.tokens_out:
            params.update({"tokens in": str(step.tokens_in), "tokens out": str(step.tokens_out)})
        if step.model:
            params["model"] = step.model
        key = uuid.uuid4().hex
        plugin_manager.hook.start_step(uuid=key, title=title, params=params)
        texts = (("thought", step.thought), ("action", step.action), ("observation", step.observation))
        details = "\n\n".join(f"{name}:\n{text}" for name, text in texts if text.strip())
        if details:
            allure.attach(details, name="step", attachment_type=allure.attachment_type.TEXT)
        reason = failure_of(step)
        # AssertionError is what allure-pytest reports as failed (any other exception is broken).
        failure = AssertionError(reason) if reason else None
        plugin_manager.hook.stop_step(uuid=key, title=title, exc_type=type(failure) if failure else None,
                                      exc_val=failure, exc_tb=None)


def _recorded_steps(result: TrialResult) -> Iterator[Step]:
    """The steps of the trial's trajectory attachment (inline, or a JSON file it names), when there is one."""
    found = next((a for a in result.attachments if a.name == "trajectory"), None)
    if found is None:
        return
    content = found.content
    if found.path is not None:
        try:
            content = json.loads(Path(found.path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # already reported: _attach said the file was not written
    for entry in content if isinstance(content, list) else []:
        try:
            yield Step.from_dict(entry) if isinstance(entry, dict) else Step(action=str(entry))
        except ValueError:
            continue


def _attach(attachment: Attachment) -> None:
    import allure

    kind = {"json": allure.attachment_type.JSON, "yaml": allure.attachment_type.YAML}.get(
        attachment.media, allure.attachment_type.TEXT)
    if attachment.path is not None:
        if Path(attachment.path).is_file():
            allure.attach.file(attachment.path, name=attachment.name, attachment_type=kind)
        else:  # the trial ended before writing it; say so rather than drop it silently
            allure.attach(f"{attachment.path} was not written", name=attachment.name,
                          attachment_type=allure.attachment_type.TEXT)
        return
    if attachment.media == "json":
        body = json.dumps(attachment.content, indent=2, ensure_ascii=False, default=str)
    elif attachment.media == "yaml":
        body = yaml.safe_dump(attachment.content, sort_keys=False, allow_unicode=True)
    else:
        body = str(attachment.content)
    allure.attach(body, name=attachment.name, attachment_type=kind)


def environment(results: list[TrialResult]) -> dict[str, str]:
    """What the session ran with: agent, backend and versions (several values joined if they differ)."""
    def joined(values: set[str]) -> str:
        return ", ".join(sorted(values))

    props = {"agent": joined({r.agent for r in results}), "backend": joined({r.backend for r in results})}
    versions: dict[str, set[str]] = {k: {v} for k, v in runtime_versions().items()}
    for r in results:
        for name, value in r.versions.items():
            versions.setdefault(name, set()).add(value)
    props.update({f"version.{name}": joined(values) for name, values in sorted(versions.items())})
    return {k: v for k, v in props.items() if v}


def write_session_files(directory: Path, environment: Mapping[str, str]) -> None:
    """Write environment.properties and categories.json; categories already there are kept first."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"{_escape(k, key=True)}={_escape(v)}" for k, v in environment.items()]
    (directory / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = directory / "categories.json"
    existing = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    names = {c.get("name") for c in existing}
    categories = existing + [c for c in CATEGORIES if c["name"] not in names]
    path.write_text(json.dumps(categories, indent=2) + "\n", encoding="utf-8")


def _escape(text: str, key: bool = False) -> str:
    """Java .properties escaping (what Allure reads): backslashes, line breaks, and in keys = : and spaces."""
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    if key:
        for char in "=: ":
            text = text.replace(char, "\\" + char)
    return text
