"""The model endpoint, through the ``openai`` package: one chat completion per call, errors classified.

``openai`` is imported here, when an agent is built, never when the plugin loads: pytest-itbench runs
without it, and asking for the openai agent without it says how to install it.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field
from typing import Any

from .retries import EndpointError
from .settings import OpenAISettings

INSTALL_HINT = "pip install 'pytest-itbench[openai]'"


class MissingPackage(ImportError):
    """The ``openai`` package is not installed."""


def import_openai():
    try:
        import openai
    except ImportError as exc:
        raise MissingPackage(f"the openai agent needs the openai package, which cannot be imported ({exc}); "
                             f"install it with: {INSTALL_HINT}") from None
    return openai


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it: it may not parse


@dataclass(frozen=True)
class ModelTurn:
    """One answer of the model: what it said, the tools it called, and what the endpoint counted."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int | None = None  # None: the endpoint reported no usage
    completion_tokens: int | None = None
    finish_reason: str = ""

    def as_message(self) -> dict[str, Any]:
        """The assistant message to send back in the history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}
                                     for c in self.tool_calls]
        return message


class MalformedAnswer(Exception):
    """The endpoint answered 200 with something that is not a chat completion."""


class ModelEndpoint:
    """An OpenAI-compatible chat-completions endpoint, without the client's own retries (see retries.py)."""

    def __init__(self, settings: OpenAISettings):
        self.settings = settings
        self.openai = import_openai()
        options: dict[str, Any] = {"api_key": settings.key_for_client, "max_retries": 0,
                                   "timeout": settings.request_timeout}
        if settings.api_version:
            # Azure OpenAI before its v1 API: the client that sends the key as api-key and the version as a
            # query parameter. A resource URL gets /openai/deployments/MODEL added; a URL already naming the
            # path is used as it is.
            where = {"base_url": settings.endpoint} if "/openai" in settings.endpoint else \
                {"azure_endpoint": settings.endpoint}
            self.client = self.openai.AzureOpenAI(api_version=settings.api_version, **where, **options)
        else:
            self.client = self.openai.OpenAI(base_url=settings.endpoint, **options)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], timeout: float) -> ModelTurn:
        request: dict[str, Any] = {"model": self.settings.model, "messages": messages, "timeout": timeout}
        if tools:
            request["tools"] = tools
        if self.settings.temperature is not None:
            request["temperature"] = self.settings.temperature
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        response = self.client.chat.completions.create(**request)
        choices = getattr(response, "choices", None)
        if not choices:
            raise MalformedAnswer("the endpoint answered without any choice")
        choice = choices[0]
        message = choice.message
        calls = [ToolCall(id=c.id or f"call_{i}", name=c.function.name or "", arguments=c.function.arguments or "")
                 for i, c in enumerate(message.tool_calls or []) if getattr(c, "function", None) is not None]
        usage = getattr(response, "usage", None)
        return ModelTurn(content=message.content or "", tool_calls=calls,
                         prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
                         completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
                         finish_reason=choice.finish_reason or "")

    def classify(self, exc: BaseException) -> EndpointError | None:
        """How a failed request failed; None for an exception that is not the endpoint's doing."""
        openai = self.openai
        if isinstance(exc, openai.APITimeoutError):
            return EndpointError(True, f"no answer within the request timeout ({type(exc).__name__})")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
            return EndpointError(True, _one_line(f"connection failed ({type(exc).__name__}{detail})"))
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            transient = status in (408, 409, 429) or status >= 500
            headers = getattr(getattr(exc, "response", None), "headers", None) or {}
            return EndpointError(transient, _one_line(f"HTTP {status}: {exc.message}"),
                                 _retry_after(headers.get("retry-after")))
        if isinstance(exc, (openai.APIError, MalformedAnswer)):
            return EndpointError(False, _one_line(f"{type(exc).__name__}: {exc}"))
        return None

    def close(self) -> None:
        """Close the client's connections (no socket outlives the trial)."""
        self.client.close()


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + " ..."
