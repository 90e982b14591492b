"""The embedded Kubernetes twin: an API server, controllers and telemetry in this process.

Nothing here imports the pytest plugin; the twin is usable on its own
(``python -m pytest_itbench.twin``).
"""

from .cluster import Twin, TwinError

__all__ = ["Twin", "TwinError"]
