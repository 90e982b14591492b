"""Server-side printing: the ``Table`` responses ``kubectl get`` asks for.

Each printer names its columns (with kube-apiserver's names, types, formats,
descriptions and priorities; priority 1 columns show only with ``-o wide``)
and computes one row of cells per object. Resources without a printer get
the default table (Name, Created At), as on a real server; custom resources
get their CRD's ``additionalPrinterColumns``.
"""

from __future__ import annotations

from . import (  # noqa: F401
    apiregistration, autoscaling, batch, cluster, config, events, networking, pods, rbac, storage, workloads,
)
from .core import Column, Printer, human_duration, printer_for, register, render

__all__ = ["Column", "Printer", "human_duration", "printer_for", "register", "render"]
