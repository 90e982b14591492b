"""aiohttp applications served on free loopback ports inside an event loop that is already running.

    sites = LoopbackSites("127.0.0.1")
    await sites.start({"jaeger": jaeger_app, "topology": topology_app})
    sites.ports["jaeger"]
    await sites.stop()

The twin's observability endpoints live in its API server's loop, each on a port of its own, as each
is a separate service in a real cluster.
"""

from __future__ import annotations

from aiohttp import web


class LoopbackSites:
    def __init__(self, host: str):
        self.host = host
        self.ports: dict[str, int] = {}
        self._runners: list[web.AppRunner] = []

    async def start(self, apps: dict[str, web.Application]) -> None:
        """Serve every application on a free port; on a failure, nothing stays bound."""
        try:
            for name, app in apps.items():
                runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
                await runner.setup()
                self._runners.append(runner)
                site = web.TCPSite(runner, self.host, 0, reuse_address=True)
                await site.start()
                sockets = site._server.sockets if site._server is not None else []  # type: ignore[union-attr]
                self.ports[name] = sockets[0].getsockname()[1]
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        runners, self._runners = self._runners, []
        self.ports.clear()
        for runner in runners:
            await runner.cleanup()
