"""The container shell's loops, BusyBox ``nc -z`` / ``nslookup`` and ``cp``, in a sandbox of their own.

The network is a stand-in that answers per (host, port) and counts the questions, so the tests see
when the shell asks (each attempt of a loop) and what it makes of the answer.
"""

from __future__ import annotations

import pytest

from pytest_itbench.twin.containers import shell
from pytest_itbench.twin.containers.exec_commands import ShellSession
from pytest_itbench.twin.containers.fs import Directory, File, FileSystem, Link
from pytest_itbench.twin.containers.network import OPEN, REFUSED, TIMED_OUT, UNRESOLVED, Connection
from pytest_itbench.twin.containers.programs import BUSYBOX, DEBIAN, Invocation, Sandbox
from pytest_itbench.twin.containers.timed_shell import BUILTIN, RUNS_BRIEFLY, SLEEPS, TimedShell

POD = {"metadata": {"name": "app", "namespace": "default"}, "status": {"podIP": "10.244.0.5"}}


class Answers:
    """A network whose answers the test sets: ``outcomes[(host, port)]`` is a list used in turn (the last repeats)."""

    def __init__(self, **addresses: str):
        self.addresses = addresses
        self.outcomes: dict[tuple[str, int], list[str]] = {}
        self.asked: list[tuple[str, int]] = []

    def connect(self, pod: dict, host: str, port: int) -> Connection:
        self.asked.append((host, port))
        if host not in self.addresses:
            return Connection(UNRESOLVED)
        queue = self.outcomes.get((host, port), [REFUSED])
        outcome = queue.pop(0) if len(queue) > 1 else queue[0]
        return Connection(outcome, self.addresses[host])

    def resolve(self, pod: dict, host: str) -> str | None:
        return self.addresses.get(host)


def sandbox(network=None, flavor: str = BUSYBOX) -> Sandbox:
    fs = FileSystem(0.0)
    for path in ("/bin", "/etc", "/tmp", "/config-rw"):
        fs.add(path, Directory())
    fs.add("/etc/resolv.conf", File(b"search default.svc.cluster.local\nnameserver 10.96.0.10\n"))
    # A ConfigMap volume as the kubelet's atomic writer lays it out.
    fs.add("/config-ro/..2024_01_01_00_00_00.000000001/demo.flagd.json", File(b'{"flags": {}}\n'))
    fs.add("/config-ro/..data", Link("..2024_01_01_00_00_00.000000001"))
    fs.add("/config-ro/demo.flagd.json", Link("..data/demo.flagd.json"))
    return Sandbox(env={"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, fs=fs,
                   hostname="app", flavor=flavor, workdir="/", user="root", processes=[], started=0.0, now=0.0,
                   exec_pid=7, pod=POD, network=network)


def run(script: str, network=None, flavor: str = BUSYBOX) -> tuple[int, str, str, Sandbox]:
    box = sandbox(network, flavor)
    inv = Invocation(["sh", "-c", script], b"", dict(box.env), "/", box)
    status = ShellSession(inv).run(script)
    out = b"".join(d for fd, d in inv.output if fd == 1).decode()
    err = b"".join(d for fd, d in inv.output if fd == 2).decode()
    return status, out, err, box


def classify(argv: list[str]) -> str:
    return SLEEPS if argv[0] == "sleep" else RUNS_BRIEFLY if argv[0] == "wget" else BUILTIN


def timed(script: str, network) -> tuple[TimedShell, object]:
    box = sandbox(network)
    inv = Invocation(["sh", "-c", script], b"", dict(box.env), "/", box)
    session = TimedShell(inv, classify)
    return session, session.steps(script)


# ---- parsing ---------------------------------------------------------------------------------------------------

def test_until_and_while_loops_parse_into_a_condition_and_a_body():
    [and_or] = shell.parse("until nc -z kafka 9092; do echo waiting; sleep 2; done;")
    [loop] = and_or.pipelines[0].commands
    assert isinstance(loop, shell.Loop) and loop.until
    assert len(loop.condition) == 1 and len(loop.body) == 2
    [first, second] = shell.parse("while false\ndo\n  echo x\ndone && echo after\necho last")
    assert not first.pipelines[0].commands[0].until and first.ops == ["&&"]
    assert second.line == 5


@pytest.mark.parametrize("script, message", [
    ("until true; do echo", 'Syntax error: end of file unexpected (expecting "done")'),
    ("while true", 'Syntax error: end of file unexpected (expecting "do")'),
    ("do echo", 'Syntax error: "do" unexpected'),
    ("echo; done", 'Syntax error: "done" unexpected'),
    ("while true; do :; done extra", "Syntax error: word unexpected"),
])
def test_malformed_loops_are_syntax_errors_in_dashs_words(script, message):
    with pytest.raises(shell.ShellSyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        shell.parse(script)


def test_do_and_done_as_arguments_are_plain_words():
    status, out, _, _ = run("echo do done; for_x=1; echo until")
    assert (status, out) == (0, "do done\nuntil\n")


# ---- running loops at once (exec) -------------------------------------------------------------------------------

def test_until_runs_the_body_until_the_condition_succeeds():
    network = Answers(kafka="10.96.0.12")
    network.outcomes[("kafka", 9092)] = [REFUSED, OPEN]
    status, out, err, _ = run("until nc -z -v -w30 kafka 9092; do echo waiting for kafka; done; echo ready", network)
    assert status == 0
    assert out == "waiting for kafka\nready\n"
    assert err == "nc: kafka (10.96.0.12:9092): Connection refused\nkafka (10.96.0.12:9092) open\n"
    assert network.asked == [("kafka", 9092)] * 2


def test_while_stops_when_its_condition_fails_and_the_loop_status_is_the_bodys():
    network = Answers(db="10.96.0.20")
    network.outcomes[("db", 5432)] = [OPEN, REFUSED]
    status, out, _, _ = run("while nc -z db 5432; do echo up; false; done; echo $?", network)
    assert out == "up\n1\n"
    status, out, _, _ = run("while false; do echo never; done; echo $?")
    assert out == "0\n"


def test_a_loop_that_can_never_end_is_recognised_not_spun():
    session_script = "i=0; while true; do echo tick; done"
    box = sandbox()
    inv = Invocation(["sh", "-c", session_script], b"", dict(box.env), "/", box)
    session = ShellSession(inv)
    session.run(session_script)
    assert session.forever is not None
    assert b"".join(d for _, d in inv.output).count(b"tick") == 2  # one turn, then the same turn again


def test_exit_inside_a_loop_ends_the_script():
    status, out, _, _ = run("while true; do echo once; exit 3; done; echo never")
    assert (status, out) == (3, "once\n")


# ---- nc and nslookup ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("outcome, status, err", [
    (OPEN, 0, "kafka (10.96.0.12:9092) open\n"),
    (REFUSED, 1, "nc: kafka (10.96.0.12:9092): Connection refused\n"),
    (TIMED_OUT, 1, "nc: kafka (10.96.0.12:9092): Connection timed out\n"),
])
def test_nc_z_v_reports_each_outcome_in_busybox_words(outcome, status, err):
    network = Answers(kafka="10.96.0.12")
    network.outcomes[("kafka", 9092)] = [outcome]
    assert run("nc -zv -w 5 kafka 9092", network)[0::2] == (status, err)
    assert run("nc -z kafka 9092", network)[0::2] == (status, "")  # quiet without -v


def test_nc_names_an_address_that_does_not_resolve_and_bad_usage():
    network = Answers()
    assert run("nc -z -v kafka 9092", network)[0::2] == (1, "nc: bad address 'kafka'\n")
    assert run("nc -z kafka http", network)[0::2] == (1, "nc: bad port 'http'\n")


def test_nc_is_busybox_only():
    status, _, err, _ = run("nc -z kafka 9092", Answers(kafka="10.96.0.12"), flavor=DEBIAN)
    assert status == 127 and "nc: not found" in err


def test_nslookup_answers_from_the_network():
    status, out, _, _ = run("nslookup kafka", Answers(kafka="10.96.0.12"))
    assert status == 0 and "Address: 10.96.0.12" in out and "Server:\t\t10.96.0.10" in out
    status, out, _, _ = run("nslookup db", Answers())
    assert status == 1 and "NXDOMAIN" in out


# ---- cp ------------------------------------------------------------------------------------------------------------

def test_cp_copies_a_configmap_file_and_cat_prints_the_copy():
    status, out, err, box = run("cp /config-ro/demo.flagd.json /config-rw/demo.flagd.json && "
                                "cat /config-rw/demo.flagd.json")
    assert (status, out, err) == (0, '{"flags": {}}\n', "")
    assert box.fs.get("/config-rw/demo.flagd.json") == File(b'{"flags": {}}\n')
    assert run("cp /config-ro/demo.flagd.json /tmp && cat /tmp/demo.flagd.json")[1] == '{"flags": {}}\n'


@pytest.mark.parametrize("flavor, missing, no_dir, directory", [
    (BUSYBOX, "cp: can't stat '/x': No such file or directory\n",
     "cp: can't create '/nope/f': No such file or directory\n", "cp: omitting directory '/etc'\n"),
    (DEBIAN, "cp: cannot stat '/x': No such file or directory\n",
     "cp: cannot create regular file '/nope/f': No such file or directory\n",
     "cp: -r not specified; omitting directory '/etc'\n"),
])
def test_cp_failures_in_busybox_and_coreutils_words(flavor, missing, no_dir, directory):
    assert run("cp /x /tmp/y", flavor=flavor)[0::2] == (1, missing)
    assert run("cp /etc/resolv.conf /nope/f", flavor=flavor)[0::2] == (1, no_dir)
    assert run("cp /etc /tmp/etc", flavor=flavor)[0::2] == (1, directory)
    status, _, _, box = run("cp -r /etc /tmp/etc", flavor=flavor)
    assert status == 0 and isinstance(box.fs.get("/tmp/etc/resolv.conf"), File)


# ---- timed runs: the shell waits for the world's clock ------------------------------------------------------------

def test_a_timed_loop_suspends_before_each_attempt_and_sleep_spaces_them():
    network = Answers(kafka="10.96.0.12")
    session, steps = timed("until nc -z kafka 9092; do echo waiting; sleep 2; done; echo done", network)
    assert next(steps) == 0.0 and network.asked == []  # suspended before asking
    assert steps.send(None) == 2.0 and network.asked == [("kafka", 9092)]
    assert steps.send(None) == 4.0
    network.outcomes[("kafka", 9092)] = [OPEN]
    with pytest.raises(StopIteration) as finished:
        steps.send(None)
    assert finished.value.value == 0 and session.clock == 4.0
    assert [(w.at, w.data) for w in session.written if w.fd == 1] == [
        (0.0, b"waiting\n"), (2.0, b"waiting\n"), (4.0, b"done\n")]


def test_a_loop_polling_without_a_pause_is_paced_and_a_timeout_takes_its_time():
    network = Answers(kafka="10.96.0.12")
    network.outcomes[("kafka", 9092)] = [TIMED_OUT]
    session, steps = timed("until nc -z -w 5 kafka 9092; do :; done", network)
    assert next(steps) == 0.0
    assert steps.send(None) == 5.0  # the connect timed out after -w seconds
    network.outcomes[("kafka", 9092)] = [REFUSED]
    assert steps.send(None) == 6.0  # refused at once: the next attempt a second later
    assert steps.send(None) == 7.0


def test_a_timed_copy_is_recorded_as_a_file_change():
    session, steps = timed("sleep 1; cp /config-ro/demo.flagd.json /config-rw/demo.flagd.json", Answers())
    with pytest.raises(StopIteration):
        next(steps)
    assert [(f.at, f.path, f.content) for f in session.files] == [
        (1.0, "/config-rw/demo.flagd.json", b'{"flags": {}}\n')]


def test_an_exec_waiting_on_an_answer_that_cannot_change_within_it_does_not_spin():
    # An exec runs at one instant: the network cannot answer differently on the next turn.
    status, out, _, _ = run("until nc -z db 5432; do echo waiting; done", Answers(db="10.96.0.20"))
    assert out.count("waiting") == 2
