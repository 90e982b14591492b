# Installed as /usr/bin/systemctl on a simulated host: there is no systemd in the host's view, so the
# unit states come from the host's declared services; enable/disable/start/stop/mask change them for
# the rest of the run (in the host's own tree).
"""systemctl's read verbs (is-enabled, is-active, status, show, list-units, list-unit-files) and its
state-changing verbs, with systemctl's output and exit statuses."""

import sys

sys.path.insert(0, "/usr/lib/itbench-host")
from common import save_service, services  # noqa: E402

CHANGES = {"enable": {"enabled": True}, "disable": {"enabled": False}, "start": {"active": True},
           "stop": {"active": False}, "restart": {"active": True}, "reload": {}, "try-restart": {},
           "mask": {"masked": True, "enabled": False, "active": False}, "unmask": {"masked": False}}


def unit(name):
    return name if "." in name else name + ".service"


def enabled_state(svc):
    return "masked" if svc.get("masked") else ("enabled" if svc.get("enabled") else "disabled")


def active_state(svc):
    return "active" if svc.get("active") and not svc.get("masked") else "inactive"


def main(argv):
    flags = [a for a in argv if a.startswith("-")]
    args = [a for a in argv if not a.startswith("-")]
    props = [a.split("=", 1)[1] for a in flags if a.startswith("--property=")]
    if "-p" in argv:
        i = argv.index("-p")
        if i + 1 < len(argv):
            props.append(argv[i + 1])
            args = [a for a in args if a != argv[i + 1]]
    verb, names = (args[0], args[1:]) if args else ("list-units", [])
    units = services()
    quiet = "-q" in flags or "--quiet" in flags
    out = sys.stdout.write

    if verb in ("is-enabled", "is-active"):
        rc = 0
        for name in names:
            svc = units.get(unit(name))
            if svc is None:
                if verb == "is-enabled":
                    sys.stderr.write(f"Failed to get unit file state for {unit(name)}: No such file or directory\n")
                    rc = 1
                else:
                    out("" if quiet else "inactive\n")
                    rc = 3
                continue
            state = enabled_state(svc) if verb == "is-enabled" else active_state(svc)
            if not quiet:
                out(state + "\n")
            if state not in ("enabled", "active"):
                rc = 1 if verb == "is-enabled" else 3
        return rc
    if verb == "show":
        for name in names or ["-"]:
            svc = units.get(unit(name))
            values = {"Id": unit(name),
                      "LoadState": "masked" if svc and svc.get("masked") else ("loaded" if svc else "not-found"),
                      "ActiveState": active_state(svc) if svc else "inactive",
                      "SubState": ("running" if svc and active_state(svc) == "active" else "dead"),
                      "UnitFileState": enabled_state(svc) if svc else ""}
            for prop in (props and ",".join(props).split(",")) or values:
                out(f"{prop}={values.get(prop, '')}\n")
        return 0
    if verb == "status":
        rc = 0
        for name in names:
            svc = units.get(unit(name))
            if svc is None:
                sys.stderr.write(f"Unit {unit(name)} could not be found.\n")
                rc = 4
                continue
            load = "masked" if svc.get("masked") else "loaded"
            out(f"* {unit(name)}\n     Loaded: {load} (/usr/lib/systemd/system/{unit(name)}; {enabled_state(svc)})\n"
                f"     Active: {active_state(svc)} ({'running' if active_state(svc) == 'active' else 'dead'})\n")
            rc = rc or (0 if active_state(svc) == "active" else 3)
        return rc
    if verb == "list-units":
        show_all = "--all" in flags or "-a" in flags
        for name, svc in sorted(units.items()):
            if not show_all and active_state(svc) != "active":
                continue
            load = "masked" if svc.get("masked") else "loaded"
            sub = "running" if active_state(svc) == "active" else "dead"
            out(f"{name} {load} {active_state(svc)} {sub} {name[:-len('.service')]}\n")
        return 0
    if verb == "list-unit-files":
        if "--plain" not in flags and "--no-legend" not in flags:
            out("UNIT FILE STATE PRESET\n")
        for name, svc in sorted(units.items()):
            out(f"{name} {enabled_state(svc)} disabled\n")
        return 0
    if verb == "daemon-reload":
        return 0
    if verb in CHANGES:
        for name in names:
            if unit(name) not in units:
                sys.stderr.write(f"Failed to {verb} unit: Unit file {unit(name)} does not exist.\n")
                return 5 if verb in ("start", "stop", "restart") else 1
            if CHANGES[verb]:
                save_service(unit(name), **CHANGES[verb])
        return 0
    sys.stderr.write(f"systemctl: '{verb}' is not supported on this simulated host\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
