"""Agents: the protocol, the registry (built-ins, entry points, module:attr, exec:CMD) and built-ins."""

from .base import Agent, Step, Submission, Task, Trajectory

__all__ = ["Agent", "Step", "Submission", "Task", "Trajectory"]
