"""The kubelet: pods on nodes, their containers, images, probes, resources and graceful stops."""

from .controller import Kubelet

__all__ = ["Kubelet"]
