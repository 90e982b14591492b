"""The node groups, read from the cluster: cluster-autoscaler's kwok cloud provider configuration.

Two ConfigMaps in ``kube-system``, in the format of the kwok provider (cluster-autoscaler's
``cloudprovider/kwok``), so that a config written for it works here and the other way round:

* ``kwok-provider-config``, key ``config``: YAML with ``readNodesFrom: configmap``, how template nodes are
  grouped (``nodegroups.fromNodeLabelKey`` or ``nodegroups.fromNodeAnnotation``), ``nodes.skipTaint`` and the
  name of the templates ConfigMap (``configmap.name``);
* the templates ConfigMap (``kwok-provider-templates``), key ``templates``: a ``v1`` ``List`` of Nodes (or
  YAML documents, one Node each). Each template node is one node group, named by its grouping label or
  annotation; its annotations ``cluster-autoscaler.kwok.nodegroup/min-count``, ``max-count`` and
  ``desired-count`` give the group's sizes (defaults 0, 200, min-count).

What the twin adds: a template's ``node.kubernetes.io/instance-type`` label names an instance type of the
twin's catalog (``twin/instance_types.py``), which gives the nodes their capacity and allocatable; a template
without the label must state ``status.capacity`` (cpu and memory) itself. Where kwok exits on a bad value,
the twin reports it (``Config.errors``, naming the group and the field) and leaves that group out, so a
fault or an agent that breaks the config sees a clear error rather than a dead autoscaler. Group names are
the label value as it is (kwok appends a start timestamp), so node names and the status are stable.

``readNodesFrom: cluster`` (live nodes as templates) is not supported: the twin says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import yaml

from ... import instance_types, quantity

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: the loop reads this often

NAMESPACE = "kube-system"
CONFIG_NAME = "kwok-provider-config"
CONFIG_KEY = "config"
TEMPLATES_KEY = "templates"

GROUP_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/name"
MIN_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/min-count"
MAX_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/max-count"
DESIRED_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/desired-count"
SIZE_ANNOTATIONS = (MIN_ANNOTATION, MAX_ANNOTATION, DESIRED_ANNOTATION)
DEFAULT_MIN, DEFAULT_MAX = 0, 200  # the kwok provider's defaults

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
BETA_INSTANCE_TYPE_LABEL = "beta.kubernetes.io/instance-type"
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"

# kwok taints its nodes so that production pods do not land on fake nodes by accident; ``nodes.skipTaint``
# turns it off. The twin keeps that default, so a config written for kwok behaves the same here.
KWOK_TAINT = {"key": "kwok-provider", "value": "true", "effect": "NoSchedule"}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# Group names prefix node names, which must be DNS subdomains.
_GROUP_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_DROPPED_ANNOTATIONS = (*SIZE_ANNOTATIONS, "kubectl.kubernetes.io/last-applied-configuration")


@dataclass(frozen=True)
class NodeGroup:
    """One node group: its sizes and what its nodes look like."""

    name: str
    template: str  # the template node's name, for messages
    instance_type: str | None  # None for a template that states its capacity itself
    capacity: dict
    allocatable: dict
    labels: dict  # the template's labels (its hostname dropped), the grouping label among them
    annotations: dict
    taints: tuple
    min_size: int
    max_size: int
    desired: int


@dataclass(frozen=True)
class ConfigError:
    configmap: str  # the ConfigMap (in kube-system) the problem is in
    message: str


@dataclass
class Config:
    groups: list[NodeGroup] = field(default_factory=list)
    errors: list[ConfigError] = field(default_factory=list)
    sources: dict[str, dict] = field(default_factory=dict)  # the ConfigMaps read, by name
    read: tuple[str, ...] = (CONFIG_NAME,)  # the ConfigMaps it depends on, found or not

    def versions(self, get: "Getter") -> tuple:
        """What the configuration was read from: unchanged versions mean an unchanged configuration."""
        out = []
        for name in self.read:
            current = get(NAMESPACE, name)
            out.append((name, None if current is None else current["metadata"].get("resourceVersion")))
        return tuple(out)


Getter = Callable[[str, str], "dict | None"]  # (namespace, name) -> the ConfigMap, or None


def load(get: Getter) -> Config | None:
    """The node groups; None when there is no ``kwok-provider-config`` (the autoscaler has nothing to do)."""
    provider = get(NAMESPACE, CONFIG_NAME)
    if provider is None:
        return None
    config = Config(sources={CONFIG_NAME: provider})
    problems: list[str] = []
    settings = _provider_settings(provider, problems)
    config.errors += [ConfigError(CONFIG_NAME, p) for p in problems]
    if settings is None:
        return config
    templates_name, group_label, group_annotation, skip_taint = settings
    config.read = (CONFIG_NAME, templates_name)
    templates = get(NAMESPACE, templates_name)
    if templates is None:
        config.errors.append(ConfigError(CONFIG_NAME, f"failed to get configmap '{templates_name}': configmaps "
                                                      f"\"{templates_name}\" not found"))
        return config
    config.sources[templates_name] = templates
    problems = []
    config.groups = _groups(templates, templates_name, group_label, group_annotation, skip_taint, problems)
    config.errors += [ConfigError(templates_name, p) for p in problems]
    return config


def _groups(templates: dict, templates_name: str, group_label: str, group_annotation: str, skip_taint: bool,
            errors: list[str]) -> list[NodeGroup]:
    text = (templates.get("data") or {}).get(TEMPLATES_KEY) or ""
    if not text.strip():
        errors.append(f"configmap '{templates_name}' doesn't have '{TEMPLATES_KEY}' key")
        return []
    groups = []
    seen: dict[str, str] = {}
    for node in _template_nodes(text, templates_name, errors):
        meta = node.get("metadata") or {}
        labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
        name = annotations.get(GROUP_ANNOTATION) or (
            labels.get(group_label) if group_label else annotations.get(group_annotation))
        if not name:
            continue  # not part of any node group, as kwok skips it
        template = str(meta.get("name") or "<unnamed>")
        if name in seen:
            errors.append(f"node group {name!r}: template nodes {seen[name]!r} and {template!r} both belong to it; "
                          f"the first is used")
            continue
        seen[name] = template
        group = _node_group(str(name), template, node, skip_taint, errors)
        if group is not None:
            groups.append(group)
    return sorted(groups, key=lambda g: g.name)


def _provider_settings(provider: dict, errors: list[str]) -> tuple[str, str, str, bool] | None:
    """(templates ConfigMap, grouping label, grouping annotation, skipTaint) from the provider config."""
    text = (provider.get("data") or {}).get(CONFIG_KEY) or ""
    try:
        raw = yaml.load(text, Loader=_Loader) or {}
    except yaml.YAMLError as exc:
        errors.append(f"failed to decode kwok config: {_one_line(exc)}")
        return None
    if not isinstance(raw, dict):
        errors.append("failed to decode kwok config: not a YAML mapping")
        return None
    source = raw.get("readNodesFrom")
    if source == "cluster":
        errors.append("'readNodesFrom: cluster' (live nodes as templates) is not supported by the twin; "
                      "use 'readNodesFrom: configmap'")
        return None
    if source != "configmap":
        errors.append(f"'readNodesFrom' in kwok config is invalid (expected: 'configmap' or 'cluster'): {source}")
        return None
    configmap = raw.get("configmap")
    templates_name = configmap.get("name") if isinstance(configmap, dict) else None
    if not isinstance(templates_name, str) or not templates_name.strip():
        errors.append("please specify 'configmap.name' in kwok config (currently empty or undefined)")
        return None
    groups = raw.get("nodegroups")
    if not isinstance(groups, dict):
        errors.append("please specify a value for 'nodegroups' in kwok config (currently empty or undefined)")
        return None
    label = str(groups.get("fromNodeLabelKey") or "").strip()
    annotation = str(groups.get("fromNodeAnnotation") or "").strip()
    if bool(label) == bool(annotation):
        errors.append("please specify either 'nodegroups.fromNodeLabelKey' or 'nodegroups.fromNodeAnnotation' in "
                      "kwok provider config" + (" (you can't use both)" if label else
                                                " (currently empty or undefined)"))
        return None
    nodes = raw.get("nodes") if isinstance(raw.get("nodes"), dict) else {}
    return templates_name.strip(), label, annotation, nodes.get("skipTaint") is True


def _template_nodes(text: str, configmap: str, errors: list[str]) -> list[dict]:
    try:
        docs = [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as exc:
        errors.append(f"configmap '{configmap}': key '{TEMPLATES_KEY}': {_one_line(exc)}")
        return []
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == "List":
        docs = docs[0].get("items") or []
    nodes = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Node"]
    if len(nodes) != len(docs):
        errors.append(f"configmap '{configmap}': invalid templates file (found something other than nodes in "
                      f"the file)")
    return nodes


def _node_group(name: str, template: str, node: dict, skip_taint: bool, errors: list[str]) -> NodeGroup | None:
    where = f"node group {name!r} (template node {template!r})"
    problems: list[str] = []
    if not _GROUP_NAME.match(name) or len(name) > 200:
        problems.append("the group name cannot prefix node names: it must be lowercase alphanumerics, '-' or '.'")
    meta = node.get("metadata") or {}
    labels = {k: str(v) for k, v in (meta.get("labels") or {}).items() if k != HOSTNAME_LABEL}
    annotations = {k: str(v) for k, v in (meta.get("annotations") or {}).items()}
    sizes = {}
    for key, default in ((MIN_ANNOTATION, DEFAULT_MIN), (MAX_ANNOTATION, DEFAULT_MAX), (DESIRED_ANNOTATION, None)):
        raw = annotations.get(key)
        if raw is None or raw == "":
            sizes[key] = default
            continue
        try:
            sizes[key] = int(raw)
        except ValueError:
            sizes[key] = default
            problems.append(f"metadata.annotations[{key}]: invalid value {raw!r}: must be a whole number")
            continue
        if sizes[key] < 0:
            problems.append(f"metadata.annotations[{key}]: invalid value {raw!r}: must not be negative")
    low, high = sizes[MIN_ANNOTATION], sizes[MAX_ANNOTATION]
    desired = sizes[DESIRED_ANNOTATION] if sizes[DESIRED_ANNOTATION] is not None else low
    if high < low:
        problems.append(f"metadata.annotations[{MAX_ANNOTATION}]: max-count {high} is less than min-count {low}")
    elif not low <= desired <= high:
        problems.append(f"metadata.annotations[{DESIRED_ANNOTATION}]: desired-count {desired} is not between "
                        f"min-count {low} and max-count {high}")
    instance_type, capacity, allocatable = _machine(node, labels, problems)
    taints = _taints(node, problems)
    if not skip_taint and not any(t.get("key") == KWOK_TAINT["key"] for t in taints):
        taints.append(dict(KWOK_TAINT))
    if problems:
        errors.extend(f"{where}: {problem}" for problem in problems)
        return None
    if instance_type is not None:
        labels[INSTANCE_TYPE_LABEL] = labels[BETA_INSTANCE_TYPE_LABEL] = instance_type
    kept = {k: v for k, v in annotations.items() if k not in _DROPPED_ANNOTATIONS}
    kept[GROUP_ANNOTATION] = name
    return NodeGroup(name, template, instance_type, capacity, allocatable, labels, kept, tuple(taints), low, high,
                     desired)


def _machine(node: dict, labels: dict, problems: list[str]) -> tuple[str | None, dict, dict]:
    """(instance type, capacity, allocatable) of a template's nodes."""
    name = labels.get(INSTANCE_TYPE_LABEL)
    if name:
        known = instance_types.lookup(name)
        if known is None:
            problems.append(f"metadata.labels[{INSTANCE_TYPE_LABEL}]: unknown instance type {name!r}; the twin knows "
                            f"{', '.join(sorted(instance_types.CATALOG))}")
            return None, {}, {}
        return name, known.capacity(), known.allocatable()
    status = node.get("status") or {}
    capacity = {k: str(v) for k, v in (status.get("capacity") or {}).items()}
    if not capacity.get("cpu") or not capacity.get("memory"):
        problems.append(f"metadata.labels[{INSTANCE_TYPE_LABEL}]: missing; name an instance type of the twin's "
                        f"catalog, or give status.capacity with cpu and memory")
        return None, {}, {}
    allocatable = dict(capacity, **{k: str(v) for k, v in (status.get("allocatable") or {}).items()})
    for source, values in (("capacity", capacity), ("allocatable", allocatable)):
        for resource, value in values.items():
            try:
                quantity.parse(value)
            except Exception:  # the quantity parser's own error types vary; any of them means a bad value
                problems.append(f"status.{source}[{resource}]: invalid quantity {value!r}")
    return None, capacity, allocatable


def _taints(node: dict, problems: list[str]) -> list[dict]:
    out = []
    for i, taint in enumerate((node.get("spec") or {}).get("taints") or ()):
        if not isinstance(taint, dict) or not taint.get("key") or taint.get("effect") not in TAINT_EFFECTS:
            problems.append(f"spec.taints[{i}]: a taint needs a key and an effect of {', '.join(TAINT_EFFECTS)}")
            continue
        out.append({k: str(taint[k]) for k in ("key", "value", "effect") if taint.get(k) is not None})
    return out


def configmaps(groups, group_label: str = "eks.amazonaws.com/nodegroup", skip_taint: bool = True,
               templates_name: str = "kwok-provider-templates") -> tuple[dict, dict]:
    """The two ConfigMaps (bodies to create in ``kube-system``) that declare ``groups``.

    Each group is a mapping with ``name``, ``instance_type``, ``min_size``, ``max_size`` and optionally
    ``desired``, ``labels`` (a dict) and ``taints`` (a list of {key, value, effect}). A pure function, for
    whoever writes the configuration through the API (a scenario's setup, a fault).
    """
    provider = {"apiVersion": "v1alpha1", "readNodesFrom": "configmap",
                "nodegroups": {"fromNodeLabelKey": group_label}, "nodes": {"skipTaint": skip_taint},
                "configmap": {"name": templates_name}}
    items = []
    for group in groups:
        annotations = {MIN_ANNOTATION: str(group["min_size"]), MAX_ANNOTATION: str(group["max_size"])}
        if group.get("desired") is not None:
            annotations[DESIRED_ANNOTATION] = str(group["desired"])
        labels = {**dict(group.get("labels") or {}), group_label: group["name"],
                  INSTANCE_TYPE_LABEL: group["instance_type"]}
        node: dict = {"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": f"{group['name']}-template", "labels": labels, "annotations": annotations}}
        if group.get("taints"):
            node["spec"] = {"taints": [dict(t) for t in group["taints"]]}
        items.append(node)
    templates = {"apiVersion": "v1", "kind": "List", "items": items}
    return ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIG_NAME, "namespace": NAMESPACE},
             "data": {CONFIG_KEY: yaml.safe_dump(provider, sort_keys=False)}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": templates_name, "namespace": NAMESPACE},
             "data": {TEMPLATES_KEY: yaml.safe_dump(templates, sort_keys=False)}})


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


__all__ = ["Config", "ConfigError", "NodeGroup", "configmaps", "load", "NAMESPACE", "CONFIG_NAME", "GROUP_ANNOTATION", "INSTANCE_TYPE_LABEL",
           "BETA_INSTANCE_TYPE_LABEL", "REGION_LABEL", "ZONE_LABEL", "KWOK_TAINT"]
