"""Reading peers' addresses and credentials out of a container's environment and command line.

Programs take their peers in many shapes: ``cart:8080``, ``http://email:8080``, a .NET connection
string (``Host=postgresql;Username=otelu;Password=otelp``), a libpq one (``host=postgresql
user=otelu``), a URL with user info (``postgres://otelu:otelp@postgresql/otel``), StackExchange.Redis
options (``valkey-cart:6379,password=secret``). The sheet says which variable holds the address;
this module reads it the way such programs do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence
from urllib.parse import urlsplit

from .sheet import Address, CredentialSource

_REFERENCE = re.compile(r"\$\$|\$\(([^)]*)\)")


@dataclass(frozen=True)
class Peer:
    host: str
    port: int | None  # None: the value names no port and the sheet gives no default

    def text(self) -> str:
        return f"{self.host}:{self.port}" if self.port is not None else self.host


def peer(address: Address, env: Mapping[str, str]) -> Peer | None:
    """The peer ``address`` names in ``env``; None when the variable holding it is unset."""
    if address.value is not None:
        return _parse(address.value, address.port)
    if address.host_env is not None:
        host = env.get(address.host_env)
        if host is None:
            return None
        port_text = env.get(address.port_env) if address.port_env else None
        port = _port(port_text) if port_text is not None else address.port
        return Peer(host.strip(), port)
    raw = env.get(address.env or "")
    if raw is None:
        return None
    if address.key is not None:
        fields = _fields(raw)
        host = fields.get(address.key.lower())
        if host is None:
            return Peer("", None)
        parsed = _parse(host, address.port)
        port = fields.get("port")
        return Peer(parsed.host, _port(port) if port else parsed.port)
    return _parse(raw, address.port)


def credential(source: CredentialSource, env: Mapping[str, str], argv: Sequence[str]) -> str | None:
    """The credential ``source`` names; None when it is not there at all."""
    if source.value is not None:
        return source.value
    if source.arg is not None:
        return _argument(expand_argv(argv, env), source.arg)
    raw = env.get(source.env or "")
    if raw is None or source.key is None:
        return raw
    return _fields(raw).get(source.key.lower())


def expand_argv(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """``$(VAR)`` in command and args, as the kubelet expands them (unknown references stay as written)."""
    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return [_REFERENCE.sub(replace, arg) for arg in argv]


def _argument(argv: Sequence[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
    return None


def _parse(text: str, default_port: int | None) -> Peer:
    """``host:port``, a URL, or the first of a comma-separated list (Kafka brokers, Redis options)."""
    text = text.strip()
    if "://" in text:
        parts = urlsplit(text)
        try:
            port = parts.port
        except ValueError:
            return Peer(parts.hostname or "", None)
        default = {"http": 80, "https": 443}.get(parts.scheme, default_port)
        return Peer(parts.hostname or "", port if port is not None else default)
    first = text.split(",")[0].strip()
    if first.startswith("[") and "]" in first:  # [ipv6]:port
        host, _, rest = first[1:].partition("]")
        return Peer(host, _port(rest[1:]) if rest.startswith(":") else default_port)
    host, sep, port = first.rpartition(":")
    if not sep:
        return Peer(first, default_port)
    return Peer(host, _port(port))


def _port(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() and int(text) < 65536 else None


def _fields(raw: str) -> dict[str, str]:
    """Keys of a connection string, lower-cased: ``K=v;K=v``, ``k=v k=v``, ``host:port,k=v`` or URL user info."""
    raw = raw.strip()
    if "://" in raw:
        parts = urlsplit(raw)
        out = {"host": parts.hostname or ""}
        if parts.username is not None:
            out["username"] = out["user"] = parts.username
        if parts.password is not None:
            out["password"] = parts.password
        return out
    if ";" in raw or ("=" in raw and "," not in raw and " " not in raw):
        pairs = raw.split(";")
    elif "," in raw:
        head, *pairs = raw.split(",")
        pairs = [f"host={head}", *pairs] if "=" not in head else [head, *pairs]
    else:
        pairs = raw.split()
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out
