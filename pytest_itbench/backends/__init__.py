"""Environment providers behind one interface (base.Backend): the twin now; kind, k3s and existing later."""

from .base import SIGNALS, Backend, Cluster, provisioned


def get(name: str, **options) -> Backend:
    if name == "twin":
        from .twin import TwinBackend
        return TwinBackend(**options)
    raise ValueError(f"unknown backend {name!r}; available: twin")


__all__ = ["SIGNALS", "Backend", "Cluster", "get", "provisioned"]
