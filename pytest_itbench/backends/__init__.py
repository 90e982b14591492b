"""Environment providers behind one interface (base.Backend): the embedded twin (default), an existing cluster
(a kubeconfig you give), and clusters created in Docker by kind or k3s (docs/real-clusters.md)."""

from .base import SIGNALS, Backend, BackendError, Cluster, MissingSignal, provisioned

NAMES = ("twin", "existing", "kind", "k3s")


def get(name: str, **options) -> Backend:
    if name == "twin":
        from .twin import TwinBackend
        return TwinBackend(**options)
    if name == "existing":
        from .existing import ExistingBackend
        return ExistingBackend(**options)
    if name == "kind":
        from .kind import KindBackend
        return KindBackend(**options)
    if name == "k3s":
        from .k3s import K3sBackend
        return K3sBackend(**options)
    raise ValueError(f"unknown backend {name!r}; available: {', '.join(NAMES)}")


__all__ = ["NAMES", "SIGNALS", "Backend", "BackendError", "Cluster", "MissingSignal", "get", "provisioned"]
