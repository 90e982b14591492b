"""The CISO tools: files in the task's workdir, running the evidence script, testing Rego and Kyverno
policies offline, and handing in the artifacts.

Files stay inside the workdir: no absolute paths, no ``..``, no symlink out of it. The script runs as
the evaluator will run it (``bash script`` with the agent's kubeconfig, a fresh kubectl cache, ``PATH``,
``HOME`` and ``LANG``, its own process group, killed at its time limit).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from typing import Any, Callable

import yaml

from ...tools import ToolError
from ...tools.kubectl import KubectlTool
from ...agents.base import Task
from ...agents.process_group import kill_leader

MAX_FILE_BYTES = 256 * 1024
SCRIPT_LIMIT = 120.0  # seconds a script may run at most (the evaluator's default is 60)
REGO_LIMIT = 10.0
EVIDENCE = "collected_data.json"
# Kyverno writes rules for Pods onto their controllers too (autogen), so those are tested along.
POD_CONTROLLERS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")

_STRING = {"type": "string"}

SPECS: list[dict[str, Any]] = [
    {"name": "write_file", "description": "Write a text file in your working directory (relative path), replacing it.",
     "parameters": {"type": "object", "properties": {"path": _STRING, "content": _STRING},
                    "required": ["path", "content"], "additionalProperties": False}},
    {"name": "read_file", "description": "Read a text file of your working directory (relative path).",
     "parameters": {"type": "object", "properties": {"path": _STRING}, "required": ["path"],
                    "additionalProperties": False}},
    {"name": "run_script", "description": "Run a bash script of your working directory as it will be graded: "
                                          "bash SCRIPT, in the working directory, with your kubeconfig set.",
     "parameters": {"type": "object", "properties": {"path": _STRING, "timeout": {"type": "number"}},
                    "required": ["path"], "additionalProperties": False}},
    {"name": "test_rego", "description": "Evaluate a Rego policy file (query data.check.result by default) on a JSON "
                                         "input: a file of your working directory, or a value given here.",
     "parameters": {"type": "object", "properties": {"policy": _STRING, "input_file": _STRING, "input": {},
                                                     "query": _STRING},
                    "required": ["policy"], "additionalProperties": False}},
    {"name": "test_kyverno_policy", "description": "Evaluate a Kyverno policy file offline on resources: those of "
                                                   "the kinds it matches in your namespaces, or those of a YAML/JSON "
                                                   "file. Shows pass/fail per resource and rule.",
     "parameters": {"type": "object", "properties": {"policy": _STRING, "resources_file": _STRING},
                    "required": ["policy"], "additionalProperties": False}},
    {"name": "hand_in", "description": "Hand in your files by role, e.g. {\"policy\": \"policy.yaml\"} or "
                                      "{\"script\": \"script.sh\", \"policy\": \"policy.rego\"}. Ends your work.",
     "parameters": {"type": "object", "properties": {"artifacts": {"type": "object",
                                                                   "additionalProperties": _STRING}},
                    "required": ["artifacts"], "additionalProperties": False}},
]


class Workdir:
    def __init__(self, task: Task):
        self.root = os.path.realpath(task.workdir)

    def path(self, relative: Any) -> str:
        """The absolute path of ``relative`` inside the workdir; raises ToolError for anything outside it."""
        if not isinstance(relative, str) or not relative.strip():
            raise ToolError("give a path relative to your working directory, e.g. policy.yaml")
        if os.path.isabs(relative) or ".." in relative.replace("\\", "/").split("/"):
            raise ToolError(f"{relative!r}: only paths inside your working directory are allowed (relative, "
                            f"without '..')")
        full = os.path.realpath(os.path.join(self.root, relative))
        if full != self.root and not full.startswith(self.root + os.sep):
            raise ToolError(f"{relative!r} leads out of your working directory")
        return full

    def read(self, relative: Any) -> str:
        full = self.path(relative)
        if not os.path.isfile(full):
            raise ToolError(f"{relative}: no such file in your working directory; files there: {self.listing()}")
        with open(full, encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_FILE_BYTES + 1)

    def listing(self) -> str:
        names = []
        for directory, subdirs, files in os.walk(self.root):
            subdirs[:] = [d for d in subdirs if not d.startswith((".", "kubecache-"))]  # kubectl's caches
            names += [os.path.relpath(os.path.join(directory, f), self.root) for f in files
                      if not f.startswith(".") and not f.endswith(".kubeconfig")]
        return ", ".join(sorted(names)[:50]) or "none"


def write_file(workdir: Workdir, path: Any, content: Any) -> str:
    if not isinstance(content, str):
        raise ToolError("content must be the file's text")
    data = content.encode()
    if len(data) > MAX_FILE_BYTES:
        raise ToolError(f"{path}: {len(data)} bytes is more than the {MAX_FILE_BYTES} allowed")
    full = workdir.path(path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(data)
    text = f"wrote {len(data)} bytes to {path}"
    if full.endswith((".yaml", ".yml")):
        try:
            documents = [d for d in yaml.safe_load_all(content) if d is not None]
        except yaml.YAMLError as exc:
            return text + f"\nwarning: it is not valid YAML: {' '.join(str(exc).split())}"
        kinds = ", ".join(f"{d.get('kind', '?')}/{(d.get('metadata') or {}).get('name', '?')}"
                          for d in documents if isinstance(d, dict))
        text += f" ({len(documents)} YAML document(s): {kinds or 'none with a kind'})"
    return text


def run_script(task: Task, workdir: Workdir, path: Any, timeout: Any,
               time_left: Callable[[], float]) -> tuple[str, str]:
    """(observation, error): the script's exit, its output's tail and the evidence it left."""
    script = workdir.path(path)
    if not os.path.isfile(script):
        raise ToolError(f"{path}: no such file in your working directory; files there: {workdir.listing()}")
    try:
        limit = float(timeout) if timeout is not None else 60.0
    except (TypeError, ValueError):
        raise ToolError("timeout must be a number of seconds") from None
    limit = max(1.0, min(limit, SCRIPT_LIMIT, time_left()))
    cache_root = os.path.join(workdir.root, ".kube")
    os.makedirs(cache_root, exist_ok=True)
    env = {"KUBECONFIG": os.path.abspath(task.kubeconfig), "KUBECACHEDIR": tempfile.mkdtemp(dir=cache_root),
           **{k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}}
    started = time.monotonic()
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen(["bash", script], cwd=workdir.root, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
        finally:
            kill_leader(proc)
        output.seek(0)
        text = output.read().decode(errors="replace")
    took = time.monotonic() - started
    lines = [f"bash {path}: " + (f"stopped after {limit:g} s (time limit)" if timed_out
                                 else f"exit {code} after {took:.1f} s")]
    lines.append("output:\n" + (text.strip() or "(none)"))
    evidence = os.path.join(workdir.root, EVIDENCE)
    if os.path.isfile(evidence):
        try:
            with open(evidence, encoding="utf-8") as fh:
                json.load(fh)
            lines.append(f"{EVIDENCE}: {os.path.getsize(evidence)} bytes of valid JSON")
        except (OSError, ValueError) as exc:
            lines.append(f"{EVIDENCE}: not valid JSON: {' '.join(str(exc).split())}")
    error = "timed out" if timed_out else (f"exit {code}" if code else "")
    return "\n".join(lines), error



def test_rego(workdir: Workdir, policy: Any, input_file: Any = None, input: Any = None, query: Any = None,
              time_left: Callable[[], float] = lambda: REGO_LIMIT) -> tuple[str, str]:
    from ...policy import rego

    text = workdir.read(policy)
    if input_file is not None and input is not None:
        raise ToolError("give input_file or input, not both")
    if input_file is not None:
        try:
            document = json.loads(workdir.read(input_file))
        except ValueError as exc:
            raise ToolError(f"{input_file} is not valid JSON: {exc}") from None
    else:
        document = input if input is not None else {}
    query = query if isinstance(query, str) and query.strip() else rego.DEFAULT_QUERY
    try:
        answer = rego.evaluate(text, document, query, timeout=max(1.0, min(REGO_LIMIT, time_left())))
    except rego.RegoError as exc:
        message = " ".join(exc.message.split())
        return f"{query}: error: {message}", message[:200]
    if not answer.defined:
        return f"{query} is undefined on this input (give the rule a default)", "undefined"
    return f"{query} = {json.dumps(answer.value)}", ""


def test_kyverno_policy(task: Task, workdir: Workdir, kubectl: KubectlTool, policy: Any,
                        resources_file: Any = None) -> tuple[str, str]:
    from ...policy.kyverno import PolicyError, apply

    try:
        documents = [d for d in yaml.safe_load_all(workdir.read(policy)) if isinstance(d, dict)]
    except yaml.YAMLError as exc:
        raise ToolError(f"{policy} is not valid YAML: {' '.join(str(exc).split())}") from None
    policies = [d for d in documents if d.get("kind") in ("ClusterPolicy", "Policy")]
    if not policies:
        raise ToolError(f"{policy} holds no ClusterPolicy or Policy")
    if resources_file is not None:
        resources = _resources_from_file(workdir, resources_file)
    else:
        resources = _resources_from_cluster(task, kubectl, policies)
    lines, counts = [], {}
    for document in policies:
        name = (document.get("metadata") or {}).get("name", "?")
        for resource in resources:
            try:
                results = apply(document, resource)
            except PolicyError as exc:
                message = " ".join(str(exc).split())
                return f"policy {name} is not valid: {message}", message[:200]
            for result in results:
                counts[result.result] = counts.get(result.result, 0) + 1
                ref = result.resource
                where = f"{ref.get('namespace')}/{ref.get('name')}" if ref.get("namespace") else ref.get("name")
                lines.append(f"{result.result:5} {ref.get('kind')} {where}  ({name}/{result.rule})"
                             + (f": {' '.join(result.message.split())}" if result.message else ""))
    tally = ", ".join(f"{n} {r}" for r, n in sorted(counts.items())) or "no rule matched any resource"
    return f"{len(resources)} resources tested: {tally}\n" + "\n".join(lines), ""


def _resources_from_file(workdir: Workdir, resources_file: Any) -> list[dict[str, Any]]:
    text = workdir.read(resources_file)
    try:
        documents = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError as exc:
        raise ToolError(f"{resources_file} is not valid YAML or JSON: {' '.join(str(exc).split())}") from None
    resources = []
    for document in documents:
        resources.extend(document.get("items") or [] if document.get("kind", "").endswith("List") else [document])
    return [r for r in resources if isinstance(r, dict) and r.get("kind")]


def _resources_from_cluster(task: Task, kubectl: KubectlTool, policies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kinds: list[str] = []
    for document in policies:
        for kind in _matched_kinds(document):
            if kind not in kinds:
                kinds.append(kind)
    if "*" in kinds or not kinds:
        raise ToolError("cannot tell which kinds the policy matches; give resources_file")
    if "Pod" in kinds:
        kinds += [k for k in POD_CONTROLLERS if k not in kinds]
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for namespace in task.namespaces or ("default",):
        for kind in kinds:
            result = kubectl.run(["get", kind, "-n", namespace, "-o", "json"], check=False)
            if result.returncode != 0:
                continue  # a kind this cluster or these rights do not have: nothing of it to test
            try:
                items = json.loads(result.stdout).get("items") or []
            except ValueError:
                continue
            for item in items:
                meta = item.get("metadata") or {}
                item.setdefault("kind", kind)
                seen[(item["kind"], meta.get("namespace", ""), meta.get("name", ""))] = item
    return [seen[key] for key in sorted(seen)]


def _matched_kinds(policy: dict[str, Any]) -> list[str]:
    kinds = []
    for rule in (policy.get("spec") or {}).get("rules") or []:
        match = rule.get("match") or {}
        blocks = [match] + list(match.get("any") or []) + list(match.get("all") or [])
        for block in blocks:
            for kind in ((block or {}).get("resources") or {}).get("kinds") or []:
                kinds.append(str(kind).split("/")[-1])  # apps/v1/Deployment -> Deployment
    return kinds


def check_artifacts(workdir: Workdir, artifacts: Any) -> dict[str, str]:
    """The artifacts by role, each an existing file of the workdir; raises ToolError saying what is wrong."""
    if not isinstance(artifacts, dict) or not artifacts:
        raise ToolError('artifacts maps roles to files, e.g. {"policy": "policy.yaml"}')
    checked = {}
    for role, relative in artifacts.items():
        if not isinstance(relative, str):
            raise ToolError(f"artifact {role!r}: give the file's path as text")
        if not os.path.isfile(workdir.path(relative)):
            raise ToolError(f"artifact {role!r}: {relative} does not exist in your working directory; files there: "
                            f"{workdir.listing()}")
        checked[str(role)] = relative
    return checked
