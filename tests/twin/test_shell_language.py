"""The container shell beyond simple commands: for loops, if, groups and subshells, command substitution,
positional parameters, break/continue, test/[, set -e/-x, and the programs seq, gzip, date and uptime.

Every expected output here was read from dash 0.5.12 and BusyBox 1.35 ash running the same script.
"""

from __future__ import annotations

import gzip

import pytest

from pytest_itbench.twin.containers import shell
from pytest_itbench.twin.containers.exec_commands import ShellSession
from pytest_itbench.twin.containers.programs import BUSYBOX, DEBIAN, Invocation

from .test_shell_loops import sandbox


def run(script: str, flavor: str = DEBIAN, args: list[str] | None = None) -> tuple[int, bytes, str]:
    box = sandbox(None, flavor)
    box.now = 1_765_075_512.0  # Sun Dec  7 02:45:12 UTC 2025
    inv = Invocation(["sh", "-c", script], b"", dict(box.env), "/", box)
    status = ShellSession(inv, positional=args or ["sh"]).run(script)
    out = b"".join(d for fd, d in inv.output if fd == 1)
    err = b"".join(d for fd, d in inv.output if fd == 2).decode()
    return status, out, err


BOTH = pytest.mark.parametrize("flavor", [DEBIAN, BUSYBOX])


@BOTH
@pytest.mark.parametrize("script, out", [
    ("for i in $(seq 1 3); do echo $i; done", "1\n2\n3\n"),
    ('for i in a "b c" d; do echo "[$i]"; done; echo $i', "[a]\n[b c]\n[d]\nd\n"),
    ("for w in $(echo \"a b\" c); do echo \"<$w>\"; done", "<a>\n<b>\n<c>\n"),
    ('x=$(echo hi; echo there); echo "$x"; echo $x', "hi\nthere\nhi there\n"),
    ("echo `echo a \\`echo b\\``", "a b\n"),
    ('echo "$(echo "inner quoted")"', "inner quoted\n"),
    ("echo $(echo a; echo b)", "a b\n"),
    ("if false; then echo a; elif true; then echo b; else echo c; fi", "b\n"),
    ("if false; then echo a; fi; echo $?", "0\n"),
    ("! true; echo $?; ! false; echo $?", "1\n0\n"),
    ("{ echo a; echo b; } | wc -l", "2\n"),
    ("(cd /tmp; x=1; exit 3); echo $? $x; pwd", "3\n/\n"),
    ("for i in 1 2 3; do for j in a b; do if [ $j = b ]; then continue 2; fi; echo $i$j; done; done", "1a\n2a\n3a\n"),
    ("for i in 1 2 3; do echo $i; break; done; echo after", "1\nafter\n"),
    ("x=$(false); echo $?", "1\n"),
    ("for f in 1 2; do echo $f; done > /tmp/out; cat /tmp/out", "1\n2\n"),
    ("for i in 1 2; do echo $i; done | cat", "1\n2\n"),
    ("break; echo ok", "ok\n"),
    ('x="a  b"; y=$x; echo "$y"', "a  b\n"),
    ("set -- a b; echo $# $1 $@; shift; echo $1", "2 a a b\nb\n"),
    ("i=0; while [ $i -lt 3 ]; do echo $i; i=$(echo $i$i | wc -c); done", "0\n"),
    ("[ -d /tmp ] && [ -f /etc/resolv.conf ] && [ ! -e /nope ] && echo files", "files\n"),
    ("[ -n \"\" -o a = a ]; echo $?; [ 3 -gt 2 -a 2 -gt 1 ] && echo y; [ \\( a = a \\) ] && echo p", "0\ny\np\n"),
    ("test; echo $?; [ ]; echo $?; [ -z ]; echo $?", "1\n1\n0\n"),
    ("set -e; false && true; false || true; if false; then :; fi; ! true; while false; do :; done; echo yes",
     "yes\n"),
    ("seq -s, 1 3; seq 1 2 7; seq 0.5 1 2; seq -w 8 10; seq 5 1", "1,2,3\n1\n3\n5\n7\n0.5\n1.5\n08\n09\n10\n"),
    ("echo hi | gzip | gunzip; echo ho | gzip | zcat", "hi\nho\n"),
])
def test_scripts_print_what_dash_and_ash_print(script, out, flavor):
    status, stdout, err = run(script, flavor)
    assert (status, stdout.decode(), err) == (0, out, "")


@pytest.mark.parametrize("script", ["set -e; for i in 1; do false; done; echo no", "set -e; x=$(false); echo got",
                                    "set -e; { false; echo in; }"])
def test_set_e_ends_the_shell_at_an_untested_failure(script):
    assert run(script) == (1, b"", "")


def test_a_substitutions_stderr_is_the_shells_not_the_commands():
    assert run("echo $(echo a; echo b >&2) 2>/dev/null") == (0, b"a\n", "b\n")


def test_positional_parameters_come_from_sh_c_arguments():
    status, out, _ = run('echo "$0" "$#" "$1"; for a; do echo "<$a>"; done; for a in "$@"; do echo "[$a]"; done',
                         args=["name", "one", "two words"])
    assert out.decode() == "name 2 one\n<one>\n<two words>\n[one]\n[two words]\n"


@pytest.mark.parametrize("script, dash, ash", [
    ("[ 1 -eq 1", "sh: 1: [: missing ]\n", "sh: missing ]\n"),
    ("[ a = ]", "sh: 1: [: =: argument expected\n", "sh: =: argument expected\n"),
    ("[ a b ]", "sh: 1: [: a: unexpected operator\n", "sh: b: unknown operand\n"),
    ("[ 1 -eq x ]", "sh: 1: [: Illegal number: x\n", "sh: x: bad number\n"),
])
def test_malformed_tests_fail_with_two_in_each_shells_words(script, dash, ash):
    assert run(script, DEBIAN) == (2, b"", dash)
    assert run(script, BUSYBOX) == (2, b"", ash)


def test_a_bad_break_count_ends_the_shell_and_set_x_traces_as_each_shell_does():
    assert run("for i in 1; do break 0; done; echo $?") == (2, b"", "sh: 1: break: Illegal number: 0\n")
    assert run('set -x; echo hi "a b"; x=1', DEBIAN) == (0, b"hi a b\n", "+ echo hi a b\n+ x=1\n")
    assert run('set -x; echo hi "a b"; x=1', BUSYBOX) == (0, b"hi a b\n", "+ echo hi 'a b'\n+ x=1\n")


@pytest.mark.parametrize("script, message", [
    ("if true; then fi", 'Syntax error: "fi" unexpected'),
    ("for 1x in a; do echo; done", "Syntax error: Bad for loop variable"),
    ("echo $(", 'Syntax error: end of file unexpected (expecting ")")'),
    ("for i in a b; do echo $i done", 'Syntax error: end of file unexpected (expecting "done")'),
    ("( )", 'Syntax error: ")" unexpected'),
    ("{ echo a }", 'Syntax error: end of file unexpected (expecting "}")'),
])
def test_malformed_compound_commands_are_dashs_syntax_errors(script, message):
    status, _, err = run(script)
    assert (status, err) == (2, f"sh: 1: {message}\n")
    with pytest.raises(shell.ShellSyntaxError):
        shell.parse(script)


def test_case_and_functions_are_reported_as_beyond_the_twin_not_misread():
    for script in ("case a in a) echo;; esac", "f(){ echo; }"):
        status, out, err = run(script)
        assert status == 2 and out == b"" and "cannot interpret" in err


def test_gzip_writes_a_stream_like_gzip_on_a_pipe():
    status, out, _ = run('echo -n "This is a test string" | gzip')
    assert status == 0 and gzip.decompress(out) == b"This is a test string"
    assert out[:10] == bytes.fromhex("1f8b0800000000000003")  # no name, time 0, OS Unix: the same every run
    assert run("echo hi | gunzip")[::2] == (1, "\ngzip: stdin: not in gzip format\n")
    assert run("echo hi | gunzip", BUSYBOX)[::2] == (1, "gunzip: invalid magic\n")


def test_date_and_uptime_tell_the_twins_time():
    assert run("date")[1] == b"Sun Dec  7 02:45:12 UTC 2025\n"
    assert run("date -u +%Y-%m-%dT%H:%M:%S; date +%s; date -I; date -R")[1].decode().splitlines() == [
        "2025-12-07T02:45:12", "1765075512", "2025-12-07", "Sun, 07 Dec 2025 02:45:12 +0000"]
    status, out, _ = run("uptime")
    assert status == 0 and len(out.splitlines()) == 1
    assert out.decode().startswith(" 02:45:12 up ") and "load average: " in out.decode()
    assert run("seq x")[::2] == (1, "seq: invalid floating point argument: ‘x’\n"
                                    "Try 'seq --help' for more information.\n")
