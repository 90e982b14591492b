"""The openai agent's settings: what model, where, how long, how much.

Each setting is read, first found wins, from the command line (``--itbench-openai-model``), the ini file
(``itbench_openai_model = ...``), the environment where one is named (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``), and its default. This module imports nothing of ``openai``: the plugin registers
the options whether or not the package is installed.

The API key is never shown: :class:`OpenAISettings` leaves it out of its repr, and :func:`redact`
takes it out of any text the agent reports.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_BASE_URL = "https://api.openai.com/v1"  # the client's own default, named for messages
# A server that checks no key (vLLM, Ollama, LiteLLM without auth) still gets one: the client insists.
PLACEHOLDER_KEY = "not-needed"


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the option and what it takes."""


@dataclass(frozen=True)
class OpenAISettings:
    model: str = DEFAULT_MODEL
    base_url: str | None = None  # None: OpenAI's own endpoint
    api_key: str | None = field(default=None, repr=False)
    api_version: str | None = None  # Azure OpenAI's older deployment URLs want ?api-version=...
    temperature: float | None = 0.0  # None: not sent (some reasoning models accept only their default)
    seed: int | None = 0  # sent to the endpoint (best-effort determinism) and seeds the retries' jitter
    max_steps: int = 40  # model turns (requests that succeeded)
    max_tokens: int = 500_000  # prompt + completion tokens over the whole trial
    request_timeout: float = 120.0  # seconds for one request, bounded further by the deadline
    observation_tokens: int = 2_000  # a tool's answer is cut to about this many tokens
    max_retries: int = 5  # further attempts of a request that failed on a transient error
    retry_delay: float = 1.0  # seconds before the first retry; doubled each time, with jitter
    tools: str = "in-process"  # in-process: call the toolbox directly; mcp: through the trial's MCP server

    @property
    def endpoint(self) -> str:
        """The base URL requests go to, for messages."""
        return (self.base_url or OPENAI_BASE_URL).rstrip("/")

    @property
    def key_for_client(self) -> str:
        return self.api_key or PLACEHOLDER_KEY

    def redact(self, text: str) -> str:
        return redact(text, self.api_key)


@dataclass(frozen=True)
class Option:
    """One setting as the command line, the ini file and the environment spell it."""

    name: str  # the OpenAISettings field
    parse: Callable[[str], Any]
    help: str
    env: str | None = None
    metavar: str = "VALUE"

    @property
    def flag(self) -> str:
        return "--itbench-openai-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "itbench_openai_" + self.name

    @property
    def dest(self) -> str:
        return self.ini


def _text(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def _url(value: str) -> str:
    value = _text(value)
    if not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL, like http://localhost:8000/v1")
    return value


def _optional_float(value: str) -> float | None:
    if value.strip().lower() in ("none", "default"):
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError("must be a number >= 0, or 'none' to leave it to the endpoint")
    return number


def _optional_int(value: str) -> int | None:
    if value.strip().lower() in ("none", "default"):
        return None
    return int(value)


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("must be at least 1")
    return number


def _count(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must be 0 or more")
    return number


def _seconds(value: str) -> float:
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError("must be a number of seconds > 0")
    return number


def _tools(value: str) -> str:
    value = value.strip()
    if value not in TOOLS:
        raise ValueError(f"must be one of {', '.join(TOOLS)}")
    return value


TOOLS = ("in-process", "mcp")


def _delay(value: str) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError("must be a number of seconds >= 0")
    return number


OPTIONS: tuple[Option, ...] = (
    Option("model", _text, f"the model (or Azure deployment) to ask (default {DEFAULT_MODEL})", metavar="NAME"),
    Option("base_url", _url, "an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 for vLLM (default: "
           "$OPENAI_BASE_URL, else OpenAI's)", env="OPENAI_BASE_URL", metavar="URL"),
    Option("api_key", _text, "the API key (default: $OPENAI_API_KEY; prefer the environment, a command line "
           "is visible to other users)", env="OPENAI_API_KEY", metavar="KEY"),
    Option("api_version", _text, "Azure OpenAI before its v1 API: the api-version to send (the model names the "
           "deployment; the v1 URL https://RESOURCE.openai.azure.com/openai/v1 needs none)", metavar="VERSION"),
    Option("temperature", _optional_float, "sampling temperature (default 0; 'none' sends none)", metavar="X"),
    Option("seed", _optional_int, "seed sent to the endpoint and used for retry jitter (default 0; 'none' "
           "sends none)", metavar="N"),
    Option("max_steps", _positive_int, "model turns per trial before handing in (default 40)", metavar="N"),
    Option("max_tokens", _positive_int, "prompt + completion tokens per trial before handing in "
           "(default 500000)", metavar="N"),
    Option("request_timeout", _seconds, "seconds one request may take (default 120)", metavar="SECONDS"),
    Option("observation_tokens", _positive_int, "a tool's answer is cut to about this many tokens "
           "(default 2000)", metavar="N"),
    Option("max_retries", _count, "retries of a request after a 429, 5xx, timeout or connection error "
           "(default 5)", metavar="N"),
    Option("retry_delay", _delay, "seconds before the first retry, doubled for each next one, with jitter "
           "(default 1)", metavar="SECONDS"),
    Option("tools", _tools, "in-process: call the tools directly (default); mcp: take them from the trial's MCP "
           "server, as an MCP-speaking agent does (the same tools)", metavar="in-process|mcp"),
)


def add_options(group, parser) -> None:
    """Register every setting as a command-line option of ``group`` and an ini key of ``parser``."""
    for option in OPTIONS:
        # Parsed later, in from_values: an error then names the option and the agent, and the ini file's
        # value goes through the same checks.
        group.addoption(option.flag, dest=option.dest, metavar=option.metavar,
                        help=f"openai agent: {option.help}")
        parser.addini(option.ini, f"openai agent: {option.help}", default="")


def values_from_pytest(config) -> dict[str, str]:
    """The settings given to pytest, command line over ini file, by field name (absent when not given)."""
    found: dict[str, str] = {}
    for option in OPTIONS:
        given = config.getoption(option.dest, default=None)
        if given is None or given == "":
            try:
                given = config.getini(option.ini)
            except ValueError:  # not registered (a config built without this plugin's options)
                given = None
        if given is not None and str(given).strip() != "":
            found[option.name] = str(given)
    return found


def from_values(values: Mapping[str, str] | None = None,
                environ: Mapping[str, str] | None = None) -> OpenAISettings:
    """Settings from given values (by field name, as text), then the environment, then the defaults.

    Raises SettingsError naming the option when a value does not parse, or when no API key is given for
    OpenAI's own endpoint.
    """
    values = dict(values or {})
    environ = os.environ if environ is None else environ
    unknown = set(values) - {f.name for f in fields(OpenAISettings)}
    if unknown:
        raise SettingsError(f"unknown openai agent settings: {', '.join(sorted(unknown))}")
    parsed: dict[str, Any] = {}
    for option in OPTIONS:
        source = option.flag
        text = values.get(option.name)
        if text is None and option.env and environ.get(option.env, "").strip():
            text, source = environ[option.env], f"${option.env}"
        if text is None:
            continue
        try:
            parsed[option.name] = option.parse(str(text))
        except ValueError as exc:
            shown = "(hidden)" if option.name == "api_key" else repr(str(text))
            raise SettingsError(f"{source} = {shown}: {exc}") from None
    settings = OpenAISettings(**parsed)
    if settings.api_version and settings.base_url is None:
        raise SettingsError("--itbench-openai-api-version is for Azure OpenAI: give the resource's URL with "
                            "--itbench-openai-base-url (https://RESOURCE.openai.azure.com)")
    if settings.base_url is None and not settings.api_key:
        raise SettingsError(
            "no API key for OpenAI: set OPENAI_API_KEY (or --itbench-openai-api-key, itbench_openai_api_key); for a "
            "local server that needs none, give its URL with --itbench-openai-base-url")
    return settings


def redact(text: str, secret: str | None) -> str:
    """``text`` without ``secret`` in it (an endpoint may echo the key in an error)."""
    if not secret or len(secret) < 8 or not text:  # a short "key" is a placeholder, and would mangle the text
        return text
    return text.replace(secret, "[api key]")
