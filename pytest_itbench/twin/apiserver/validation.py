"""Semantic validation of objects, with Kubernetes' field paths and messages."""

from __future__ import annotations

import re

from .. import errors
from ..errors import FieldError
from .resources import Resource

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def validate(api, res: Resource, obj: dict, old: dict | None) -> list[FieldError]:
    problems: list[FieldError] = []
    name = obj["metadata"].get("name", "")
    if old is None and not _DNS1123_SUBDOMAIN.match(name):
        problems.append(errors.invalid("metadata.name", name, (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")))
    return problems
