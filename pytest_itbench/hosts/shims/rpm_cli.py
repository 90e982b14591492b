# Installed as /usr/bin/rpm on a simulated host. Queries only: -q NAME..., -qa, --qf/--queryformat.
"""``rpm -q`` against the host's declared packages, with rpm's own output and exit status."""

import re
import sys

sys.path.insert(0, "/usr/lib/itbench-host")
from common import host  # noqa: E402

DEFAULT_FORMAT = "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n"


def render(fmt, pkg):
    tags = {"NAME": pkg["name"], "VERSION": pkg["version"], "RELEASE": pkg["release"], "ARCH": pkg["arch"],
            "EPOCH": "(none)" if pkg.get("epoch") is None else str(pkg["epoch"])}
    text = re.sub(r"%\{?(?:-?\d+)?\{?([A-Za-z]+)\}", lambda m: tags.get(m.group(1).upper(), "(none)"), fmt)
    return text.replace("\\n", "\n").replace("\\t", "\t")


def main(argv):
    query = all_ = False
    fmt = DEFAULT_FORMAT
    names = []
    args = iter(argv)
    for arg in args:
        if arg in ("--qf", "--queryformat"):
            fmt = next(args, "")
        elif arg.startswith("--queryformat=") or arg.startswith("--qf="):
            fmt = arg.split("=", 1)[1]
        elif arg in ("-q", "--query"):
            query = True
        elif arg in ("-qa", "-aq"):
            query = all_ = True
        elif arg in ("-a", "--all"):
            all_ = True
        elif arg in ("--quiet", "--nosignature", "--nodigest"):
            continue
        elif arg.startswith("-"):
            sys.stderr.write(f"rpm: {arg}: this simulated host answers queries only (rpm -q, rpm -qa)\n")
            return 1
        else:
            names.append(arg)
    if not query:
        sys.stderr.write("rpm: this simulated host answers queries only (rpm -q, rpm -qa)\n")
        return 1
    packages = {p["name"]: p for p in host()["packages"]}
    if all_:
        sys.stdout.write("".join(render(fmt, p) for p in packages.values()))
        return 0
    if not names:
        sys.stderr.write("rpm: no arguments given for query\n")
        return 1
    missing = 0
    for name in names:
        pkg = packages.get(name) or next((p for p in packages.values() if render(DEFAULT_FORMAT, p).strip() == name), None)
        if pkg is None:
            sys.stdout.write(f"package {name} is not installed\n")
            missing += 1
        else:
            sys.stdout.write(render(fmt, pkg))
    return min(missing, 255)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
