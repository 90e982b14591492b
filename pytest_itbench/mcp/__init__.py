"""The trial's tools over the Model Context Protocol, written with the official ``mcp`` SDK.

    tools.py           an MCP server (the SDK's low-level Server) over the tools of pytest_itbench/tools/functions,
                       recording every call in a trajectory whatever the agent logs itself
    http.py            that server on loopback (Streamable HTTP) for one trial's lifetime, in a thread of its own
    client_configs.py  the server written down as the common CLI agents read it (Claude Code, Cursor, Codex)
    __main__.py        ``python -m pytest_itbench.mcp``: the same tools over stdio, for an exec agent that spawns
                       its servers (it reads the task from the agent's environment)

The tools are those the openai agent calls in-process, with the agent's rights only (its kubeconfig,
the signals the trial offers, the kubectl deny list). See docs/agents.md, "MCP".
"""

from .http import Served, serve
from .tools import ToolServer

__all__ = ["Served", "ToolServer", "serve"]
