"""Noise during a trial: what else happens on a real cluster while an incident unfolds (ISSUE 17, item 2).

Other teams roll out, edit their ConfigMaps and add autoscalers in the minutes before the incident; a pod of an
unrelated service is evicted and comes back, a dependency off the alert's path is slow or drops packets for a
minute. Each is an ordinary change made through the Kubernetes API (or a Chaos Mesh experiment, the twin's and
a real cluster's way to make a network misbehave), so it shows in every signal the real thing shows in, and the
twin never learns that it is noise (rule 2 of ARCHITECTURE.md). See :mod:`.plan` for what is drawn and when,
:mod:`.bystanders` for who may be touched, :mod:`.kinds` for each kind.
"""

from .levels import LEVELS, default_level  # noqa: F401
from .plan import Noise  # noqa: F401
