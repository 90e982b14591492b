"""Validation of pods, pod templates and pod specs (pkg/apis/core/validation, the pod parts).

Field paths and messages follow the Go validators; lists of a map's keys
are checked in sorted order so that the twin's answers are stable where Go's
map iteration is random.
"""

from __future__ import annotations

import posixpath

from ... import errors
from ...errors import FieldError
from ... import quantity
from .. import gosyntax
from . import name_rules, objectmeta

MAX_INT32 = 2 ** 31 - 1
FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_HOST_PATH_TYPES = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                    "Socket"]
_ENV_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"]
_VOLUME_FIELD_PATHS = ["metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                       "metadata.uid"]
_DOWNWARD_LABELS = {"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                    "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
                    "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
                    "status.podIPs"}
_RESOURCE_FIELD_PATHS = ["limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                         "requests.ephemeral-storage", "requests.memory"]
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                       "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
                       "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims",
                       "configmaps", "services.nodeports", "services.loadbalancers"}
_VOLUME_SOURCES = ("hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
                   "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
                   "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
                   "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                   "image")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")
UPDATABLE_POD_FIELDS = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                        "`spec.tolerations` (only additions to existing tolerations),"
                        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


# ---- pods and templates ----------------------------------------------------------------------------

def pod(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    problems += pod_spec(spec, "spec")
    if spec.get("ephemeralContainers"):
        problems.append(errors.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    return problems


def pod_template(template: dict | None, path: str) -> list[FieldError]:
    """ValidatePodTemplateSpec: the template's labels and annotations, then its pod spec."""
    if not isinstance(template, dict):
        return [errors.required(path)]
    meta = template.get("metadata") or {}
    problems = objectmeta.labels(meta.get("labels"), f"{path}.labels")
    problems += objectmeta.annotations(meta.get("annotations"), f"{path}.annotations")
    problems += pod_spec(template.get("spec") or {}, f"{path}.spec")
    return problems


def pod_spec(spec: dict, path: str) -> list[FieldError]:
    problems, volumes = _volumes(spec.get("volumes") or [], f"{path}.volumes")
    containers = spec.get("containers") or []
    init_containers = spec.get("initContainers") or []
    if not containers:
        problems.append(errors.required(f"{path}.containers"))
    names: set[str] = set()
    for i, container in enumerate(containers):
        at = f"{path}.containers[{i}]"
        problems += _container(container, volumes, at)
        name = container.get("name") or ""
        if name in names:
            problems.append(errors.duplicate(f"{at}.name", name))
        names.add(name)
        problems += _probes(container, at)
        if container.get("restartPolicy") is not None:
            problems.append(errors.forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    for i, container in enumerate(init_containers):
        at = f"{path}.initContainers[{i}]"
        problems += _container(container, volumes, at)
        name = container.get("name") or ""
        if name in names:
            problems.append(errors.duplicate(f"{at}.name", name))
        names.add(name)
        problems += _init_container_extras(container, at)
    problems += _host_ports(containers, f"{path}.containers")
    if spec.get("hostNetwork"):
        problems += _host_network_ports(containers, f"{path}.containers")
    problems += _one_of(spec.get("restartPolicy"), _RESTART_POLICIES, f"{path}.restartPolicy")
    problems += _one_of(spec.get("dnsPolicy"), _DNS_POLICIES, f"{path}.dnsPolicy")
    problems += objectmeta.labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    if spec.get("dnsPolicy") == "None" and spec.get("dnsConfig") is None:
        problems.append(errors.required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None"))
    for key, rule in (("serviceAccountName", name_rules.name_is_dns_subdomain),
                      ("nodeName", name_rules.name_is_dns_subdomain),
                      ("priorityClassName", name_rules.name_is_dns_subdomain),
                      ("hostname", name_rules.name_is_dns_label), ("subdomain", name_rules.name_is_dns_label)):
        value = spec.get(key)
        if value:
            problems += [errors.invalid(f"{path}.{key}", value, m) for m in rule(value, False)]
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        problems.append(errors.invalid(f"{path}.activeDeadlineSeconds", deadline,
                                       f"must be between 1 and {MAX_INT32}, inclusive"))
    problems += tolerations(spec.get("tolerations") or [], f"{path}.tolerations")
    problems += _topology_spread(spec.get("topologySpreadConstraints") or [], f"{path}.topologySpreadConstraints")
    if spec.get("preemptionPolicy") not in (None, "PreemptLowerPriority", "Never"):
        problems.append(errors.not_supported(f"{path}.preemptionPolicy", spec["preemptionPolicy"],
                                             ["Never", "PreemptLowerPriority"]))
    return problems


def _one_of(value, allowed: list[str], path: str) -> list[FieldError]:
    if not value:
        return [errors.required(path)]
    if value not in allowed:
        return [errors.not_supported(path, value, allowed)]
    return []


# ---- containers --------------------------------------------------------------------------------------

def _container(container: dict, volumes: dict[str, dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    name = container.get("name") or ""
    if not name:
        problems.append(errors.required(f"{path}.name"))
    else:
        problems += [errors.invalid(f"{path}.name", name, m) for m in name_rules.is_dns1123_label(name)]
    if not container.get("image"):
        problems.append(errors.required(f"{path}.image"))
    problems += _one_of(container.get("terminationMessagePolicy"), ["File", "FallbackToLogsOnError"],
                        f"{path}.terminationMessagePolicy")
    problems += _container_ports(container.get("ports") or [], f"{path}.ports")
    problems += env(container.get("env") or [], f"{path}.env")
    problems += _env_from(container.get("envFrom") or [], f"{path}.envFrom")
    problems += _volume_mounts(container.get("volumeMounts") or [], volumes, f"{path}.volumeMounts")
    policy = container.get("imagePullPolicy")
    if not policy:
        problems.append(errors.required(f"{path}.imagePullPolicy"))
    elif policy not in _PULL_POLICIES:
        problems.append(errors.not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES))
    problems += resource_requirements(container.get("resources") or {}, f"{path}.resources")
    return problems


def _container_ports(ports: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        name = port.get("name")
        if name:
            messages = name_rules.is_valid_port_name(name)
            if messages:
                problems += [errors.invalid(f"{at}.name", name, m) for m in messages]
            elif name in names:
                problems.append(errors.duplicate(f"{at}.name", name))
            names.add(name)
        number = port.get("containerPort") or 0
        if not number:
            problems.append(errors.required(f"{at}.containerPort"))
        else:
            problems += [errors.invalid(f"{at}.containerPort", number, m) for m in name_rules.is_valid_port_num(number)]
        if port.get("hostPort"):
            problems += [errors.invalid(f"{at}.hostPort", port["hostPort"], m)
                         for m in name_rules.is_valid_port_num(port["hostPort"])]
        problems += _protocol(port.get("protocol"), f"{at}.protocol")
    return problems


def _protocol(value, path: str) -> list[FieldError]:
    if not value:
        return [errors.required(path)]
    if value not in _PROTOCOLS:
        return [errors.not_supported(path, value, _PROTOCOLS)]
    return []


def _host_ports(containers: list[dict], path: str) -> list[FieldError]:
    """Host ports must be unique across the pod's containers (AccumulateUniqueHostPorts)."""
    problems: list[FieldError] = []
    seen: set[str] = set()
    for ci, container in enumerate(containers):
        for pi, port in enumerate(container.get("ports") or ()):
            if not port.get("hostPort"):
                continue
            key = f"{port.get('protocol', '')}/{port.get('hostIP', '')}/{port['hostPort']}"
            if key in seen:
                problems.append(errors.duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return problems


def _host_network_ports(containers: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for ci, container in enumerate(containers):
        for pi, port in enumerate(container.get("ports") or ()):
            if port.get("hostPort") and port.get("hostPort") != port.get("containerPort"):
                problems.append(errors.invalid(f"{path}[{ci}].ports[{pi}].hostPort", port["hostPort"],
                                               "must match `containerPort` when `hostNetwork` is true"))
    return problems


def env(variables: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for i, var in enumerate(variables):
        at = f"{path}[{i}]"
        name = var.get("name") or ""
        if not name:
            problems.append(errors.required(f"{at}.name"))
        else:
            problems += [errors.invalid(f"{at}.name", name, m) for m in name_rules.is_env_var_name(name)]
        problems += _env_source(var, f"{at}.valueFrom")
    return problems


def _env_source(var: dict, path: str) -> list[FieldError]:
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        return []
    problems: list[FieldError] = []
    given = 0
    if source.get("fieldRef") is not None:
        given += 1
        problems += _field_selector(source["fieldRef"], _ENV_FIELD_PATHS, f"{path}.fieldRef")
    if source.get("resourceFieldRef") is not None:
        given += 1
        problems += _resource_field_selector(source["resourceFieldRef"], f"{path}.resourceFieldRef")
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if source.get(kind) is not None:
            given += 1
            problems += _key_selector(source[kind], f"{path}.{kind}")
    if not given:
        problems.append(errors.invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                                 "`configMapKeyRef` or `secretKeyRef`"))
    elif var.get("value"):
        problems.append(errors.invalid(path, "", "may not be specified when `value` is not empty"))
    elif given > 1:
        problems.append(errors.invalid(path, "", "may not have more than one field specified at a time"))
    return problems


def _key_selector(selector: dict, path: str) -> list[FieldError]:
    name = selector.get("name") or ""
    problems = [errors.invalid(f"{path}.name", name, m) for m in name_rules.is_dns1123_subdomain(name)]
    key = selector.get("key") or ""
    if not key:
        problems.append(errors.required(f"{path}.key"))
    else:
        problems += [errors.invalid(f"{path}.key", key, m) for m in name_rules.is_config_map_key(key)]
    return problems


def _field_selector(selector: dict, allowed: list[str], path: str) -> list[FieldError]:
    version, field_path = selector.get("apiVersion") or "", selector.get("fieldPath") or ""
    if not version:
        return [errors.required(f"{path}.apiVersion")]
    if not field_path:
        return [errors.required(f"{path}.fieldPath")]
    if version != "v1":
        return [errors.invalid(f"{path}.fieldPath", field_path,
                               f"error converting fieldPath: unsupported pod version: {version}")]
    base, bracket, subscript = field_path.partition("[")
    if bracket:
        if base not in ("metadata.annotations", "metadata.labels"):
            return [errors.invalid(f"{path}.fieldPath", field_path,
                                   f"error converting fieldPath: field label does not support subscript: "
                                   f"{field_path}")]
        key = subscript.rstrip("]").strip("'")
        if base == "metadata.annotations":
            key = key.lower()
        return [errors.invalid(path, key, m) for m in name_rules.is_qualified_name(key)]
    if field_path not in _DOWNWARD_LABELS and field_path != "spec.host":
        return [errors.invalid(f"{path}.fieldPath", field_path,
                               f"error converting fieldPath: field label not supported: {field_path}")]
    if field_path not in allowed:
        return [errors.not_supported(f"{path}.fieldPath", field_path, allowed)]
    return []


def _resource_field_selector(selector: dict, path: str, in_volume: bool = False) -> list[FieldError]:
    if in_volume and not selector.get("containerName"):
        return [errors.required(f"{path}.containerName")]
    resource = selector.get("resource") or ""
    if not resource:
        return [errors.required(f"{path}.resource")]
    if resource not in _RESOURCE_FIELD_PATHS and not resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        return [errors.not_supported(f"{path}.resource", resource, _RESOURCE_FIELD_PATHS)]
    return []


def _env_from(sources: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for i, source in enumerate(sources):
        at = f"{path}[{i}]"
        prefix = source.get("prefix")
        if prefix:
            problems += [errors.invalid(f"{at}.prefix", prefix, m) for m in name_rules.is_env_var_name(prefix)]
        given = 0
        for kind in ("configMapRef", "secretRef"):
            ref = source.get(kind)
            if ref is None:
                continue
            given += 1
            name = ref.get("name") or ""
            if not name:
                problems.append(errors.required(f"{at}.{kind}.name"))
            else:
                problems += [errors.invalid(f"{at}.{kind}.name", name, m)
                             for m in name_rules.name_is_dns_subdomain(name, True)]
        if not given:
            problems.append(errors.invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif given > 1:
            problems.append(errors.invalid(path, "", "may not have more than one field specified at a time"))
    return problems


def _volume_mounts(mounts: list[dict], volumes: dict[str, dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    mount_paths: set[str] = set()
    for i, mount in enumerate(mounts):
        at = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            problems.append(errors.required(f"{at}.name"))
        if name not in volumes:
            problems.append(FieldError("NotFound", f"{at}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            problems.append(errors.required(f"{at}.mountPath"))
        if mount_path in mount_paths:
            problems.append(errors.invalid(f"{at}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
        if mount.get("subPath"):
            problems += _local_descending_path(mount["subPath"], f"{path}.subPath")
    return problems


# ---- resources ---------------------------------------------------------------------------------------

def resource_requirements(resources: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    for name in sorted(limits):
        problems += _container_resource(name, limits[name], f"{path}.limits[{name}]")
    for name in sorted(requests):
        at = f"{path}.requests[{name}]"
        problems += _container_resource(name, requests[name], at)
        if name in limits:
            try:
                order = quantity.compare(str(requests[name]), str(limits[name]))
            except quantity.QuantityError:
                continue
            if order != 0 and not _overcommit_allowed(name):
                problems.append(errors.invalid(f"{path}.requests", str(requests[name]),
                                               f"must be equal to {name} limit of {limits[name]}"))
            elif order > 0:
                problems.append(errors.invalid(f"{path}.requests", str(requests[name]),
                                               f"must be less than or equal to {name} limit of {limits[name]}"))
        elif not _overcommit_allowed(name):
            problems.append(errors.required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    return problems


def _container_resource(name: str, value, path: str) -> list[FieldError]:
    """validateContainerResourceName, then ValidateResourceQuantityValue."""
    problems = [errors.invalid(path, name, m) for m in name_rules.is_qualified_name(name)]
    if not problems:
        if "/" not in name:
            if name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
                problems.append(errors.invalid(path, name, "must be a standard resource type or fully qualified"))
            if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
                problems.append(errors.invalid(path, name, "must be a standard resource for containers"))
        elif not _native_resource(name) and (name.startswith("requests.") or
                                             name_rules.is_qualified_name("requests." + name)):
            problems.append(errors.invalid(path, name, "doesn't follow extended resource name standard"))
    try:
        parsed = quantity.parse(str(value))
    except quantity.QuantityError:
        return problems
    if parsed.value < 0:
        problems.append(errors.invalid(path, str(value), "must be greater than or equal to 0"))
    if not _native_resource(name) and parsed.milli_value % 1000:
        problems.append(errors.invalid(path, str(value), "must be an integer"))
    return problems


def _native_resource(name: str) -> bool:
    """Resources in the kubernetes.io domain, or unqualified ones, are native; others are extended resources."""
    return "/" not in name or "kubernetes.io/" in name


def _overcommit_allowed(name: str) -> bool:
    return "/" not in name and not name.startswith("hugepages-")


# ---- probes ------------------------------------------------------------------------------------------

def _probes(container: dict, path: str) -> list[FieldError]:
    problems = _probe(container.get("livenessProbe"), f"{path}.livenessProbe", must_succeed_once=True)
    problems += _probe(container.get("readinessProbe"), f"{path}.readinessProbe")
    return problems + _probe(container.get("startupProbe"), f"{path}.startupProbe", must_succeed_once=True)


def _init_container_extras(container: dict, path: str) -> list[FieldError]:
    """Init containers run to completion, so probes and hooks are for sidecars (restartPolicy: Always) only."""
    policy = container.get("restartPolicy")
    if policy == "Always":
        return _probes(container, path)
    problems = [] if policy is None else [errors.not_supported(f"{path}.restartPolicy", policy, ["Always"])]
    for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
        if container.get(key) is not None:
            problems.append(errors.forbidden(f"{path}.{key}", "may not be set for init containers without "
                                                              "restartPolicy=Always"))
    return problems


def _probe(probe: dict | None, path: str, must_succeed_once: bool = False) -> list[FieldError]:
    if not isinstance(probe, dict):
        return []
    problems = handler(probe, path)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        value = probe.get(key) or 0
        if value < 0:
            problems.append(errors.invalid(f"{path}.{key}", value, "must be greater than or equal to 0"))
    grace_override = probe.get("terminationGracePeriodSeconds")
    if grace_override is not None and grace_override <= 0:
        problems.append(errors.invalid(f"{path}.terminationGracePeriodSeconds", grace_override,
                                       "must be greater than 0"))
    if must_succeed_once and probe.get("successThreshold", 1) != 1:
        problems.append(errors.invalid(f"{path}.successThreshold", probe["successThreshold"], "must be 1"))
    return problems


def handler(spec: dict, path: str) -> list[FieldError]:
    """One probe or lifecycle handler: exactly one of exec, httpGet, tcpSocket, grpc, sleep."""
    problems: list[FieldError] = []
    given = 0
    for kind in _HANDLERS:
        action = spec.get(kind)
        if action is None:
            continue
        if given:
            problems.append(errors.forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        given += 1
        at = f"{path}.{kind}"
        if kind == "exec" and not action.get("command"):
            problems.append(errors.required(f"{at}.command"))
        elif kind == "httpGet":
            if not action.get("path"):
                problems.append(errors.required(f"{at}.path"))
            problems += port_number_or_name(action.get("port"), f"{at}.port")
            if action.get("scheme") not in ("HTTP", "HTTPS"):
                problems.append(errors.not_supported(f"{at}.scheme", action.get("scheme") or "", ["HTTP", "HTTPS"]))
            for header in action.get("httpHeaders") or ():
                problems += [errors.invalid(f"{at}.httpHeaders", header.get("name") or "", m)
                             for m in name_rules.is_http_header_name(header.get("name") or "")]
        elif kind == "tcpSocket":
            problems += port_number_or_name(action.get("port"), f"{at}.port")
        elif kind == "grpc":
            problems += [errors.invalid(f"{at}.port", action.get("port") or 0, m)
                         for m in name_rules.is_valid_port_num(action.get("port") or 0)]
    if not given:
        problems.append(errors.required(path, "must specify a handler type"))
    return problems


def port_number_or_name(port, path: str) -> list[FieldError]:
    if isinstance(port, str):
        return [errors.invalid(path, port, m) for m in name_rules.is_valid_port_name(port)]
    number = port or 0
    return [errors.invalid(path, number, m) for m in name_rules.is_valid_port_num(number)]


# ---- volumes -----------------------------------------------------------------------------------------

def _volumes(volumes: list[dict], path: str) -> tuple[list[FieldError], dict[str, dict]]:
    problems: list[FieldError] = []
    by_name: dict[str, dict] = {}
    for i, volume in enumerate(volumes):
        at = f"{path}[{i}]"
        found = _volume_source(volume, at)
        name = volume.get("name") or ""
        if not name:
            found.append(errors.required(f"{at}.name"))
        else:
            found += [errors.invalid(f"{at}.name", name, m) for m in name_rules.is_dns1123_label(name)]
        if name in by_name:
            found.append(errors.duplicate(f"{at}.name", name))
        if found:
            problems += found
        else:
            by_name[name] = volume
    return problems, by_name


def _volume_source(volume: dict, path: str) -> list[FieldError]:
    kinds = [k for k in _VOLUME_SOURCES if volume.get(k) is not None]
    if not kinds:
        return [errors.required(path, "must specify a volume type")]
    problems = [errors.forbidden(f"{path}.{k}", "may not specify more than 1 volume type") for k in kinds[1:]]
    kind = kinds[0]
    source, at = volume[kind], f"{path}.{kind}"
    if kind == "configMap":
        problems += _projection(source, "name", at)
    elif kind == "secret":
        problems += _projection(source, "secretName", at)
    elif kind == "persistentVolumeClaim" and not source.get("claimName"):
        problems.append(errors.required(f"{at}.claimName"))
    elif kind == "hostPath":
        host_path = source.get("path") or ""
        if not host_path:
            problems.append(errors.required(f"{at}.path"))
        elif ".." in host_path.split("/"):
            problems.append(errors.invalid(f"{at}.path", host_path, "must not contain '..'"))
        if source.get("type") not in _HOST_PATH_TYPES:
            problems.append(errors.not_supported(f"{at}.type", source.get("type"), _HOST_PATH_TYPES))
    elif kind == "nfs":
        if not source.get("server"):
            problems.append(errors.required(f"{at}.server"))
        nfs_path = source.get("path") or ""
        if not nfs_path:
            problems.append(errors.required(f"{at}.path"))
        elif not nfs_path.startswith("/"):
            problems.append(errors.invalid(f"{at}.path", nfs_path, "must be an absolute path"))
    elif kind == "emptyDir":
        limit = source.get("sizeLimit")
        if limit is not None and quantity.parse(str(limit)).value < 0:
            problems.append(errors.forbidden(f"{at}.sizeLimit", "SizeLimit field must be a valid resource quantity"))
    elif kind == "downwardAPI":
        problems += _file_mode(source.get("defaultMode"), f"{at}.defaultMode")
        for j, item in enumerate(source.get("items") or ()):
            problems += _downward_item(item, f"{at}.items[{j}]")
    elif kind == "csi" and not source.get("driver"):
        problems.append(errors.required(f"{at}.driver"))
    return problems


def _projection(source: dict, name_key: str, path: str) -> list[FieldError]:
    """configMap and secret volumes: the object's name, the file mode and the key-to-path items."""
    problems: list[FieldError] = []
    if not source.get(name_key):
        problems.append(errors.required(f"{path}.{name_key}"))
    problems += _file_mode(source.get("defaultMode"), f"{path}.defaultMode")
    for j, item in enumerate(source.get("items") or ()):
        at = f"{path}.items[{j}]"
        if not item.get("key"):
            problems.append(errors.required(f"{at}.key"))
        if not item.get("path"):
            problems.append(errors.required(f"{at}.path"))
        problems += _local_non_reserved_path(item.get("path") or "", f"{at}.path")
        problems += _file_mode(item.get("mode"), f"{at}.mode")
    return problems


def _downward_item(item: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    if not item.get("path"):
        problems.append(errors.required(f"{path}.path"))
    problems += _local_non_reserved_path(item.get("path") or "", f"{path}.path")
    problems += _file_mode(item.get("mode"), f"{path}.mode")
    if item.get("fieldRef") is not None:
        problems += _field_selector(item["fieldRef"], _VOLUME_FIELD_PATHS, f"{path}.fieldRef")
    if item.get("resourceFieldRef") is not None:
        problems += _resource_field_selector(item["resourceFieldRef"], f"{path}.resourceFieldRef", in_volume=True)
    return problems


def _file_mode(mode, path: str) -> list[FieldError]:
    if mode is not None and not 0 <= mode <= 0o777:
        return [errors.invalid(path, mode, FILE_MODE_ERROR)]
    return []


def _local_descending_path(target: str, path: str) -> list[FieldError]:
    if posixpath.isabs(target):
        return [errors.invalid(path, target, "must be a relative path")]
    if ".." in target.split("/"):
        return [errors.invalid(path, target, "must not contain '..'")]
    return []


def _local_non_reserved_path(target: str, path: str) -> list[FieldError]:
    problems = _local_descending_path(target, path)
    if len(target) >= 2 and target.startswith(".."):
        problems.append(errors.invalid(path, target, "must not start with '..'"))
    return problems


# ---- scheduling ----------------------------------------------------------------------------------------

def tolerations(items: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for i, toleration in enumerate(items):
        at = f"{path}[{i}]"
        key, operator = toleration.get("key") or "", toleration.get("operator") or ""
        effect, value = toleration.get("effect") or "", toleration.get("value") or ""
        if key:
            problems += objectmeta.label_key(key, f"{at}.key")
        if not key and operator != "Exists":
            problems.append(errors.invalid(f"{at}.operator", operator, 'operator must be Exists when `key` is '
                                                                       'empty, which means "match all values and '
                                                                       'all keys"'))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            problems.append(errors.invalid(f"{at}.effect", effect,
                                           "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            messages = name_rules.is_valid_label_value(value)
            if messages:
                problems.append(errors.invalid(f"{at}.operator", value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                problems.append(errors.invalid(f"{at}.operator", _toleration_literal(toleration),
                                               "value must be empty when `operator` is 'Exists'"))
        else:
            problems.append(errors.not_supported(f"{at}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in _TAINT_EFFECTS:
            problems.append(errors.not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
    return problems


def _toleration_literal(toleration: dict) -> errors.GoLiteral:
    seconds = toleration.get("tolerationSeconds")
    return gosyntax.struct("core.Toleration", [
        ("Key", gosyntax.quote(toleration.get("key") or "")),
        ("Operator", gosyntax.quote(toleration.get("operator") or "")),
        ("Value", gosyntax.quote(toleration.get("value") or "")),
        ("Effect", gosyntax.quote(toleration.get("effect") or "")),
        ("TolerationSeconds", gosyntax.pointer("int64", seconds is not None))])


def _topology_spread(constraints: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for i, constraint in enumerate(constraints):
        at = f"{path}[{i}]"
        skew = constraint.get("maxSkew") or 0
        if skew <= 0:
            problems.append(errors.invalid(f"{at}.maxSkew", skew, "must be greater than zero"))
        if not constraint.get("topologyKey"):
            problems.append(errors.required(f"{at}.topologyKey", "can not be empty"))
        when = constraint.get("whenUnsatisfiable") or ""
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            problems.append(errors.not_supported(f"{at}.whenUnsatisfiable", when,
                                                 ["DoNotSchedule", "ScheduleAnyway"]))
    return problems


# ---- updates -------------------------------------------------------------------------------------------

def pod_update(new: dict, old: dict) -> list[FieldError]:
    """ValidatePodUpdate: a pod's spec is immutable but for images, deadlines and added tolerations."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    problems = pod_spec(spec, "spec")
    containers, old_containers = spec.get("containers") or [], old_spec.get("containers") or []
    if len(containers) != len(old_containers):
        return problems + [errors.forbidden("spec.containers", "pod updates may not add or remove containers")]
    for i, container in enumerate(containers):
        image = container.get("image") or ""
        if image and image.strip() != image:
            problems.append(errors.invalid(f"spec.containers[{i}].image", image,
                                           "must not have leading or trailing whitespace"))
    deadline, old_deadline = spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        if not 0 <= deadline <= MAX_INT32:
            return problems + [errors.invalid("spec.activeDeadlineSeconds", deadline,
                                              f"must be between 0 and {MAX_INT32}, inclusive")]
        if old_deadline is not None and old_deadline < deadline:
            return problems + [errors.invalid("spec.activeDeadlineSeconds", deadline,
                                              "must be less than or equal to previous value")]
    elif old_deadline is not None:
        problems.append(errors.invalid("spec.activeDeadlineSeconds", None,
                                       "must not update from a positive integer to nil value"))
    problems += _only_added_tolerations(spec.get("tolerations") or [], old_spec.get("tolerations") or [])
    if spec == old_spec:
        return problems
    munged = dict(spec)
    for key in ("containers", "initContainers"):
        olds = old_spec.get(key) or []
        if spec.get(key) and len(spec[key]) == len(olds):
            munged[key] = [_copy_field(dict(c), o, "image") for c, o in zip(spec[key], olds)]
    _copy_field(munged, old_spec, "activeDeadlineSeconds")
    _copy_field(munged, old_spec, "tolerations")
    if (old_spec.get("terminationGracePeriodSeconds") or 0) < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_spec["terminationGracePeriodSeconds"]
    if munged != old_spec:
        diff = gosyntax.struct_diff("core.PodSpec", old_spec, munged)
        problems.append(errors.forbidden("spec", f"pod updates may not change fields other than "
                                                 f"{UPDATABLE_POD_FIELDS}\n{diff}"))
    return problems


def _copy_field(target: dict, source: dict, key: str) -> dict:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)
    return target


def _only_added_tolerations(new: list[dict], old: list[dict]) -> list[FieldError]:
    """Existing tolerations must stay, though their tolerationSeconds may change."""
    def same(a: dict, b: dict) -> bool:
        return {**a, "tolerationSeconds": None} == {**b, "tolerationSeconds": None}

    if all(any(same(existing, t) for t in new) for existing in old):
        return []
    return [errors.forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                 "tolerationSeconds")]
