"""The files a container sees, as far as the cluster state determines them.

The kubelet-managed ``/etc/hostname``, ``/etc/hosts`` and ``/etc/resolv.conf``;
ConfigMap, Secret, projected (service-account token, ConfigMap, Secret,
downward API) and downwardAPI volumes at their mount paths, laid out as the
kubelet's atomic writer does (``..data`` pointing at a timestamped
directory, one symlink per top-level key), with ``items`` and ``subPath``
honoured; emptyDir volumes with what the pod's containers wrote into them
(:mod:`pod_volumes`); other volumes (PVCs, hostPath) as empty directories,
since their contents are not cluster state. The image's own files are not
known, so only the directories every Linux image has are present.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from . import downward_api
from ..clock import parse_time
from .env import config_map_data, container_named, node_of, pod_hostname, secret_data
from . import ContainerRef
from .pod_volumes import empty_dirs
from ..store import Store

TokenIssuer = Callable[[str, str, list[str], int], str]  # (namespace, service account, audiences, seconds)

SKELETON = ("/bin", "/dev", "/etc", "/home", "/proc", "/root", "/run", "/sys", "/usr", "/usr/bin",
            "/usr/local", "/usr/local/bin", "/var", "/var/log")
CLUSTER_DOMAIN = "cluster.local"
DEFAULT_MODE = 0o644  # the API's default defaultMode (420) for ConfigMap, Secret, downward API and projected volumes
DEFAULT_CLUSTER_DNS = "10.96.0.10"  # kind's and kubeadm's --cluster-dns


@dataclass(frozen=True)
class File:
    content: bytes
    mode: int = DEFAULT_MODE


@dataclass(frozen=True)
class Directory:
    mode: int = 0o755


@dataclass(frozen=True)
class Link:
    target: str


Node = File | Directory | Link


class FileSystem:
    """A tree of files, directories and symlinks by absolute path; ``mtime`` is when the mounts appeared."""

    def __init__(self, mtime: float):
        self.mtime = mtime
        self.nodes: dict[str, Node] = {"/": Directory()}

    def add(self, path: str, node: Node) -> None:
        path = posixpath.normpath(path)
        parent = posixpath.dirname(path)
        if parent != path and not isinstance(self.nodes.get(parent), Directory):
            self.add(parent, Directory())
        self.nodes[path] = node

    def resolve(self, path: str, cwd: str = "/", follow_last: bool = True) -> str | None:
        """The real path of ``path`` (symlinks followed), or ``None`` if some component does not exist."""
        current = "/"
        parts = [p for p in posixpath.join(cwd, path).split("/") if p not in ("", ".")]
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                current = posixpath.dirname(current)
                continue
            candidate = posixpath.join(current, part)
            node = self.nodes.get(candidate)
            if node is None:
                return None
            if isinstance(node, Link) and (parts or follow_last):
                hops += 1
                if hops > 40:
                    return None
                target = node.target if node.target.startswith("/") else posixpath.join(current, node.target)
                parts = [p for p in target.split("/") if p not in ("", ".")] + parts
                current = "/"
                continue
            current = candidate
        return current

    def get(self, path: str, cwd: str = "/", follow_last: bool = True) -> Node | None:
        real = self.resolve(path, cwd, follow_last)
        return self.nodes.get(real) if real is not None else None

    def children(self, directory: str) -> list[str]:
        prefix = directory.rstrip("/") + "/"
        return sorted(p[len(prefix):] for p in self.nodes if p.startswith(prefix) and "/" not in p[len(prefix):]
                      and p != directory)


def filesystem(store: Store, pod: dict, ref: ContainerRef, issue_token: TokenIssuer) -> FileSystem:
    """The container's files, derived from the pod and the objects its volumes reference."""
    started = _pod_start(pod)
    fs = FileSystem(started)
    for path in SKELETON:
        fs.add(path, Directory())
    fs.add("/tmp", Directory(0o1777))
    hostname = pod_hostname(pod)
    fs.add("/etc/hostname", File(f"{hostname}\n".encode()))
    fs.add("/etc/hosts", File(_hosts(pod, hostname).encode()))
    fs.add("/etc/resolv.conf", File(_resolv_conf(store, pod).encode()))
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for mount in ref.spec.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name"))
        if volume is None:
            continue
        contents = _volume_files(store, pod, ref, volume, issue_token)
        mount_path = mount.get("mountPath", "/")
        if "emptyDir" in volume and not mount.get("subPath"):
            fs.add(mount_path, Directory(0o777))
            written = empty_dirs(store).files(pod["metadata"].get("uid", ""), volume.get("name", ""))
            for relative, content in sorted(written.items()):
                fs.add(posixpath.join(mount_path, relative), File(content))
            continue
        sub_path = (mount.get("subPath") or "").strip("/")
        if contents is None:
            fs.add(mount_path, Directory(0o777))
        elif sub_path:
            _mount_sub_path(fs, mount_path, sub_path, contents)
        else:
            _mount_atomic(fs, mount_path, contents, _data_dir_name(pod, volume.get("name", ""), started))
    return fs


def _pod_start(pod: dict) -> float:
    stamp = (pod.get("status") or {}).get("startTime") or pod["metadata"].get("creationTimestamp")
    return parse_time(stamp) if stamp else 0.0


def _data_dir_name(pod: dict, volume: str, started: float) -> str:
    """The atomic writer's timestamped directory, e.g. ``..2024_05_01_10_20_30.123456789``."""
    digest = hashlib.sha256(f"{pod['metadata'].get('uid')}/{volume}".encode()).digest()
    nanos = int.from_bytes(digest[:4], "big") % 10 ** 9
    stamp = datetime.fromtimestamp(started, tz=timezone.utc).strftime("%Y_%m_%d_%H_%M_%S")
    return f"..{stamp}.{nanos:09d}"


def _mount_atomic(fs: FileSystem, mount_path: str, contents: dict[str, File], data_dir: str) -> None:
    fs.add(mount_path, Directory(0o777))
    fs.add(posixpath.join(mount_path, data_dir), Directory())
    fs.add(posixpath.join(mount_path, "..data"), Link(data_dir))
    for relative, file in contents.items():
        fs.add(posixpath.join(mount_path, data_dir, relative), file)
    for top in sorted({relative.split("/")[0] for relative in contents}):
        fs.add(posixpath.join(mount_path, top), Link(f"..data/{top}"))


def _mount_sub_path(fs: FileSystem, mount_path: str, sub_path: str, contents: dict[str, File]) -> None:
    if sub_path in contents:
        fs.add(mount_path, contents[sub_path])
        return
    fs.add(mount_path, Directory())
    prefix = sub_path + "/"
    for relative, file in contents.items():
        if relative.startswith(prefix):
            fs.add(posixpath.join(mount_path, relative[len(prefix):]), file)


def _volume_files(store: Store, pod: dict, ref: ContainerRef, volume: dict,
                  issue_token: TokenIssuer) -> dict[str, File] | None:
    """Relative path to file for the volume kinds whose contents are cluster state; ``None`` for the rest."""
    namespace = pod["metadata"].get("namespace", "")
    if "configMap" in volume:
        source = volume["configMap"]
        return _keyed_files(config_map_data(store, namespace, source.get("name", "")), source.get("items"),
                            source.get("defaultMode", DEFAULT_MODE))
    if "secret" in volume:
        source = volume["secret"]
        return _keyed_files(secret_data(store, namespace, source.get("secretName", "")), source.get("items"),
                            source.get("defaultMode", DEFAULT_MODE))
    if "downwardAPI" in volume:
        source = volume["downwardAPI"]
        return _downward_files(store, pod, ref, source.get("items"), source.get("defaultMode", DEFAULT_MODE))
    if "projected" in volume:
        return _projected_files(store, pod, ref, volume["projected"], issue_token)
    return None


def _keyed_files(data: dict[str, bytes] | None, items: list[dict] | None, mode: int) -> dict[str, File]:
    """Every key as a file of its name, or only the listed ``items`` at their paths."""
    data = data or {}
    if not items:
        return {key: File(value, mode) for key, value in data.items()}
    return {item["path"]: File(data[item["key"]], item.get("mode", mode))
            for item in items if item.get("key") in data and item.get("path")}


def _downward_files(store: Store, pod: dict, ref: ContainerRef, items: list[dict] | None,
                    mode: int) -> dict[str, File]:
    files = {}
    for item in items or []:
        if "fieldRef" in item:
            value = downward_api.field_value(pod, item["fieldRef"].get("fieldPath", ""))
        elif "resourceFieldRef" in item:
            field = item["resourceFieldRef"]
            container = container_named(pod, field.get("containerName")) or ref.spec
            value = downward_api.resource_value(container, node_of(store, pod), field.get("resource", ""),
                                                field.get("divisor"))
        else:
            continue
        files[item.get("path", "")] = File(value.encode(), item.get("mode", mode))
    return files


def _projected_files(store: Store, pod: dict, ref: ContainerRef, projected: dict,
                     issue_token: TokenIssuer) -> dict[str, File]:
    namespace = pod["metadata"].get("namespace", "")
    mode = projected.get("defaultMode", DEFAULT_MODE)
    files: dict[str, File] = {}
    for source in projected.get("sources") or []:
        if "serviceAccountToken" in source:
            token = source["serviceAccountToken"]
            account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
            audiences = [token["audience"]] if token.get("audience") else []
            text = issue_token(namespace, account, audiences, int(token.get("expirationSeconds") or 3607))
            files[token.get("path", "token")] = File(text.encode(), mode)
        elif "configMap" in source:
            part = source["configMap"]
            files.update(_keyed_files(config_map_data(store, namespace, part.get("name", "")), part.get("items"),
                                      mode))
        elif "secret" in source:
            part = source["secret"]
            files.update(_keyed_files(secret_data(store, namespace, part.get("name", "")), part.get("items"), mode))
        elif "downwardAPI" in source:
            files.update(_downward_files(store, pod, ref, source["downwardAPI"].get("items"), mode))
    return files


def _hosts(pod: dict, hostname: str) -> str:
    """The kubelet-managed ``/etc/hosts``."""
    spec = pod.get("spec") or {}
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
             "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix",
             "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    pod_ip = (pod.get("status") or {}).get("podIP")
    if pod_ip:
        subdomain = spec.get("subdomain")
        if subdomain:
            namespace = pod["metadata"].get("namespace", "")
            lines.append(f"{pod_ip}\t{hostname}.{subdomain}.{namespace}.svc.{CLUSTER_DOMAIN}\t{hostname}")
        else:
            lines.append(f"{pod_ip}\t{hostname}")
    aliases = spec.get("hostAliases") or []
    if aliases:
        lines += ["", "# Entries added by HostAliases."]
        lines += ["\t".join([alias.get("ip", ""), *alias.get("hostnames", [])]) for alias in aliases]
    return "\n".join(lines) + "\n"


def _resolv_conf(store: Store, pod: dict) -> str:
    """The kubelet's resolv.conf for ClusterFirst pods, merged with ``dnsConfig`` (alone for ``None``)."""
    spec = pod.get("spec") or {}
    namespace = pod["metadata"].get("namespace", "")
    dns_config = spec.get("dnsConfig") or {}
    if spec.get("dnsPolicy") == "None":
        nameservers, searches, options = [], [], []
    else:
        dns_service = store.get("services", "kube-system", "kube-dns")
        cluster_ip = ((dns_service or {}).get("spec") or {}).get("clusterIP") or DEFAULT_CLUSTER_DNS
        nameservers = [cluster_ip]
        searches = [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]
        options = ["ndots:5"]
    nameservers += dns_config.get("nameservers") or []
    searches += dns_config.get("searches") or []
    for option in dns_config.get("options") or []:
        text = option.get("name", "") + (f":{option['value']}" if option.get("value") else "")
        options = [o for o in options if o.split(":")[0] != option.get("name")] + [text]
    lines = []
    if searches:
        lines.append("search " + " ".join(searches))
    lines += [f"nameserver {server}" for server in nameservers]
    if options:
        lines.append("options " + " ".join(options))
    return "\n".join(lines) + "\n"
