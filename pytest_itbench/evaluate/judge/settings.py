"""The judge's settings: ``--itbench-judge=openai`` turns it on; its model, endpoint and timeout come from the
command line, then the ini file, then the environment; its key from the environment only.

The key is ``$ITBENCH_JUDGE_API_KEY``, else ``$OPENAI_API_KEY``: kept apart from the agent's, so that a judge
on one account grades an agent on another. A local endpoint that checks no key gets a placeholder.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

KINDS = ("off", "openai")
DEFAULT_MODEL = "gpt-4o-mini"
PLACEHOLDER_KEY = "not-needed"


class JudgeSettingsError(ValueError):
    """A setting that cannot be used; says which and what it takes."""


@dataclass(frozen=True)
class JudgeSettings:
    kind: str = "off"
    model: str = DEFAULT_MODEL
    base_url: str | None = None  # None: OpenAI's own endpoint
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0  # seconds for one grading request

    @property
    def enabled(self) -> bool:
        return self.kind != "off"

    def redact(self, text: str) -> str:
        return text.replace(self.api_key, "[judge key redacted]") if self.api_key else text


def add_options(group, parser) -> None:
    group.addoption("--itbench-judge", choices=KINDS, metavar="off|openai",
                    help="an LLM judge of SRE and FinOps diagnoses beside the deterministic scores (default off); "
                    "its key: $ITBENCH_JUDGE_API_KEY, else $OPENAI_API_KEY")
    group.addoption("--itbench-judge-model", metavar="NAME", help=f"the judge's model (default {DEFAULT_MODEL})")
    group.addoption("--itbench-judge-base-url", metavar="URL",
                    help="the judge's OpenAI-compatible endpoint (default $ITBENCH_JUDGE_BASE_URL, else OpenAI's)")
    group.addoption("--itbench-judge-timeout", metavar="SECONDS", help="seconds for one grading (default 60)")
    for name, what in (("itbench_judge", "off or openai (see --itbench-judge)"), ("itbench_judge_model", "the "
                       "judge's model"), ("itbench_judge_base_url", "the judge's endpoint"),
                       ("itbench_judge_timeout", "seconds for one grading")):
        parser.addini(name, what, default="")


def from_pytest(config) -> JudgeSettings:
    """The settings given to pytest; raises JudgeSettingsError naming the option."""
    def given(name: str) -> tuple[str, str] | None:
        value = config.getoption(name)
        if value is not None:
            return f"--{name.replace('_', '-')}", str(value)
        value = config.getini(name)
        return (f"ini option {name}", value) if value else None

    return from_values({key: found for key in ("itbench_judge", "itbench_judge_model", "itbench_judge_base_url",
                                               "itbench_judge_timeout") if (found := given(key))}, os.environ)


def from_values(values: Mapping[str, tuple[str, str]], environ: Mapping[str, str]) -> JudgeSettings:
    """``values``: by option name, (where it was given, its text)."""
    kind = values.get("itbench_judge", ("", "off"))
    if kind[1] not in KINDS:
        raise JudgeSettingsError(f"{kind[0]} = {kind[1]}: choose one of {', '.join(KINDS)}")
    model = values.get("itbench_judge_model", ("", DEFAULT_MODEL))[1].strip()
    if not model:
        raise JudgeSettingsError("--itbench-judge-model must not be empty")
    where, base_url = values.get("itbench_judge_base_url", ("$ITBENCH_JUDGE_BASE_URL",
                                                            environ.get("ITBENCH_JUDGE_BASE_URL", "")))
    if base_url and not base_url.startswith(("http://", "https://")):
        raise JudgeSettingsError(f"{where} = {base_url}: must be an http:// or https:// URL, like "
                                 f"http://localhost:8000/v1")
    where, text = values.get("itbench_judge_timeout", ("", "60"))
    try:
        timeout = float(text)
        if not math.isfinite(timeout) or timeout <= 0:
            raise ValueError
    except ValueError:
        raise JudgeSettingsError(f"{where} = {text}: must be a number of seconds > 0") from None
    key = environ.get("ITBENCH_JUDGE_API_KEY") or environ.get("OPENAI_API_KEY") or None
    settings = JudgeSettings(kind[1], model, base_url or None, key, timeout)
    if settings.enabled and key is None and not base_url:
        raise JudgeSettingsError("--itbench-judge=openai asks OpenAI's endpoint, which needs a key: set "
                                 "$ITBENCH_JUDGE_API_KEY (or $OPENAI_API_KEY), or give --itbench-judge-base-url")
    return settings
