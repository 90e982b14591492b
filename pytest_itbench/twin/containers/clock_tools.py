"""``date``, ``uptime`` and ``sleep`` in a container: the time is the exec's moment on the twin's clock.

A container shares its node's kernel, so ``uptime`` counts from when the node
came up (its Node's creation), as on a cluster; the twin keeps no run queue,
so its load averages are zero.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..clock import parse_time

if TYPE_CHECKING:
    from .programs import Invocation

_DEFAULT = "%a %b %e %H:%M:%S %Z %Y"
_RFC_2822 = "%a, %d %b %Y %H:%M:%S +0000"


def date(inv: "Invocation") -> int:
    """``date [-u] [-R] [-I[SPEC]] [+FORMAT]`` (the time zone is UTC, as in an image without TZ data)."""
    when = datetime.fromtimestamp(inv.sandbox.now, timezone.utc)
    fmt = _DEFAULT
    for arg in inv.argv[1:]:
        if arg in ("-u", "--utc", "--universal"):
            continue
        if arg in ("-R", "--rfc-2822", "--rfc-email"):
            fmt = _RFC_2822
        elif arg.startswith("-I") or arg.startswith("--iso-8601"):
            spec = arg[2:] if arg.startswith("-I") else arg.partition("=")[2]
            fmt = {"": "%Y-%m-%d", "date": "%Y-%m-%d", "hours": "%Y-%m-%dT%H+00:00",
                   "minutes": "%Y-%m-%dT%H:%M+00:00", "seconds": "%Y-%m-%dT%H:%M:%S+00:00"}.get(spec)
            if fmt is None:
                inv.err(f"date: invalid argument ‘{spec}’ for ‘--iso-8601’\n" if inv.gnu
                        else f"date: invalid date '{spec}'\n")
                return 1
        elif arg.startswith("+"):
            fmt = arg[1:]
        elif arg.startswith("-"):
            inv.err(f"date: invalid option -- '{arg[1:2]}'\n" + ("Try 'date --help' for more information.\n"
                                                                if inv.gnu else "Usage: date [OPTIONS] [+FMT] [[-s] TIME]\n"))
            return 1
        else:
            inv.err(f"date: invalid date ‘{arg}’\n" if inv.gnu else f"date: invalid date '{arg}'\n")
            return 1
    inv.out(_format(when, fmt) + "\n")
    return 0


def _format(when: datetime, fmt: str) -> str:
    # %N (nanoseconds), %s and %Z are spelled out: strftime leaves them to the platform.
    fmt = re.sub(r"%(-?)([NsZ])", lambda m: {"N": f"{when.microsecond * 1000:09d}",
                                              "s": str(int(when.timestamp())), "Z": "UTC"}[m.group(2)]
                 .replace("%", "%%"), fmt)
    return when.strftime(fmt)


def uptime(inv: "Invocation") -> int:
    now = inv.sandbox.now
    booted = _node_created(inv) or inv.sandbox.started
    seconds = max(0, int(now - booted))
    days, rest = divmod(seconds, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    up = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    up += f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min"
    users = "0 user" if inv.gnu else "0 users"  # procps-ng 4 says "user" for any count
    clock = datetime.fromtimestamp(now, timezone.utc).strftime("%H:%M:%S")
    inv.out(f" {clock} up {up},  {users},  load average: 0.00, 0.00, 0.00\n")
    return 0


def _node_created(inv: "Invocation") -> float | None:
    pod, store = inv.sandbox.pod, inv.sandbox.store
    node_name = ((pod or {}).get("spec") or {}).get("nodeName")
    if not node_name or store is None:
        return None
    node = store.get("nodes", "", node_name)
    stamp = ((node or {}).get("metadata") or {}).get("creationTimestamp")
    return parse_time(stamp) if stamp else None


def sleep(inv: "Invocation") -> int:
    """``sleep DURATION...``: an exec's command returns when it has slept (the time is counted, not waited)."""
    from .timed_shell import sleep_seconds  # late: timed_shell runs scripts with these programs

    seconds = sleep_seconds(inv.argv[1:])
    if seconds is None:
        if len(inv.argv) == 1:
            inv.err("sleep: missing operand\nTry 'sleep --help' for more information.\n" if inv.gnu
                    else "Usage: sleep [N]...\n")
        else:
            inv.err(f"sleep: invalid time interval ‘{inv.argv[1]}’\nTry 'sleep --help' for more information.\n"
                    if inv.gnu else f"sleep: invalid number '{inv.argv[1]}'\n")
        return 1
    inv.elapsed += seconds
    return 0


CLOCK_TOOLS = {"date": date, "uptime": uptime, "sleep": sleep}
