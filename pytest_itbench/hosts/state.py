"""The declared state of one simulated RHEL 9 host: files, kernel parameters, packages, services, users.

A scenario lists its hosts in YAML; :func:`load_hosts` validates them and names the field that is wrong
(``hosts[0].files[2].mode: ...``). The state is what the host *is*: the runtime (:mod:`.tree`) turns it
into a directory tree that an Ansible playbook reads through the ``itbench_host`` connection.

    >>> host = HostState.model_validate({"name": "web1", "sysctl": {"net.ipv4.ip_forward": 0}})
    >>> host.sysctl["net.ipv4.ip_forward"]
    '0'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# Inventory names and Linux user names: letters, digits, '-', '_', '.' (no spaces, no shell metacharacters,
# because the names end up in an INI inventory and in /etc/passwd).
_HOST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_USER_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}\$?$")
_SYSCTL_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HostFile(_Strict):
    """A regular file on the host. ``mode`` is octal: ``"0600"`` or a YAML octal number (``0600``)."""

    path: str
    content: str = ""
    owner: str = "root"
    group: str = "root"
    mode: int = 0o644

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or value.endswith("/"):
            raise ValueError("must be an absolute file path such as /etc/ssh/sshd_config")
        parts = value.split("/")[1:]
        if any(p in ("", ".", "..") for p in parts):
            raise ValueError("must not contain empty, '.' or '..' components")
        if parts[0] in ("proc", "sys", "dev"):
            raise ValueError("cannot declare files under /proc, /sys or /dev (use sysctl for kernel parameters)")
        return value

    @field_validator("mode", mode="before")
    @classmethod
    def _octal(cls, value: Any) -> int:
        # A string is read as octal ("0644", "644"); a YAML 1.1 octal literal (0644) already arrives as 420.
        if isinstance(value, str):
            if not re.fullmatch(r"0?[0-7]{3,4}", value.strip()):
                raise ValueError("must be an octal mode such as '0644'")
            return int(value.strip(), 8)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o7777:
            raise ValueError("must be an octal mode such as '0644'")
        return value

    @field_validator("owner", "group")
    @classmethod
    def _name(cls, value: str) -> str:
        if not (_USER_NAME.match(value) or value.isdigit()):
            raise ValueError("must be a user/group name or a numeric id")
        return value


class Package(_Strict):
    """An installed RPM package (``rpm -q`` prints ``name-version-release.arch``)."""

    name: str
    version: str = "1.0"
    release: str = "1.el9"
    arch: str = "x86_64"
    epoch: int | None = None

    @field_validator("name")
    @classmethod
    def _pkg_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", value):
            raise ValueError("must be a package name such as openssh-server")
        return value

    @property
    def nvra(self) -> str:
        return f"{self.name}-{self.version}-{self.release}.{self.arch}"


class Service(_Strict):
    """A systemd service unit. ``name`` may omit ``.service``; ``masked`` implies neither enabled nor active."""

    name: str
    enabled: bool = True
    active: bool = True
    masked: bool = False

    @field_validator("name")
    @classmethod
    def _unit(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.@:-]+", value):
            raise ValueError("must be a unit name such as sshd or sshd.service")
        # systemctl's own rule: a name without a unit type means a service
        return value if re.search(r"\.(service|socket|timer|target|path|mount)$", value) else value + ".service"


class User(_Strict):
    """A local account: one line of /etc/passwd, one of /etc/shadow and its primary group in /etc/group."""

    name: str
    uid: int = Field(ge=0, le=65534)
    gid: int | None = Field(default=None, ge=0, le=65534)  # defaults to uid (a user private group)
    home: str | None = None
    shell: str = "/bin/bash"
    password: str = "!!"  # the shadow password field: a hash, "!!"/"!" (locked) or "" (empty: no password)
    last_change: int = 19700  # days since the epoch, the third shadow field
    min_days: int | None = 0
    max_days: int | None = 99999
    warn_days: int | None = 7
    inactive_days: int | None = None

    @field_validator("name")
    @classmethod
    def _user(cls, value: str) -> str:
        if not _USER_NAME.match(value):
            raise ValueError("must be a Linux user name (lowercase letters, digits, '_', '-')")
        return value

    @property
    def primary_gid(self) -> int:
        return self.uid if self.gid is None else self.gid

    @property
    def home_dir(self) -> str:
        return self.home or ("/root" if self.name == "root" else f"/home/{self.name}")


class HostState(_Strict):
    """One host of a scenario's inventory. ``sysctl`` values are the running kernel parameters."""

    name: str
    groups: list[str] = Field(default_factory=list)  # inventory groups the host belongs to
    os_release: str = "9.4"  # RHEL minor release reported by /etc/os-release and the setup facts
    files: list[HostFile] = Field(default_factory=list)
    sysctl: dict[str, str] = Field(default_factory=dict)
    packages: list[Package] = Field(default_factory=list)
    services: list[Service] = Field(default_factory=list)
    users: list[User] = Field(default_factory=list)  # in addition to the RHEL 9 system accounts

    @field_validator("name")
    @classmethod
    def _host(cls, value: str) -> str:
        if not _HOST_NAME.match(value):
            raise ValueError("must be a host name (letters, digits, '-', '_', '.')")
        return value

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str]) -> list[str]:
        for group in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", group):
                raise ValueError(f"{group!r} is not an inventory group name (letters, digits, '_')")
        return value

    @field_validator("os_release")
    @classmethod
    def _rhel9(cls, value: Any) -> str:
        value = str(value)
        if not re.fullmatch(r"9\.\d+", value):
            raise ValueError("must be a RHEL 9 release such as '9.4'")
        return value

    @field_validator("sysctl", mode="before")
    @classmethod
    def _sysctl(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for key, val in value.items():
            if not isinstance(key, str) or not _SYSCTL_KEY.match(key):
                raise ValueError(f"{key!r} is not a kernel parameter name such as net.ipv4.ip_forward")
            if isinstance(val, bool) or not isinstance(val, (str, int)):
                raise ValueError(f"{key}: the value must be a number or a string")
            out[key.replace("/", ".")] = str(val)
        return out

    @field_validator("packages", mode="before")
    @classmethod
    def _package_names(cls, value: Any) -> Any:
        # "openssh-server" is shorthand for {"name": "openssh-server"}.
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _unique(self) -> "HostState":
        for label, names in (("files", [f.path for f in self.files]), ("packages", [p.name for p in self.packages]),
                             ("services", [s.name for s in self.services]), ("users", [u.name for u in self.users])):
            seen = set()
            for n in names:
                if n in seen:
                    raise ValueError(f"{label}: {n!r} is declared twice")
                seen.add(n)
        return self

    def file(self, path: str) -> HostFile | None:
        return next((f for f in self.files if f.path == path), None)


class HostStateError(ValueError):
    """A host list that does not validate; the message names each wrong field (``hosts[1].users[0].uid``)."""


def parse_hosts(data: Any, *, source: str = "hosts") -> list[HostState]:
    """Validate a list of host mappings (or ``{"hosts": [...]}``)."""
    if isinstance(data, dict) and set(data) == {"hosts"}:
        data = data["hosts"]
    if not isinstance(data, list):
        raise HostStateError(f"{source}: expected a list of hosts")
    hosts = []
    problems = []
    for i, item in enumerate(data):
        try:
            hosts.append(HostState.model_validate(item))
        except ValidationError as exc:
            for err in exc.errors():
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
                problems.append(f"hosts[{i}]{where}: {err['msg']}")
    names = [h.name for h in hosts]
    for n in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"hosts: the host name {n!r} is used twice")
    if problems:
        raise HostStateError(f"{source}: " + "; ".join(problems))
    return hosts


def load_hosts(source: str | Path) -> list[HostState]:
    """Load hosts from a YAML file path, or from YAML text when ``source`` is a str containing a newline."""
    if isinstance(source, Path) or "\n" not in source:
        path = Path(source)
        return parse_hosts(yaml.safe_load(path.read_text(encoding="utf-8")), source=str(path))
    return parse_hosts(yaml.safe_load(source))


__all__ = ["HostFile", "HostState", "HostStateError", "Package", "Service", "User", "load_hosts", "parse_hosts"]
