"""``--itbench-agent=openai``: the reference LLM agent, over any OpenAI-compatible chat-completions endpoint.

    settings.py       model, endpoint, key, limits: command line, ini file, environment
    agent.py          the loop: observation, thought, action, until handed in or out of steps, tokens or time
    (its tools are pytest_itbench/tools/functions: the same ones the trial's MCP server serves)
    budget.py         tokens: approximated, budgeted, observations cut to size
    retries.py        transient endpoint errors retried with back-off and seeded jitter
    endpoint.py       the ``openai`` client (imported only when an agent is built)
    prompts.py        system prompts per domain (prompts/*.txt) and the task message

Nothing here imports ``openai`` at import time, so the plugin loads without it.
"""

from __future__ import annotations

from typing import Mapping

from .agent import OpenAIAgent
from .endpoint import INSTALL_HINT, MissingPackage
from .retries import EndpointFailed
from .settings import OpenAISettings, SettingsError, from_values

__all__ = ["EndpointFailed", "INSTALL_HINT", "MissingPackage", "OpenAIAgent", "OpenAISettings", "SettingsError",
           "build", "from_values"]


def build(values: Mapping[str, str] | None = None) -> OpenAIAgent:
    """The agent from settings given as text by name (command line, ini), the environment filling the rest.

    Raises SettingsError or MissingPackage (both say what to do).
    """
    return OpenAIAgent(from_values(values))
