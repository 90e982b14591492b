"""BusyBox's ``nc`` (connect mode) and ``nslookup``: the tools init containers wait for a peer with.

Both ask the sandbox's :class:`~.network.Network` what the cluster does right now, so the answer follows
cluster state: ``nc -z kafka 9092`` succeeds once the Service has a ready endpoint that listens. The
wording is BusyBox's (``nc_bloaty``, built with ``NC_110_COMPAT`` in the busybox image):
``kafka (10.96.0.12:9092) open`` with ``-v``, ``nc: kafka (10.96.0.12:9092): Connection refused``,
``nc: bad address 'kafka'``; the exit status is 0 when connected, 1 otherwise. A program's run time
(a connect that times out, a resolver that gets no answer) goes into ``inv.elapsed``.
"""

from __future__ import annotations

from .network import OPEN, REFUSED, TIMED_OUT, UNRESOLVED, Connection, StoreNetwork
from .programs import Invocation

KERNEL_CONNECT_TIMEOUT = 127.0  # Linux gives up on a SYN after 6 retries (1+2+4+8+16+32+64 seconds)
_ERRNO_TEXT = {REFUSED: "Connection refused", TIMED_OUT: "Connection timed out"}


def nc(inv: Invocation) -> int:
    verbose, wait, positional = 0, None, []
    args = inv.argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for j, letter in enumerate(letters):
                if letter == "v":
                    verbose += 1
                elif letter == "w":
                    value = letters[j + 1:] or (args[i + 1] if i + 1 < len(args) else "")
                    if not letters[j + 1:]:
                        i += 1
                    if not value.isdigit():
                        inv.err(f"nc: invalid number '{value}'\n")
                        return 1
                    wait = float(value)
                    break
                elif letter not in "zn":
                    inv.err(f"nc: unrecognized option: {letter}\n" if letter != "l" else
                            "nc: the itbench twin's nc only connects (no -l)\n")
                    return 1
        else:
            positional.append(arg)
        i += 1
    if len(positional) != 2:
        inv.err("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
                "Usage: nc [OPTIONS] HOST PORT  - connect\n")
        return 1
    host, port_text = positional
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        inv.err(f"nc: bad port '{port_text}'\n")
        return 1
    result = _connect(inv, host, int(port_text))
    inv.elapsed += result.resolve_seconds
    if result.outcome == UNRESOLVED:
        inv.err(f"nc: bad address '{host}'\n")
        return 1
    where = f"{host} ({result.address}:{port_text})"
    if result.outcome == OPEN:
        if verbose:
            inv.err(f"{where} open\n")
        return 0
    if result.outcome == TIMED_OUT:
        inv.elapsed += wait if wait is not None else KERNEL_CONNECT_TIMEOUT
    if verbose:
        inv.err(f"nc: {where}: {_ERRNO_TEXT[result.outcome]}\n")
    return 1


def nslookup(inv: Invocation) -> int:
    names = [a for a in inv.argv[1:] if not a.startswith("-")]
    if not names:
        inv.err("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
                "Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n")
        return 1
    host = names[0]
    server = _nameserver(inv)
    inv.out(f"Server:\t\t{server}\nAddress:\t{server}:53\n\n")
    address = _network(inv).resolve(_pod(inv), host)
    if address is None:
        inv.out(f"** server can't find {host}: NXDOMAIN\n\n")
        return 1
    inv.out(f"Name:\t{host}\nAddress: {address}\n\n")
    return 0


def _connect(inv: Invocation, host: str, port: int) -> Connection:
    if host in ("localhost", "127.0.0.1", "::1"):
        host = (_pod(inv).get("status") or {}).get("podIP") or host
    return _network(inv).connect(_pod(inv), host, port)


def _network(inv: Invocation):
    sandbox = inv.sandbox
    if sandbox.network is None:
        sandbox.network = StoreNetwork(sandbox.store) if sandbox.store is not None else _NoNetwork()
    return sandbox.network


def _pod(inv: Invocation) -> dict:
    return inv.sandbox.pod or {"metadata": {"name": "", "namespace": ""}}


def _nameserver(inv: Invocation) -> str:
    node = inv.sandbox.fs.get("/etc/resolv.conf")
    for line in (getattr(node, "content", b"") or b"").decode().splitlines():
        if line.startswith("nameserver "):
            return line.split()[1]
    return "127.0.0.11"


class _NoNetwork:
    """A sandbox built without cluster state: no name resolves."""

    def connect(self, pod: dict, host: str, port: int) -> Connection:
        return Connection(UNRESOLVED)

    def resolve(self, pod: dict, host: str) -> str | None:
        return None


NET_TOOLS = {"nc": nc, "nslookup": nslookup}
