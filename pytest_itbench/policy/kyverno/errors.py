"""The one exception a caller sees from the Kyverno engine."""


class PolicyError(ValueError):
    """A policy that is not valid (bad pattern, unknown operator); the message names the path."""
