"""Whether the kubelet can build a container's configuration (``CreateContainerConfigError`` when not).

Before it creates a container the kubelet resolves its environment: every
``envFrom`` source and every ``valueFrom`` reference to a ConfigMap or
Secret must exist (unless optional), with the key named. The messages are the
kubelet's, as ``kubectl describe`` shows them (``Error: configmap "x" not
found``).
"""

from __future__ import annotations

from ...store import Store


def config_error(store: Store, pod: dict, container: dict) -> str | None:
    namespace = pod["metadata"].get("namespace", "")
    for source in container.get("envFrom") or ():
        for kind, bucket, singular in (("configMapRef", "configmaps", "configmap"),
                                       ("secretRef", "secrets", "secret")):
            ref = source.get(kind)
            if ref is not None and not ref.get("optional") and store.get(bucket, namespace, ref.get("name", "")) is None:
                return f'{singular} "{ref.get("name", "")}" not found'
    for entry in container.get("env") or ():
        value_from = entry.get("valueFrom") or {}
        for kind, bucket, singular, title in (("configMapKeyRef", "configmaps", "configmap", "ConfigMap"),
                                              ("secretKeyRef", "secrets", "secret", "Secret")):
            ref = value_from.get(kind)
            if ref is None or ref.get("optional"):
                continue
            name, key = ref.get("name", ""), ref.get("key", "")
            obj = store.get(bucket, namespace, name)
            if obj is None:
                return f'{singular} "{name}" not found'
            if key not in (obj.get("data") or {}) and key not in (obj.get("binaryData") or {}):
                return f"couldn't find key {key} in {title} {namespace}/{name}"
    return None
