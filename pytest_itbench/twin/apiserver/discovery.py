"""Discovery documents: legacy (/api, /apis, per group-version) and aggregated (apidiscovery v2, v2beta1)."""

from __future__ import annotations

from .resources import Catalog, Resource

SERVER_ADDRESS = [{"clientCIDR": "0.0.0.0/0", "serverAddress": "172.18.0.2:6443"}]


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": SERVER_ADDRESS}


def _group(name: str, versions: list[str]) -> dict:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(catalog: Catalog) -> dict:
    groups = [_group(g, vs) for g, vs in catalog.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(catalog: Catalog, group: str) -> dict | None:
    versions = catalog.group_versions().get(group)
    if not versions:
        return None
    return dict(_group(group, versions), kind="APIGroup", apiVersion="v1")


def _resource_entry(res: Resource) -> dict:
    entry = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced, "kind": res.kind,
             "verbs": list(res.verbs)}
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    if not res.virtual:
        entry["storageVersionHash"] = res.storage_version_hash()
    return entry


def api_resource_list(catalog: Catalog, group: str, version: str) -> dict | None:
    resources = catalog.in_group_version(group, version)
    if not resources:
        return None
    entries = []
    for res in resources:
        entries.append(_resource_entry(res))
        for sub in res.subresources:
            entry = {"name": f"{res.plural}/{sub.name}", "singularName": "", "namespaced": res.namespaced,
                     "kind": sub.kind, "verbs": list(sub.verbs)}
            if sub.group is not None:
                entry["group"] = sub.group
                entry["version"] = sub.version
            entries.append(entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": entries}


def aggregated(catalog: Catalog, legacy_core: bool, version: str) -> dict:
    """An APIGroupDiscoveryList: ``/api`` (core only) or ``/apis`` (every named group)."""
    items = []
    for group, versions in catalog.group_versions().items():
        if (group == "") != legacy_core:
            continue
        gv_entries = []
        for v in versions:
            resources = []
            for res in catalog.in_group_version(group, v):
                entry = {
                    "resource": res.plural,
                    "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
                    "scope": "Namespaced" if res.namespaced else "Cluster",
                    "singularResource": res.singular,
                    "verbs": list(res.verbs),
                }
                if res.short_names:
                    entry["shortNames"] = list(res.short_names)
                if res.categories:
                    entry["categories"] = list(res.categories)
                subs = []
                for sub in res.subresources:
                    subs.append({
                        "subresource": sub.name,
                        "responseKind": {"group": res.group if sub.group is None else sub.group,
                                         "version": res.version if sub.version is None else sub.version,
                                         "kind": sub.kind},
                        "verbs": list(sub.verbs),
                    })
                if subs:
                    entry["subresources"] = subs
                resources.append(entry)
            gv_entries.append({"version": v, "resources": resources, "freshness": "Current"})
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": gv_entries})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}", "metadata": {},
            "items": items}


def aggregated_content_type(version: str) -> str:
    return f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
