"""A local OpenAI-compatible endpoint for the openai agent's tests: scripted model turns, recorded requests.

    with FakeOpenAI([tool_call("kubectl", {"args": ["get", "pods"]}), status(429), message("done")]) as fake:
        ... point the agent at fake.base_url ...
    fake.requests   # the JSON bodies of the chat-completion requests, in order (failed ones too)

Each POST to ``.../chat/completions`` (``/v1/...``, or Azure's ``/openai/deployments/NAME/...``) takes the
next turn of the script: a completion (tool calls or a message, with ``usage``), an HTTP error (429 with
Retry-After, 500, ...), a dropped connection, or the endpoint's death (it stops listening, so every later
request is refused). When the script is used up,
``then`` answers every further request (by default a 400 saying so, which ends the agent: a test whose
script is too short fails visibly). Prompt tokens are counted as the request's characters / 4, so the
figures are of the order a real endpoint reports for the same messages.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_call(name: str, arguments: dict[str, Any] | str, *, content: str = "") -> dict[str, Any]:
    """A turn calling one tool; ``arguments`` as a dict (sent as JSON) or as raw text (to send bad JSON)."""
    return tool_calls((name, arguments), content=content)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], content: str = "") -> dict[str, Any]:
    return {"kind": "completion", "content": content,
            "calls": [(name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls]}


def message(text: str) -> dict[str, Any]:
    """A turn answering with text only."""
    return {"kind": "completion", "content": text, "calls": []}


def status(code: int, *, retry_after: float | None = None, text: str = "scripted failure") -> dict[str, Any]:
    """A turn answering an HTTP error, in OpenAI's error shape."""
    return {"kind": "status", "code": code, "retry_after": retry_after, "text": text}


def drop() -> dict[str, Any]:
    """A turn closing the connection without an answer."""
    return {"kind": "drop"}


def die() -> dict[str, Any]:
    """A turn after which the endpoint is gone: this connection is dropped and nothing listens any more."""
    return {"kind": "die"}


EXHAUSTED = status(400, text="the fake endpoint's script is used up")


class FakeOpenAI:
    def __init__(self, turns: list[dict[str, Any]], *, then: dict[str, Any] | None = None, usage: bool = True):
        self.turns = list(turns)
        self.then = then or EXHAUSTED
        self.usage = usage
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # with the query string (Azure's api-version)
        self.tokens = 0  # prompt + completion tokens reported in usage
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-openai-{self.port}", daemon=True)
        self._dead = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def next_turn(self, body: dict[str, Any], headers: dict[str, str], path: str) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            return self.turns.pop(0) if self.turns else self.then

    def completion(self, body: dict[str, Any], turn: dict[str, Any]) -> dict[str, Any]:
        n = next(self._ids)
        calls = [{"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                 for i, (name, args) in enumerate(turn["calls"])]
        answer: dict[str, Any] = {"role": "assistant", "content": turn["content"] or None}
        if calls:
            answer["tool_calls"] = calls
        reply: dict[str, Any] = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n, "model": body.get("model"),
            "choices": [{"index": 0, "message": answer, "finish_reason": "tool_calls" if calls else "stop"}]}
        if self.usage:
            prompt = math.ceil(len(json.dumps(body.get("messages"))) / 4 + len(json.dumps(body.get("tools", []))) / 4)
            completion = math.ceil(len(turn["content"] + "".join(n + a for n, a in turn["calls"])) / 4) + 5
            with self._lock:
                self.tokens += prompt + completion
            reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion}
        return reply

    def kill(self) -> None:
        """Stop listening (called from a request's thread, not the one serving)."""
        self._dead = True
        self._server.shutdown()
        self._server.socket.close()


def _handler(fake: FakeOpenAI):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet: the tests read fake.requests
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            try:
                body = json.loads(raw)
            except ValueError:
                return self._json(400, {"error": {"message": "the body is not JSON", "type": "invalid_request"}})
            turn = fake.next_turn(body, {k.lower(): v for k, v in self.headers.items()}, self.path)
            kind = turn["kind"]
            if kind == "completion":
                return self._json(200, fake.completion(body, turn))
            if kind == "status":
                extra = {"Retry-After": f"{turn['retry_after']:g}"} if turn["retry_after"] is not None else {}
                return self._json(turn["code"], {"error": {"message": turn["text"], "type": "scripted",
                                                           "code": str(turn["code"])}}, extra)
            self.close_connection = True  # drop and die: no answer at all
            if kind == "die":
                fake.kill()

        def _json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
