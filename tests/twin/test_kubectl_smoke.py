"""First contact: real kubectl reads and writes the twin."""


def test_version_reports_a_v1_31_server(kubectl):
    out = kubectl("version", "-o", "json")
    import json
    server = json.loads(out)["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "31")


def test_configmap_round_trip(kubectl):
    kubectl("create", "configmap", "settings", "--from-literal=mode=fast")
    got = kubectl.run("get", "configmap", "settings", "-o", "json").json()
    assert got["data"] == {"mode": "fast"}
    missing = kubectl.fails("get", "configmap", "nope")
    assert 'Error from server (NotFound): configmaps "nope" not found' in missing.stderr
    kubectl("delete", "configmap", "settings")
    assert "NotFound" in kubectl.fails("get", "configmap", "settings").stderr


def test_namespaces_get_their_default_service_account_and_root_ca(kubectl):
    kubectl("create", "namespace", "shop")
    assert kubectl("get", "serviceaccount", "default", "-n", "shop", "-o", "name").strip() == "serviceaccount/default"
    ca = kubectl.run("get", "configmap", "kube-root-ca.crt", "-n", "shop", "-o", "json").json()
    assert ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    kubectl("delete", "namespace", "shop")
    assert "NotFound" in kubectl.fails("get", "namespace", "shop").stderr
