"""Access and identity reviews: SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
LocalSubjectAccessReview, TokenReview and SelfSubjectReview."""

from __future__ import annotations


def register(server) -> None:
    """Register the review handlers with the server's virtual resources."""
