"""The API server's audit log: an audit.k8s.io/v1 Event per write, with kubectl's own requests."""

from __future__ import annotations

import yaml

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
"""


def test_every_write_is_an_event_with_user_verb_object_and_status(twin, kubectl, kubectl_as):
    kubectl("apply", "-f", "-", input=DEPLOYMENT)
    kubectl("get", "deployments")  # reads are not recorded
    kubectl("scale", "deployment/web", "--replicas=0")
    kubectl("delete", "deployment", "web", "--wait=false")
    kubectl.fails("delete", "configmap", "nope")
    stranger = "system:serviceaccount:default:stranger"
    kubectl_as(stranger).fails("delete", "secret", "anything")

    events = twin.server.audit.events()
    assert {e["kind"] for e in events} == {"Event"} and {e["apiVersion"] for e in events} == {"audit.k8s.io/v1"}
    assert {e["stage"] for e in events} == {"ResponseComplete"}
    assert "get" not in {e["verb"] for e in events} and "list" not in {e["verb"] for e in events}
    admin = [e for e in events if e["user"]["username"] != stranger]
    summary = [(e["verb"], e["objectRef"]["resource"], e["objectRef"].get("name"),
                e["objectRef"].get("subresource"), e["responseStatus"]["code"]) for e in admin]
    assert summary == [("create", "deployments", None, None, 201),
                       ("patch", "deployments", "web", "scale", 200),
                       ("delete", "deployments", "web", None, 200),
                       ("delete", "configmaps", "nope", None, 404)]
    create, scale, delete, missing = admin
    assert create["objectRef"] == {"resource": "deployments", "namespace": "default", "apiGroup": "apps",
                                   "apiVersion": "v1"}
    assert create["requestObject"]["spec"]["replicas"] == 2 and create["responseObject"]["metadata"]["uid"]
    assert scale["requestObject"] == {"spec": {"replicas": 0}}
    assert scale["responseObject"]["kind"] == "Scale" and scale["responseObject"]["spec"]["replicas"] == 0
    assert scale["userAgent"].startswith("kubectl")
    assert missing["responseStatus"]["reason"] == "NotFound" and "responseObject" not in missing
    assert create["requestReceivedTimestamp"] <= create["stageTimestamp"]
    [denied] = twin.server.audit.events(stranger)
    assert denied["responseStatus"]["code"] == 403 and denied["responseStatus"]["reason"] == "Forbidden"
    assert denied["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert denied["user"]["username"] == stranger


def test_the_audit_id_is_the_responses_header_and_the_log_file_has_one_event_a_line(twin, raw, tmp_path):
    twin.server.audit.path = str(tmp_path / "audit.log")
    status, headers, _ = raw.request("POST", "/api/v1/namespaces/default/configmaps",
                                     {"metadata": {"name": "settings"}, "data": {"mode": "fast"}})
    assert status == 201
    [event] = twin.server.audit.events()
    assert headers["Audit-Id"] == event["auditID"]
    lines = (tmp_path / "audit.log").read_text().splitlines()
    assert [yaml.safe_load(line) for line in lines] == [event]
