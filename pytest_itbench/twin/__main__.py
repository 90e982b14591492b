"""``python -m pytest_itbench.twin --kubeconfig PATH [--port N] [--seed N] [--nodes N] [--time-scale X]``

Starts a twin, writes an admin kubeconfig to PATH, prints ``ready <server-url>`` and then
``urls <JSON>`` (the observability APIs by signal: prometheus, alertmanager, jaeger, topology, opencost),
and serves until SIGINT or SIGTERM, following wall time (``--time-scale`` simulated seconds per wall
second, advertised to harnesses in ``kube-public/itbench-twin-clock``: see time_advert.py); then stops
cleanly and exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_itbench.twin",
                                     description="Serve an embedded Kubernetes twin until interrupted.")
    parser.add_argument("--kubeconfig", required=True, metavar="PATH", help="where to write the admin kubeconfig")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the twin's random generator (default: 0)")
    parser.add_argument("--nodes", type=int, default=3, help="ready worker nodes to start with (default: 3)")
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                        help="simulated seconds per wall second (default: 1, as a real cluster); a harness "
                             "using this twin as an existing cluster waits 1/X as long")
    args = parser.parse_args(argv)
    if args.nodes < 0:
        parser.error(f"--nodes must be 0 or more, got {args.nodes}")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    if not (args.time_scale > 0 and math.isfinite(args.time_scale)):
        parser.error(f"--time-scale must be a positive number, got {args.time_scale}")

    from .cluster import Twin, TwinError
    from .time_advert import advertise

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    twin = Twin(seed=args.seed, nodes=args.nodes, port=args.port, host=args.host)
    try:
        twin.start()
    except TwinError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        try:
            twin.write_kubeconfig(args.kubeconfig)
        except OSError as exc:
            print(f"error: cannot write the kubeconfig to {args.kubeconfig}: {exc.strerror}", file=sys.stderr)
            return 1
        twin.clock.follow_wall_time(args.time_scale)
        advertise(twin, args.time_scale)
        urls = {"prometheus": twin.prometheus_url, "alertmanager": twin.alertmanager_url,
                "jaeger": twin.jaeger_url, "topology": twin.topology_url, "opencost": twin.opencost_url}
        print(f"ready {twin.url}", flush=True)
        print(f"urls {json.dumps(urls, sort_keys=True)}", flush=True)
        while not stop.wait(0.5):
            pass
        return 0
    finally:
        twin.stop()


if __name__ == "__main__":
    sys.exit(main())
