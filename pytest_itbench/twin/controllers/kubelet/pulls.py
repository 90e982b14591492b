"""The kubelet's image manager: pull policy, the node's image store, pull back-off and pull timing.

``ensure`` decides, for a container about to be created, whether its image
is already on the node (``Pulled``: already present), may not be pulled
(``ErrImageNeverPull``), is still in back-off after a failed pull
(``ImagePullBackOff``), or must be pulled now (``Pulling``). A pull takes
time: the registry's round trip and the image's size over the node's
bandwidth, after any pull already running on the node (the kubelet pulls one
image at a time), which is the "including waiting" of the ``Pulled`` event.
``complete`` finishes a pull: the image lands in the node's store, or the
failure starts (or doubles) the back-off for this pod and image.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from ...clock import format_go_duration
from ...images import Image, InvalidReference, PullError, Registry, parse_reference
from .backoff import Backoff
from .node import NodeAgent
from .runtime import PendingPull, Slot

Record = Callable[[str, str, str], None]  # (type, reason, message) about the container

BANDWIDTH = (40e6, 120e6)  # bytes per second a node gets from a registry
ROUND_TRIP = (0.25, 0.9)  # seconds to resolve a reference
FAILURE_ROUND_TRIP = (0.3, 1.2)


@dataclass(frozen=True)
class Failure:
    reason: str  # the waiting reason: ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull
    message: str


class ImageManager:
    def __init__(self, registry: Registry, rng: random.Random):
        self.registry = registry
        self.rng = rng
        self.backoff = Backoff()

    def ensure(self, node: NodeAgent, uid: str, slot: Slot, now: float, record: Record) -> Image | Failure | None:
        """The image to create the container from, a failure, or None when a pull has started."""
        image_name = slot.spec.get("image", "")
        try:
            ref = parse_reference(image_name)
        except InvalidReference as exc:
            message = f'Failed to apply default image tag "{image_name}": couldn\'t parse image name ' \
                      f'"{image_name}": {exc}'
            record("Warning", "InspectFailed", message)
            return Failure("InvalidImageName", message)
        present = node.images.get(str(ref))
        policy = slot.spec.get("imagePullPolicy") or "IfNotPresent"
        if present is not None and policy != "Always":
            record("Normal", "Pulled", f'Container image "{image_name}" already present on machine')
            return present
        if policy == "Never":
            message = f'Container image "{image_name}" is not present with pull policy of Never'
            record("Warning", "ErrImageNeverPull", message)
            return Failure("ErrImageNeverPull", message)
        key = (uid, image_name)
        if self.backoff.in_backoff_since_update(key, now):
            message = f'Back-off pulling image "{image_name}"'
            record("Normal", "BackOff", message)
            return Failure("ImagePullBackOff", message)
        record("Normal", "Pulling", f'Pulling image "{image_name}"')
        slot.pull = self._pull(node, ref, present, now)
        return None

    def _pull(self, node: NodeAgent, ref, present: Image | None, now: float) -> PendingPull:
        try:
            image = self.registry.pull(ref, node.architecture)
        except PullError as exc:
            duration = self.rng.uniform(*FAILURE_ROUND_TRIP)
            image, error = None, str(exc)
        else:
            error = None
            duration = self.rng.uniform(*ROUND_TRIP)
            if present is None or present.digest != image.digest:
                duration += image.size / self.rng.uniform(*BANDWIDTH)
        duration = math.floor(duration * 1000) / 1000  # the kubelet prints it truncated to milliseconds
        start = max(now, node.pulls_free_at)
        node.pulls_free_at = start + duration
        return PendingPull(now, start + duration, duration, image, error)

    def complete(self, node: NodeAgent, uid: str, slot: Slot, now: float, record: Record) -> Image | Failure:
        pull = slot.pull
        assert pull is not None
        slot.pull = None
        image_name = slot.spec.get("image", "")
        if pull.image is None:
            record("Warning", "Failed", f'Failed to pull image "{image_name}": {pull.error}')
            self.backoff.next((uid, image_name), now)
            return Failure("ErrImagePull", pull.error or "")
        node.images[str(pull.image.reference)] = pull.image
        waited = math.floor((pull.done - pull.requested) * 1000) / 1000
        record("Normal", "Pulled", f'Successfully pulled image "{image_name}" in {format_go_duration(pull.duration)} '
                                   f'({format_go_duration(waited)} including waiting). Image size: '
                                   f'{pull.image.size} bytes.')
        return pull.image
