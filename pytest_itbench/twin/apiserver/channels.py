"""The Kubernetes channel protocol over WebSocket (``channel.k8s.io`` up to ``v5.channel.k8s.io``).

Every message carries one stream: its first byte is the channel (0 stdin,
1 stdout, 2 stderr, 3 error, 4 terminal resize), the rest is data. The
``base64`` variants send text messages whose first character is the
channel digit and whose rest is base64. From ``v4`` on, the error channel
carries a JSON ``Status``; before, it carries the error text only. ``v5``
adds the close signal: a message ``[255, channel]`` says that the sender
will write no more on that channel (how kubectl ends stdin).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE_SIGNAL = 255

# v5 is the API server's own (it translates to the kubelet); the rest are the kubelet's WebSocket protocols.
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "channel.k8s.io",
             "base64.channel.k8s.io")
FRAME_SIZE = 32 * 1024  # the kubelet copies streams in 32 KiB buffers


@dataclass(frozen=True)
class ChannelProtocol:
    name: str

    @property
    def version(self) -> int:
        head = self.name.split(".")[0]
        return int(head[1:]) if head.startswith("v") else 1

    @property
    def binary(self) -> bool:
        return ".base64." not in self.name and not self.name.startswith("base64.")

    @property
    def status_as_json(self) -> bool:
        return self.version >= 4

    @property
    def supports_close(self) -> bool:
        return self.version >= 5

    def frames(self, channel: int, data: bytes) -> list[bytes | str]:
        """The messages that carry ``data`` on ``channel`` (one empty message for empty data)."""
        chunks = [data[i:i + FRAME_SIZE] for i in range(0, len(data), FRAME_SIZE)] or [b""]
        if self.binary:
            return [bytes([channel]) + chunk for chunk in chunks]
        return [str(channel) + base64.b64encode(chunk).decode() for chunk in chunks]

    def status_frames(self, status: dict) -> list[bytes | str]:
        """The error channel's final message: the Status (v4+) or, for a failure, its message (v1-v3)."""
        if self.status_as_json:
            return self.frames(ERROR, json.dumps(status, separators=(",", ":")).encode())
        if status.get("status") == "Success":
            return []
        return self.frames(ERROR, status.get("message", "").encode())

    def decode(self, message: bytes | str) -> tuple[int, bytes] | None:
        """``(channel, data)`` of a client message; ``(CLOSE_SIGNAL, bytes([channel]))`` for a close signal."""
        if isinstance(message, str):
            if not message:
                return None
            if self.binary:
                return ord(message[0]), message[1:].encode()
            return int(message[0]), base64.b64decode(message[1:])
        if not message:
            return None
        if self.binary:
            return message[0], message[1:]
        return message[0] - ord("0"), base64.b64decode(message[1:])


def negotiate(offered: str | None) -> ChannelProtocol | None:
    """The protocol for a client's ``Sec-WebSocket-Protocol`` offer: its first one the server speaks.

    An offer of none selects the original ``channel.k8s.io``.
    """
    names = [p.strip() for p in (offered or "").split(",") if p.strip()]
    if not names:
        return ChannelProtocol("channel.k8s.io")
    for name in names:
        if name in PROTOCOLS:
            return ChannelProtocol(name)
    return None
