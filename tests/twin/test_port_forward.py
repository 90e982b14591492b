"""pods/portforward: the Python client's WebSocket channels, kubectl's SPDY (plain and tunnelled over
WebSocket), and what answers at the pod's end (the container model's listeners)."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import time
import zlib

import pytest
from kubernetes import client as k8s, config
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import portforward

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver import spdy
from tests.conftest import KUBECTL, Kubectl

NGINX = {"name": "nginx", "image": "nginx:1.27.3"}


@pytest.fixture(scope="module")
def cluster_pf(tmp_path_factory):
    """One twin with a scheduler and kubelets: an nginx pod behind a Service, a pod that cannot be
    scheduled, a finished pod and one whose image cannot be pulled."""
    with Twin(seed=3, nodes=1, controllers=("kubelet", "scheduler"), telemetry=False, workload=False) as twin:
        path = twin.write_kubeconfig(tmp_path_factory.mktemp("pf") / "kubeconfig")
        configuration = k8s.Configuration()
        config.load_kube_config(config_file=path, client_configuration=configuration)
        api_client = k8s.ApiClient(configuration)
        api = k8s.CoreV1Api(api_client)

        def pod(name: str, containers: list, **spec) -> None:
            api.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod",
                                                  "metadata": {"name": name, "labels": {"app": name}},
                                                  "spec": {"containers": containers, **spec}})
        pod("web", [NGINX])
        pod("unplaced", [NGINX], nodeSelector={"disk": "none-has-it"})
        pod("done", [{"name": "job", "image": "busybox:1.36", "command": ["sh", "-c", "echo done"]}],
            restartPolicy="Never")
        pod("broken", [{"name": "app", "image": "nginx:no-such-tag"}])
        api.create_namespaced_service("default", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                                                  "spec": {"selector": {"app": "web"},
                                                           "ports": [{"port": 8080, "targetPort": 80}]}})
        twin.warp(10)
        assert api.read_namespaced_pod("web", "default").status.phase == "Running"
        assert api.read_namespaced_pod("done", "default").status.phase == "Succeeded"
        yield twin, api
        api_client.close()


def _sandbox(api, name: str) -> tuple[str, str]:
    import hashlib
    import uuid
    digest = hashlib.sha256(f"sandbox/{api.read_namespaced_pod(name, 'default').metadata.uid}".encode()).hexdigest()
    return digest, f"/var/run/netns/cni-{uuid.UUID(digest[:32])}"


def _refused(api, name: str, port: int) -> str:
    sandbox, netns = _sandbox(api, name)
    return (f"error forwarding port {port} to pod {sandbox}, uid : failed to execute portforward in network "
            f'namespace "{netns}": failed to connect to localhost:{port} inside namespace "{sandbox}", IPv4: dial '
            f"tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: connection "
            "refused ")


def _http(sock, request: bytes) -> bytes:
    """One response read by its Content-Length, none for HEAD (the connection stays open)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length and not request.startswith(b"HEAD "):
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return head + b"\r\n\r\n" + body


# ---- the Python client: WebSocket channels --------------------------------------------------------------

def test_http_through_the_python_clients_tunnel_gets_nginxs_answers_and_its_access_log(cluster_pf):
    twin, api = cluster_pf
    pf = portforward(api.connect_get_namespaced_pod_portforward, "web", "default", ports="80")
    sock = pf.socket(80)
    sock.setblocking(True)
    sock.settimeout(5)
    try:
        first = _http(sock, b"GET / HTTP/1.1\r\nHost: web\r\nUser-Agent: pf-test/1\r\n\r\n")
        # A second request on the same connection: HTTP/1.1 keeps it open; a missing path is nginx's 404 page.
        second = _http(sock, b"GET /missing HTTP/1.1\r\nHost: web\r\n\r\n")
    finally:
        sock.close()
    head, _, body = first.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Server: nginx/1.27.3" in head and b"Content-Length: 615" in head
    assert b"<h1>Welcome to nginx!</h1>" in body and len(body) == 615
    assert second.startswith(b"HTTP/1.1 404 Not Found\r\n")
    assert second.endswith(b"<hr><center>nginx/1.27.3</center>\r\n</body>\r\n</html>\r\n")
    logs = api.read_namespaced_pod_log("web", "default")
    assert '"GET / HTTP/1.1" 200 615 "-" "pf-test/1" "-"' in logs
    assert logs.splitlines()[-1].startswith("127.0.0.1 - - [") and '"GET /missing HTTP/1.1" 404 153' in logs


def test_several_ports_in_one_request_and_a_refused_one_reports_containerds_error(cluster_pf):
    twin, api = cluster_pf
    pf = portforward(api.connect_get_namespaced_pod_portforward, "web", "default", ports="81,80")
    refused = pf.socket(81)
    refused.setblocking(True)
    refused.settimeout(5)
    assert refused.recv(1024) == b""  # the client closes a port whose error channel spoke
    assert pf.error(81) == _refused(api, "web", 81)
    sock = pf.socket(80)
    sock.setblocking(True)
    sock.settimeout(5)
    try:
        head = _http(sock, b"HEAD / HTTP/1.1\r\nHost: web\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"Accept-Ranges: bytes\r\n\r\n")
    finally:
        sock.close()
    assert pf.error(80) is None


def _handshake_error(api, name: str) -> str:
    with pytest.raises(ApiException) as caught:
        portforward(api.connect_get_namespaced_pod_portforward, name, "default", ports="80")
    return caught.value.reason


@pytest.mark.parametrize("name, status, message", [
    ("absent", "404 Not Found", 'pods \\"absent\\" not found'),  # the API server's Status
    ("unplaced", "400 Bad Request", "pod unplaced does not have a host assigned"),
    ("done", "500 Internal Server Error", "rpc error: code = Unknown desc = sandbox container is not running"),
])
def test_pods_the_kubelet_cannot_forward_to_fail_the_handshake(cluster_pf, name, status, message):
    twin, api = cluster_pf
    reason = _handshake_error(api, name)
    assert f"Handshake status {status}" in reason and message in reason


def test_a_pod_whose_container_never_started_refuses_connections(cluster_pf):
    twin, api = cluster_pf
    pf = portforward(api.connect_get_namespaced_pod_portforward, "broken", "default", ports="80")
    sock = pf.socket(80)
    sock.setblocking(True)
    sock.settimeout(5)
    assert sock.recv(1024) == b""
    assert pf.error(80) == _refused(api, "broken", 80)


# ---- kubectl: SPDY over WebSocket (1.31's first try) and plain SPDY ---------------------------------------

@pytest.fixture(scope="module")
def kubectl_pf(cluster_pf, tmp_path_factory):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    return Kubectl(cluster_pf[0], tmp_path_factory.mktemp("kubectl-pf"))


def _port_forward(kubectl: Kubectl, *args: str, websockets: bool = True):
    env = dict(kubectl.env, KUBECTL_PORT_FORWARD_WEBSOCKETS="true" if websockets else "false")
    proc = subprocess.Popen([KUBECTL, "port-forward", *args, "-v=6"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "127.0.0.1:" not in line:
        proc.kill()
        raise AssertionError(f"kubectl port-forward printed {line!r}: {proc.communicate()[1]}")
    return proc, int(line.split("127.0.0.1:")[1].split()[0])


def _stop(proc) -> str:
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=5)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[1]


def _get(port: int, path: str = "/") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        return _http(sock, f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.5.0\r\n\r\n".encode())


@pytest.mark.parametrize("websockets, upgrade", [(True, "GET"), (False, "POST")])
def test_kubectl_port_forward_to_a_pod_gets_nginx(kubectl_pf, websockets, upgrade):
    proc, port = _port_forward(kubectl_pf, "pod/web", "0:80", websockets=websockets)
    try:
        answer = _get(port)
        again = _get(port, "/index.html")  # a second local connection: a new stream pair on the same session
    finally:
        stderr = _stop(proc)
    assert answer.startswith(b"HTTP/1.1 200 OK") and b"<h1>Welcome to nginx!</h1>" in answer
    assert again.startswith(b"HTTP/1.1 200 OK")
    assert f"{upgrade} https://" in stderr and "portforward 101 Switching Protocols" in stderr


def test_kubectl_port_forward_to_a_service_resolves_a_pod_and_its_target_port(kubectl_pf):
    proc, port = _port_forward(kubectl_pf, "svc/web", "0:8080")
    try:
        answer = _get(port, "/nope")
    finally:
        _stop(proc)
    assert answer.startswith(b"HTTP/1.1 404 Not Found") and b"nginx/1.27.3" in answer


def test_kubectl_reports_a_refused_port_and_a_pod_that_is_not_running(cluster_pf, kubectl_pf):
    twin, api = cluster_pf
    proc, port = _port_forward(kubectl_pf, "pod/web", "0:81")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(1024) == b""
        proc.wait(timeout=5)
    finally:
        stderr = _stop(proc)
    assert f"an error occurred forwarding {port} -> 81: {_refused(api, 'web', 81)}" in stderr.replace('\\"', '"')
    assert "error: lost connection to pod" in stderr
    result = kubectl_pf.fails("port-forward", "pod/unplaced", "0:80")
    assert "unable to forward port because pod is not running. Current status=Pending" in result.stderr


# ---- the SPDY framing on its own ---------------------------------------------------------------------------

def test_spdy_dictionary_header_blocks_and_frames_round_trip():
    assert len(spdy.DICTIONARY) == 1423 and zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2  # SPDY/3's dictionary
    compressor, reader = spdy.HeaderCompressor(), spdy.FrameReader()
    wire = (spdy.syn_stream(1, {"streamtype": ["error"], "port": ["80"], "requestid": ["0"]}, compressor)
            + spdy.syn_stream(3, {"streamtype": ["data"], "port": ["80"], "requestid": ["0"]}, compressor)
            + b"".join(spdy.data_frames(3, b"x" * 40000, fin=True)) + spdy.ping(7) + spdy.rst_stream(5, spdy.CANCEL))
    frames = [f for i in range(0, len(wire), 7) for f in reader.feed(wire[i:i + 7])]  # fed in small pieces
    assert [(f.type, f.stream_id) for f in frames] == [(1, 1), (1, 3), (0, 3), (0, 3), (6, 0), (3, 5)]
    assert frames[1].headers == {"streamtype": ["data"], "port": ["80"], "requestid": ["0"]}
    assert frames[2].data + frames[3].data == b"x" * 40000 and frames[3].fin and not frames[2].fin
    assert frames[4].ping_id == 7 and frames[5].status == spdy.CANCEL


def test_a_raw_spdy_client_gets_replies_pings_and_a_reset_for_a_stream_without_a_port(cluster_pf):
    twin, api = cluster_pf
    token = twin.server.token_for("admin", ("system:masters",))
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((twin.host, twin.port), timeout=5) as plain, \
            context.wrap_socket(plain, server_hostname=twin.host) as sock:
        sock.sendall((f"POST /api/v1/namespaces/default/pods/web/portforward HTTP/1.1\r\nHost: {twin.host}\r\n"
                      f"Authorization: Bearer {token}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                      "X-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        head, _, rest = head.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101 Switching Protocols") and b"X-Stream-Protocol-Version: portforward" in head
        compressor, reader = spdy.HeaderCompressor(), spdy.FrameReader()
        sock.sendall(spdy.syn_stream(1, {"streamtype": ["error"]}, compressor) + spdy.ping(1)
                     + spdy.syn_stream(3, {"streamtype": ["error"], "port": ["80"], "requestid": ["7"]}, compressor)
                     + spdy.syn_stream(5, {"streamtype": ["data"], "port": ["80"], "requestid": ["7"]}, compressor)
                     + b"".join(spdy.data_frames(5, b"GET / HTTP/1.0\r\n\r\n", fin=True)))
        frames, fins, deadline = reader.feed(rest), set(), time.time() + 5
        while fins != {3, 5} and time.time() < deadline:
            frames += reader.feed(sock.recv(65536))
            fins = {f.stream_id for f in frames if f.type == 0 and f.fin}
        sock.sendall(spdy.goaway(5))
    kinds = [(f.type, f.stream_id) for f in frames if f.type != 0]
    assert (spdy.RST_STREAM, 1) in kinds and (spdy.PING, 0) in kinds  # no port: refused; the ping echoed
    assert (spdy.SYN_REPLY, 3) in kinds and (spdy.SYN_REPLY, 5) in kinds
    data = b"".join(f.data for f in frames if f.type == 0 and f.stream_id == 5)
    assert data.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in data  # HTTP/1.0: nginx closes
    assert b"".join(f.data for f in frames if f.type == 0 and f.stream_id == 3) == b""  # no error
