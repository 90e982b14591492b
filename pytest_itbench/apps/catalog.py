"""The applications a scenario can deploy: each one's namespace, Kubernetes manifests and behaviour sheet.

An application lives in a directory of this package: ``manifests/*.yaml`` are ordinary Kubernetes
documents with the images the upstream project publishes (so the same files deploy to the twin and to a
real cluster), and ``behaviour.yaml`` tells the twin what those containers do. The manifest files are named
so that ``kubectl apply -f <app>/manifests/`` applies them in a working order; :meth:`Application.documents`
gives them in the order a client creates them one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

APPS_DIR = Path(__file__).parent

# Namespace first, then what pods refer to (service account, configuration, secrets, claims), then the
# workloads and the Services in front of them; any other kind after those.
APPLY_ORDER = ("Namespace", "ServiceAccount", "ConfigMap", "Secret", "PersistentVolumeClaim", "StatefulSet",
               "Deployment", "Service")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Application:
    name: str  # what a scenario's ``application`` names
    namespace: str
    directory: Path
    upstream: str  # what the manifests are modelled on

    @property
    def manifests_dir(self) -> Path:
        return self.directory / "manifests"

    @property
    def behaviour_path(self) -> Path:
        """The twin's behaviour sheet for the application's containers."""
        return self.directory / "behaviour.yaml"

    def manifest_files(self) -> list[Path]:
        return sorted(self.manifests_dir.glob("*.yaml"))

    def documents(self) -> list[dict]:
        """Every manifest document, in apply order (file order within one kind); a fresh copy per call."""
        docs = []
        for path in self.manifest_files():
            with path.open() as fh:
                docs.extend(doc for doc in yaml.load_all(fh, Loader=_Loader) if doc)
        return sorted(docs, key=_apply_rank)


def _apply_rank(doc: dict) -> int:
    kind = doc.get("kind")
    return APPLY_ORDER.index(kind) if kind in APPLY_ORDER else len(APPLY_ORDER)


APPLICATIONS: dict[str, Application] = {app.name: app for app in (
    Application("astronomy-shop", "astronomy-shop", APPS_DIR / "astronomy_shop",
                "OpenTelemetry Demo 2.1.3 (kubernetes/opentelemetry-demo.yaml of opentelemetry-demo 2.2.0)"),
    Application("hotel-reservation", "hotel-reservation", APPS_DIR / "hotel_reservation",
                "DeathStarBench hotelReservation (hotelReservation/kubernetes/)"),
)}


def application(name: str) -> Application:
    """The application called ``name``; a KeyError names the known ones."""
    try:
        return APPLICATIONS[name]
    except KeyError:
        raise KeyError(f"unknown application {name!r}; known: {', '.join(sorted(APPLICATIONS))}") from None
