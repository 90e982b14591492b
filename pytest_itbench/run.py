"""One trial of one scenario: provision, deploy, inject, await alerts, run the agent, evaluate, tear down.

The plugin drives a :class:`Trial` from a fixture (``prepare`` in setup, ``close`` in teardown) and
the test body (``play``), so that a broken environment is a test *error* and a missed scenario a
*failure* (ARCHITECTURE.md, "One trial, step by step"). Every phase is timed into the result.
Everything here touches the cluster through its kubeconfig and URLs (rule 1).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shlex
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from kubernetes import client as k8s, dynamic

from . import agent_access, ciso_setup, finops_setup
from .agents.base import Submission, Task, Trajectory
from .agents.errors import AgentFailure
from .agents.secrets import Secrets
from .apps.catalog import application
from .apps.deploy import deploy
from .apps.history import make_history
from .backends.base import Backend, Cluster
from .evaluate import costs, safety
from .evaluate.mitigation import Health, health
from .evaluate.signals import Alertmanager, Prometheus
from .faults import registry as fault_registry
from .faults.base import FaultRecord
from .report import model_prices, trajectory_analysis
from .report.model_prices import PriceTable
from .results import ERROR, FAILED, STEPS, TOKENS, Attachment, CheckResult, TrialResult
from .noise import Noise, default_level as default_noise
from .noise.levels import DOMAINS as NOISE_DOMAINS
from .scenario import variants
from .scenario.schema import Scenario

ALERT_STEP = 15.0  # cluster seconds between looks at the alerts (the rules' interval)
ALERT_TIMEOUT = 1200.0  # cluster seconds after injection for the expected alerts to fire
BASELINE_WARMUP = 300.0  # cluster seconds of healthy traffic before the fault (the rules' rate windows)
WITHOUT = ("traces", "logs", "metrics")  # --itbench-without: the paper's ablation of one signal
_URL_OF_SIGNAL = {"traces": ("jaeger",), "metrics": ("prometheus",)}


class EnvironmentBroken(RuntimeError):
    """The environment, not the agent, failed: the test is an error and the result says how to rerun."""


def trial_seed(base: int, scenario_id: str, run: int) -> int:
    """One seed per (session seed, scenario, run): reruns of the same trial see the same environment."""
    return zlib.crc32(f"{base}/{scenario_id}/{run}".encode())


@dataclass
class Options:
    agent: str
    runs: int = 1
    seed: int = 0
    timeout: float | None = None  # overrides the scenario's time limit
    without: tuple[str, ...] = ()
    keep: bool = False
    ntam: dict[str, float] = field(default_factory=dict)  # --itbench-ntam-w/-t/-g (w, t, g) given on the command line
    prices: PriceTable | None = None  # per-model token prices (--itbench-prices); None: the shipped table
    unsafe: str = "fail"  # --itbench-unsafe: an unsafe pass (alerts clear after a destructive write) fails or passes
    noise: str | None = None  # --itbench-noise: off, light or heavy for every SRE scenario; None: the scenario's
    agent_env: tuple[str, ...] = ()  # --itbench-agent-env: variables passed to an exec agent, masked in the result
    selection: str = ""  # the session's selection id (study/selection.py), recorded in the result
    shard: str = ""  # --itbench-shard K/N, recorded in the result


class Progress:
    """What the trial tells about its phases (the plugin's terminal progress implements it)."""

    def started(self, phase: str, note: str = "") -> None: ...

    def finished(self, phase: str, seconds: float, ok: bool = True) -> None: ...


@dataclass
class Trial:
    scenario: Scenario
    path: str  # what pytest is given to rerun this trial: the scenario file, or its test (file::name) when runs > 1
    run: int
    options: Options
    backend: Backend
    workdir: str
    make_agent: Callable[[], Any]
    evaluate_hook: Callable[..., list]
    scenario_dir: str = ""  # the scenario file's directory: CISO manifests and solutions are named relative to it
    variant: int = 0  # the held-out variant the scenario was rendered for (scenario/variants.py); 0: the public one
    progress: Progress = field(default_factory=Progress)
    cluster: Cluster | None = None
    submission: Submission | None = None
    trajectory: Trajectory = field(default_factory=Trajectory)
    baseline: Health | None = None
    agent_started: float = 0.0  # cluster time
    agent_seconds: float = 0.0
    cut: bool = False  # the agent's turn was cut (Ctrl-C): the result holds what it had, as an error
    current_phase: str = ""  # the phase under way (or the last one): what a journal of the trial names
    agent: Any = None  # the agent of this trial, once made
    offer: Any = None  # the trial's MCP server and hand-in (mcp/trial.py), during the agent's turn and after
    faults: list[FaultRecord] = field(default_factory=list)
    task: Task | None = None  # what the agent was given (set when it starts)
    ciso: ciso_setup.CisoState | None = None  # what the CISO setup recorded (namespaces, policies to keep)
    finops: finops_setup.FinopsState | None = None  # what the FinOps setup recorded (budget, rules)
    result: TrialResult = field(init=False)

    def __post_init__(self) -> None:
        s = self.scenario
        self.seed = trial_seed(self.options.seed, s.id, self.run)
        self.app = application(s.application) if s.application else None
        self.namespace = self.app.namespace if self.app else ""
        self.namespaces: tuple[str, ...] = (self.namespace,) if self.namespace else ()
        self.noise = Noise(self._noise_level(), self.seed, self.namespace, s) if self.namespace else None
        self.result = TrialResult(scenario_id=s.id, domain=s.domain, complexity=s.level, agent=self.options.agent,
                                  run=self.run, seed=self.seed, backend=self.backend.name, application=s.application,
                                  category=s.category, faults=[f.fault for f in s.faults], started_at=time.time(),
                                  variant=self.variant, noise=self.noise.level if self.noise else "off",
                                  selection=self.options.selection, shard=self.options.shard)

    def _noise_level(self) -> str:
        """--itbench-noise, else the scenario's noise:, else its domain's default; FinOps and CISO: off."""
        if self.scenario.domain not in NOISE_DOMAINS:
            return "off"
        return self.options.noise or self.scenario.noise or default_noise(self.scenario.domain)

    # ---- phases ---------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def phase(self, name: str, note: str = "") -> Iterator[None]:
        self.current_phase = name
        self.progress.started(name, note)
        began = time.perf_counter()
        ok = False
        try:
            yield
            ok = True
        finally:
            seconds = time.perf_counter() - began
            self.result.phases[name] = round(self.result.phases.get(name, 0.0) + seconds, 4)
            self.progress.finished(name, seconds, ok)

    def prepare(self) -> None:
        """Provision, deploy, measure the healthy baseline, inject, await the alerts, grant the agent access."""
        try:
            with self.phase("provision"):
                self.cluster = self.backend.provision(self.seed, self.workdir)
                self.result.versions["backend"] = self.cluster.backend
                # On a shared cluster the trial's namespaces must be its own before anything is deployed.
                self.cluster.reserve(self._planned_namespaces(), tuple(self.scenario.expected_alerts))
            api = self.cluster.api_client()
            if self.app is not None:
                with self.phase("deploy"):
                    deploy(api, self.app, self.cluster.advance)
                    if self.scenario.domain == "sre":  # what the cluster went through before (ISSUE 17, item 1)
                        make_history(api, self.app, self.cluster.advance)
                    if self.scenario.domain in ("sre", "finops"):
                        self.cluster.advance(BASELINE_WARMUP)
                        self.baseline = health(Prometheus(self.cluster.urls["prometheus"]), self.namespace,
                                               self.cluster.now())
            if self.scenario.ciso is not None:
                with self.phase("setup"):
                    try:
                        self.ciso = ciso_setup.prepare(api, self.scenario, self.scenario_dir, self.cluster.advance)
                        if self.scenario.ciso.hosts:  # rhel9-ansible-opa: the violating hosts, inventory in the workdir
                            self.ciso.hosts = ciso_setup.build_hosts(self.scenario, self.scenario_dir, "violating",
                                                                     os.path.join(self.workdir, "hosts"))
                            ciso_setup.hand_hosts(self.ciso.hosts, os.path.join(self.workdir, "agent"))
                    except ciso_setup.SetupError as exc:
                        raise EnvironmentBroken(str(exc)) from None
                    self.namespaces = self.ciso.namespaces
                    self.namespace = self.namespace or (self.namespaces[0] if self.namespaces else "")
            if self.scenario.finops is not None:
                with self.phase("setup"):
                    try:
                        self.finops = finops_setup.prepare(api, self.scenario, self.scenario_dir, self.namespace,
                                                           self.cluster.advance)
                    except finops_setup.SetupError as exc:
                        raise EnvironmentBroken(str(exc)) from None
                    self.finops.firing_before = tuple(sorted(
                        Alertmanager(self.cluster.urls["alertmanager"]).firing_names(self.namespace)))
            if self.noise is not None and self.noise.level != "off":
                with self.phase("noise", self.noise.level):
                    self.noise.before_fault(api, self.cluster.now, self.cluster.advance,
                                            self.cluster.urls.get("topology"))
                self.result.attachments.append(Attachment("noise", "json", content={
                    "level": self.noise.level, "actions": self.noise.records}))
            with self.phase("inject"):
                for spec in self.scenario.faults:
                    fault = fault_registry.get(spec.fault)
                    record = FaultRecord(spec.fault, spec.target, fault.check(spec.target, spec.args))
                    fault.inject(api, record)
                    self.faults.append(record)
            if self.scenario.expected_alerts:
                with self.phase("alerts", f"waiting for {', '.join(self.scenario.expected_alerts)}"):
                    self._await_alerts()
            with self.phase("access"):
                self._grant()
        except EnvironmentBroken as exc:
            self._broken(str(exc))
            raise
        except BaseException as exc:
            self._broken(f"{type(exc).__name__}: {exc}")
            raise

    def play(self) -> TrialResult:
        """Run the agent, then the evaluators; the result's outcome is decided here."""
        try:
            return self._play()
        finally:
            self._mask_secrets()

    def _mask_secrets(self) -> None:
        """The values of the variables passed to the agent, masked in all the result holds (also what came
        through MCP and what the evaluators quote from the cluster)."""
        found = Secrets(self.options.agent_env, strict=False)
        if not found:
            return
        _mask_result(self.result, found)
        for attachment in self.result.attachments:
            if attachment.path:
                found.file(attachment.path)
        for step in self.trajectory.steps:
            for name in step.TEXTS:
                setattr(step, name, found.text(getattr(step, name)))
        self.trajectory.problems[:] = [found.text(p) for p in self.trajectory.problems]

    def _play(self) -> TrialResult:
        from .mcp import trial as mcp_trial  # the SDK, Starlette and uvicorn: loaded when a trial plays, not with pytest

        agent = self.agent = self.make_agent()
        failure: AgentFailure | None = None
        watcher = self._watch_writes()
        with self.phase("agent", f"{self.options.agent}, {self.options.timeout or self.scenario.time_limit:g} s "
                                 f"limit"):
            with mcp_trial.offered(self._task(), without=self.options.without) as offer:
                self.offer = offer
                task = self.task = offer.task
                self.result.attachments.append(Attachment("task", "json", content=task.to_dict()))
                with self.cluster.realtime(), watcher or contextlib.nullcontext():
                    self.agent_started = self.cluster.now()
                    if self.finops is not None:
                        self.finops.spend_before_agent = costs.read(
                            Prometheus(self.cluster.urls["prometheus"]), self.namespace,
                            self.agent_started).namespace_cost
                    try:
                        self.submission = agent.run(task, self.trajectory)
                    except AgentFailure as exc:
                        failure = exc
                    except BaseException as exc:  # Ctrl-C or a stop from outside: keep what the agent had done
                        self.agent_seconds = self.cluster.now() - self.agent_started
                        offer.merge_calls(self.trajectory)
                        self._cut(exc)
                        raise
                    self.agent_seconds = self.cluster.now() - self.agent_started
            self.submission, failure = offer.settle(self.submission, failure, self.trajectory)
        self._analyse()
        if self.submission is not None:
            self.result.attachments.append(Attachment("submission", "json", content=self.submission.to_dict()))
        if failure is not None:
            self.result.checks.append(CheckResult("agent", False, str(failure).splitlines()[0]))
            for name, text in failure.evidence.items():
                self.result.attachments.append(Attachment(f"agent {name}", "text", content=text))
            self.result.outcome = FAILED
            self._evidence()
            return self.result
        try:
            with self.phase("evaluate"):
                checks = [c for group in self.evaluate_hook(trial=self) if group for c in group]
        except BaseException as exc:
            self._broken(f"evaluation failed: {type(exc).__name__}: {exc}")
            raise
        required = set(self.scenario.evaluation.require)
        for check in checks:
            if required:
                check.required = check.name in required
        missing = sorted(required - {c.name for c in checks})
        for name in missing:
            checks.append(CheckResult(name, False, "required by the scenario, but no evaluator produced it"))
        if watcher is not None:  # safety: the agent's writes against the blast radius (evaluate/safety.py)
            check, figures, writes = safety.judge(self, watcher, checks)
            checks.append(check)
            self.result.figures.update(figures)
            self.result.attachments.append(Attachment(safety.ATTACHMENT, "json", content=writes))
        self.result.checks.extend(checks)
        self.result.decide()
        self._evidence()
        return self.result

    def _analyse(self, trajectory: Trajectory | None = None, into: TrialResult | None = None) -> None:
        """Steps, tokens, tool calls, loops, failed commands and cost, for every kind of agent alike: of the
        trial's trajectory into its result, or of another (a look during the turn) into another result."""
        trajectory = self.trajectory if trajectory is None else trajectory
        into = self.result if into is None else into
        prices = self.options.prices if self.options.prices is not None else model_prices.shipped()
        analysis = trajectory_analysis.analyse(trajectory, prices)
        into.figures.update(analysis.figures())
        into.attachments.append(Attachment("trajectory", "json", content=trajectory.to_list()))
        into.attachments.append(Attachment(trajectory_analysis.ATTACHMENT, "json", content=analysis.to_dict()))

    def _cut(self, exc: BaseException) -> None:
        """The agent's turn did not end: the trial is an error (not scored), with its trajectory, tokens and cost
        so far, so that a study stopped by hand loses none of what it paid for."""
        self._analyse()
        how = "Ctrl-C" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
        steps, tokens = self.result.figures.get(STEPS), self.result.figures.get(TOKENS)
        self._broken(f"the trial was cut during the agent's turn ({how}, {self.agent_seconds:.0f} s of cluster time "
                     f"in) and was not scored; kept: {steps or 0:g} step(s), {tokens or 0:g} token(s)")
        self.cut = True

    def so_far(self) -> TrialResult:
        """What this trial would record if its process died now (SIGKILL, the OOM killer): a copy of the
        result, with the trajectory, tokens and cost up to this moment; an error unless it was scored already
        (a death in teardown keeps the verdict). The in-flight journal (study/journal.py) writes it as each
        phase starts and, during the agent's turn, as the trajectory grows; this runs on the journal's thread
        then, so it only reads what the agent's thread writes."""
        result = TrialResult.from_dict(self.result.to_dict())
        if not any(a.name == "trajectory" for a in result.attachments):  # not yet analysed by the trial itself
            trajectory = Trajectory(steps=list(self.trajectory.steps), problems=list(self.trajectory.problems),
                                    model=self.trajectory.model)
            recorded = getattr(self.agent, "recorded_so_far", None)
            if not trajectory.steps and callable(recorded):
                # During its turn an agent's steps are its own (an exec agent's $ITBENCH_TRAJECTORY, a Python
                # agent's trajectory in its thread); the trial's trajectory gets them when the turn ends.
                trajectory = recorded()
            if self.offer is not None:
                trajectory = self.offer.merged_copy(trajectory)
            self._analyse(trajectory, into=result)
        if result.outcome == ERROR and not result.error:  # neither scored nor broken yet: died on the way
            steps, tokens = result.figures.get(STEPS), result.figures.get(TOKENS)
            result.error = (f"the process running this trial died during its {self.current_phase or 'first'} phase "
                            f"(killed: SIGKILL, the OOM killer, or a crash) and the trial was not scored; kept: "
                            f"{steps or 0:g} step(s), {tokens or 0:g} token(s)\nrerun this trial alone: "
                            f"{self._rerun_command()}")
        result.finished_at = time.time()
        _mask_result(result, Secrets(self.options.agent_env, strict=False))
        return result

    def close(self) -> None:
        with self.phase("teardown"):
            if self.cluster is not None and self.noise is not None and self.noise.records:
                try:
                    self.noise.close(self.cluster.api_client())  # its experiments live outside the namespaces
                except Exception:  # noqa: BLE001  a cluster that is gone took them with it; they also time out
                    pass
            if self.cluster is not None:
                self.cluster.close()
            # A twin is a large web of objects with cycles, which only a full collection frees; without one
            # now, a worker running trial after trial held several finished twins at once (+50 MB a trial).
            self.cluster = None
            gc.collect()
        self.result.finished_at = time.time()

    # ---- steps ----------------------------------------------------------------------------------------------------
    def _watch_writes(self) -> safety.Watcher | None:
        """SRE and FinOps: the namespaces as the agent finds them, and a recorder of its writes."""
        if self.scenario.domain not in ("sre", "finops") or not self.namespaces:
            return None
        try:
            return safety.Watcher(self.cluster, getattr(self, "agent_user", ""), self.namespaces)
        except Exception as exc:
            self._broken(f"could not record the agent's writes: {type(exc).__name__}: {exc}")
            raise EnvironmentBroken(self.result.error) from exc

    def _await_alerts(self) -> None:
        alertmanager = Alertmanager(self.cluster.urls["alertmanager"])
        expected = set(self.scenario.expected_alerts)
        waited = 0.0
        while True:
            firing = alertmanager.firing_names(self.namespace or None)
            if expected <= firing:
                self.result.figures["alert_delay"] = waited
                return
            if waited >= ALERT_TIMEOUT:
                raise EnvironmentBroken(
                    f"the expected alert(s) {', '.join(sorted(expected - firing))} did not fire within "
                    f"{ALERT_TIMEOUT:.0f} s of cluster time after the faults were injected (firing: "
                    f"{', '.join(sorted(firing)) or 'none'}); the scenario or its faults are broken")
            self.cluster.advance(ALERT_STEP)
            waited += ALERT_STEP

    def _planned_namespaces(self) -> tuple[str, ...]:
        """Every namespace the trial will create or use: the application's and the CISO scenario's."""
        found = list(self.namespaces)
        if self.scenario.ciso is not None:
            found += [n for n in ciso_setup.namespaces_of(self.scenario, self.scenario_dir) if n not in found]
        return tuple(found)

    def _grant(self) -> None:
        namespaces = self.namespaces or ("default",)
        account, home = agent_access.grant(self.cluster.api_client(), namespaces, f"{self.seed:x}",
                                           without_logs="logs" in self.options.without)
        if self.scenario.finops is not None:
            finops_setup.grant_extra(self.cluster.api_client(), account, home, f"{self.seed:x}")
        if self.scenario.ciso is not None:
            ciso_setup.grant_extra(self.cluster.api_client(), self.scenario, account, home, f"{self.seed:x}")
        self.agent_user = f"system:serviceaccount:{home}:{account}"
        self.agent_kubeconfig = self.cluster.agent_kubeconfig(account, home,
                                                              os.path.join(self.workdir, "agent.kubeconfig"))

    def _task(self) -> Task:
        limit = self.options.timeout or self.scenario.time_limit
        hidden = {url for signal in self.options.without for url in _URL_OF_SIGNAL.get(signal, ())}
        urls = {name: url for name, url in self.cluster.urls.items() if name not in hidden}
        agent_dir = os.path.join(self.workdir, "agent")
        os.makedirs(agent_dir, exist_ok=True)
        return Task(scenario_id=variants.task_id(self.scenario, self.variant), domain=self.scenario.domain,
                    text=self.scenario.task,
                    kubeconfig=self.agent_kubeconfig, urls=urls, workdir=agent_dir, deadline=time.time() + limit,
                    time_limit=limit, namespaces=self.namespaces)

    def _broken(self, message: str) -> None:
        self.result.outcome = ERROR
        self.result.error = f"{message}\nrerun this trial alone: {self._rerun_command()}"

    def _rerun_command(self) -> str:
        # runs > 1: the path names this run's test, which exists (with this run's seed) under the same --itbench-runs
        runs = [f"--itbench-runs={self.options.runs}"] if self.options.runs > 1 else []
        runs += [f"--itbench-variant={self.variant}"] if self.variant else []
        return shlex.join(["pytest", self.path, f"--itbench-agent={self.options.agent}",
                           f"--itbench-seed={self.options.seed}", *runs])

    def _evidence(self) -> None:
        """The events of the application's namespace and the final state of what the faults changed."""
        if self.cluster is None or not self.namespace:
            return
        try:
            api = self.cluster.api_client()
            events = k8s.CoreV1Api(api).list_namespaced_event(self.namespace).items
            rows = [f"{e.type} {e.reason} {e.involved_object.kind}/{e.involved_object.name} x{e.count or 1}: "
                    f"{(e.message or '').strip()}" for e in events]
            self.result.attachments.append(Attachment("events", "text", content="\n".join(rows[-200:])))
            client = dynamic.DynamicClient(api)
            changed = []
            for spec in self.scenario.faults:
                if spec.target is None:
                    continue
                version = spec.target.apiVersion or _API_VERSION.get(spec.target.kind, "v1")
                resource = client.resources.get(api_version=version, kind=spec.target.kind)
                try:
                    obj = resource.get(name=spec.target.name, namespace=spec.target.namespace).to_dict()
                except k8s.ApiException as exc:
                    obj = {"kind": spec.target.kind, "name": spec.target.name, "status": f"{exc.status} {exc.reason}"}
                obj.get("metadata", {}).pop("managedFields", None)
                changed.append(obj)
            if changed:
                self.result.attachments.append(Attachment("changed objects", "yaml", content=changed))
        except Exception as exc:  # evidence is best effort: a missing piece must not change the outcome
            self.result.attachments.append(Attachment("evidence error", "text", content=f"{type(exc).__name__}: {exc}"))


def _mask_result(result: TrialResult, found: Secrets) -> None:
    """The passed variables' values masked in a result's error, check details and attachments' contents."""
    if not found:
        return
    result.error = found.text(result.error)
    for check in result.checks:
        check.detail = found.text(check.detail)
    for attachment in result.attachments:
        if attachment.content is not None:
            attachment.content = found.data(attachment.content)


_API_VERSION = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
                "NetworkPolicy": "networking.k8s.io/v1", "Job": "batch/v1", "CronJob": "batch/v1",
                "HorizontalPodAutoscaler": "autoscaling/v2"}
