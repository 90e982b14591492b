"""Simulated RHEL 9 hosts for the CISO Ansible-and-OPA class: a declared host state (:mod:`.state`), its
directory tree (:mod:`.tree`), the private view a command runs in (:mod:`.sandbox`) and the inventory
plus ansible.cfg that make a real ``ansible-playbook`` run against them (:mod:`.runtime`).
See docs/ciso-hosts.md."""

from .runtime import HostsUnavailable, PlaybookRun, SimulatedHosts, preflight
from .state import HostFile, HostState, HostStateError, Package, Service, User, load_hosts, parse_hosts

__all__ = ["HostFile", "HostState", "HostStateError", "HostsUnavailable", "Package", "PlaybookRun", "Service",
           "SimulatedHosts", "User", "load_hosts", "parse_hosts", "preflight"]
