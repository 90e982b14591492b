"""pods/exec: kubectl exec and the Python client's stream() against containers emulated from pod state."""

from __future__ import annotations

import base64
import json
import re
import ssl
import time
from urllib.parse import quote

import pytest
import websocket
from kubernetes import client as k8s
from kubernetes.stream import stream

from pytest_itbench.twin.apiserver.channels import ChannelProtocol, negotiate
from tests.twin.pod_states import container_status, create_pod, running, set_status, start_running_pod, waiting

CONFIG = {"app.yaml": "port: 8080\nlog_level: info\n", "FEATURE_FLAGS": "checkout-v2", "2fa": "not a variable name"}


@pytest.fixture
def shop(twin):
    """A namespace with a ConfigMap, a Secret and a Service, and a running pod that uses them."""
    pods = twin.api
    ctx = twin.admin_ctx

    def create(obj: dict) -> None:
        res = pods.catalog.for_api_version(obj["apiVersion"], obj["kind"])
        pods.create(res, obj["metadata"].get("namespace"), obj, ctx)

    create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"},
            "data": CONFIG})
    create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "shop"},
            "data": {"password": base64.b64encode(b"hunter2").decode(), "user": base64.b64encode(b"cart").decode()}})
    create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "redis-cart", "namespace": "shop"},
            "spec": {"selector": {"app": "redis"}, "clusterIP": "10.96.88.17",
                     "ports": [{"name": "redis", "port": 6379}]}})
    container = {
        "name": "cart", "image": "ghcr.io/example/cart:1.4", "command": ["/app/cart"], "args": ["--port=8080"],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}},
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}, {"configMapRef": {"name": "settings"}}],
        "env": [
            {"name": "REDIS_ADDR", "value": "$(REDIS_CART_SERVICE_HOST):$(REDIS_CART_SERVICE_PORT)"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
            {"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "FEATURE_FLAGS"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "MEMORY_MB", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                     "divisor": "1Mi"}}},
            {"name": "CPU_REQUEST", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                                       "divisor": "1m"}}},
            {"name": "OPTIONAL", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "x", "optional": True}}},
        ],
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/cart"},
            {"name": "config", "mountPath": "/app/app.yaml", "subPath": "app.yaml"},
            {"name": "credentials", "mountPath": "/var/run/db", "readOnly": True},
            {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
             "readOnly": True},
            {"name": "scratch", "mountPath": "/tmp/cache"},
        ],
    }
    volumes = [
        {"name": "config", "configMap": {"name": "settings"}},
        {"name": "credentials", "secret": {"secretName": "db", "items": [{"key": "password", "path": "db/pass"}]}},
        {"name": "kube-api-access", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}},
        {"name": "scratch", "emptyDir": {}},
    ]
    create_pod(twin, "cart-7c9d8", [container], namespace="shop", volumes=volumes, serviceAccountName="default")
    set_status(twin, "cart-7c9d8", running(twin, "cart", pod_ip="10.244.1.23"), namespace="shop")
    return twin


def parse_env(text: str) -> dict[str, str]:
    """``env`` output as a dict; a line that does not start a variable continues the previous value."""
    env: dict[str, str] = {}
    name = ""
    for line in text.splitlines(keepends=True):
        match = re.match(r"([-._A-Za-z][-._A-Za-z0-9]*)=", line)
        if match:
            name = match.group(1)
            env[name] = line[match.end():]
        else:
            env[name] += line
    return {k: v.removesuffix("\n") for k, v in env.items()}


def test_env_shows_what_the_kubelet_would_set(shop, kubectl):
    env = parse_env(kubectl("exec", "-n", "shop", "cart-7c9d8", "--", "env"))
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert env["HOSTNAME"] == "cart-7c9d8" and env["HOME"] == "/root"
    assert env["CFG_FEATURE_FLAGS"] == "checkout-v2" and env["CFG_app.yaml"] == "port: 8080\nlog_level: info\n"
    # Keys that are not variable names are skipped, as the kubelet skips them (with an event).
    assert env["CFG_2fa"] == "not a variable name" and env["FEATURE_FLAGS"] == "checkout-v2" and "2fa" not in env
    assert env["DB_PASSWORD"] == "hunter2" and env["LOG_LEVEL"] == "checkout-v2"
    assert (env["POD_NAME"], env["POD_IP"]) == ("cart-7c9d8", "10.244.1.23")
    assert (env["MEMORY_MB"], env["CPU_REQUEST"]) == ("256", "100")
    assert "OPTIONAL" not in env
    assert env["REDIS_ADDR"] == "10.96.88.17:6379"
    assert env["REDIS_CART_SERVICE_PORT_REDIS"] == "6379"
    assert env["REDIS_CART_PORT_6379_TCP"] == "tcp://10.96.88.17:6379"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["KUBERNETES_PORT_443_TCP_PROTO"] == "tcp"


def test_service_links_can_be_switched_off_but_the_kubernetes_service_stays(twin, kubectl):
    backend = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend"},
               "spec": {"clusterIP": "10.96.40.2", "ports": [{"port": 80, "targetPort": 8080}]}}
    kubectl("apply", "-f", "-", input=json.dumps(backend))
    start_running_pod(twin, "linked")
    start_running_pod(twin, "unlinked", enableServiceLinks=False)
    assert "BACKEND_SERVICE_HOST=10.96.40.2\n" in kubectl("exec", "linked", "--", "env")
    unlinked = kubectl("exec", "unlinked", "--", "printenv")
    assert "BACKEND_" not in unlinked and "KUBERNETES_SERVICE_HOST=10.96.0.1" in unlinked


def test_printenv_of_a_missing_variable_exits_1(shop, kubectl):
    assert kubectl("exec", "-n", "shop", "cart-7c9d8", "--", "printenv", "DB_PASSWORD") == "hunter2\n"
    missing = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "printenv", "NOPE")
    assert (missing.returncode, missing.stdout, missing.stderr) == (1, "", "command terminated with exit code 1\n")


def test_mounted_config_and_secrets_read_like_files(shop, kubectl):
    def exec_(*argv: str) -> str:
        return kubectl("exec", "-n", "shop", "cart-7c9d8", "--", *argv)
    assert exec_("cat", "/etc/cart/app.yaml") == CONFIG["app.yaml"]
    assert exec_("cat", "/app/app.yaml") == CONFIG["app.yaml"]
    assert exec_("cat", "/var/run/db/db/pass") == "hunter2"
    assert exec_("ls", "/etc/cart").splitlines() == ["2fa", "FEATURE_FLAGS", "app.yaml"]
    hidden = exec_("ls", "-a", "/etc/cart").splitlines()
    assert hidden[:2] == [".", ".."] and "..data" in hidden and any(n.startswith("..20") for n in hidden)
    assert "app.yaml -> ..data/app.yaml" in exec_("ls", "-l", "/etc/cart")
    assert exec_("ls", "/tmp/cache") == ""
    missing = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "cat", "/etc/cart/nope")
    assert missing.stderr == "cat: /etc/cart/nope: No such file or directory\ncommand terminated with exit code 1\n"
    directory = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "ls", "/nowhere")
    assert directory.stderr.startswith("ls: cannot access '/nowhere': No such file or directory\n")
    assert directory.returncode == 2


def test_kubectl_cp_copies_files_out_with_tar(shop, kubectl, tmp_path):
    copied = kubectl.run("cp", "shop/cart-7c9d8:/app/app.yaml", str(tmp_path / "app.yaml"))
    assert copied.stdout == "tar: Removing leading `/' from member names\n"  # kubectl cp relays tar's stderr there
    assert (tmp_path / "app.yaml").read_text() == CONFIG["app.yaml"]
    # Files of a ConfigMap volume are symlinks into ..data, which kubectl cp skips, as on a real cluster.
    skipped = kubectl.run("cp", "shop/cart-7c9d8:/etc/cart/app.yaml", str(tmp_path / "linked.yaml"))
    assert "warning: skipping symlink" in skipped.stderr and not (tmp_path / "linked.yaml").exists()


def test_the_service_account_token_authenticates_as_the_pods_service_account(shop, kubectl):
    def read(name: str) -> str:
        return kubectl("exec", "-n", "shop", "cart-7c9d8", "--", "cat",
                       f"/var/run/secrets/kubernetes.io/serviceaccount/{name}")
    assert read("namespace") == "shop"
    assert read("ca.crt").startswith("-----BEGIN CERTIFICATE-----")
    refused = kubectl.fails("get", "secrets", "-n", "kube-system", f"--token={read('token')}")
    assert 'User "system:serviceaccount:shop:default" cannot list resource "secrets"' in refused.stderr


def test_hostname_ps_echo_and_kubelet_managed_files(shop, kubectl):
    def exec_(*argv: str) -> str:
        return kubectl("exec", "-n", "shop", "cart-7c9d8", "--", *argv)
    assert exec_("hostname") == "cart-7c9d8\n"
    assert exec_("echo", "-n", "hi", "there") == "hi there"
    processes = exec_("ps", "aux").splitlines()
    assert processes[0].split() == ["USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME",
                                    "COMMAND"]
    assert processes[1].split()[1] == "1" and processes[1].endswith("/app/cart --port=8080")
    assert processes[-1].endswith("ps aux")
    assert exec_("cat", "/etc/hosts").endswith("10.244.1.23\tcart-7c9d8\n")
    assert exec_("cat", "/etc/resolv.conf") == ("search shop.svc.cluster.local svc.cluster.local cluster.local\n"
                                                "nameserver 10.96.0.10\noptions ndots:5\n")


def test_shell_one_liners(shop, kubectl):
    def sh(script: str) -> str:
        return kubectl("exec", "-n", "shop", "cart-7c9d8", "--", "sh", "-c", script)
    assert sh("env | grep ^DB_ | wc -l") == "1\n"
    assert sh('cd /etc/cart && cat app.yaml | grep -c port; echo "home=$HOME" done') == "1\nhome=/root done\n"
    assert sh("cat /missing 2>/dev/null || echo fallback") == "fallback\n"
    assert sh("X=1; export X; printenv X") == "1\n"
    unknown = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "sh", "-c", "curl localhost:8080")
    assert (unknown.returncode, unknown.stderr) == (
        127, "sh: 1: curl: not found\ncommand terminated with exit code 127\n")


def test_a_program_missing_from_the_image_fails_to_start_as_under_containerd(shop, kubectl):
    result = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "curl", "localhost")
    assert result.returncode == 1
    message = result.stderr.strip()
    assert message.startswith("error: Internal error occurred: Internal error occurred: error executing command in "
                              'container: failed to exec in container: failed to start exec "')
    assert message.endswith('": OCI runtime exec failed: exec failed: unable to start container process: exec: '
                            '"curl": executable file not found in $PATH: unknown')
    absolute = kubectl.fails("exec", "-n", "shop", "cart-7c9d8", "--", "/usr/bin/zsh")
    assert absolute.stderr.strip().endswith('exec: "/usr/bin/zsh": stat /usr/bin/zsh: no such file or directory: '
                                            'unknown')


def test_images_decide_which_tools_and_messages_there_are(twin, kubectl):
    start_running_pod(twin, "tiny", [{"name": "app", "image": "alpine:3.20"}])
    start_running_pod(twin, "static", [{"name": "app", "image": "gcr.io/distroless/static:nonroot"}])
    assert kubectl.fails("exec", "tiny", "--", "cat", "/x").stderr == (
        "cat: can't open '/x': No such file or directory\ncommand terminated with exit code 1\n")
    assert kubectl.fails("exec", "tiny", "--", "sh", "-c", "nope").stderr == (
        "sh: nope: not found\ncommand terminated with exit code 127\n")
    assert 'exec: "bash": executable file not found in $PATH' in kubectl.fails("exec", "tiny", "--", "bash").stderr
    assert 'exec: "sh": executable file not found in $PATH' in kubectl.fails("exec", "static", "--", "sh").stderr


def test_stdin_is_passed_to_the_command(shop, kubectl):
    assert kubectl("exec", "-i", "-n", "shop", "cart-7c9d8", "--", "cat", input="piped\ndata\n") == "piped\ndata\n"
    script = "hostname\necho $POD_IP\n"
    assert kubectl("exec", "-i", "-n", "shop", "cart-7c9d8", "--", "sh", input=script) == "cart-7c9d8\n10.244.1.23\n"


def test_exec_into_a_container_that_is_not_running(twin, kubectl):
    create_pod(twin, "starting", [{"name": "app", "image": "nginx"}])
    set_status(twin, "starting", waiting("app"))
    create_pod(twin, "unscheduled", [{"name": "app", "image": "nginx"}], node=None)
    start_running_pod(twin, "web")
    assert kubectl.fails("exec", "starting", "--", "env").stderr.strip() == (
        'error: unable to upgrade connection: container not found ("app")')
    assert kubectl.fails("exec", "unscheduled", "--", "env").stderr.strip() == (
        "Error from server (BadRequest): pod unscheduled does not have a host assigned")
    assert kubectl.fails("exec", "web", "-c", "sidecar", "--", "env").stderr.strip() == (
        "Error from server (BadRequest): container sidecar is not valid for pod web")


# ---- the Python client and the protocol variants -----------------------------------------------------------------

def test_python_client_stream_collects_output_and_the_exit_code(shop, client):
    api = k8s.CoreV1Api(client)
    output = stream(api.connect_get_namespaced_pod_exec, "cart-7c9d8", "shop", command=["hostname"],
                    stderr=True, stdin=False, stdout=True, tty=False)
    assert output == "cart-7c9d8\n"
    session = stream(api.connect_get_namespaced_pod_exec, "cart-7c9d8", "shop",
                     command=["sh", "-c", "echo out; echo err >&2; exit 3"], stderr=True, stdin=True,
                     stdout=True, tty=False, _preload_content=False)
    session.run_forever(timeout=10)
    assert (session.read_stdout(), session.read_stderr()) == ("out\n", "err\n")
    assert session.returncode == 3


def _connect(twin, ca_file, protocol: str, command: list[str],
             streams: tuple[str, ...] = ("stdout=1", "stderr=1")) -> websocket.WebSocket:
    ws = websocket.WebSocket(sslopt={"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": str(ca_file)})
    query = "&".join([f"command={quote(c)}" for c in command] + list(streams))
    url = twin.url.replace("https://", "wss://") + f"/api/v1/namespaces/default/pods/web/exec?{query}"
    ws.connect(url, header=[f"Authorization: Bearer {twin.token()}", f"Sec-WebSocket-Protocol: {protocol}"])
    return ws


def _messages(ws: websocket.WebSocket) -> list:
    out = []
    while True:
        opcode, data = ws.recv_data(control_frame=False)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return out
        out.append(data)


def test_v4_reports_the_runtimes_exit_error_and_base64_frames_are_text(twin, tmp_path):
    start_running_pod(twin, "web")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(twin.certificates.ca_pem)
    plain = _messages(_connect(twin, ca_file, "v4.channel.k8s.io", ["printenv", "NOPE"]))
    assert plain[0] == b"\x01"  # the empty message on stdout that opens the session
    status = json.loads(plain[-1][1:])
    assert plain[-1][0] == 3 and status == {
        "metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
        "message": "command terminated with non-zero exit code: error executing command [printenv NOPE], exit code 1",
        "details": {"causes": [{"reason": "ExitCode", "message": "1"}]}}
    encoded = _messages(_connect(twin, ca_file, "v4.base64.channel.k8s.io", ["hostname"]))
    assert encoded[1] == b"1" + base64.b64encode(b"web\n")
    assert json.loads(base64.b64decode(encoded[-1][1:])) == {"metadata": {}, "status": "Success"}


def test_a_tty_merges_stderr_into_stdout_and_interactive_shells_are_refused(twin, tmp_path):
    start_running_pod(twin, "web")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(twin.certificates.ca_pem)
    tty = ("stdout=1", "stderr=1", "tty=1")
    frames = _messages(_connect(twin, ca_file, "v5.channel.k8s.io", ["cat", "/nope", "/etc/hostname"], tty))
    assert frames[1:-1] == [b"\x01cat: /nope: No such file or directory\r\n", b"\x01web\r\n"]
    interactive = _messages(_connect(twin, ca_file, "v5.channel.k8s.io", ["sh"], ("stdin=1",) + tty))
    refusal = json.loads(interactive[-1][1:])
    assert (refusal["status"], refusal["reason"]) == ("Failure", "InternalError")
    assert "interactive terminal sessions are not supported" in refusal["message"]


def test_channel_protocol_negotiation_and_close_signal():
    assert negotiate("v5.channel.k8s.io, v4.channel.k8s.io").name == "v5.channel.k8s.io"
    assert negotiate("SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io").name == "v4.channel.k8s.io"
    assert negotiate(None).name == "channel.k8s.io"
    assert negotiate("v6.channel.k8s.io") is None
    v5, v1 = ChannelProtocol("v5.channel.k8s.io"), ChannelProtocol("channel.k8s.io")
    assert v5.decode(bytes([255, 0])) == (255, b"\x00")
    assert v1.status_frames({"status": "Failure", "message": "boom"}) == [b"\x03boom"]
    assert v1.status_frames({"status": "Success"}) == []


# ---- standard input as a stream --------------------------------------------------------------------------------

def _session(client, command: list[str]):
    """An exec with stdin open, over v5 (the client's first choice), the output read as it comes."""
    api = k8s.CoreV1Api(client)
    session = stream(api.connect_post_namespaced_pod_exec, "web", "default", command=command, stderr=True,
                     stdin=True, stdout=True, tty=False, _preload_content=False)
    assert session.subprotocol == "v5.channel.k8s.io"
    return session


def test_cat_echoes_each_write_before_stdin_closes_and_the_close_signal_ends_it(twin, client):
    start_running_pod(twin, "web")
    session = _session(client, ["/bin/sh", "-c", "cat"])
    session.write_stdin("test-close\n")
    assert session.readline_stdout(timeout=5) == "test-close"
    session.write_stdin("second\n")
    assert session.readline_stdout(timeout=5) == "second" and session.is_open()
    session.close_channel(0)  # v5's close signal: cat reads end of file and exits
    session.run_forever(timeout=5)
    assert not session.is_open() and session.returncode == 0


def test_a_shell_reading_commands_from_stdin_runs_each_as_it_arrives(twin, client):
    start_running_pod(twin, "web")
    session = _session(client, ["/bin/sh"])
    session.write_stdin("echo test string 1\n")
    assert session.readline_stdout(timeout=5) == "test string 1"
    session.write_stdin("read x; echo \"got $x\" >&2\n")
    session.write_stdin("hello\n")
    assert session.readline_stderr(timeout=5) == "got hello" and not session.peek_stdout()
    session.write_stdin("exit 6\n")
    session.run_forever(timeout=5)
    assert not session.is_open() and session.returncode == 6


def test_a_process_writes_before_it_reads_and_one_that_reads_nothing_ignores_open_stdin(twin, client):
    start_running_pod(twin, "web")
    session = _session(client, ["sh", "-c", "echo start; read x; echo \"got $x\"; exit 4"])
    assert session.readline_stdout(timeout=5) == "start"
    session.write_stdin("42\n")
    session.run_forever(timeout=5)
    assert session.read_stdout() == "got 42\n" and session.returncode == 4
    began = time.monotonic()
    quiet = _session(client, ["sh", "-c", "echo hi; echo done >&2"])  # stdin stays open, unread
    quiet.run_forever(timeout=5)
    assert time.monotonic() - began < 2
    assert (quiet.read_stdout(), quiet.read_stderr(), quiet.returncode) == ("hi\n", "done\n", 0)


def test_kubectl_exec_i_feeds_scripts_and_their_files_outlive_the_exec(twin, kubectl):
    start_running_pod(twin, "web")
    text = "alpha\nbeta\ngamma\n"
    assert kubectl("exec", "-i", "web", "--", "sh", "-c", "cat > /tmp/x", input=text) == ""
    assert kubectl("exec", "web", "--", "cat", "/tmp/x") == text
    # The commands of a script share its stdin: read takes a line, cat the rest.
    script = 'read first; cat > /tmp/rest; echo "first=$first"; grep -c a /tmp/rest'
    assert kubectl("exec", "-i", "web", "--", "sh", "-c", script, input=text) == "first=alpha\n2\n"
    assert kubectl("exec", "-i", "web", "--", "sh", "-c", "grep a | wc -l", input=text) == "3\n"
    assert kubectl("exec", "web", "--", "cat", "/tmp/rest") == "beta\ngamma\n"
    # A new container starts from its image again.
    set_status(twin, "web", dict(running(twin, "app"), containerStatuses=[
        container_status("app", {"running": {"startedAt": twin.clock.timestamp()}}, restarts=1)]))
    assert kubectl.fails("exec", "web", "--", "cat", "/tmp/x").returncode == 1


def test_v4_stdin_ends_with_the_connection_and_exit_codes_reach_v4_and_v5(twin, client, kubectl, tmp_path):
    start_running_pod(twin, "web")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(twin.certificates.ca_pem)
    streams = ("stdin=1", "stdout=1", "stderr=1")
    ws = _connect(twin, ca_file, "v4.channel.k8s.io", ["sh", "-c", "read x; echo bye; exit $x"], streams)
    ws.send_binary(b"\x005\n")
    frames = _messages(ws)
    assert frames[1] == b"\x01bye\n"
    assert json.loads(frames[-1][1:])["details"] == {"causes": [{"reason": "ExitCode", "message": "5"}]}
    # v4 has no close signal: stdin ends when the client closes the connection, and the process then exits.
    ws = _connect(twin, ca_file, "v4.base64.channel.k8s.io", ["sh", "-c", "cat > /tmp/v4"], streams)
    ws.send("0" + base64.b64encode(b"kept\n").decode())
    ws.close()
    deadline = time.monotonic() + 5
    while kubectl.run("exec", "web", "--", "cat", "/tmp/v4", check=False).stdout != "kept\n":
        assert time.monotonic() < deadline, "the v4 exec did not end when its connection closed"
        time.sleep(0.05)
    session = _session(client, ["sh", "-c", "cat >/dev/null; exit 7"])
    session.write_stdin("ignored\n")
    session.close_channel(0)
    session.run_forever(timeout=5)
    assert session.returncode == 7
