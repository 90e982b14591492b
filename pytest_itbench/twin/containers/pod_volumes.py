"""What containers wrote into their pod's emptyDir volumes: the node's disk, shared by the pod's containers.

An emptyDir's contents are not API state, but they outlive the container that wrote them: flagd's
init container copies its flag file into one, and the main container (and ``kubectl exec ... cat``)
reads it there. The kubelet commits a container's writes under its emptyDir mounts when the
container ends; :func:`~.fs.filesystem` lays them out in every container that mounts the volume.
The contents go with the pod (its UID), as the kubelet removes the volume's directory.
"""

from __future__ import annotations

import posixpath
import weakref

from ..store import Store


class EmptyDirs:
    def __init__(self):
        self._files: dict[tuple[str, str], dict[str, bytes]] = {}

    def files(self, uid: str, volume: str) -> dict[str, bytes]:
        """Relative path to content of one volume."""
        return dict(self._files.get((uid, volume), {}))

    def commit(self, pod: dict, container: dict, changes: dict[str, bytes | None]) -> None:
        """Keep a container's file writes (absolute paths in it) that landed on an emptyDir it mounts."""
        uid = pod["metadata"].get("uid", "")
        empty = {v.get("name") for v in (pod.get("spec") or {}).get("volumes") or () if "emptyDir" in v}
        mounts = [(m["mountPath"].rstrip("/") or "/", m["name"]) for m in container.get("volumeMounts") or ()
                  if m.get("name") in empty and not m.get("subPath") and m.get("mountPath")]
        for path, content in changes.items():
            path = posixpath.normpath(path)
            for mount_path, volume in sorted(mounts, key=lambda m: -len(m[0])):  # the deepest mount holds it
                if path.startswith(mount_path + "/"):
                    files = self._files.setdefault((uid, volume), {})
                    relative = path[len(mount_path) + 1:]
                    if content is None:
                        files.pop(relative, None)
                    else:
                        files[relative] = content
                    break

    def forget(self, uid: str) -> None:
        for key in [k for k in self._files if k[0] == uid]:
            del self._files[key]


_BY_STORE: "weakref.WeakKeyDictionary[Store, EmptyDirs]" = weakref.WeakKeyDictionary()


def empty_dirs(store: Store) -> EmptyDirs:
    """The emptyDir contents of the twin that ``store`` belongs to (its nodes' disks)."""
    found = _BY_STORE.get(store)
    if found is None:
        found = _BY_STORE[store] = EmptyDirs()
    return found
