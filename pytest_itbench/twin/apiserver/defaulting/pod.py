"""Defaults of a pod spec, as pkg/apis/core/v1/defaults.go fills them on every pod and pod template.

A pod template (in a Deployment, Job, ...) gets the PodSpec defaults; a Pod
also gets the few defaults that only materialise on pods (requests copied
from limits, ``enableServiceLinks``).
"""

from __future__ import annotations

from ... import quantity

TERMINATION_MESSAGE_PATH = "/dev/termination-log"
FILE_MODE = 420  # 0644, the default mode of configMap, secret, downwardAPI and projected volumes
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))


def pod(obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    pod_spec(spec)
    for name in ("initContainers", "containers"):
        for container in spec.get(name) or ():
            _requests_from_limits(container)
    spec.setdefault("enableServiceLinks", True)


def template(tpl: dict | None) -> None:
    """A PodTemplateSpec inside a workload."""
    if not isinstance(tpl, dict):
        return
    meta = tpl.setdefault("metadata", {})
    if isinstance(meta, dict):
        meta.setdefault("creationTimestamp", None)  # ObjectMeta's timestamp is always written, as null
    spec = tpl.get("spec")
    if isinstance(spec, dict):
        pod_spec(spec)


def pod_spec(spec: dict) -> None:
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    # serviceAccount is the deprecated twin of serviceAccountName; the server keeps them equal.
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if account:
        spec["serviceAccountName"] = spec["serviceAccount"] = account
    host_network = bool(spec.get("hostNetwork"))
    for name in _CONTAINER_LISTS:
        for container in spec.get(name) or ():
            if isinstance(container, dict):
                _container(container, host_network)
    for volume in spec.get("volumes") or ():
        if isinstance(volume, dict):
            _volume(volume)


def _container(container: dict, host_network: bool) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = "Always" if image_tag(container.get("image") or "") == "latest" \
            else "IfNotPresent"
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = TERMINATION_MESSAGE_PATH
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    container.setdefault("resources", {})
    resources = container["resources"]
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            if isinstance(resources.get(key), dict):
                round_resource_list(resources[key])
    for port in container.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if host_network and not port.get("hostPort"):
            port["hostPort"] = port.get("containerPort")
    for probe in _PROBES:
        if isinstance(container.get(probe), dict):
            _probe(container[probe])
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in lifecycle.values():
            if isinstance(hook, dict):
                _handler(hook)
    for env in container.get("env") or ():
        source = env.get("valueFrom") if isinstance(env, dict) else None
        if isinstance(source, dict):
            _field_ref(source.get("fieldRef"))
            _resource_field_ref(source.get("resourceFieldRef"))


def _probe(probe: dict) -> None:
    for key, value in _PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = value
    _handler(probe)


def _handler(handler: dict) -> None:
    http = handler.get("httpGet")
    if isinstance(http, dict):
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"


def _field_ref(ref) -> None:
    if isinstance(ref, dict) and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _resource_field_ref(ref) -> None:
    # divisor is a non-pointer Quantity: it is always written, as "0" when unset.
    if isinstance(ref, dict) and ref.get("divisor") is None:
        ref["divisor"] = "0"


def _volume(volume: dict) -> None:
    if not any(key != "name" for key in volume):
        volume["emptyDir"] = {}
    for kind in ("configMap", "secret", "downwardAPI", "projected"):
        source = volume.get(kind)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            source["defaultMode"] = FILE_MODE
    for item in (volume.get("downwardAPI") or {}).get("items") or ():
        _field_ref(item.get("fieldRef"))
        _resource_field_ref(item.get("resourceFieldRef"))
    for source in (volume.get("projected") or {}).get("sources") or ():
        token = source.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
        for item in (source.get("downwardAPI") or {}).get("items") or ():
            _field_ref(item.get("fieldRef"))
            _resource_field_ref(item.get("resourceFieldRef"))
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    claim = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec")
    if isinstance(claim, dict):
        claim.setdefault("volumeMode", "Filesystem")


def _requests_from_limits(container: dict) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
        return
    requests = resources.setdefault("requests", {})
    for name, value in resources["limits"].items():
        requests.setdefault(name, value)


def round_resource_list(values: dict) -> None:
    """Resource lists are rounded up to a thousandth (SetDefaults_ResourceList)."""
    for name, value in values.items():
        if isinstance(value, str):
            try:
                values[name] = str(quantity.parse(value).rounded_up_to_milli())
            except quantity.QuantityError:
                continue  # a controller's own write; decoding refuses bad quantities from clients


def image_tag(image: str) -> str:
    """The tag an image reference names, "latest" when it names neither tag nor digest (as ParseImageName)."""
    if not image or image != image.strip() or any(c.isupper() for c in _path(image)):
        return ""  # an unparsable reference: upstream ignores the error and finds no tag
    name, _, digest = image.partition("@")
    tag = name.rsplit("/", 1)[-1].partition(":")[2]
    if not tag and not digest:
        return "latest"
    return tag


def _path(image: str) -> str:
    """The repository path of a reference, without registry host, tag or digest (it must be lowercase)."""
    name = image.partition("@")[0]
    host, slash, rest = name.partition("/")
    if slash and ("." in host or ":" in host or host == "localhost"):
        name = rest
    return name.partition(":")[0]
