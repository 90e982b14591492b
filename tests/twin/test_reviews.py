"""Access and identity reviews: kubectl auth can-i / whoami, the review APIs, and service account tokens."""

from __future__ import annotations

import json
import re

import pytest
from kubernetes import client as k8s
from kubernetes import config
from kubernetes.client.rest import ApiException

AGENT = "system:serviceaccount:shop:agent"
AGENT_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:shop", "system:authenticated"]


@pytest.fixture
def shop(kubectl, kubectl_as):
    """Namespace shop with a ServiceAccount agent bound to ClusterRole edit there; kubectl as that agent."""
    kubectl("create", "namespace", "shop")
    kubectl("create", "serviceaccount", "agent", "-n", "shop")
    kubectl("create", "rolebinding", "agent-edit", "--clusterrole=edit", "--serviceaccount=shop:agent", "-n", "shop")
    return kubectl_as(AGENT)


@pytest.fixture
def client_as(twin, tmp_path):
    """The official client's ApiClient for another identity."""
    clients = []

    def make(identity: str) -> k8s.ApiClient:
        path = twin.write_kubeconfig(tmp_path / f"client-{identity.replace(':', '_')}", identity)
        configuration = k8s.Configuration()
        config.load_kube_config(config_file=path, client_configuration=configuration)
        clients.append(k8s.ApiClient(configuration))
        return clients[-1]

    yield make
    for api_client in clients:
        api_client.close()


def test_can_i_tells_the_truth_with_exit_codes(shop):
    answers = {
        ("create", "deployments", "-n", "shop"): "yes",
        ("update", "deployments.apps", "--subresource=scale", "-n", "shop"): "yes",
        ("get", "pods", "--subresource=log", "-n", "shop"): "yes",
        ("create", "pods", "--subresource=exec", "-n", "shop"): "yes",
        ("get", "configmap/settings", "-n", "shop"): "yes",
        ("update", "pods", "--subresource=status", "-n", "shop"): "no",
        ("create", "roles", "-n", "shop"): "no",
        ("delete", "pods", "-n", "default"): "no",
        ("list", "secrets", "--all-namespaces"): "no",
        ("get", "/healthz"): "yes",
        ("get", "/metrics"): "no",
    }
    for args, answer in answers.items():
        result = shop.run("auth", "can-i", *args, check=False)
        assert (result.stdout.strip(), result.returncode) == (answer, 0 if answer == "yes" else 1), args


def test_can_i_honours_resource_names(kubectl, kubectl_as):
    kubectl("create", "namespace", "shop")
    kubectl("create", "role", "settings-editor", "--verb=get,update", "--resource=configmaps",
            "--resource-name=settings", "-n", "shop")
    kubectl("create", "rolebinding", "clerk", "--role=settings-editor", "--serviceaccount=shop:clerk", "-n", "shop")
    clerk = kubectl_as("system:serviceaccount:shop:clerk")
    for args, answer in {("get", "configmap/settings"): "yes", ("update", "configmap/settings"): "yes",
                         ("get", "configmap/other"): "no", ("list", "configmaps"): "no",
                         ("delete", "configmap/settings"): "no"}.items():
        result = clerk.run("auth", "can-i", *args, "-n", "shop", check=False)
        assert (result.stdout.strip(), result.returncode) == (answer, 0 if answer == "yes" else 1), args


def _can_i_list(kubectl, namespace: str) -> dict[str, list[str]]:
    """``kubectl auth can-i --list`` as {resource, or [url] for non-resource rows: verbs}."""
    lines = kubectl("auth", "can-i", "--list", "-n", namespace).splitlines()
    assert re.split(r"\s{2,}", lines[0].strip()) == ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]
    rows: dict[str, list[str]] = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        key = cells[0]  # the resource, or the URL list when the resource column is empty
        rows.setdefault(key, []).extend(cells[-1].strip("[]").split())
    return rows


def test_can_i_list_shows_the_aggregated_edit_rules_and_non_resource_urls(shop):
    rows = _can_i_list(shop, "shop")
    assert set(rows["deployments.apps"]) == {"create", "delete", "deletecollection", "get", "list", "patch",
                                             "update", "watch"}
    assert set(rows["deployments.apps/scale"]) >= {"get", "update", "patch"}
    assert rows["pods/log"] == ["get", "list", "watch"]
    assert rows["serviceaccounts/token"] == ["create"]
    assert rows["selfsubjectaccessreviews.authorization.k8s.io"] == ["create"]
    assert "roles.rbac.authorization.k8s.io" not in rows
    for url in ("[/api]", "[/apis/*]", "[/version]", "[/healthz]", "[/.well-known/openid-configuration]"):
        assert "get" in rows[url], url
    elsewhere = _can_i_list(shop, "default")
    assert "deployments.apps" not in elsewhere and "[/api]" in elsewhere


def test_whoami_shows_the_user_and_groups(shop, kubectl):
    rows = dict(line.split(None, 1) for line in shop("auth", "whoami").splitlines())
    assert rows["Username"].strip() == AGENT
    assert rows["Groups"].strip() == "[" + " ".join(AGENT_GROUPS) + "]"
    review = kubectl.run("auth", "whoami", "-o", "json").json()
    assert review["kind"] == "SelfSubjectReview"
    assert review["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]


def test_self_subject_rules_review_is_complete_and_lists_non_resource_rules(shop, client_as):
    authorization = k8s.AuthorizationV1Api(client_as(AGENT))
    review = authorization.create_self_subject_rules_review({"spec": {"namespace": "shop"}})
    assert review.status.incomplete is False
    assert review.status.evaluation_error is None
    urls = {url for rule in review.status.non_resource_rules for url in rule.non_resource_urls}
    assert {"/api", "/api/*", "/version", "/openid/v1/jwks"} <= urls
    assert any(rule.resources == ["pods/log"] or "pods/log" in (rule.resources or [])
               for rule in review.status.resource_rules)
    with pytest.raises(ApiException) as refused:
        authorization.create_self_subject_rules_review({"spec": {}})
    assert (refused.value.status, json.loads(refused.value.body)["message"]) == (400, "no namespace on request")


def test_rules_review_reports_a_binding_to_a_missing_role(kubectl, client_as):
    kubectl("create", "namespace", "shop")
    kubectl("create", "rolebinding", "ghost", "--clusterrole=ghost", "--serviceaccount=shop:agent", "-n", "shop")
    review = k8s.AuthorizationV1Api(client_as(AGENT)).create_self_subject_rules_review(
        {"spec": {"namespace": "shop"}})
    assert review.status.evaluation_error == 'clusterrole.rbac.authorization.k8s.io "ghost" not found'
    assert review.status.incomplete is False


def test_subject_access_review_answers_for_the_subject_named(shop, client):
    authorization = k8s.AuthorizationV1Api(client)
    review = authorization.create_subject_access_review({"spec": {
        "user": AGENT, "groups": AGENT_GROUPS,
        "resourceAttributes": {"verb": "patch", "group": "apps", "resource": "deployments", "namespace": "shop"}}})
    assert review.status.allowed is True
    assert review.status.reason == ('RBAC: allowed by RoleBinding "agent-edit/shop" of ClusterRole "edit" to '
                                    'ServiceAccount "agent/shop"')
    review = authorization.create_subject_access_review({"spec": {
        "user": AGENT, "nonResourceAttributes": {"verb": "get", "path": "/api"}}})
    assert review.status.allowed is False  # no groups named, so none of system:authenticated's bindings apply
    with pytest.raises(ApiException) as invalid:
        authorization.create_subject_access_review({"spec": {"resourceAttributes": {"verb": "get"}}})
    assert invalid.value.status == 422
    assert json.loads(invalid.value.body)["message"] == (
        'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user '
        'or group must be specified')


def test_only_the_privileged_may_review_others(shop, client_as):
    with pytest.raises(ApiException) as refused:
        k8s.AuthorizationV1Api(client_as(AGENT)).create_subject_access_review({"spec": {
            "user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == (
        f'subjectaccessreviews.authorization.k8s.io is forbidden: User "{AGENT}" cannot create resource '
        f'"subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope')


def test_local_subject_access_review_stays_in_its_namespace(kubectl, client_as):
    kubectl("create", "namespace", "shop")
    kubectl("create", "rolebinding", "lead-admin", "--clusterrole=admin", "--serviceaccount=shop:lead", "-n", "shop")
    authorization = k8s.AuthorizationV1Api(client_as("system:serviceaccount:shop:lead"))
    review = authorization.create_namespaced_local_subject_access_review("shop", {
        "metadata": {"namespace": "shop"},
        "spec": {"user": "system:serviceaccount:shop:lead",
                 "resourceAttributes": {"verb": "delete", "resource": "secrets", "namespace": "shop"}}})
    assert review.status.allowed is True
    with pytest.raises(ApiException) as invalid:
        authorization.create_namespaced_local_subject_access_review("shop", {
            "metadata": {"namespace": "shop"},
            "spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                           "namespace": "default"}}})
    assert json.loads(invalid.value.body)["message"] == (
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid '
        'value: "default": must match metadata.namespace')
    with pytest.raises(ApiException) as refused:
        authorization.create_namespaced_local_subject_access_review("default", {
            "metadata": {"namespace": "default"},
            "spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                           "namespace": "default"}}})
    assert refused.value.status == 403


def test_a_created_token_authenticates(shop, kubectl, client):
    token = shop("create", "token", "agent", "-n", "shop").strip()
    assert token.count(".") == 2
    authentication = k8s.AuthenticationV1Api(client)
    review = authentication.create_token_review({"spec": {"token": token}})
    assert review.status.authenticated is True
    assert (review.status.user.username, review.status.user.groups) == (AGENT, AGENT_GROUPS)
    assert review.status.audiences == ["https://kubernetes.default.svc.cluster.local"]
    # kubectl with nothing but that token acts as the service account.
    assert kubectl("--token", token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}") == AGENT
    assert "Forbidden" in kubectl.fails("--token", token, "get", "pods", "-n", "default").stderr

    wrong_audience = authentication.create_token_review({"spec": {"token": token, "audiences": ["vault"]}})
    assert wrong_audience.status.authenticated is None
    assert wrong_audience.status.error == ('token audiences ["https://kubernetes.default.svc.cluster.local"] is '
                                           'invalid for the target audiences ["vault"]')
    bogus = authentication.create_token_review({"spec": {"token": "not-a-token"}})
    assert (bogus.status.authenticated, bogus.status.error) == (None, "invalid bearer token")


def test_token_reviews_need_their_own_permission_and_a_token(shop, client_as, client):
    with pytest.raises(ApiException) as refused:
        k8s.AuthenticationV1Api(client_as(AGENT)).create_token_review({"spec": {"token": "x"}})
    assert refused.value.status == 403
    with pytest.raises(ApiException) as empty:
        k8s.AuthenticationV1Api(client).create_token_review({"spec": {"token": ""}})
    assert (empty.value.status, json.loads(empty.value.body)["message"]) == (
        400, "token is required for TokenReview in authentication")


def test_can_i_and_whoami_answer_for_an_impersonated_user(shop, kubectl):
    assert kubectl("auth", "can-i", "create", "deployments", "-n", "shop", "--as", AGENT).strip() == "yes"
    result = kubectl.run("auth", "can-i", "create", "deployments", "-n", "default", "--as", AGENT, check=False)
    assert (result.stdout.strip(), result.returncode) == ("no", 1)
    rows = dict(line.split(None, 1) for line in kubectl("auth", "whoami", "--as", "bob", "--as-group", "devs")
                .splitlines())
    assert (rows["Username"].strip(), rows["Groups"].strip()) == ("bob", "[devs system:authenticated]")
