"""OpenAPI v3: the root and group-version documents, their hashes and caching, and what kubectl does with them."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import yaml

from pytest_itbench.twin.apiserver.openapi import schemas as openapi_schemas
from pytest_itbench.twin.schema import builtin_definitions
from pytest_itbench.twin.store import clone

HASH = re.compile(r"^[0-9A-F]{128}$")

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer", "description": "How big the widget is."}}}}}}}]},
}


class Raw:
    """Plain HTTP requests to the twin with the admin's credentials (no redirects followed)."""

    def __init__(self, api_client):
        self.pool = api_client.rest_client.pool_manager
        self.host = api_client.configuration.host
        self.auth = api_client.configuration.auth_settings()["BearerToken"]["value"]

    def get(self, path: str, **headers):
        return self.pool.request("GET", self.host + path, headers={"Authorization": self.auth, **headers},
                                 redirect=False, preload_content=True)


@pytest.fixture
def raw(client):
    return Raw(client)


def root_paths(raw) -> dict:
    resp = raw.get("/openapi/v3")
    assert resp.status == 200
    return json.loads(resp.data)["paths"]


# ---- the documents ---------------------------------------------------------------------------------------


def test_root_lists_every_served_group_version_with_its_content_hash(raw):
    paths = root_paths(raw)
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/autoscaling/v1", "apis/autoscaling/v2",
            "apis/apiextensions.k8s.io/v1"} <= set(paths)
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    path, _, query = url.partition("?hash=")
    assert path == "/openapi/v3/apis/apps/v1" and HASH.match(query)
    resp = raw.get(url, Accept="application/json")
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    assert hashlib.sha512(resp.data).hexdigest().upper() == query
    assert resp.headers["Etag"] == f'"{query}"'
    assert resp.headers["Cache-Control"] == "public, immutable"


def test_group_version_document_has_kinds_operations_and_upstream_schema_conversions(raw):
    doc = json.loads(raw.get("/openapi/v3/apis/apps/v1").data)
    assert doc["openapi"] == "3.0.0"
    schemas = doc["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment",
                                                              "version": "v1"}]
    assert deployment["type"] == "object" and "additionalProperties" not in deployment
    assert "enum" not in deployment["properties"]["apiVersion"]
    strategy = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert strategy["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}]
    assert strategy["x-kubernetes-patch-strategy"] == "retainKeys"
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas  # deployments/scale refers to it
    for name, schema in schemas.items():  # everything referenced is in the document
        assert set(openapi_schemas.references(schema)) <= set(schemas), name

    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["operationId"] == "patchAppsV1NamespacedDeployment"
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert {"in": "query", "name": "fieldValidation", "schema": {"type": "string", "uniqueItems": True}} \
        in patch["parameters"]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    listing = doc["paths"]["/apis/apps/v1/deployments"]["get"]
    assert listing["operationId"] == "listAppsV1DeploymentForAllNamespaces"
    assert listing["description"] == "list or watch objects of kind Deployment"


def test_documents_are_revalidated_by_etag_and_stale_hashes_redirect(raw):
    url = root_paths(raw)["api/v1"]["serverRelativeURL"]
    etag = url.partition("?hash=")[2]
    assert raw.get("/openapi/v3/api/v1", **{"If-None-Match": f'"{etag}"'}).status == 304
    stale = raw.get("/openapi/v3/api/v1?hash=" + "0" * 128)
    assert stale.status == 301 and stale.headers["Location"] == url
    root = raw.get("/openapi/v3")
    assert raw.get("/openapi/v3", **{"If-None-Match": root.headers["Etag"]}).status == 304


def test_only_json_is_served(raw):
    resp = raw.get("/openapi/v3/api/v1", Accept="application/com.github.proto-openapi.spec.v3.v1.0+protobuf")
    assert resp.status == 406
    assert raw.get("/openapi/v3/apis/nothing.example.com/v1").status == 404


def test_a_crd_group_version_appears_and_its_hash_follows_its_schema(twin, raw):
    before = root_paths(raw)
    assert "apis/example.com/v1" not in before
    twin.api.create(twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions"), None,
                    json.loads(json.dumps(WIDGET_CRD)), twin.admin_ctx)
    after = root_paths(raw)
    first = after["apis/example.com/v1"]["serverRelativeURL"]
    doc = json.loads(raw.get(first).data)
    widget = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["properties"]["spec"]["properties"]["size"]["description"] == "How big the widget is."
    assert doc["components"]["schemas"]["com.example.v1.WidgetList"]["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "WidgetList", "version": "v1"}]
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    assert after["apis/apps/v1"] == before["apis/apps/v1"]  # other documents are untouched

    crds = twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    crd = clone(twin.api.get(crds, "", "widgets.example.com"))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"] = {
        "type": "string"}
    twin.api.update(crds, None, "widgets.example.com", crd, twin.admin_ctx)
    second = root_paths(raw)["apis/example.com/v1"]["serverRelativeURL"]
    assert second != first
    doc = json.loads(raw.get(second).data)
    assert "color" in doc["components"]["schemas"]["com.example.v1.Widget"]["properties"]["spec"]["properties"]


def test_conversion_of_definitions_to_v3_components():
    defs = builtin_definitions()
    quantity = openapi_schemas.builtin_component(openapi_schemas.QUANTITY, defs[openapi_schemas.QUANTITY])
    assert quantity["oneOf"] == [{"type": "string"}, {"type": "number"}] and "type" not in quantity
    probe = openapi_schemas.builtin_component("io.k8s.api.core.v1.Probe", defs["io.k8s.api.core.v1.Probe"])
    assert probe["properties"]["periodSeconds"]["type"] == "integer"  # ["integer", "null"] upstream is plain
    custom = openapi_schemas.custom_component({"type": "object", "properties": {
        "port": {"x-kubernetes-int-or-string": True},
        "meta": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "d"}}})
    assert custom["properties"]["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert custom["properties"]["meta"] == {
        "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "d"}


# ---- kubectl --------------------------------------------------------------------------------------------


def test_explain_prints_real_field_descriptions(kubectl):
    out = kubectl("explain", "deployment.spec.strategy")
    assert "KIND:       Deployment" in out and "VERSION:    v1" in out
    assert "FIELD: strategy <DeploymentStrategy>" in out
    assert "DeploymentStrategy describes how to replace existing pods with new ones." in out
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out
    out = kubectl("explain", "deployment.spec.strategy.rollingUpdate")
    assert "maxSurge\t<IntOrString>" in out


def test_explain_recursive_walks_nested_types(kubectl):
    out = kubectl("explain", "pod.spec.containers", "--recursive")
    assert "FIELD: containers <[]Container>" in out
    assert "A single application container that you want to run within a pod." in out
    assert re.search(r"\n  name\t<string> -required-\n", out)
    assert re.search(r"\n      configMapKeyRef\t<ConfigMapKeySelector>\n", out)
    assert re.search(r"\n  resources\t<ResourceRequirements>\n(.*\n)*?    limits\t<map\[string\]Quantity>\n", out)


MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        env: [{name: MODE, value: fast}, {name: LEVEL, value: "1"}]
"""


@pytest.fixture
def field_validation(twin):
    """The fieldValidation of every create and update the server admits, as (operation, kind, mode)."""
    seen: list[tuple[str, str, str]] = []
    twin.api.admission.append(lambda op, res, obj, old, ctx: seen.append((op, res.kind, ctx.field_validation)))
    return seen


def test_apply_and_create_switch_on_server_side_field_validation(kubectl, field_validation, tmp_path):
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    kubectl("apply", "-f", str(manifest))
    assert ("create", "Deployment", "Strict") in field_validation
    assert ("create", "ConfigMap", "Strict") in field_validation

    manifest.write_text(MANIFEST.replace('{name: LEVEL, value: "1"}', '{name: LEVEL, value: "2"}'))
    result = kubectl.run("apply", "-f", str(manifest))
    assert "deployment.apps/web configured" in result.stdout
    assert "warning" not in result.stderr  # the patch was computed from the served schemas
    assert ("update", "Deployment", "Strict") in field_validation
    env = kubectl.run("get", "deployment", "web", "-o", "json").json()["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "LEVEL", "value": "2"} in env

    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}}))
    kubectl("create", "-f", str(other))
    assert field_validation[-1] == ("create", "ConfigMap", "Strict")

    typo = tmp_path / "typo.yaml"
    typo.write_text(MANIFEST.split("---\n")[1].replace("name: web", "name: web2").replace("image:", "imagee:"))
    failed = kubectl.fails("apply", "-f", str(typo))
    assert "unknown field" in failed.stderr
