"""CustomResourceDefinitions: served at once, with their columns, schemas, subresources and versions; and deleted cleanly."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from kubernetes.dynamic import DynamicClient

from pytest_itbench.twin.apiserver.crd import (
    defaulting as cr_defaulting, validation as cr_validation, definition_validation as crd_validation,
)
from pytest_itbench.twin.apiserver.crd.jsonpath import JSONPath
from tests.conftest import Kubectl

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all, gadgets]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Replicas, type: integer, priority: 1, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is a configurable gadget.
        properties:
          spec:
            type: object
            description: What the widget should look like.
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10, description: 'Size of the widget, from 1 to 10.'}
              color: {type: string, enum: [red, green, blue], default: blue, description: Color of the widget.}
              replicas: {type: integer, default: 1}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
  - name: v1beta1
    served: true
    storage: false
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""


def widget(name: str, **spec) -> str:
    return yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
                           "spec": spec})


def lines(text: str) -> list[str]:
    return [re.sub(r"\s{2,}", " ", line).strip() for line in text.strip().splitlines()]


@pytest.fixture
def widgets(kubectl, tmp_path):
    """The Widget CRD, applied with kubectl."""
    (tmp_path / "crd.yaml").write_text(CRD)
    assert kubectl("apply", "-f", str(tmp_path / "crd.yaml")).strip() == \
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    return kubectl


def apply(kubectl, tmp_path, text: str, *args: str) -> str:
    path = tmp_path / "object.yaml"
    path.write_text(text)
    return kubectl("apply", "-f", str(path), *args)


# ---- serving ------------------------------------------------------------------------------------------------


def test_crd_is_established_with_accepted_names(widgets):
    crd = widgets.run("get", "crd", "widgets.example.com", "-o", "json").json()
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"), "Established": ("True", "InitialNamesAccepted")}
    assert crd["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                              "listKind": "WidgetList", "shortNames": ["wd"],
                                              "categories": ["all", "gadgets"]}
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    row = lines(widgets("api-resources", "--api-group=example.com", "-o", "wide"))[1]
    assert row.startswith("widgets wd example.com/v1 true Widget") and row.endswith("all,gadgets")


def test_printer_columns_short_names_and_categories(widgets, tmp_path):
    assert apply(widgets, tmp_path, widget("w1", size=3)).strip() == "widget.example.com/w1 created"
    widgets("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
            '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}')
    assert lines(widgets("get", "widgets")) == ["NAME SIZE COLOR READY AGE", "w1 3 blue True 0s"]
    assert lines(widgets("get", "wd", "-o", "wide")) == ["NAME SIZE COLOR READY REPLICAS AGE",
                                                         "w1 3 blue True 1 0s"]
    assert "widget.example.com/w1" in widgets("get", "gadgets", "-o", "name")
    assert "widget.example.com/w1" in widgets("get", "all", "-o", "name")


def test_versions_without_columns_print_name_and_age(twin, widgets, tmp_path):
    crds = twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    crd = widgets.run("get", "crd", "widgets.example.com", "-o", "json").json()
    del crd["spec"]["versions"][1]["additionalPrinterColumns"]
    twin.api.update(crds, None, "widgets.example.com", crd, twin.admin_ctx)
    apply(widgets, tmp_path, widget("w1", size=3))
    twin.warp(125)
    assert lines(widgets("get", "widgets.v1beta1.example.com")) == ["NAME AGE", "w1 2m5s"]


def test_explain_uses_the_crd_schema(widgets):
    out = widgets("explain", "widget.spec")
    assert "KIND:       Widget" in out and "GROUP:      example.com" in out
    assert "What the widget should look like." in out
    assert re.search(r"size\t<integer> -required-\n +Size of the widget, from 1 to 10.", out)
    assert "enum: red, green, blue" in out


def test_schema_defaults_are_applied_and_reapply_merges(widgets, tmp_path):
    apply(widgets, tmp_path, widget("w1", size=2))
    spec = widgets.run("get", "widget", "w1", "-o", "json").json()["spec"]
    assert spec == {"size": 2, "color": "blue", "replicas": 1}
    (tmp_path / "w1.yaml").write_text(widget("w1", size=4))
    again = widgets.run("apply", "-f", str(tmp_path / "w1.yaml"))
    assert (again.stdout.strip(), again.stderr) == ("widget.example.com/w1 configured", "")
    spec = widgets.run("get", "widget", "w1", "-o", "json").json()["spec"]
    assert spec == {"size": 4, "color": "blue", "replicas": 1}


def test_invalid_widget_is_rejected_with_apiextensions_messages(widgets, tmp_path):
    (tmp_path / "bad.yaml").write_text(widget("bad", size=20, color="purple"))
    failed = widgets.fails("apply", "-f", str(tmp_path / "bad.yaml"))
    assert 'The Widget "bad" is invalid:' in failed.stderr
    assert "spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10" in failed.stderr
    assert 'spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"' in failed.stderr
    (tmp_path / "bad.yaml").write_text(widget("bad", color="red"))
    failed = widgets.fails("create", "-f", str(tmp_path / "bad.yaml"))
    assert failed.stderr.strip() == 'The Widget "bad" is invalid: spec.size: Required value'
    (tmp_path / "bad.yaml").write_text(widget("bad", size="big"))
    failed = widgets.fails("create", "-f", str(tmp_path / "bad.yaml"))
    assert 'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"' in failed.stderr


def test_unknown_fields_are_rejected_under_strict_validation(widgets, tmp_path):
    (tmp_path / "typo.yaml").write_text(widget("typo", size=2, colour="red"))
    failed = widgets.fails("apply", "-f", str(tmp_path / "typo.yaml"))
    assert ('Error from server (BadRequest): error when creating "' + str(tmp_path / "typo.yaml") +
            '": Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field '
            '"spec.colour"') in failed.stderr
    out = widgets.run("apply", "-f", str(tmp_path / "typo.yaml"), "--validate=false")
    assert widgets.run("get", "widget", "typo", "-o", "json").json()["spec"] == {
        "size": 2, "color": "blue", "replicas": 1}, out.stderr


def test_merge_patch_bumps_generation_and_strategic_merge_is_refused(widgets, tmp_path):
    apply(widgets, tmp_path, widget("w1", size=3))
    assert widgets("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":5}}').strip() == \
        "widget.example.com/w1 patched"
    got = widgets.run("get", "widget", "w1", "-o", "json").json()
    assert (got["spec"]["size"], got["metadata"]["generation"]) == (5, 2)
    widgets("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", '{"status":{"replicas":2}}')
    got = widgets.run("get", "widget", "w1", "-o", "json").json()
    assert (got["status"], got["metadata"]["generation"]) == ({"replicas": 2}, 2)
    widgets("patch", "widget", "w1", "--type=merge", "-p", '{"status":{"replicas":7}}')
    assert widgets.run("get", "widget", "w1", "-o", "json").json()["status"] == {"replicas": 2}
    failed = widgets.fails("patch", "widget", "w1", "-p", '{"spec":{"size":4}}')
    assert "application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget" in failed.stderr
    failed = widgets.fails("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":0}}')
    assert "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1" in failed.stderr


def test_other_served_versions_convert_by_api_version(widgets, tmp_path):
    apply(widgets, tmp_path, widget("w1", size=3))
    listed = widgets.run("get", "widgets.v1beta1.example.com", "-o", "json").json()
    assert [(i["apiVersion"], i["spec"]["size"]) for i in listed["items"]] == [("example.com/v1beta1", 3)]
    assert lines(widgets("get", "widgets.v1beta1.example.com")) == ["NAME SIZE", "w1 3"]
    (tmp_path / "beta.yaml").write_text(yaml.safe_dump({
        "apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"size": 4}}))
    widgets("create", "-f", str(tmp_path / "beta.yaml"))
    assert widgets.run("get", "widget", "w2", "-o", "json").json()["apiVersion"] == "example.com/v1"


def test_scale_subresource_follows_the_crd_paths(widgets, tmp_path, client):
    apply(widgets, tmp_path, widget("w1", size=3))
    widgets("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
            '{"status":{"replicas":1,"selector":"app=w1"}}')
    assert widgets("scale", "widget", "w1", "--replicas=4").strip() == "widget.example.com/w1 scaled"
    assert widgets.run("get", "widget", "w1", "-o", "json").json()["spec"]["replicas"] == 4
    scale = json.loads(widgets("get", "--raw", "/apis/example.com/v1/namespaces/default/widgets/w1/scale"))
    assert (scale["kind"], scale["spec"], scale["status"]) == ("Scale", {"replicas": 4},
                                                             {"replicas": 1, "selector": "app=w1"})


def test_changes_to_a_crd_take_effect_at_once(twin, widgets, tmp_path):
    crd = yaml.safe_load(CRD)
    v2 = json.loads(json.dumps(crd["spec"]["versions"][0]))
    v2.update(name="v2", storage=False)
    v2["additionalPrinterColumns"] = [{"name": "Shade", "type": "string", "jsonPath": ".spec.color"}]
    crd["spec"]["versions"].append(v2)
    apply(widgets, tmp_path, yaml.safe_dump(crd))
    apply(widgets, tmp_path, widget("w1", size=3, color="red"))
    assert lines(widgets("get", "widgets.v2.example.com")) == ["NAME SHADE", "w1 red"]
    assert "example.com/v2" in widgets("api-versions").split()


def test_dynamic_client_finds_the_new_kind(widgets, client, tmp_path):
    dyn = DynamicClient(client, cache_file=str(tmp_path / "discovery.json"))
    resource = dyn.resources.get(api_version="example.com/v1", kind="Widget")
    assert (resource.name, resource.namespaced, resource.short_names) == ("widgets", True, ["wd"])
    created = resource.create(namespace="default", body={
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "py"}, "spec": {"size": 6}})
    assert created.spec.color == "blue"
    assert [w.metadata.name for w in resource.get(namespace="default").items] == ["py"]


def test_names_taken_by_another_crd_are_not_accepted(widgets, tmp_path):
    gadget = yaml.safe_load(CRD)
    gadget["metadata"]["name"] = "gadgets.example.com"
    gadget["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget", "shortNames": ["wd"]}
    apply(widgets, tmp_path, yaml.safe_dump(gadget))
    crd = widgets.run("get", "crd", "gadgets.example.com", "-o", "json").json()
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("False", "ShortNamesConflict", '"wd" is already in use'),
                          "Established": ("False", "NotAccepted", "not all names are accepted")}
    assert "gadgets" not in widgets("api-resources", "--api-group=example.com")


# ---- the CRD's own validation ---------------------------------------------------------------------------------


def test_invalid_crds_are_rejected_with_apiextensions_messages(kubectl, tmp_path):
    crd = yaml.safe_load(CRD)
    crd["spec"]["versions"][1]["storage"] = True
    del crd["spec"]["versions"][1]["schema"]
    failed = kubectl.fails("create", "-f", "-", input=yaml.safe_dump(crd))
    assert 'The CustomResourceDefinition "widgets.example.com" is invalid:' in failed.stderr
    assert "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required" in failed.stderr
    assert "must have exactly one version marked as storage version" in failed.stderr

    crd = yaml.safe_load(CRD)
    crd["spec"]["versions"] = crd["spec"]["versions"][:1]
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    crd["metadata"]["name"] = "widget.example.com"
    failed = kubectl.fails("create", "-f", "-", input=yaml.safe_dump(crd))
    assert 'metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group' \
        in failed.stderr
    # a single version's schema is validated as the top-level one, as upstream converts it
    assert "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified " \
           "object fields" in failed.stderr


def test_crd_validation_paths_follow_per_version_differences():
    crd = yaml.safe_load(CRD)
    crd_validation.apply_defaults(crd)
    crd["status"] = {"storedVersions": ["v1"]}
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"] = "map"
    crd["spec"]["versions"][1]["additionalPrinterColumns"][0]["jsonPath"] = "spec.size"
    crd["spec"]["group"] = "example"
    messages = [str(e) for e in crd_validation.validate(crd, None)]
    assert messages == [
        'metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group',
        'spec.group: Invalid value: "example": should be a domain with at least one dot',
        'spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Unsupported value: "map": supported values: '
        '"array", "boolean", "integer", "number", "object", "string"',
        'spec.versions[1].additionalPrinterColumns[0].JSONPath: Invalid value: "spec.size": must be a simple json '
        'path starting with .',
    ]


def test_protected_groups_need_api_approval():
    crd = yaml.safe_load(CRD.replace("example.com", "example.k8s.io"))
    crd_validation.apply_defaults(crd)
    crd["status"] = {"storedVersions": ["v1"]}
    assert [str(e) for e in crd_validation.validate(crd, None)] == [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
        'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111']


# ---- deletion ---------------------------------------------------------------------------------------------------


def test_deleting_the_crd_deletes_its_resources_and_stops_serving_them(twin, widgets, tmp_path):
    apply(widgets, tmp_path, widget("w1", size=3))
    widgets("create", "namespace", "shop")
    widgets("create", "-n", "shop", "-f", "-", input=widget("w2", size=4))
    assert widgets("delete", "crd", "widgets.example.com").strip() == \
        'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted'
    assert twin.store.count("widgets.example.com") == 0
    assert not [r for r in twin.api.catalog.resources if r.crd]
    assert "NotFound" in widgets.fails("get", "crd", "widgets.example.com").stderr
    fresh = Kubectl(twin, tmp_path / "fresh")
    failed = fresh.fails("get", "widgets")
    assert failed.stderr.strip() == 'error: the server doesn\'t have a resource type "widgets"'


def test_a_custom_resource_with_a_finalizer_keeps_the_crd_terminating(twin, widgets, tmp_path):
    held = yaml.safe_load(widget("held", size=3))
    held["metadata"]["finalizers"] = ["example.com/hold"]
    apply(widgets, tmp_path, yaml.safe_dump(held))
    widgets("delete", "crd", "widgets.example.com", "--wait=false")
    crd = widgets.run("get", "crd", "widgets.example.com", "-o", "json").json()
    assert crd["metadata"]["deletionTimestamp"]
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    terminating = [c for c in crd["status"]["conditions"] if c["type"] == "Terminating"]
    assert (terminating[0]["status"], terminating[0]["reason"]) == ("True", "InstanceDeletionInProgress")
    assert widgets.run("get", "widget", "held", "-o", "json").json()["metadata"]["deletionTimestamp"]
    failed = widgets.fails("create", "-f", "-", input=widget("late", size=1))
    assert "create not allowed while custom resource definition is terminating" in failed.stderr

    widgets("patch", "widget", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    assert "NotFound" in widgets.fails("get", "crd", "widgets.example.com").stderr
    assert twin.store.count("widgets.example.com") == 0


# ---- the pieces --------------------------------------------------------------------------------------------------


def test_jsonpath_subset_used_by_printer_columns():
    obj = {"spec": {"a.b": 1, "items": [1, 2, 3]},
           "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}}
    assert JSONPath('.status.conditions[?(@.type=="Ready")].status').find(obj) == ["True"]
    assert JSONPath("{.spec.items[-1]}").find(obj) == [3]
    assert JSONPath(".spec['a.b']").find(obj) == [1]
    assert JSONPath(".spec.items[0:2]").find(obj) == [1, 2]
    assert JSONPath(".status.conditions[*].type").find(obj) == ["Ready", "Synced"]
    assert JSONPath("..status").find(obj)[1:] == ["True", "False"]
    assert JSONPath(".spec.missing.deeper").find(obj) == []


def test_custom_resource_validation_and_defaulting():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
        "when": {"type": "string", "format": "date-time"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 2},
        "limits": {"type": "object", "default": {}, "properties": {"cpu": {"type": "string", "default": "1"}}},
        "note": {"type": "string"}}}}}
    obj = {"spec": {"name": "ABCDEFG", "when": "soon", "port": 1.5, "tags": ["a", "a", "b"], "note": None}}
    cr_defaulting.apply_defaults(obj, schema)
    assert obj["spec"]["limits"] == {"cpu": "1"} and "note" not in obj["spec"]
    assert [str(e) for e in cr_validation.validate(obj, schema)] == [
        'spec.name: Too long: may not be longer than 5',
        "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'",
        'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
        'spec.tags: Too many: 3: must have at most 2 items',
        'spec.when: Invalid value: "soon": spec.when in body must be of type date-time: "soon"',
        'spec.tags[1]: Duplicate value: "a"',
    ]
