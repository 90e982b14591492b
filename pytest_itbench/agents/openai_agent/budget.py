"""Tokens: approximated, counted against the trial's budget, and spent sparingly on observations.

No tokenizer is assumed (a model served by vLLM or Ollama has its own anyway): a token is taken as four
characters, which is close for English and JSON with the common BPE vocabularies. The counts the
endpoint reports in ``usage`` are what is recorded and budgeted; the approximation only decides how
much of an observation to keep and whether the next request would overrun the budget.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
MARKER_ROOM = 80  # characters kept free for the marker that says what was cut


def approx_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def approx_message_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """About how many prompt tokens a request of these messages and tool specs costs."""
    return approx_tokens(json.dumps(messages, default=str)) + approx_tokens(json.dumps(tools or [], default=str))


def cut_to_tokens(text: str, tokens: int) -> str:
    """``text`` within about ``tokens`` tokens: its head and its tail, with a marker saying how much was cut.

    The head carries a listing's column names or a document's start, the tail the newest log lines or
    the end of an error, so both are kept (two thirds head, one third tail).
    """
    limit = max(tokens, 1) * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    keep = max(limit - MARKER_ROOM, 0)
    head = keep * 2 // 3
    tail = keep - head
    # Cut on line ends where one is near, so the model does not read half a line as a whole one.
    head_end = text.rfind("\n", 0, head) + 1
    if head_end < head * 3 // 4:
        head_end = head
    tail_start = len(text) - tail
    next_line = text.find("\n", tail_start) + 1
    if 0 < next_line <= tail_start + tail // 4:
        tail_start = next_line
    removed = text[head_end:tail_start]
    marker = f"[... {len(removed)} characters (about {approx_tokens(removed)} tokens) cut here ...]\n"
    return text[:head_end] + ("" if text[:head_end].endswith("\n") or not head_end else "\n") + marker \
        + text[tail_start:]


@dataclass
class TokenBudget:
    """Tokens spent in the trial against its limit."""

    limit: int
    prompt: int = 0
    completion: int = 0
    estimated: bool = False  # some counts were approximated: the endpoint reported no usage

    @property
    def spent(self) -> int:
        return self.prompt + self.completion

    def add(self, prompt: int, completion: int, *, estimated: bool = False) -> None:
        self.prompt += prompt
        self.completion += completion
        self.estimated = self.estimated or estimated

    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def would_overrun(self, next_prompt: int) -> bool:
        """Whether a request of about ``next_prompt`` tokens would take the trial past its limit."""
        return self.spent + next_prompt > self.limit
