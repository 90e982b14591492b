"""RBAC: the rule matcher, the bootstrap policy, role aggregation and escalation prevention, through real kubectl."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client as k8s

from pytest_itbench.twin.apiserver.access.authn import user_for
from pytest_itbench.twin.apiserver.access.authz import Attributes
from pytest_itbench.twin.apiserver.access.rbac_rules import Rule, compact, compact_string, uncovered
from pytest_itbench.twin.apiserver.registry import Ctx
from pytest_itbench.twin.apiserver.requestinfo import request_info
from pytest_itbench.twin.errors import Forbidden

AGENT = "system:serviceaccount:shop:agent"
AGENT_GROUPS = '(groups=["system:serviceaccounts" "system:serviceaccounts:shop" "system:authenticated"])'


def resource(verb: str, resource: str, *, group: str = "", sub: str = "", name: str = "",
             namespace: str = "shop") -> Attributes:
    return Attributes(verb=verb, is_resource=True, api_group=group, namespace=namespace, resource=resource,
                      subresource=sub, name=name)


def path(verb: str, url: str) -> Attributes:
    return Attributes(verb=verb, is_resource=False, path=url)


# ---- the rule matcher -------------------------------------------------------------------------------------------

def test_resource_names_allow_only_requests_that_name_the_object():
    rule = Rule.compile({"verbs": ["get", "list", "watch", "create", "deletecollection"], "apiGroups": [""],
                         "resources": ["configmaps"], "resourceNames": ["settings"]})
    assert rule.allows(resource("get", "configmaps", name="settings"))
    assert not rule.allows(resource("get", "configmaps", name="other"))
    for verb in ("list", "watch", "create", "deletecollection"):
        assert not rule.allows(resource(verb, "configmaps")), verb


def test_a_list_pinned_to_one_name_by_field_selector_is_authorized_as_that_name():
    info = request_info("GET", "/api/v1/namespaces/shop/configmaps",
                        {"fieldSelector": "metadata.name=settings", "watch": "true"})
    attrs = Attributes.from_request(info, {"fieldSelector": "metadata.name=settings", "watch": "true"})
    assert (attrs.verb, attrs.name) == ("watch", "settings")
    unpinned = Attributes.from_request(info, {"fieldSelector": "metadata.name!=settings"})
    assert unpinned.name == ""


def test_star_slash_subresource_matches_that_subresource_of_every_resource():
    rule = Rule.compile({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/scale"]})
    assert rule.allows(resource("update", "deployments", group="apps", sub="scale", name="web"))
    assert rule.allows(resource("update", "statefulsets", group="apps", sub="scale", name="db"))
    assert not rule.allows(resource("update", "deployments", group="apps", name="web"))
    assert not rule.allows(resource("update", "pods", sub="status", name="web"))


def test_resource_slash_star_is_not_a_wildcard():
    rule = Rule.compile({"verbs": ["*"], "apiGroups": ["apps"], "resources": ["deployments/*"]})
    assert not rule.allows(resource("get", "deployments", group="apps", sub="scale", name="web"))
    assert not rule.allows(resource("get", "deployments", group="apps", name="web"))


def test_wildcards_in_verbs_groups_and_resources():
    rule = Rule.compile({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
    assert rule.allows(resource("deletecollection", "widgets", group="example.com"))
    assert rule.allows(resource("get", "pods", sub="log", name="web"))
    assert not rule.allows(path("get", "/healthz"))
    core_only = Rule.compile({"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "pods/log"]})
    assert core_only.allows(resource("get", "pods", sub="log", name="web"))
    assert not core_only.allows(resource("get", "deployments", group="apps", name="web"))
    assert not core_only.allows(resource("list", "pods"))


def test_non_resource_urls_match_exactly_or_by_trailing_star_prefix():
    rule = Rule.compile({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/healthz/*", "/api*"]})
    assert rule.allows(path("get", "/healthz"))
    assert rule.allows(path("get", "/healthz/etcd"))
    assert rule.allows(path("get", "/apis/apps/v1"))
    assert not rule.allows(path("get", "/healthzz"))
    assert not rule.allows(path("post", "/healthz"))
    assert not rule.allows(resource("get", "pods"))
    assert Rule.compile({"verbs": ["*"], "nonResourceURLs": ["*"]}).allows(path("put", "/anything/at/all"))


def test_covering_reports_the_missing_permissions_compacted_as_upstream_prints_them():
    owner = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
             {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]}]
    wanted = [{"verbs": ["get", "list", "delete"], "apiGroups": [""], "resources": ["pods", "nodes"]},
              {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale"]},
              {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"]},
              {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]
    missing = sorted(compact_string(rule) for rule in compact(uncovered(owner, wanted)))
    assert missing == [
        '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["get"]}',
        '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["b"], Verbs:["get"]}',
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list" "delete"]}',
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]
    assert uncovered([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}],
                     [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
                       "resourceNames": ["a"]}]) == []


# ---- the cluster, through kubectl --------------------------------------------------------------------------------

@pytest.fixture
def shop(kubectl, kubectl_as):
    """Namespace shop with a ServiceAccount agent bound to ClusterRole edit there; kubectl as that agent."""
    kubectl("create", "namespace", "shop")
    kubectl("create", "serviceaccount", "agent", "-n", "shop")
    kubectl("create", "rolebinding", "agent-edit", "--clusterrole=edit", "--serviceaccount=shop:agent", "-n", "shop")
    return kubectl_as(AGENT)


def test_the_agent_reads_and_writes_in_its_namespace(shop):
    shop("create", "configmap", "settings", "--from-literal=mode=fast", "-n", "shop")
    assert shop.run("get", "configmap", "settings", "-n", "shop", "-o", "json").json()["data"] == {"mode": "fast"}
    shop("create", "deployment", "web", "--image=nginx", "-n", "shop")
    assert "deployment.apps/web scaled" in shop("scale", "deployment", "web", "--replicas=2", "-n", "shop")
    assert shop.run("get", "pods,events", "-n", "shop").returncode == 0
    shop("delete", "configmap", "settings", "-n", "shop")
    assert "(NotFound)" in shop.fails("get", "configmap", "settings", "-n", "shop").stderr


def test_the_agent_is_refused_elsewhere_with_upstream_messages(shop):
    prefix = "Error from server (Forbidden): "
    denied = {
        ("get", "pods", "-n", "default"):
            f'pods is forbidden: User "{AGENT}" cannot list resource "pods" in API group "" in the namespace '
            f'"default"',
        ("get", "secret", "db", "-n", "default"):
            f'secrets "db" is forbidden: User "{AGENT}" cannot get resource "secrets" in API group "" in the '
            f'namespace "default"',
        ("get", "nodes"):
            f'nodes is forbidden: User "{AGENT}" cannot list resource "nodes" in API group "" at the cluster scope',
        ("create", "namespace", "other"):
            f'namespaces is forbidden: User "{AGENT}" cannot create resource "namespaces" in API group "" at the '
            f'cluster scope',
        ("delete", "namespace", "default"):
            f'namespaces "default" is forbidden: User "{AGENT}" cannot delete resource "namespaces" in API group '
            f'"" in the namespace "default"',
        ("get", "clusterroles"):
            f'clusterroles.rbac.authorization.k8s.io is forbidden: User "{AGENT}" cannot list resource '
            f'"clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
        ("get", "--raw", "/metrics"):
            f'forbidden: User "{AGENT}" cannot get path "/metrics"',
    }
    for args, message in denied.items():
        assert shop.fails(*args).stderr.strip() == prefix + message, args


def test_discovery_and_version_work_for_the_restricted_agent(shop):
    server = shop.run("version", "-o", "json").json()["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "31")
    names = shop("api-resources", "--api-group=apps", "-o", "name").split()
    assert "deployments.apps" in names
    assert shop("get", "--raw", "/healthz").strip() == "ok"


def _anonymous_get(twin, url_path: str) -> tuple[int, str]:
    context = ssl.create_default_context(cadata=twin.certificates.ca_pem)
    try:
        with urllib.request.urlopen(twin.url + url_path, context=context, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_anonymous_requests_see_only_public_information(twin):
    status, body = _anonymous_get(twin, "/version")
    assert status == 200 and json.loads(body)["minor"] == "31"
    assert _anonymous_get(twin, "/healthz") == (200, "ok")
    status, body = _anonymous_get(twin, "/api")
    assert status == 403
    assert json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'forbidden: User "system:anonymous" cannot get path "/api"', "reason": "Forbidden",
        "details": {}, "code": 403}
    status, body = _anonymous_get(twin, "/api/v1/namespaces/default/pods")
    assert status == 403
    assert json.loads(body)["details"] == {"kind": "pods"}


def test_a_restricted_user_cannot_grant_what_it_does_not_hold(kubectl, kubectl_as):
    kubectl("create", "namespace", "shop")
    kubectl("create", "rolebinding", "agent-admin", "--clusterrole=admin", "--serviceaccount=shop:agent", "-n", "shop")
    agent = kubectl_as(AGENT)
    refused = agent.fails("create", "rolebinding", "grab", "--clusterrole=cluster-admin",
                          "--serviceaccount=shop:agent", "-n", "shop")
    assert refused.stderr.strip() == (
        f'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user '
        f'"{AGENT}" {AGENT_GROUPS} is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
        '{NonResourceURLs:["*"], Verbs:["*"]}')
    refused = agent.fails("create", "role", "node-reader", "--verb=get,list", "--resource=nodes", "-n", "shop")
    assert refused.stderr.strip().endswith(
        f'roles.rbac.authorization.k8s.io "node-reader" is forbidden: user "{AGENT}" {AGENT_GROUPS} is attempting '
        'to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}')
    # What it holds, it may pass on.
    agent("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "-n", "shop")
    agent("create", "rolebinding", "helper-view", "--clusterrole=view", "--serviceaccount=shop:helper", "-n", "shop")
    missing = agent.fails("create", "rolebinding", "ghost", "--role=ghost", "--serviceaccount=shop:helper",
                          "-n", "shop")
    assert missing.stderr.strip() == ('error: failed to create rolebinding: roles.rbac.authorization.k8s.io "ghost" '
                                      'not found')


def test_bind_and_escalate_let_a_user_grant_more_than_it_holds(kubectl, kubectl_as):
    kubectl("create", "namespace", "shop")
    kubectl("create", "clusterrole", "granter", "--verb=bind", "--resource=clusterroles",
            "--resource-name=cluster-admin")
    kubectl("create", "clusterrole", "role-writer", "--verb=create,escalate", "--resource=roles")
    kubectl("create", "clusterrole", "binding-writer", "--verb=create", "--resource=rolebindings")
    for role in ("granter", "role-writer", "binding-writer"):
        kubectl("create", "rolebinding", role, f"--clusterrole={role}", "--serviceaccount=shop:lead", "-n", "shop")
    lead = kubectl_as("system:serviceaccount:shop:lead")
    lead("create", "rolebinding", "ops-admin", "--clusterrole=cluster-admin", "--serviceaccount=shop:ops",
         "-n", "shop")
    lead("create", "role", "node-reader", "--verb=get", "--resource=nodes", "-n", "shop")
    refused = lead.fails("create", "rolebinding", "ops-node", "--clusterrole=system:node",
                         "--serviceaccount=shop:ops", "-n", "shop")
    assert "is attempting to grant RBAC permissions not currently held" in refused.stderr


def test_setting_an_aggregation_rule_needs_every_permission(twin):
    api = twin.api
    clusterroles = api.catalog.lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
    api.create(clusterroles, None, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                    "metadata": {"name": "role-author"},
                                    "rules": [{"verbs": ["create", "get", "list"],
                                               "apiGroups": ["rbac.authorization.k8s.io"],
                                               "resources": ["clusterroles"]}]}, twin.admin_ctx)
    bindings = api.catalog.lookup("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
    api.create(bindings, None, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                                "metadata": {"name": "role-author"},
                                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                            "name": "role-author"},
                                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                              "name": "carol"}]}, twin.admin_ctx)
    aggregating = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": "everything-viewable"},
                   "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}}
    with pytest.raises(Forbidden) as refused:
        api.create(clusterroles, None, aggregating, Ctx(user=user_for("carol")))
    assert refused.value.message == ('clusterroles.rbac.authorization.k8s.io "everything-viewable" is forbidden: must '
                                     'have cluster-admin privileges to use the aggregationRule')


def bind_user(kubectl, name: str, role_kind: str, role: str, user: str, namespace: str = "default") -> None:
    # Not `kubectl create rolebinding --user`: the kubectl dispatcher takes --user for its own global flag.
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name, "namespace": namespace},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    kubectl("create", "--validate=false", "-f", "-", input=json.dumps(binding))


def _rules(client, role: str) -> list[dict]:
    rules = k8s.RbacAuthorizationV1Api(client).read_cluster_role(role).rules or []
    return [client.sanitize_for_serialization(rule) for rule in rules]


def test_aggregated_roles_follow_the_roles_they_select(kubectl, client):
    extra_rule = {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                  "verbs": ["get", "list", "watch"]}
    view_rules = _rules(client, "view")
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]} in view_rules
    assert extra_rule not in view_rules
    kubectl("create", "clusterrole", "view-priorityclasses", "--verb=get,list,watch",
            "--resource=priorityclasses.scheduling.k8s.io")
    kubectl("label", "clusterrole", "view-priorityclasses", "rbac.authorization.k8s.io/aggregate-to-view=true")
    for role in ("view", "edit", "admin"):
        assert extra_rule in _rules(client, role), role
    # Selected roles are gathered in name order: this one sorts after system:aggregate-to-view.
    assert _rules(client, "view") == view_rules + [extra_rule]
    kubectl("label", "clusterrole", "view-priorityclasses", "rbac.authorization.k8s.io/aggregate-to-view-")
    for role in ("view", "edit", "admin"):
        assert extra_rule not in _rules(client, role), role
    assert _rules(client, "view") == view_rules


def test_resource_names_limit_a_user_to_the_objects_named(kubectl, kubectl_as):
    kubectl("create", "configmap", "settings", "--from-literal=mode=fast")
    kubectl("create", "configmap", "secrets-of-others", "--from-literal=x=y")
    kubectl("create", "role", "settings-reader", "--verb=get,list,watch", "--resource=configmaps",
            "--resource-name=settings")
    bind_user(kubectl, "alice-settings", "Role", "settings-reader", "alice")
    alice = kubectl_as("alice")
    assert alice("get", "configmap", "settings", "-o", "name").strip() == "configmap/settings"
    assert alice("get", "configmaps", "--field-selector=metadata.name=settings", "-o", "name").strip() == \
        "configmap/settings"
    assert alice.fails("get", "configmaps").stderr.strip() == (
        'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in '
        'API group "" in the namespace "default"')
    assert 'configmaps "secrets-of-others" is forbidden' in alice.fails("get", "configmap", "secrets-of-others").stderr


def test_a_binding_to_a_missing_role_is_named_in_the_denial(kubectl, kubectl_as):
    bind_user(kubectl, "alice-ghost", "Role", "ghost", "alice")
    refused = kubectl_as("alice").fails("get", "pods")
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
        'in the namespace "default": RBAC: role.rbac.authorization.k8s.io "ghost" not found')
    kubectl("create", "role", "ghost", "--verb=list", "--resource=pods")
    assert kubectl_as("alice")("get", "pods", "-o", "name") == ""


def test_impersonation_needs_the_impersonate_verb(shop):
    # edit may impersonate the service accounts of its namespace: the request then has their rights, not its own.
    assert shop.fails("get", "pods", "-n", "shop", "--as", "system:serviceaccount:shop:default").stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:shop:default" cannot list '
        'resource "pods" in API group "" in the namespace "shop"')
    assert shop.fails("get", "pods", "-n", "shop", "--as", "bob").stderr.strip() == (
        f'Error from server (Forbidden): users "bob" is forbidden: User "{AGENT}" cannot impersonate resource "users" '
        f'in API group "" at the cluster scope')
