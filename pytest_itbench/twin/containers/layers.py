"""What execs wrote into a container's own files: its writable layer, kept while the container runs.

``kubectl exec -i POD -- sh -c 'cat > /tmp/x'`` leaves ``/tmp/x`` for the next exec to read, as on a real
container, until the container is replaced: the layer belongs to one container instance (its
``containerID``), so a restart starts from the image again. Writes under an emptyDir mount land on the
volume instead (:mod:`pod_volumes`), shared with the pod's other containers; writes under other mounts
are not kept (their contents are not the container's).
"""

from __future__ import annotations

import weakref

from . import ContainerRef, status_of
from .fs import File, FileSystem, Node
from .pod_volumes import empty_dirs
from ..store import Store

_Key = tuple[str, str, str, str, str]  # namespace, pod name, pod uid, container, container ID


class ContainerLayers:
    def __init__(self):
        self._files: dict[_Key, dict[str, bytes | None]] = {}

    def files(self, key: _Key) -> dict[str, bytes | None]:
        """Absolute path to content (``None``: removed) of one container instance's writes."""
        return dict(self._files.get(key, {}))

    def commit(self, store: Store, key: _Key, changes: dict[str, bytes | None]) -> None:
        self._forget_gone(store, key)
        if changes:
            self._files.setdefault(key, {}).update(changes)

    def _forget_gone(self, store: Store, current: _Key) -> None:
        """Drop the layers of containers that no longer exist: replaced in their pod, or their pod deleted."""
        for key in list(self._files):
            namespace, name, uid, container, container_id = key
            replaced = key[:4] == current[:4] and container_id != current[4]
            pod = store.get("pods", namespace, name)
            if replaced or pod is None or pod["metadata"].get("uid") != uid:
                del self._files[key]


_BY_STORE: "weakref.WeakKeyDictionary[Store, ContainerLayers]" = weakref.WeakKeyDictionary()


def container_layers(store: Store) -> ContainerLayers:
    found = _BY_STORE.get(store)
    if found is None:
        found = _BY_STORE[store] = ContainerLayers()
    return found


def _key(pod: dict, ref: ContainerRef) -> _Key:
    meta = pod["metadata"]
    status = status_of(pod, ref) or {}
    return (meta.get("namespace", ""), meta["name"], meta.get("uid", ""), ref.name, status.get("containerID", ""))


def apply_layer(store: Store, pod: dict, ref: ContainerRef, fs: FileSystem) -> None:
    """Lay the container's earlier writes over the files derived from cluster state."""
    for path, content in sorted(container_layers(store).files(_key(pod, ref)).items()):
        if content is None:
            fs.nodes.pop(path, None)
        else:
            fs.add(path, File(content))


def commit_writes(store: Store, pod: dict, ref: ContainerRef, before: dict[str, Node], fs: FileSystem) -> None:
    """Keep what one exec changed in the container's files (``before``: its files when it started)."""
    changes: dict[str, bytes | None] = {}
    for path, node in fs.nodes.items():
        if isinstance(node, File) and before.get(path) != node:
            changes[path] = node.content
    for path, node in before.items():
        if isinstance(node, File) and path not in fs.nodes:
            changes[path] = None
    changes.pop("/dev/null", None)
    if not changes:
        return
    empty_dirs(store).commit(pod, ref.spec, changes)
    mounts = [m["mountPath"].rstrip("/") or "/" for m in ref.spec.get("volumeMounts") or () if m.get("mountPath")]
    own = {path: content for path, content in changes.items()
           if not any(path == m or path.startswith(m + "/") for m in mounts)}
    container_layers(store).commit(store, _key(pod, ref), own)
