"""Agents: the protocol, the registry (built-ins, entry points, module:attr, exec:CMD) and built-ins."""

from .base import Agent, Step, Submission, Task, Trajectory, entity_name
from .errors import (AgentCrashed, AgentExited, AgentFailure, AgentOutputInvalid, AgentOutputMissing, AgentSpecError,
                     AgentTimedOut)
from .exec_agent import ExecAgent
from .registry import ENTRY_POINT_GROUP, available, resolve

__all__ = [
    "Agent", "AgentCrashed", "AgentExited", "AgentFailure", "AgentOutputInvalid", "AgentOutputMissing",
    "AgentSpecError", "AgentTimedOut", "ENTRY_POINT_GROUP", "ExecAgent", "Step", "Submission", "Task", "Trajectory",
    "available", "entity_name", "resolve",
]
