# Shared by the shims, copied into the host next to them; keep it to the standard library.
"""Read the host's declared packages and services, and the changes made at run time (systemctl enable...)."""

import json
import os

STATE = "/usr/lib/itbench-host/host.json"
RUNTIME = "/var/lib/itbench-host/services.json"  # inside the host's view: writes land in the host's tree


def host():
    with open(STATE, encoding="utf-8") as fh:
        return json.load(fh)


def services():
    """unit name -> {"enabled", "active", "masked"}: the declared state with run-time changes applied."""
    units = {s["name"]: dict(s) for s in host()["services"]}
    try:
        with open(RUNTIME, encoding="utf-8") as fh:
            for name, change in json.load(fh).items():
                units.setdefault(name, {"name": name, "enabled": False, "active": False, "masked": False})
                units[name].update(change)
    except (OSError, ValueError):
        pass
    return units


def save_service(name, **change):
    try:
        with open(RUNTIME, encoding="utf-8") as fh:
            runtime = json.load(fh)
    except (OSError, ValueError):
        runtime = {}
    runtime.setdefault(name, {}).update(change)
    os.makedirs(os.path.dirname(RUNTIME), exist_ok=True)
    with open(RUNTIME, "w", encoding="utf-8") as fh:
        json.dump(runtime, fh)
