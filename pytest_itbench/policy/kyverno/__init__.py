"""Kyverno's validate rules, evaluated in Python to Kyverno's documented semantics.

``apply(policy, resource)`` gives one ``RuleResult`` per matching rule (autogen rules for Pod
controllers included); ``validation_action(policy)`` says whether failures block admission.
"""

from .engine import RuleResult, apply, validation_action
from .errors import PolicyError

__all__ = ["apply", "RuleResult", "PolicyError", "validation_action"]
