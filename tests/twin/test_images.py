"""The image registry model and the kubelet's image manager: references, pulls, back-off, architectures."""

from __future__ import annotations

import re

import pytest

from pytest_itbench.twin.images import InvalidReference, PullError, default_registry, parse_reference

from tests.conftest import KUBECTL, Kubectl
from tests.twin.kubelet_helpers import (container, create_pod, events, kubelet_twin, log_text, messages,
                                        table_status, warp_until)


@pytest.mark.parametrize("text, normalized", [
    ("nginx", "docker.io/library/nginx:latest"),
    ("nginx:1.27", "docker.io/library/nginx:1.27"),
    ("library/nginx:1.27-alpine", "docker.io/library/nginx:1.27-alpine"),
    ("docker.io/bitnami/kafka:3.7", "docker.io/bitnami/kafka:3.7"),
    ("ghcr.io/open-telemetry/demo:1.12.0-frontend", "ghcr.io/open-telemetry/demo:1.12.0-frontend"),
    ("localhost:5000/app", "localhost:5000/app:latest"),
    ("quay.io/prometheus/prometheus:v2.55.1", "quay.io/prometheus/prometheus:v2.55.1"),
])
def test_references_are_normalized_as_containerd_does(text, normalized):
    assert str(parse_reference(text)) == normalized


@pytest.mark.parametrize("text, message", [
    ("Nginx:1.27", "invalid reference format: repository name (library/Nginx) must be lowercase"),
    ("nginx:1.27:extra", "invalid reference format"),
    ("nginx@sha256:abc", "invalid reference format"),
    ("-nginx", "invalid reference format"),
])
def test_malformed_references_are_refused(text, message):
    with pytest.raises(InvalidReference, match=re.escape(message)):
        parse_reference(text)


def _pull(ref: str, arch: str = "amd64"):
    return default_registry().pull(parse_reference(ref), arch)


def test_the_registry_holds_the_images_of_the_astronomy_shop_and_common_bases():
    for ref in ("nginx:1.27.3", "busybox:1.36.1", "alpine:3.20", "redis:7.4-alpine", "valkey/valkey:8.0-alpine",
                "postgres:17.0", "apache/kafka:3.9.0", "python:3.12-slim", "node:22-alpine", "golang:1.23",
                "curlimages/curl:8.11.0", "ghcr.io/open-telemetry/demo:1.12.0-adservice",
                "ghcr.io/open-telemetry/demo:2.0.2-product-catalog", "ghcr.io/open-feature/flagd:v0.11.4",
                "otel/opentelemetry-collector-contrib:0.113.0", "jaegertracing/all-in-one:1.62.0",
                "quay.io/prometheus/prometheus:v2.55.1", "grafana/grafana:11.3.0", "mongo:4.4.6",
                "memcached:1.6.7", "deathstarbench/hotel-reservation:latest"):
        image = _pull(ref)
        assert image.digest.startswith("sha256:") and image.size > 100_000, ref
    assert _pull("nginx:1.27").size > 50_000_000 > _pull("busybox:1.36").size


def test_what_the_registry_does_not_hold_fails_with_containerds_words():
    with pytest.raises(PullError) as tag:
        _pull("nginx:1.99")
    assert str(tag.value) == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.99": failed '
        'to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found')
    with pytest.raises(PullError) as repo:
        _pull("acme/storefront:v2")
    assert str(repo.value).startswith("rpc error: code = Unknown desc = failed to pull and unpack image "
                                      '"docker.io/acme/storefront:v2": failed to resolve reference')
    assert str(repo.value).endswith("pull access denied, repository does not exist or may require authorization: "
                                    "server message: insufficient_scope: authorization failed")
    with pytest.raises(PullError) as host:
        _pull("registry.acme.internal/shop/cart:1.0")
    assert "dial tcp: lookup registry.acme.internal on 172.18.0.1:53: no such host" in str(host.value)
    with pytest.raises(PullError) as platform:
        _pull("nginx:1.27", arch="s390x")
    assert str(platform.value).endswith("no match for platform in manifest: not found")


def test_a_digest_the_registry_served_can_be_pulled_and_an_unknown_one_cannot():
    registry = default_registry()
    image = registry.pull(parse_reference("nginx:1.27"), "amd64")
    pinned = registry.pull(parse_reference(image.repo_digest), "amd64")
    assert pinned.digest == image.digest
    with pytest.raises(PullError, match="not found"):
        registry.pull(parse_reference("nginx@sha256:" + "0" * 64), "amd64")


def test_a_missing_image_backs_off_and_setting_a_good_image_heals_the_pod():
    with kubelet_twin() as twin:
        create_pod(twin, "shop", [{"name": "app", "image": "nginx:1.99"}])
        warp_until(twin, lambda: table_status(twin, "shop")[1] == "ErrImagePull", 20)
        waiting = container(twin, "shop")["state"]["waiting"]
        assert waiting["message"].startswith('rpc error: code = NotFound desc = failed to pull and unpack image '
                                             '"docker.io/library/nginx:1.99"')
        warp_until(twin, lambda: table_status(twin, "shop")[1] == "ImagePullBackOff", 40)
        assert container(twin, "shop")["state"]["waiting"] == {"reason": "ImagePullBackOff",
                                                              "message": 'Back-off pulling image "nginx:1.99"'}
        failed_pulls, previous = [], None
        for _ in range(640):
            twin.warp(1)
            reason = table_status(twin, "shop")[1]
            if reason == "ErrImagePull" and previous != reason:
                failed_pulls.append(twin.clock.now())
            previous = reason
        gaps = [b - a for a, b in zip(failed_pulls, failed_pulls[1:])]
        # Each failed pull doubles the wait before the next (from here on 40 s, 80 s, ... up to 5 min), which
        # the pod worker's 10-15 s resyncs round up.
        for gap, back_off in zip(gaps, (40, 80, 160, 300)):
            assert back_off <= gap <= back_off + 16, gaps
        assert len(gaps) >= 4
        pulling = events(twin, "shop", "Pulling")[0]
        assert pulling["message"] == 'Pulling image "nginx:1.99"' and pulling["count"] >= 3
        assert "Error: ErrImagePull" in messages(twin, "shop", "Failed")
        assert "Error: ImagePullBackOff" in messages(twin, "shop", "Failed")
        back_off = events(twin, "shop", "BackOff")[0]
        assert back_off["type"] == "Normal" and back_off["message"] == 'Back-off pulling image "nginx:1.99"'
        assert any(m.startswith('Failed to pull image "nginx:1.99": rpc error: code = NotFound')
                   for m in messages(twin, "shop", "Failed"))

        from pytest_itbench.twin.store import clone
        pods = twin.api.catalog.lookup("", "v1", "pods")
        fixed = clone(twin.api.get(pods, "default", "shop"))
        fixed["spec"]["containers"][0]["image"] = "nginx:1.27"
        twin.api.update(pods, "default", "shop", fixed, twin.admin_ctx)
        warp_until(twin, lambda: table_status(twin, "shop")[1] == "Running", 10)
        assert container(twin, "shop")["restartCount"] == 0


def test_pull_policy_and_the_nodes_image_store():
    with kubelet_twin() as twin:
        create_pod(twin, "first", [{"name": "app", "image": "nginx:1.27"}])
        create_pod(twin, "second", [{"name": "app", "image": "redis:7.4"}])
        twin.warp(15)
        # One pull at a time per node: the second waited for the first.
        second = messages(twin, "second", "Pulled")[0]
        took, with_wait = re.search(r" in ([\d.]+m?s) \(([\d.]+m?s) including waiting\)", second).groups()
        assert _seconds(with_wait) > _seconds(took)
        create_pod(twin, "again", [{"name": "app", "image": "nginx:1.27"}])
        create_pod(twin, "always", [{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "Always"}])
        create_pod(twin, "never", [{"name": "app", "image": "busybox:1.36", "imagePullPolicy": "Never"}])
        twin.warp(15)
        assert messages(twin, "again", "Pulled") == ['Container image "nginx:1.27" already present on machine']
        assert messages(twin, "always", "Pulling") == ['Pulling image "nginx:1.27"']
        assert table_status(twin, "never")[1] == "ErrImageNeverPull"
        assert messages(twin, "never", "ErrImageNeverPull") == [
            'Container image "busybox:1.36" is not present with pull policy of Never']


def _seconds(text: str) -> float:
    return float(text[:-2]) / 1000 if text.endswith("ms") else float(text[:-1])


def test_an_invalid_image_name_is_reported_by_the_kubelet():
    with kubelet_twin() as twin:
        create_pod(twin, "upper", [{"name": "app", "image": "Nginx:1.27"}])
        twin.warp(5)
        assert table_status(twin, "upper")[1] == "InvalidImageName"
        message = ('Failed to apply default image tag "Nginx:1.27": couldn\'t parse image name "Nginx:1.27": invalid '
                   'reference format: repository name (library/Nginx) must be lowercase')
        assert container(twin, "upper")["state"]["waiting"]["message"] == message
        assert messages(twin, "upper", "InspectFailed") == [message]


def test_an_image_for_another_architecture_pulls_but_cannot_execute():
    with kubelet_twin() as twin:
        create_pod(twin, "arm", [{"name": "web", "image": "arm64v8/nginx:1.27"}])
        warp_until(twin, lambda: container(twin, "arm").get("restartCount", 0) >= 2, 60)
        assert messages(twin, "arm", "Pulled")[0].startswith('Successfully pulled image "arm64v8/nginx:1.27"')
        last = container(twin, "arm")["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (255, "Error")
        assert log_text(twin, "arm", "web", previous=True) == "exec /docker-entrypoint.sh: exec format error\n"
        twin.warp(30)
        assert table_status(twin, "arm")[1] == "CrashLoopBackOff"


def test_a_node_whose_platform_an_image_index_lacks_cannot_pull_it():
    with kubelet_twin(nodes=0) as twin:
        twin.add_node("mainframe", arch="s390x")
        create_pod(twin, "web", [{"name": "web", "image": "nginx:1.27"}], node="mainframe")
        twin.warp(10)
        assert table_status(twin, "web")[1] in ("ErrImagePull", "ImagePullBackOff")
        assert any(m.endswith("no match for platform in manifest: not found") for m in messages(twin, "web", "Failed"))


@pytest.mark.kubectl
def test_kubectl_describe_shows_the_pull_back_off_and_set_image_repairs_it(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    with kubelet_twin(serve=True) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        kubectl("run", "shop", "--image=nginx:1.99", "--overrides",
                '{"spec": {"nodeName": "itbench-worker"}}')
        twin.warp(120)
        assert kubectl("get", "pod", "shop", "--no-headers").split()[2] in ("ImagePullBackOff", "ErrImagePull")
        described = kubectl("describe", "pod", "shop")
        assert re.search(r"Normal\s+BackOff\s+.*Back-off pulling image \"nginx:1.99\"", described)
        assert re.search(r"Warning\s+Failed\s+.*Error: ImagePullBackOff", described)
        assert re.search(r"Normal\s+Pulling\s+\S+ \(x\d over \S+\)\s+kubelet\s+Pulling image \"nginx:1.99\"", described)
        kubectl("set", "image", "pod/shop", "shop=nginx:1.27")
        twin.warp(10)
        assert kubectl("get", "pod", "shop", "--no-headers").split()[1:3] == ["1/1", "Running"]
