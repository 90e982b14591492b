"""How choosing or running an agent goes wrong.

Two families, kept apart because they end differently:

- :class:`AgentSpecError` — ``--itbench-agent`` names nothing that can be built. A ValueError the
  plugin turns into ``pytest.UsageError`` before any trial starts.
- :class:`AgentFailure` — the agent ran and did not hand in a usable submission in time. The trial
  becomes a *failed* test (the agent missed), never an *error* (the environment broke). Each subclass
  says what was seen; ``evidence`` keeps the texts (stderr tail, output, traceback) for the report.
"""

from __future__ import annotations

DOCS = "docs/agents.md"


class AgentSpecError(ValueError):
    """An agent specification that names no agent; the message lists what would work."""


class AgentFailure(Exception):
    """The agent did not hand in a usable submission; the trial fails with this message."""

    reason = "failed"  # a short slug for reports and categories

    def __init__(self, headline: str, *, evidence: dict[str, str] | None = None, advice: str = ""):
        self.headline = headline
        self.evidence = {k: v for k, v in (evidence or {}).items() if v}
        self.advice = advice
        super().__init__(self._render())

    def _render(self) -> str:
        lines = [self.headline]
        for name, text in self.evidence.items():
            if "\n" in text.strip():
                lines.append(f"{name}:")
                lines.extend(f"    {line}" for line in text.rstrip("\n").splitlines())
            else:
                lines.append(f"{name}: {text.strip()}")
        if self.advice:
            lines.append(self.advice)
        return "\n".join(lines)


class AgentExited(AgentFailure):
    """An ``exec:`` agent ended with a non-zero exit status (or was killed by a signal)."""

    reason = "exited"

    def __init__(self, headline: str, *, exit_code: int, **kw):
        self.exit_code = exit_code
        super().__init__(headline, **kw)


class AgentTimedOut(AgentFailure):
    """The agent was still working at its deadline."""

    reason = "timed-out"

    def __init__(self, headline: str, *, time_limit: float, still_running: bool = False, **kw):
        self.time_limit = time_limit
        self.still_running = still_running  # a Python agent's thread that ignored task.cancelled
        super().__init__(headline, **kw)


class AgentOutputMissing(AgentFailure):
    """An ``exec:`` agent exited 0 without writing ``$ITBENCH_OUTPUT``."""

    reason = "no-output"


class AgentOutputInvalid(AgentFailure):
    """What the agent handed in is not a submission (not JSON, or not the expected shape)."""

    reason = "invalid-output"


class AgentCrashed(AgentFailure):
    """A Python agent raised, or an ``exec:`` agent could not be started."""

    reason = "crashed"
