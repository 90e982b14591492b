"""Whether a call reaches its callee is decided from cluster state, rule by rule: each test breaks one thing and
checks what the caller sees (its client spans fail, and its log names the cause); the control cases show the
same objects working when the rule allows the call."""

from __future__ import annotations

import pytest

from .probe import NAMESPACE, apply, calls, client_log, delete, deployment, namespace, probe_twin, service


@pytest.fixture
def twin():
    twin = probe_twin()
    yield twin
    twin.stop()


def run(twin, *objects, seconds: float = 60) -> tuple[float, float]:
    apply(twin, namespace(), *objects)
    twin.warp(seconds)
    return calls(twin)


def fails_with(twin, words: str) -> None:
    ok, failed = calls(twin)
    assert ok == 0 and failed > 0, (ok, failed)
    assert any(words in line for line in client_log(twin)), client_log(twin)[-3:]


def server(**kw) -> dict:
    return deployment("server", **kw)


def client(address: str = "server:9000", **env) -> dict:
    return deployment("client", {"SERVER_ADDR": address, **env})


def test_a_healthy_call_succeeds():
    twin = probe_twin()
    ok, failed = run(twin, server(), service(), client())
    assert failed == 0 and ok > 500
    twin.stop()


def test_a_missing_service_does_not_resolve(twin):
    run(twin, server(), client())
    fails_with(twin, "lookup server on 10.96.0.10:53: no such host")


def test_a_port_the_service_does_not_have_times_out(twin):
    run(twin, server(), service(), client("server:9999"))
    fails_with(twin, "context deadline exceeded")


def test_a_service_without_ready_endpoints_refuses(twin):
    scaled = server()
    scaled["spec"]["replicas"] = 0
    run(twin, scaled, service(), client())
    fails_with(twin, "connect: connection refused")


def test_a_selector_that_matches_no_pod_refuses(twin):
    run(twin, server(), service(selector={"app": "nothing"}), client())
    fails_with(twin, "connect: connection refused")


def test_a_numbered_target_port_nothing_listens_on_refuses(twin):
    run(twin, server(), service(target_port=9100), client())
    fails_with(twin, "connect: connection refused")


def test_a_named_target_port_reaches_the_container_port_of_that_name(twin):
    ok, failed = run(twin, server(ports=[{"name": "rpc", "containerPort": 9000}]), service(target_port="rpc"),
                     client())
    assert failed == 0 and ok > 0


def test_a_named_target_port_the_pod_does_not_declare_has_no_endpoint(twin):
    run(twin, server(ports=[{"name": "rpc", "containerPort": 9000}]), service(target_port="grpc"), client())
    fails_with(twin, "connect: connection refused")


def test_the_server_listens_where_its_environment_says(twin):
    run(twin, server(env={"PORT": "9100"}), service(), client())
    fails_with(twin, "connect: connection refused")


def test_a_service_in_another_namespace_resolves_by_its_qualified_name(twin):
    elsewhere = server()
    elsewhere["metadata"]["namespace"] = "other"
    remote = service()
    remote["metadata"]["namespace"] = "other"
    ok, failed = run(twin, namespace("other"), elsewhere, remote, client("server.other:9000"))
    assert failed == 0 and ok > 0


# ---- NetworkPolicy ---------------------------------------------------------------------------------------------------

def policy(name: str, pod_selector: dict, types: list[str], ingress: list | None = None,
           egress: list | None = None) -> dict:
    spec = {"podSelector": pod_selector, "policyTypes": types}
    if ingress is not None:
        spec["ingress"] = ingress
    if egress is not None:
        spec["egress"] = egress
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


def test_a_deny_all_ingress_policy_drops_the_connection(twin):
    run(twin, server(), service(), client(), policy("deny-all", {}, ["Ingress"]))
    fails_with(twin, "context deadline exceeded")


def test_a_policy_allowing_the_caller_on_the_port_lets_it_through(twin):
    allow = [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": [{"port": 9000}]}]
    ok, failed = run(twin, server(), service(), client(),
                     policy("deny-all", {}, ["Ingress"]), policy("allow-client", {"matchLabels": {"app": "server"}},
                                                                  ["Ingress"], ingress=allow))
    assert failed == 0 and ok > 0


def test_a_policy_allowing_another_port_does_not(twin):
    allow = [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": [{"port": 9100}]}]
    run(twin, server(), service(), client(), policy("only-9100", {"matchLabels": {"app": "server"}}, ["Ingress"],
                                                    ingress=allow))
    fails_with(twin, "context deadline exceeded")


def test_a_policy_allowing_a_named_port_matches_the_container_port(twin):
    allow = [{"from": [{"podSelector": {}}], "ports": [{"port": "rpc"}]}]
    ok, failed = run(twin, server(ports=[{"name": "rpc", "containerPort": 9000}]), service(), client(),
                     policy("named", {"matchLabels": {"app": "server"}}, ["Ingress"], ingress=allow))
    assert failed == 0 and ok > 0


def test_a_policy_allowing_only_another_namespace_drops_the_caller(twin):
    allow = [{"from": [{"namespaceSelector": {"matchLabels": {"team": "other"}}}]}]
    run(twin, server(), service(), client(), policy("other-team", {}, ["Ingress"], ingress=allow))
    fails_with(twin, "context deadline exceeded")


def test_a_policy_allowing_the_callers_namespace_by_label_lets_it_through(twin):
    allow = [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}}]}]
    ok, failed = run(twin, server(), service(), client(), policy("same-ns", {}, ["Ingress"], ingress=allow))
    assert failed == 0 and ok > 0


def test_an_ip_block_covering_the_pod_network_lets_it_through_and_its_exception_does_not(twin):
    allow = [{"from": [{"ipBlock": {"cidr": "10.244.0.0/16"}}]}]
    ok, failed = run(twin, server(), service(), client(), policy("pods", {}, ["Ingress"], ingress=allow))
    assert failed == 0 and ok > 0
    other = probe_twin()
    excepted = [{"from": [{"ipBlock": {"cidr": "10.244.0.0/16", "except": ["10.244.0.0/17"]}}]}]
    run(other, server(), service(), client(), policy("pods", {}, ["Ingress"], ingress=excepted))
    fails_with(other, "context deadline exceeded")
    other.stop()


def test_an_egress_policy_without_dns_makes_names_time_out(twin):
    run(twin, server(), service(), client(), policy("no-egress", {"matchLabels": {"app": "client"}}, ["Egress"],
                                                    egress=[]))
    fails_with(twin, "lookup server on 10.96.0.10:53: i/o timeout")


def test_an_egress_policy_allowing_dns_and_the_server_lets_it_through(twin):
    egress = [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]},
              {"to": [{"podSelector": {"matchLabels": {"app": "server"}}}], "ports": [{"port": 9000}]}]
    ok, failed = run(twin, server(), service(), client(),
                     policy("dns-and-server", {"matchLabels": {"app": "client"}}, ["Egress"], egress=egress))
    assert failed == 0 and ok > 0


# ---- DNS policy -----------------------------------------------------------------------------------------------------

def test_dns_policy_default_resolves_no_service(twin):
    caller = client()
    caller["spec"]["template"]["spec"]["dnsPolicy"] = "Default"
    run(twin, server(), service(), caller)
    fails_with(twin, "lookup server on 172.18.0.1:53: no such host")


def test_dns_policy_none_with_the_cluster_dns_and_search_path_resolves(twin):
    caller = client()
    caller["spec"]["template"]["spec"].update(
        dnsPolicy="None", dnsConfig={"nameservers": ["10.96.0.10"], "searches": [f"{NAMESPACE}.svc.cluster.local"]})
    ok, failed = run(twin, server(), service(), caller)
    assert failed == 0 and ok > 0


def test_dns_policy_none_with_an_outside_resolver_resolves_nothing(twin):
    caller = client()
    caller["spec"]["template"]["spec"].update(dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]})
    run(twin, server(), service(), caller)
    fails_with(twin, "lookup server on 8.8.8.8:53: no such host")


# ---- credentials ----------------------------------------------------------------------------------------------------

def test_the_matching_credential_is_accepted(twin):
    ok, failed = run(twin, server(args=["--requirepass", "s3cret"]), service(), client(PASSWORD="s3cret"))
    assert failed == 0 and ok > 0


def test_a_wrong_credential_is_refused(twin):
    run(twin, server(args=["--requirepass", "s3cret"]), service(), client(PASSWORD="guess"))
    fails_with(twin, "WRONGPASS invalid username-password pair")


def test_no_credential_is_refused_when_the_server_requires_one(twin):
    run(twin, server(args=["--requirepass", "s3cret"]), service(), client())
    fails_with(twin, "NOAUTH Authentication required.")


def test_credentials_come_from_secrets_and_are_read_at_start(twin):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pass", "namespace": NAMESPACE},
              "stringData": {"password": "s3cret"}}
    from_secret = {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "pass", "key": "password"}}}
    srv = server(args=["--requirepass", "$(PASSWORD)"])
    srv["spec"]["template"]["spec"]["containers"][0]["env"] = [from_secret]
    caller = client()
    caller["spec"]["template"]["spec"]["containers"][0]["env"].append(from_secret)
    ok, failed = run(twin, secret, srv, service(), caller)
    assert failed == 0 and ok > 0
    res = twin.api.catalog.lookup("", "v1", "secrets")
    changed = twin.api.get(res, NAMESPACE, "pass")
    changed["data"] = {"password": "Y2hhbmdlZA=="}  # "changed"
    twin.api.update(res, NAMESPACE, "pass", changed, twin.admin_ctx)
    twin.warp(30)
    assert calls(twin)[1] == 0  # running programs keep the credential they started with
    server_pod = next(p for p in twin.store.list("pods", NAMESPACE)[0] if p["metadata"]["name"].startswith("server"))
    delete(twin, "pods", NAMESPACE, server_pod["metadata"]["name"])
    twin.warp(60)
    assert calls(twin)[1] > 0  # the new server requires the new password; the client still presents the old one
    assert any("WRONGPASS" in line for line in client_log(twin))
