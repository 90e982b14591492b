"""The account databases of a simulated RHEL 9 host: /etc/passwd, /etc/shadow, /etc/group.

A RHEL 9 minimal install's system accounts come first, then the host's declared users (a declared user
with a system account's name replaces it). When a scenario declares /etc/passwd itself, that file wins
and :func:`owner_ids` reads the names from it, so file owners still resolve.
"""

from __future__ import annotations

from .state import HostState, User

# name, uid, gid, home, shell (RHEL 9 setup-2.13 and the sshd package's account)
_SYSTEM_USERS = [
    ("root", 0, 0, "/root", "/bin/bash"),
    ("bin", 1, 1, "/bin", "/sbin/nologin"),
    ("daemon", 2, 2, "/sbin", "/sbin/nologin"),
    ("adm", 3, 4, "/var/adm", "/sbin/nologin"),
    ("lp", 4, 7, "/var/spool/lpd", "/sbin/nologin"),
    ("sync", 5, 0, "/sbin", "/bin/sync"),
    ("shutdown", 6, 0, "/sbin", "/sbin/shutdown"),
    ("halt", 7, 0, "/sbin", "/sbin/halt"),
    ("mail", 8, 12, "/var/spool/mail", "/sbin/nologin"),
    ("operator", 11, 0, "/root", "/sbin/nologin"),
    ("games", 12, 100, "/usr/games", "/sbin/nologin"),
    ("ftp", 14, 50, "/var/ftp", "/sbin/nologin"),
    ("nobody", 65534, 65534, "/", "/sbin/nologin"),
    ("sshd", 74, 74, "/usr/share/empty.sshd", "/sbin/nologin"),
]
_SYSTEM_GROUPS = [
    ("root", 0), ("bin", 1), ("daemon", 2), ("sys", 3), ("adm", 4), ("tty", 5), ("disk", 6), ("lp", 7),
    ("mem", 8), ("kmem", 9), ("wheel", 10), ("mail", 12), ("man", 15), ("dialout", 18), ("floppy", 19),
    ("games", 20), ("tape", 33), ("video", 39), ("ftp", 50), ("lock", 54), ("audio", 63), ("users", 100),
    ("sshd", 74), ("ssh_keys", 101), ("nobody", 65534),
]


def users_of(host: HostState) -> list[User]:
    declared = {u.name: u for u in host.users}
    users = [declared.pop(name, None) or User(name=name, uid=uid, gid=gid, home=home, shell=shell, password="*",
                                              last_change=19700, min_days=0, max_days=99999, warn_days=7)
             for name, uid, gid, home, shell in _SYSTEM_USERS]
    return users + list(declared.values())


def groups_of(host: HostState) -> list[tuple[str, int]]:
    groups = list(_SYSTEM_GROUPS)
    taken = {gid for _, gid in groups} | {name for name, _ in groups}
    for user in host.users:  # a user private group for each declared user whose gid is not a group yet
        if user.primary_gid not in taken and user.name not in taken:
            groups.append((user.name, user.primary_gid))
            taken |= {user.primary_gid, user.name}
    return groups


def _opt(value: int | None) -> str:
    return "" if value is None else str(value)


def passwd_text(host: HostState) -> str:
    return "".join(f"{u.name}:x:{u.uid}:{u.primary_gid}::{u.home_dir}:{u.shell}\n" for u in users_of(host))


def shadow_text(host: HostState) -> str:
    return "".join(f"{u.name}:{u.password}:{u.last_change}:{_opt(u.min_days)}:{_opt(u.max_days)}:"
                   f"{_opt(u.warn_days)}:{_opt(u.inactive_days)}::\n" for u in users_of(host))


def group_text(host: HostState) -> str:
    return "".join(f"{name}:x:{gid}:\n" for name, gid in groups_of(host))


def _table(text: str, id_field: int) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) > id_field and parts[id_field].isdigit():
            out.setdefault(parts[0], int(parts[id_field]))
    return out


def owner_ids(host: HostState) -> tuple[dict[str, int], dict[str, int]]:
    """User and group name → id as the host itself would resolve them (its declared files first)."""
    passwd = host.file("/etc/passwd")
    group = host.file("/etc/group")
    uids = _table(passwd.content if passwd else passwd_text(host), 2)
    gids = _table(group.content if group else group_text(host), 2)
    return uids, gids
