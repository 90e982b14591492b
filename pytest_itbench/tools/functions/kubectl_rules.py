"""What the model's kubectl may not run, beyond the toolkit's own deny list (pytest_itbench/tools/kubectl.py).

The toolkit refuses what hangs or leaves the agent's rights (edit, port-forward, proxy, attach, logs -f,
get --watch, exec -i/-t, identity flags). A model adds ways to lose its turn: ``cp`` writes local files
wherever it is told (outside the working directory), ``run -i``/``-t``/``--attach`` and ``debug -i``/``-t``
wait on a terminal, and ``rollout status`` without ``--timeout`` waits for a rollout that may never end,
until the deadline. Each refusal says what to do instead, for the model to read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...tools.kubectl import COMMANDS, refusal as toolkit_refusal

_INTERACTIVE = re.compile(r"-[a-zA-Z]*[it][a-zA-Z]*")


def refusal(args: Sequence[str]) -> str | None:
    """Why the model may not run ``kubectl ARGS``, or None when it may."""
    words = list(args)
    if words and words[0] == "kubectl":
        words = words[1:]
    if not words:
        return "no kubectl arguments given; pass a list such as [\"get\", \"pods\", \"-n\", \"NAMESPACE\"]"
    why = toolkit_refusal(words)
    if why is not None:
        return why
    flags = words[:words.index("--")] if "--" in words else words
    command = next((w for w in flags if w in COMMANDS), "")
    if command == "cp":
        return ("kubectl cp is not allowed: it writes local files outside your working directory; read a "
                "container's file with [\"exec\", POD, \"-n\", NS, \"--\", \"cat\", PATH]")
    for word in flags:
        flag, _, value = word.partition("=")
        if value.lower() in ("false", "0"):
            continue
        if command in ("run", "debug") and (flag in ("--stdin", "--tty", "--attach") or _INTERACTIVE.fullmatch(word)):
            return (f"kubectl {command} {word} is not allowed: an interactive session waits for a terminal; run "
                    f"it without -i/-t/--attach and read the pod's logs")
    if command == "rollout" and "status" in flags and not any(w.startswith("--timeout") for w in flags):
        return ("kubectl rollout status without --timeout waits until the rollout ends, which may be never; add "
                "--timeout=60s")
    return None
