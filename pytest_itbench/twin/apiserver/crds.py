"""CustomResourceDefinitions: serving custom resources as soon as their CRD exists."""

from __future__ import annotations


class CustomResourceDefinitions:
    def __init__(self, server, reactor, ctx):
        self.server = server
