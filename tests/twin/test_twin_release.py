"""A stopped twin leaves nothing behind in the process: after the last reference goes, its objects are freed
(a worker runs trial after trial; before, each stopped twin stayed in memory through process-wide caches)."""

from __future__ import annotations

import gc
import weakref

from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.twin import Twin


def test_a_stopped_twin_is_freed_once_unreferenced(tmp_path):
    twin = Twin(seed=3, nodes=1).start()
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=twin.write_kubeconfig(str(tmp_path / "admin.kubeconfig")),
                                client_configuration=configuration)
    with k8s.ApiClient(configuration) as api:  # requests through the HTTP layer fill its caches
        k8s.CoreV1Api(api).create_namespace({"metadata": {"name": "shop"}})
        assert [n.metadata.name for n in k8s.CoreV1Api(api).list_node().items] == ["itbench-worker"]
    twin.warp(30)
    twin.stop()
    released = weakref.ref(twin)
    store = weakref.ref(twin.store)
    del twin
    gc.collect()
    assert released() is None and store() is None
