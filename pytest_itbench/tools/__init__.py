"""The agent-facing toolkit: kubectl, PromQL, alerts, traces, logs and topology, bound to one task.

Every tool returns plain data, records one trajectory step per call (thought, action, observation),
keeps the task's deadline, and raises :class:`ToolError` with a message an agent can act on; a tool
whose signal the task does not offer raises :class:`SignalUnavailable`. See docs/agents.md, "The toolkit".
"""

from .alerts import AlertsTool
from .base import DeadlineReached, SignalUnavailable, ToolError
from .kubectl import KubectlFailed, KubectlTool, refusal
from .logs import LogsTool
from .prometheus import PrometheusTool
from .topology import TopologyTool
from .toolkit import SPECS, Toolkit
from .traces import TracesTool, failed_calls, spans_of

__all__ = [
    "AlertsTool", "DeadlineReached", "KubectlFailed", "KubectlTool", "LogsTool", "PrometheusTool", "SPECS",
    "SignalUnavailable", "ToolError", "Toolkit", "TopologyTool", "TracesTool", "failed_calls", "refusal",
    "spans_of",
]
