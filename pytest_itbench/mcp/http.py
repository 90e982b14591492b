"""The trial's MCP server on loopback (Streamable HTTP), served by uvicorn in a thread of its own.

    with serve(task, without=("logs",)) as served:
        served.url          # http://127.0.0.1:PORT/mcp, for ITBENCH_MCP_URL and the client configurations
        ...                 # the agent works
    served.handin           # what it handed in through MCP
    served.trajectory       # every call it made

Leaving the block (also on an exception or Ctrl-C) stops the server: the port is closed and its threads
joined before ``serve`` returns; ``task.cancelled`` is set then, since the agent's turn is over.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass

import uvicorn

from ..agents.base import Task, Trajectory
from ..tools.functions.handin import Handin
from .tools import ToolServer

PATH = "/mcp"
START_TIMEOUT = 15.0  # seconds for uvicorn to bind
STOP_TIMEOUT = 5.0  # seconds for it to finish: open streams are cut after GRACE
GRACE = 1


@dataclass
class Served:
    url: str
    tools: ToolServer

    @property
    def handin(self) -> Handin:
        return self.tools.handin

    @property
    def trajectory(self) -> Trajectory:
        return self.tools.trajectory


@contextlib.contextmanager
def serve(task: Task, *, without: Collection[str] = (), kubectl_binary: str | None = None) -> Iterator[Served]:
    tools = ToolServer(task, without=without, kubectl_binary=kubectl_binary)
    # Stateless: every request stands alone, so a client that reconnects (or several at once) needs no
    # session, and nothing is held open between calls. JSON answers: no SSE stream to cut at the end.
    app = tools.server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=GRACE, access_log=False)
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run()
        except BaseException as exc:  # noqa: BLE001  reported to the harness below, not lost in a thread
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"itbench-mcp-{task.scenario_id}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if failure or not thread.is_alive():
                raise RuntimeError(f"the MCP server did not start: {failure[0] if failure else 'uvicorn exited'}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the MCP server did not start within {START_TIMEOUT:g} s")
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield Served(f"http://127.0.0.1:{port}{PATH}", tools)
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_TIMEOUT)
        tools.close()
