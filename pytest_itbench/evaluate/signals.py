"""The harness reading the observability APIs it offers the agent: Prometheus and Alertmanager over HTTP.

The harness uses the same URLs and queries on the twin and on a real cluster (ARCHITECTURE.md, rule 5).
Failures to reach an API are environment errors (:class:`SignalError`), never an agent's miss.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable

TIMEOUT = 30.0


class SignalError(RuntimeError):
    """An observability API could not be read."""


def _get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")[:300]
        raise SignalError(f"GET {url} answered {exc.code}: {body}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SignalError(f"GET {url} failed: {exc}") from None


class Prometheus:
    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def query(self, promql: str, at: float) -> list[dict]:
        """An instant query's result list (``[{"metric": {...}, "value": [t, "v"]}, ...]``)."""
        return self._data("query", query=promql, time=f"{at:.3f}")["result"]

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[dict]:
        return self._data("query_range", query=promql, start=f"{start:.3f}", end=f"{end:.3f}",
                          step=f"{step:g}")["result"]

    def scalar(self, promql: str, at: float) -> float | None:
        """The single value of a query that yields one series (None when it yields none)."""
        result = self.query(promql, at)
        return float(result[0]["value"][1]) if result else None

    def _data(self, endpoint: str, **params: str) -> dict:
        body = _get(f"{self.url}/api/v1/{endpoint}?{urllib.parse.urlencode(params)}")
        if body.get("status") != "success":
            raise SignalError(f"Prometheus {endpoint} {params.get('query')!r}: {body.get('errorType')}: "
                              f"{body.get('error')}")
        return body["data"]


class Alertmanager:
    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def active(self, filters: Iterable[str] = ()) -> list[dict]:
        """Active (firing, not silenced or inhibited) alerts matching Alertmanager's ``filter`` matchers."""
        query = [("active", "true"), ("silenced", "false"), ("inhibited", "false")]
        query += [("filter", f) for f in filters]
        return _get(f"{self.url}/api/v2/alerts?{urllib.parse.urlencode(query)}")

    def firing_names(self, namespace: str | None = None) -> set[str]:
        filters = [f'namespace="{namespace}"'] if namespace else []
        return {a["labels"].get("alertname", "") for a in self.active(filters)}
