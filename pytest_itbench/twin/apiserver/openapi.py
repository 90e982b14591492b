"""OpenAPI v3: /openapi/v3 and one document per group-version."""

from __future__ import annotations

from .handlers import not_found_resource


class OpenAPIService:
    def __init__(self, server):
        self.server = server

    def respond(self, request, parts):
        raise not_found_resource()
