"""Decoding request bodies as kube-apiserver's Go decoder does: types, unknown and duplicate fields, quantities."""

import json

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin import quantity
from pytest_itbench.twin.apiserver.decoding import go_decoder
from pytest_itbench.twin.apiserver import negotiation
from pytest_itbench.twin.apiserver.decoding import check_fields
from pytest_itbench.twin.errors import BadRequest


@pytest.fixture(scope="module")
def api():
    """A twin that is not serving: decoding and writes go straight to its ResourceAPI."""
    return Twin(seed=11, tls=False).api


def deployment(**spec) -> dict:
    base = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": base}


def decode(api, body: bytes | dict, mode: str = "Strict", kind=("apps", "v1", "deployments")) -> tuple[dict, list]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    obj, dups = negotiation.decode_body(raw, "application/json")
    res = api.catalog.lookup(*kind)
    warnings = check_fields(obj, api.node_for(res), res, mode, dups)
    return obj, warnings


def decode_error(api, body, kind=("apps", "v1", "deployments")) -> str:
    with pytest.raises(BadRequest) as caught:
        decode(api, body, kind=kind)
    return caught.value.message


PREFIX = 'Deployment in version "v1" cannot be handled as a Deployment: '


@pytest.mark.parametrize("spec,message", [
    ({"replicas": "3"},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"replicas": 1.5}, "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type "
                        "int32"),
    ({"replicas": 3000000000}, "json: cannot unmarshal number 3000000000 into Go struct field "
                               "DeploymentSpec.spec.replicas of type int32"),
    ({"paused": "true"}, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"),
    ({"strategy": "Recreate"}, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.strategy of "
                               "type v1.DeploymentStrategy"),
    ({"template": {"metadata": {"labels": {"version": 2}}}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.spec.template.metadata.labels of type string"),
    ({"strategy": {"rollingUpdate": {"maxSurge": True}}},
     "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge "
     "of type int32"),
])
def test_wrong_types_are_refused_with_the_go_decoders_message(api, spec, message):
    assert decode_error(api, deployment(**spec)) == PREFIX + message


@pytest.mark.parametrize("container,message", [
    ({"env": [{"name": "PORT", "value": 8080}]},
     "json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type "
     "string"),
    ({"command": "sleep 3600"},
     "json: cannot unmarshal string into Go struct field Container.spec.template.spec.containers.command of type "
     "[]string"),
    ({"ports": [{"containerPort": "80"}]},
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports."
     "containerPort of type int32"),
    ({"imagePullPolicy": 1},
     "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.imagePullPolicy of "
     "type v1.PullPolicy"),
    ({"resources": {"limits": {"memory": "1Gb"}}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"resources": {"limits": {"memory": "500mi"}}}, "unable to parse quantity's suffix"),
])
def test_container_fields(api, container, message):
    spec = deployment()["spec"]
    spec["template"]["spec"]["containers"][0].update(container)
    assert decode_error(api, deployment(template=spec["template"])) == PREFIX + message


def test_an_unmarshaller_error_stops_decoding_and_wins_over_an_earlier_type_error(api):
    body = deployment(replicas="3", strategy={"rollingUpdate": {"maxSurge": 1.5}})
    assert decode_error(api, body) == PREFIX + (
        "json: cannot unmarshal number 1.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate."
        "maxSurge of type int32")


def test_unknown_and_duplicate_fields_in_document_order(api):
    raw = (b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","name":"b","unknownMeta":1},'
           b'"spec":{"unknown1":1,"dupe":1,"dupe":2,"paused":true,"paused":false,"selector":{"matchLabels":'
           b'{"app":"x"}},"template":{"spec":{"containers":[{"name":"c","image":"i","extra":1,'
           b'"imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}')
    problems = ['duplicate field "metadata.name"', 'unknown field "metadata.unknownMeta"',
                'unknown field "spec.unknown1"',
                'unknown field "spec.dupe"', 'duplicate field "spec.paused"',
                'unknown field "spec.template.spec.containers[0].extra"',
                'duplicate field "spec.template.spec.containers[0].imagePullPolicy"']
    assert decode_error(api, raw) == PREFIX + "strict decoding error: " + ", ".join(problems)
    obj, warnings = decode(api, raw, mode="Warn")
    assert warnings == problems
    assert "unknown1" not in obj["spec"] and obj["metadata"]["name"] == "b"
    assert decode(api, raw, mode="Ignore")[1] == []


def test_quantities_read_back_in_canonical_form(api):
    container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"},
                                                          "limits": {"cpu": "2000m", "memory": "1.5Gi"}}}
    body = deployment()
    body["spec"]["template"]["spec"]["containers"] = [container]
    obj, _ = decode(api, body)
    assert obj["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1536Mi"}}


def test_int_or_string_fields_take_either(api):
    obj, _ = decode(api, deployment(strategy={"rollingUpdate": {"maxSurge": 2, "maxUnavailable": "50%"}}))
    assert obj["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 2, "maxUnavailable": "50%"}


def test_secret_data_must_be_base64(api):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "hunter 2"}}
    message = decode_error(api, secret, kind=("", "v1", "secrets"))
    assert message == 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 6'


def test_times_must_be_rfc3339(api):
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {},
             "firstTimestamp": "yesterday"}
    assert decode_error(api, event, kind=("", "v1", "events")) == (
        'Event in version "v1" cannot be handled as a Event: parsing time "yesterday" as '
        '"2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"')


@pytest.mark.parametrize("data,error", [
    ("aGVsbG8=", None), ("aGVs\nbG8=", None), ("aGVsbG8", "illegal base64 data at input byte 4"),
    ("a===", "illegal base64 data at input byte 1"), ("abc=d", "illegal base64 data at input byte 4"),
])
def test_base64_errors_name_the_offending_byte(data, error):
    assert go_decoder.base64_error(data.encode()) == error


@pytest.mark.parametrize("text,canonical", [
    ("0.5", "500m"), ("1000m", "1"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"), ("1e3", "1e3"),
    ("1E3", "1e3"), ("1000M", "1G"), ("0.1m", "100u"), ("1.5Ki", "1536"), ("12e-1", "1200e-3"), ("100Mi", "100Mi"),
])
def test_quantity_canonical_text(text, canonical):
    assert quantity.canonical(text) == canonical


def test_quantities_compare_by_value_and_round_up_to_milli():
    assert quantity.compare("1", "1000m") == 0 and quantity.compare("1Gi", "1G") == 1
    assert str(quantity.parse("0.1m").rounded_up_to_milli()) == "1m"


def test_kubectl_apply_refuses_a_typo_and_warns_when_asked(kubectl, tmp_path):
    manifest = deployment()
    manifest["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(manifest))
    refused = kubectl.fails("apply", "-f", str(path))
    assert ('Error from server (BadRequest): error when creating "' + str(path) + '": ' + PREFIX +
            'strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolicyy"'
            ) in refused.stderr
    warned = kubectl.run("apply", "--validate=warn", "-f", str(path))
    assert 'Warning: unknown field "spec.template.spec.containers[0].imagePullPolicyy"' in warned.stderr
    stored = kubectl.run("get", "deployment", "web", "-o", "json").json()
    assert "imagePullPolicyy" not in stored["spec"]["template"]["spec"]["containers"][0]


def test_kubectl_shows_a_type_error(kubectl):
    manifest = deployment(replicas="two")
    refused = kubectl.fails("create", "-f", "-", input=json.dumps(manifest))
    assert ("Error from server (BadRequest): error when creating \"STDIN\": " + PREFIX +
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            ) in refused.stderr
