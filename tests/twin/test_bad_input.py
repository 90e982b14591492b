"""Bad input gets a proper 4xx Status, and the server goes on serving with its store intact."""

import json
import threading

import pytest


def _status(data: bytes) -> dict:
    body = json.loads(data)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    return body


CM_PATH = "/api/v1/namespaces/default/configmaps"


@pytest.mark.parametrize("body,content_type,code,needle", [
    (b"{not json", "application/json", 400, "json parse error"),
    (b"", "application/json", 400, "request body is empty"),
    (b"[1, 2]", "application/json", 400, "cannot unmarshal array"),
    (b"kind: [unclosed", "application/yaml", 400, "error converting YAML to JSON"),
    (b"\x0ak8s\x00\x0a\x04\x0a\x02v1", "application/vnd.kubernetes.protobuf", 415, "send JSON"),
    (b"<xml/>", "application/xml", 415, "unknown format"),
])
def test_malformed_bodies(raw, body, content_type, code, needle):
    status, _, data = raw.request("POST", CM_PATH, body, {"Content-Type": content_type})
    assert status == code
    assert needle in _status(data)["message"]


def test_yaml_bodies_are_accepted(raw):
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n"
    status, _, data = raw.request("POST", CM_PATH, body, {"Content-Type": "application/yaml"})
    assert status == 201 and json.loads(data)["data"] == {"a": "b"}


def test_bodies_over_three_mebibytes_are_refused(raw, twin):
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"x": "y" * (3 * 1024 * 1024)}}
    status, _, data = raw.request("POST", CM_PATH, json.dumps(big), {"Content-Type": "application/json"})
    assert status == 413 and _status(data)["reason"] == "RequestEntityTooLarge"
    assert twin.store.get("configmaps", "default", "big") is None


def test_unknown_resources_and_methods(raw):
    status, _, data = raw.request("GET", "/api/v1/namespaces/default/widgets")
    assert status == 404 and _status(data)["message"] == "the server could not find the requested resource"
    status, _, data = raw.request("GET", "/apis/nope.example.com/v1/things")
    assert status == 404
    status, _, data = raw.request("PUT", CM_PATH, {"metadata": {"name": "x"}})
    assert status == 405 and _status(data)["reason"] == "MethodNotAllowed"
    status, _, data = raw.request("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt/bogus")
    assert status == 404


def test_credentials(raw):
    status, _, data = raw.request("GET", CM_PATH, token="not-a-token")
    assert status == 401 and _status(data)["reason"] == "Unauthorized"
    status, _, data = raw.request("GET", "/version", headers={"Authorization": ""})
    assert status == 200


def test_protobuf_only_accept_is_not_acceptable(raw):
    status, _, data = raw.request("GET", CM_PATH, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert status == 406 and _status(data)["reason"] == "NotAcceptable"


def test_invalid_query_parameters(raw):
    for query, needle in (("dryRun=Sometimes", "Invalid dry run value"),
                          ("fieldValidation=Loose", "fieldValidation: Unsupported value")):
        status, _, data = raw.request("POST", f"{CM_PATH}?{query}",
                                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "q"}})
        assert status == 400 and needle in _status(data)["message"]


def test_patches_that_do_not_apply(raw):
    raw.request("POST", CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}})
    status, _, data = raw.request("PATCH", f"{CM_PATH}/p", b"{broken", {"Content-Type": "application/merge-patch+json"})
    assert status == 400
    status, _, data = raw.request("PATCH", f"{CM_PATH}/p", b'[{"op": "remove", "path": "/data/nope"}]',
                                  {"Content-Type": "application/json-patch+json"})
    assert status in (400, 422)
    status, _, data = raw.request("PATCH", f"{CM_PATH}/p", b"{}", {"Content-Type": "text/plain"})
    assert status == 415


def test_the_server_survives_a_burst_of_concurrent_writers_and_bad_requests(raw, twin):
    errors = []

    def writer(n):
        for i in range(15):
            status, _, _ = raw.request("POST", CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                                         "metadata": {"name": f"w{n}-{i}"}})
            if status != 201:
                errors.append(status)
            raw.request("POST", CM_PATH, b"{junk", {"Content-Type": "application/json"})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    names = {o["metadata"]["name"] for o in twin.store.list("configmaps", "default")[0]}
    assert {f"w{n}-{i}" for n in range(4) for i in range(15)} <= names
    versions = [int(o["metadata"]["resourceVersion"]) for o in twin.store.list("configmaps", "default")[0]]
    assert len(versions) == len(set(versions))
