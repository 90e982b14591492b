"""The alerts Alertmanager holds (its API v2), active ones by default."""

from __future__ import annotations

from typing import Any

from .base import HttpTool


class AlertsTool(HttpTool):
    name = "alerts"
    signal = "alertmanager"

    def __call__(self, *, active_only: bool = True, namespace: str | None = None,
                 thought: str = "") -> list[dict[str, Any]]:
        """Alerts as ``[{"labels": {"alertname", "namespace", "service_name"|"pod"|..., "severity"},
        "annotations": {...}, "startsAt", "status": {"state"}}]``, sorted by name and labels; with
        ``namespace``, those whose ``namespace`` label is it."""
        params = [("active", "true")] if active_only else []
        params += [("silenced", "false"), ("inhibited", "false")] if active_only else []
        if namespace:
            params.append(("filter", f'namespace="{namespace}"'))
        found = self.get("/api/v2/alerts", params, thought=thought)
        return sorted(found, key=lambda a: sorted(a.get("labels", {}).items()))
