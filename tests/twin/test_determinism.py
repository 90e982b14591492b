"""One seeded generator per environment: the same seed and the same actions give the same cluster."""

from pytest_itbench.twin import Twin


def _act(twin: Twin) -> dict:
    api, ctx = twin.api, twin.admin_ctx
    ns = api.catalog.lookup("", "v1", "namespaces")
    api.create(ns, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}, ctx)
    svc = api.catalog.lookup("", "v1", "services")
    api.create(svc, "shop", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart"},
                             "spec": {"type": "NodePort", "selector": {"app": "cart"}, "ports": [{"port": 7070}]}}, ctx)
    pods = api.catalog.lookup("", "v1", "pods")
    api.create(pods, "shop", {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "cart-"},
                              "spec": {"containers": [{"name": "cart", "image": "cart:1"}]}}, ctx)
    twin.warp(30)
    state = {}
    for bucket in sorted(twin.store.buckets()):
        for obj in twin.store.list(bucket)[0]:
            meta = obj["metadata"]
            state[(bucket, meta.get("namespace", ""), meta["name"])] = obj
    return state


def test_same_seed_and_actions_give_the_same_objects():
    with Twin(seed=11, nodes=2, start_time=1_800_000_000) as a, Twin(seed=11, nodes=2, start_time=1_800_000_000) as b:
        state_a, state_b = _act(a), _act(b)
    assert state_a == state_b
    pod = next(o for (bucket, ns, _), o in state_a.items() if bucket == "pods" and ns == "shop")
    assert pod["metadata"]["name"].startswith("cart-")


def test_another_seed_gives_other_identities():
    with Twin(seed=1, start_time=1_800_000_000) as a, Twin(seed=2, start_time=1_800_000_000) as b:
        state_a, state_b = _act(a), _act(b)
    assert state_a.keys() != state_b.keys() or state_a != state_b
    uid = lambda s: s[("namespaces", "", "shop")]["metadata"]["uid"]  # noqa: E731
    assert uid(state_a) != uid(state_b)


def test_a_whole_application_settles_the_same_way_twice():
    import os

    import yaml
    with open(os.path.join(os.path.dirname(__file__), "manifests", "shop.yaml")) as fh:
        docs = [d for d in yaml.safe_load_all(fh) if d]

    def run() -> dict:
        with Twin(seed=5, nodes=3, start_time=1_700_000_000) as twin:
            for doc in docs:
                res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
                twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
            twin.warp(300)
            return {(bucket, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
                    for bucket in twin.store.buckets() for o in twin.store.list(bucket)[0]}

    first, second = run(), run()
    assert first.keys() == second.keys()
    differing = [key for key in first if first[key] != second[key]]
    assert differing == []
    assert sum(1 for (bucket, ns, _) in first if bucket == "pods" and ns == "shop") == 25
