"""The trial's MCP server written down where the common CLI agents look for it, in their own formats.

In the agent's workdir (its current directory):

    .mcp.json             Claude Code's project servers ({"mcpServers": {"itbench": {"type": "http", "url"}}});
                          give it to ``claude --mcp-config .mcp.json``
    .cursor/mcp.json      Cursor's project servers ({"mcpServers": {"itbench": {"url"}}})
    .codex/config.toml    Codex's [mcp_servers.itbench] table with its ``url``; Codex reads a project's
                          .codex/config.toml in a trusted project, or the file as $CODEX_HOME/config.toml

Each names the server ``itbench``, so its tools appear to the agent as ``mcp__itbench__kubectl`` (Claude
Code) or ``itbench.kubectl`` (Codex).
"""

from __future__ import annotations

import json
from pathlib import Path

SERVER_NAME = "itbench"
CLAUDE_CODE = ".mcp.json"
CURSOR = ".cursor/mcp.json"
CODEX = ".codex/config.toml"


def write(workdir: str | Path, url: str) -> dict[str, Path]:
    """Write every configuration for ``url`` under ``workdir``; returns their paths by client."""
    root = Path(workdir)
    texts = {
        "claude-code": (CLAUDE_CODE, _json({"mcpServers": {SERVER_NAME: {"type": "http", "url": url}}})),
        "cursor": (CURSOR, _json({"mcpServers": {SERVER_NAME: {"url": url}}})),
        # TOML basic strings take JSON's escapes for the characters a URL may hold.
        "codex": (CODEX, f"[mcp_servers.{SERVER_NAME}]\nurl = {json.dumps(url)}\n"),
    }
    written = {}
    for client, (relative, text) in texts.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written[client] = path
    return written


def _json(value: object) -> str:
    return json.dumps(value, indent=2) + "\n"
