"""Application definitions: Kubernetes manifests, behaviour sheets, and the alert rules over them."""

from .catalog import APPLICATIONS, Application, application

__all__ = ["APPLICATIONS", "Application", "application"]
