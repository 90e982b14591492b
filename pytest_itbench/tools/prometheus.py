"""PromQL instant and range queries, and the alerts Prometheus' rules hold, over the Prometheus HTTP API."""

from __future__ import annotations

import time
from typing import Any

from .base import HttpTool, ToolError


class PrometheusTool(HttpTool):
    name = "prometheus"
    signal = "prometheus"

    def query(self, promql: str, at: float | None = None, *, thought: str = "") -> list[dict[str, Any]]:
        """An instant query: ``[{"metric": {labels}, "value": [t, "v"]}]`` (a vector), or the scalar/string
        result as Prometheus gives it."""
        params = {"query": promql, **({"time": f"{at:.3f}"} if at is not None else {})}
        return self._result(self.get("/api/v1/query", params, thought=thought, action=f"PromQL {promql}"), promql)

    def query_range(self, promql: str, start: float, end: float | None = None, step: float = 60.0, *,
                    thought: str = "") -> list[dict[str, Any]]:
        """A range query: ``[{"metric": {labels}, "values": [[t, "v"], ...]}]``; ``start``/``end`` in epoch
        seconds (``end`` defaults to now; pass ``start=time.time() - 600`` for the last ten minutes)."""
        end = time.time() if end is None else end
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        return self._result(self.get("/api/v1/query_range", params, thought=thought,
                                     action=f"PromQL range [{end - start:g}s, step {step:g}s] {promql}"), promql)

    def alerts(self, *, thought: str = "") -> list[dict[str, Any]]:
        """Alerts of Prometheus' rules, pending and firing: ``[{"labels", "annotations", "state", "activeAt"}]``."""
        data = self.get("/api/v1/alerts", thought=thought, action="GET prometheus /api/v1/alerts")
        return list((data.get("data") or {}).get("alerts") or [])

    @staticmethod
    def _result(data: Any, promql: str) -> Any:
        if not isinstance(data, dict) or data.get("status") != "success":
            error = data.get("error") if isinstance(data, dict) else data
            raise ToolError(f"prometheus: query {promql!r} failed: {error}")
        result = data["data"]
        return result["result"]
