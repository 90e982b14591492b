"""The CISO evaluator: runs what the agent wrote against the scenario's cluster (docs/ciso.md, "Grading").

Checks: ``policy`` (the artifacts exist and can be used), ``posture`` (the verdict on the cluster) and,
for kyverno-update, ``unchanged`` (the policies it was told to leave alone). A bad artifact is a failed
check that says what is wrong, never an error. Figure: ``ttp``, time to posture.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from kubernetes import config as k8s_config, dynamic
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ..agents.process_group import kill_leader
from .. import ciso_setup
from ..results import TTP, Attachment, CheckResult
from ..scenario.schema import CisoGroundTruth, ExpectedResult, ResourceRef

REPORT_VERSION = "wgpolicyk8s.io/v1alpha2"
SCAN_STEP = 10.0  # cluster seconds between looks at the PolicyReports
SCAN_TIMEOUT = 900.0  # cluster seconds the background scan may take to report on every target
REGO_TIMEOUT = 10.0
EVIDENCE = "collected_data.json"
TAIL = 400  # characters of a script's output quoted in a verdict
_POLICY_KINDS = ("ClusterPolicy", "Policy")
_PARSE_CODES = ("parse", "compile", "syntax", "type")


@pytest.hookimpl
def pytest_itbench_evaluate(trial):
    if trial.scenario.domain != "ciso" or trial.scenario.ciso is None:
        return None
    grade = {"kyverno": _kyverno, "kubectl-opa": _kubectl_opa, "kyverno-update": _kyverno_update,
             "rhel9-ansible-opa": _rhel9_ansible_opa}
    checks = grade[trial.scenario.category](trial)
    passed = all(c.passed for c in checks)
    trial.result.figures[TTP] = round(trial.agent_seconds, 3) if passed else math.inf
    return checks


# ---- artifacts -----------------------------------------------------------------------------------------------------
def workdir(trial) -> str:
    return trial.task.workdir if trial.task is not None else os.path.join(trial.workdir, "agent")


def artifact_paths(trial) -> dict[str, str]:
    """Role -> path of the agent's files: what it submitted, else the file the task asked for, if present."""
    base = workdir(trial)
    submitted = dict(trial.submission.artifacts) if trial.submission is not None else {}
    found = {role: os.path.join(base, path) for role, path in submitted.items()}
    for role, name in trial.scenario.artifacts.items():
        if role not in found and os.path.isfile(os.path.join(base, name)):
            found[role] = os.path.join(base, name)
    return found


def _shown(trial, path: str) -> str:
    base = workdir(trial)
    return os.path.relpath(path, base) if path.startswith(base + os.sep) else path


# ---- kyverno and kyverno-update ------------------------------------------------------------------------------------
def _kyverno(trial) -> list[CheckResult]:
    truth: CisoGroundTruth = trial.scenario.truth
    policy = _apply_policies(trial, required=True)
    if not policy.passed:
        return [policy, CheckResult("posture", False, "not evaluated: no usable policy")]
    return [policy, _posture_from_reports(trial, truth)]


def _kyverno_update(trial) -> list[CheckResult]:
    truth: CisoGroundTruth = trial.scenario.truth
    policy = _apply_policies(trial, required=False)
    if not policy.passed:
        return [policy, CheckResult("posture", False, "not evaluated: the submitted policy files are not usable"),
                _unchanged(trial)]
    return [policy, _posture_from_reports(trial, truth), _unchanged(trial)]


def _policy_files(trial) -> list[str]:
    return [path for role, path in sorted(artifact_paths(trial).items()) if path.endswith((".yaml", ".yml"))]


def _apply_policies(trial, required: bool) -> CheckResult:
    """Apply the agent's policy files with the agent's kubeconfig."""
    files = _policy_files(trial)
    if not files:
        if _live_policies(trial):
            return CheckResult("policy", True, "no policy file handed in; graded on the policies in the cluster")
        wanted = trial.scenario.artifacts.get("policy", "policy.yaml")
        if not required:
            return CheckResult("policy", True, "no policy file handed in and no policy in the cluster")
        return CheckResult("policy", False, f"no policy: neither a file (expected {wanted} in the workdir) nor a "
                                            f"Kyverno policy in the cluster")
    docs: list[dict] = []
    for path in files:
        shown = _shown(trial, path)
        if not os.path.isfile(path):
            return CheckResult("policy", False, f"{shown}: missing (handed in, but not in the workdir)")
        try:
            with open(path, encoding="utf-8") as fh:
                found = ciso_setup.flatten(yaml.safe_load_all(fh))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            return CheckResult("policy", False, f"{shown}: not valid YAML: {_one_line(exc)}")
        for doc in found:
            if not (isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("kyverno.io/")
                    and doc.get("kind") in _POLICY_KINDS):
                kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
                return CheckResult("policy", False, f"{shown}: holds {kind!s}, not a Kyverno ClusterPolicy or "
                                                    f"Policy (apiVersion kyverno.io/v1)")
        if not found:
            return CheckResult("policy", False, f"{shown}: empty")
        docs += found
    api = k8s_config.new_client_from_config(config_file=trial.agent_kubeconfig)
    try:
        problems = ciso_setup.apply_objects(api, docs, trial.namespace or None)
    finally:
        api.close()
    names = ", ".join(ciso_setup.describe(d) for d in docs)
    if problems:
        return CheckResult("policy", False, "applying with the agent's kubeconfig failed: " + "; ".join(problems))
    return CheckResult("policy", True, f"applied {names}")


def _live_policies(trial) -> list[dict]:
    client = dynamic.DynamicClient(trial.cluster.api_client())
    found = []
    for kind in _POLICY_KINDS:
        try:
            resource = client.resources.get(api_version=ciso_setup.KYVERNO, kind=kind)
        except ResourceNotFoundError:
            continue
        found += resource.get().to_dict().get("items", [])
    return found


@dataclass
class _Results:
    """PolicyReport results by resource (kind, namespace, name)."""

    by_resource: dict[tuple, list[dict]] = field(default_factory=dict)

    def of(self, ref: ResourceRef) -> list[dict]:
        return self.by_resource.get((ref.kind, ref.namespace or "", ref.name), [])


def read_reports(api) -> _Results:
    client = dynamic.DynamicClient(api)
    out = _Results()
    for kind in ("PolicyReport", "ClusterPolicyReport"):
        try:
            resource = client.resources.get(api_version=REPORT_VERSION, kind=kind)
        except ResourceNotFoundError:
            continue
        for report in resource.get().to_dict().get("items", []):
            scope = report.get("scope") or {}
            for result in report.get("results") or []:
                targets = [scope] if scope.get("kind") else (result.get("resources") or [])
                for target in targets:
                    key = (target.get("kind"), target.get("namespace") or "", target.get("name"))
                    out.by_resource.setdefault(key, []).append(result)
    return out


def _wait_for_reports(trial, refs: list[ResourceRef]) -> _Results:
    """Warp until every target has results and they held still for one more step (or the time runs out)."""
    api = trial.cluster.api_client()
    waited, previous = 0.0, None
    while True:
        results = read_reports(api)
        summary = {key: sorted((r.get("policy"), r.get("rule"), r.get("result")) for r in rows)
                   for key, rows in results.by_resource.items()}
        if all(results.of(ref) for ref in refs) and summary == previous:
            return results
        if waited >= SCAN_TIMEOUT:
            return results
        previous = summary
        trial.cluster.advance(SCAN_STEP)
        waited += SCAN_STEP


def _rule_matches(wanted: str | None, rule: str | None) -> bool:
    if wanted is None:
        return True
    # Kyverno's autogen names a Pod rule's copies for Pod controllers autogen-<rule> and autogen-cronjob-<rule>.
    return rule in (wanted, f"autogen-{wanted}", f"autogen-cronjob-{wanted}")


def _policy_matches(wanted: str | None, policy: str | None) -> bool:
    return wanted is None or policy == wanted or (policy or "").split("/")[-1] == wanted


def _show(rows: list[dict]) -> str:
    if not rows:
        return "no results"
    return ", ".join(sorted({f"{r.get('policy')}/{r.get('rule')}: {r.get('result')}" for r in rows}))


def _expectations(truth: CisoGroundTruth) -> list[ExpectedResult]:
    if truth.expected:
        return list(truth.expected)
    return ([ExpectedResult(resource=r, result="fail") for r in truth.violating]
            + [ExpectedResult(resource=r, result="pass") for r in truth.compliant])


def _met(expected: ExpectedResult, rows: list[dict]) -> bool:
    mine = [r for r in rows if _policy_matches(expected.policy, r.get("policy"))
            and _rule_matches(expected.rule, r.get("rule"))]
    outcomes = {r.get("result") for r in mine}
    if expected.result == "pass":  # a pass means nothing failed it, too
        return "pass" in outcomes and not outcomes & {"fail", "error"}
    return expected.result in outcomes


def _posture_from_reports(trial, truth: CisoGroundTruth) -> CheckResult:
    expectations = _expectations(truth)
    results = _wait_for_reports(trial, [e.resource for e in expectations])
    missed = []
    for expected in expectations:
        rows = results.of(expected.resource)
        if not _met(expected, rows):
            by = f" by {expected.policy}" + (f"/{expected.rule}" if expected.rule else "") if expected.policy else ""
            missed.append(f"{expected.resource.label()} should be {expected.result}{by}, has {_show(rows)}")
    table = "\n".join(f"{key[0]} {key[1]}/{key[2]}: {_show(rows)}" for key, rows in sorted(results.by_resource.items()))
    trial.result.attachments.append(Attachment("policy reports", "text", content=table or "no reports"))
    if missed:
        return CheckResult("posture", False, f"{len(missed)} of {len(expectations)} results wrong: " + "; ".join(missed))
    return CheckResult("posture", True, f"all {len(expectations)} expected results reported "
                                        f"({len(truth.violating)} violating, {len(truth.compliant)} compliant)")


def _unchanged(trial) -> CheckResult:
    api = trial.cluster.api_client()
    recorded = trial.ciso.policy_specs if trial.ciso is not None else {}
    changed = []
    for ref in trial.scenario.ciso.keep_unchanged:
        label = ciso_setup.policy_label(ref)
        live = ciso_setup.read_policy(api, ref)
        if live is None:
            changed.append(f"{label} was deleted")
        elif (live.get("spec") or {}) != recorded.get(label):
            changed.append(f"{label} was changed")
    if not trial.scenario.ciso.keep_unchanged:
        return CheckResult("unchanged", True, "no policy to keep")
    if changed:
        return CheckResult("unchanged", False, "; ".join(changed))
    kept = len(trial.scenario.ciso.keep_unchanged)
    return CheckResult("unchanged", True, f"{kept} {'policy' if kept == 1 else 'policies'} left alone")


# ---- kubectl-opa ---------------------------------------------------------------------------------------------------
class ArtifactProblem(Exception):
    """What is wrong with an artifact or its run, in one line."""


def _collector_and_policy(trial, collector: str) -> tuple[list[CheckResult] | None, str, str, str]:
    """The ``collector`` artifact (script or playbook) and the policy: (failed checks or None, collector path,
    policy path, policy text)."""
    paths = artifact_paths(trial)
    wanted = trial.scenario.artifacts
    roles = (collector, "policy")
    missing = [wanted.get(role, role) for role in roles if role not in paths]
    missing += [_shown(trial, paths[r]) for r in roles if r in paths and not os.path.isfile(paths[r])]
    if missing:
        return ([CheckResult("policy", False, f"missing: {', '.join(missing)} (expected in the workdir)"),
                 CheckResult("posture", False, "not evaluated: artifacts missing")], "", "", "")
    script, rego = paths[collector], paths["policy"]
    try:
        with open(rego, encoding="utf-8") as fh:
            policy_text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        return ([CheckResult("policy", False, f"{_shown(trial, rego)}: cannot be read: {exc}"),
                 CheckResult("posture", False, "not evaluated: the policy cannot be read")], "", "", "")
    problem = _rego_syntax(policy_text)
    if problem:
        return ([CheckResult("policy", False, f"{_shown(trial, rego)}: {problem}"),
                 CheckResult("posture", False, "not evaluated: the policy does not compile")], "", "", "")
    return None, script, rego, policy_text


def _kubectl_opa(trial) -> list[CheckResult]:
    failed, script, rego, policy_text = _collector_and_policy(trial, "script")
    if failed:
        return failed
    policy = CheckResult("policy", True, f"{_shown(trial, script)} and {_shown(trial, rego)} present; the policy "
                                         f"compiles")
    violating = _side(trial, script, policy_text, "violating", want=False)
    ciso_setup.to_compliant(trial.cluster.api_client(), trial.scenario, trial.scenario_dir, trial.cluster.advance)
    compliant = _side(trial, script, policy_text, "compliant", want=True)
    ok = violating[0] and compliant[0]
    return [policy, CheckResult("posture", ok, f"violating cluster: {violating[1]}; compliant variant: {compliant[1]}")]


# ---- rhel9-ansible-opa ---------------------------------------------------------------------------------------------
def _rhel9_ansible_opa(trial) -> list[CheckResult]:
    """The agent's playbook against a fresh build of the violating hosts (the policy must say false), then of the
    compliant ones (true); each run in a fresh copy of the workdir with that build's inventory.ini and ansible.cfg."""
    failed, playbook, rego, policy_text = _collector_and_policy(trial, "playbook")
    if failed:
        return failed
    policy = CheckResult("policy", True, f"{_shown(trial, playbook)} and {_shown(trial, rego)} present; the "
                                         f"policy compiles")
    violating = _side(trial, playbook, policy_text, "violating", want=False, run=run_playbook)
    compliant = _side(trial, playbook, policy_text, "compliant", want=True, run=run_playbook)
    ok = violating[0] and compliant[0]
    return [policy, CheckResult("posture", ok, f"violating hosts: {violating[1]}; compliant hosts: {compliant[1]}")]


def run_playbook(trial, playbook: str, label: str) -> Any:
    """Build the ``label`` hosts afresh, run the agent's playbook on them with ansible-playbook (time-limited) in a
    fresh copy of its workdir; return the collected_data.json it wrote."""
    from ..hosts.runtime import playbook_command
    run_dir = tempfile.mkdtemp(prefix=f"ciso-{label}-", dir=trial.workdir)
    try:
        hosts = ciso_setup.build_hosts(trial.scenario, trial.scenario_dir, label, os.path.join(run_dir, "env"))
    except ciso_setup.SetupError as exc:
        raise RuntimeError(f"building the {label} hosts: {exc}") from None  # the environment's fault: an error
    copy = _fresh_copy(trial, run_dir, ignore=(EVIDENCE, ".ansible", *ciso_setup.AGENT_HOST_FILES))
    ciso_setup.hand_hosts(hosts, copy)
    target = _inside(trial, playbook, copy)
    env = hosts.env()
    env["ANSIBLE_CONFIG"] = os.path.join(copy, "ansible.cfg")
    env["HOME"] = run_dir
    code = _run_logged(trial, [playbook_command() or "ansible-playbook", "-i", "inventory.ini", target], copy, env,
                       os.path.basename(playbook), label)
    if code != 0:
        raise ArtifactProblem(f"ansible-playbook {os.path.basename(playbook)} failed (status {code})"
                              f"{_tail(os.path.join(run_dir, 'output.log'))}")
    return _evidence(copy, f"ansible-playbook {os.path.basename(playbook)}")


def _rego_syntax(text: str) -> str | None:
    from ..policy import rego
    try:
        rego.evaluate(text, {}, timeout=REGO_TIMEOUT)
    except rego.RegoTimeout:
        return None  # it compiled; looping on an empty input is the posture's business
    except rego.RegoError as exc:
        code = (exc.code or "").lower()
        if any(part in code for part in _PARSE_CODES) or not code:
            return f"does not compile: {_one_line(exc)}"
    return None


def _side(trial, script: str, policy_text: str, label: str, want: bool, run=None) -> tuple[bool, str]:
    from ..policy import rego
    try:
        evidence = (run or run_script)(trial, script, label)
    except ArtifactProblem as exc:
        return False, str(exc)
    try:
        answer = rego.evaluate(policy_text, evidence, timeout=REGO_TIMEOUT)
    except rego.RegoError as exc:
        return False, f"policy.rego failed on the evidence: {_one_line(exc)}"
    if not answer.defined:
        return False, "data.check.result is undefined on the evidence (give it a default)"
    if not isinstance(answer.value, bool):
        return False, f"data.check.result is {json.dumps(answer.value)[:80]}, not a boolean"
    verdict = "true" if answer.value else "false"
    if answer.value is want:
        return True, f"{verdict} (right)"
    return False, f"{verdict}, should be {'true' if want else 'false'}"


def _fresh_copy(trial, run_dir: str, ignore: tuple[str, ...]) -> str:
    copy = os.path.join(run_dir, "work")
    shutil.copytree(workdir(trial), copy, symlinks=True, ignore=shutil.ignore_patterns(*ignore))
    return copy


def _inside(trial, path: str, copy: str) -> str:
    """``path`` (an artifact) as it lies in the copy of the workdir."""
    base = workdir(trial)
    relative = os.path.relpath(path, base) if path.startswith(base + os.sep) else path
    return os.path.join(copy, relative) if not os.path.isabs(relative) else relative


def _run_logged(trial, argv: list[str], cwd: str, env: dict, name: str, label: str) -> int:
    """Run ``argv`` in its own session, output to output.log beside ``cwd``, stopped after ciso.script_timeout."""
    limit = trial.scenario.ciso.script_timeout
    log_path = os.path.join(os.path.dirname(cwd), "output.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            kill_leader(proc)
            raise ArtifactProblem(f"{name} did not finish within {limit:g} s and was stopped{_tail(log_path)}") from None
        finally:
            kill_leader(proc)
    trial.result.attachments.append(Attachment(f"{'playbook' if name.endswith(('.yml', '.yaml')) else 'script'} "
                                               f"output ({label})", "text", content=_read(log_path)[-20000:]))
    return code


def _evidence(copy: str, what: str) -> Any:
    evidence = os.path.join(copy, EVIDENCE)
    if not os.path.isfile(evidence):
        raise ArtifactProblem(f"{what} exited 0 but wrote no {EVIDENCE}")
    try:
        with open(evidence, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ArtifactProblem(f"{EVIDENCE} is not valid JSON: {_one_line(exc)}") from None


def run_script(trial, script: str, label: str) -> Any:
    """Run the agent's script in a fresh copy of its workdir with its kubeconfig; return the evidence it wrote."""
    run_dir = tempfile.mkdtemp(prefix=f"ciso-{label}-", dir=trial.workdir)
    copy = _fresh_copy(trial, run_dir, ignore=(EVIDENCE, ".kube"))
    cache = os.path.join(run_dir, "kubecache")
    os.makedirs(cache)
    target = _inside(trial, script, copy)
    env = {"KUBECONFIG": trial.agent_kubeconfig, "KUBECACHEDIR": cache,
           **{k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}}
    code = _run_logged(trial, ["bash", target], copy, env, os.path.basename(script), label)
    if code != 0:
        raise ArtifactProblem(f"{os.path.basename(script)} exited with status {code}"
                              f"{_tail(os.path.join(run_dir, 'output.log'))}")
    return _evidence(copy, os.path.basename(script))



def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _tail(path: str) -> str:
    text = _read(path).strip()
    if not text:
        return ""
    text = text[-TAIL:]
    return ": " + " | ".join(line for line in text.splitlines() if line.strip())[-TAIL:]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
