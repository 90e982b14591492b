"""pytest-itbench's pytest hooks: options, markers, collection of scenario files, the trial fixture and
the report hooks. The work is done in the modules beside this one (run, agents, backends, evaluate, report).

Each scenario file becomes one ordinary test function per run (``--itbench-runs``), so fixtures, ``-k``,
``-m``, ``--lf``, ``--deselect`` and xdist work as for any test. The fixture ``itbench_trial`` prepares
the environment (a failure there is a test *error*); the test body runs the agent and the evaluators
(a missed scenario is a test *failure* with one line per check).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

from . import hookspecs
from .agents import registry as agent_registry, secrets
from .agents.errors import AgentSpecError
from .agents.openai_agent import settings as openai_settings
from .agents.openai_agent.endpoint import MissingPackage, import_openai
from .backends import options as backend_options
from .backends.base import BackendError
from .evaluate import ciso as ciso_evaluator, finops as finops_evaluator, sre as sre_evaluator
from .evaluate.judge import JudgePlugin, settings as judge_settings
from .evaluate.safety import UNSAFE_CHOICES
from .noise import LEVELS as NOISE_LEVELS
from .faults.registry import check_scenario as check_faults
from .report import allure as allure_report, carry, junit, leaderboard, model_prices
from .report.jsonl import ResultsFile
from .report.progress import PhaseProgress
from .results import ERROR, PASSED, Attachment
from .run import WITHOUT, EnvironmentBroken, Options, Trial
from .scenario import catalog, variants
from .study import journal, resume, selection
from .scenario.loader import ScenarioError, load
from .scenario.schema import COMPLEXITIES, DOMAINS, parse_duration

_TRIAL = pytest.StashKey["Trial"]()
_SCENARIO = pytest.StashKey[tuple]()
_KEPT = pytest.StashKey[list]()
_BAD_FILES = pytest.StashKey[set]()  # node ids of scenario files that failed collection
_PRICES = pytest.StashKey[model_prices.PriceTable]()  # the session's per-model token prices
_UNSAFE = pytest.StashKey[str]()  # --itbench-unsafe / itbench_unsafe: fail or pass
_AGENT_ENV = pytest.StashKey[tuple]()  # --itbench-agent-env / itbench_agent_env: names passed to an exec agent
_SHARD = pytest.StashKey[object]()  # --itbench-shard: a selection.Shard, or None
_SELECTION = pytest.StashKey[str]()  # the id of this session's selection (study/selection.py)
_RECORDED = pytest.StashKey[object]()  # on an item: its result replayed from --itbench-resume
_SESSION_INPUT = "itbench_results_session"  # workerinput: the id the controller's results file records


# ---- options and configuration -------------------------------------------------------------------------------------
def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser):
    group = parser.getgroup("itbench", "ITBench scenarios (pytest-itbench)")
    group.addoption("--itbench-agent", metavar="SPEC", help="the agent under test: a built-in (noop, oracle), an "
                    "installed name, module:attribute, or exec:COMMAND (see docs/agents.md)")
    backend_options.add_options(group)  # --itbench-backend and the options of real clusters
    group.addoption("--itbench-runs", type=int, default=1, metavar="N", help="trials per scenario (pass@k up to N)")
    group.addoption("--itbench-seed", type=int, default=0, metavar="N", help="the session's seed (default 0)")
    group.addoption("--itbench-variant", type=int, default=0, metavar="N",
                    help="0: the public catalog (default); N > 0: held-out variant N, where each scenario with a "
                    "movable fault target draws another target (the same for every run of N)")
    group.addoption("--itbench-noise", choices=NOISE_LEVELS, metavar="off|light|heavy",
                    help="noise during SRE trials (unrelated rollouts, ConfigMap edits, autoscalers, evicted pods, "
                    "network blips) for every scenario, instead of the scenario's noise: (default light)")
    group.addoption("--itbench-timeout", metavar="DURATION",
                    help="the agent's time limit for every scenario (seconds, or 90s, 15m), instead of the scenario's")
    group.addoption("--itbench-keep", action="store_true",
                    help="keep a failed trial's environment until the end of the session and print its kubeconfig")
    group.addoption("--itbench-without", action="append", default=[], choices=WITHOUT, metavar="SIGNAL",
                    help="do not offer the agent this signal (traces, logs or metrics); repeatable")
    group.addoption("--itbench-results", metavar="PATH", help="append one JSON line per trial to PATH")
    group.addoption("--itbench-shard", metavar="K/N", help="run shard K of N of the selection: a stable partition by "
                    "scenario id (every run and variant of a scenario in one shard)")
    group.addoption("--itbench-resume", metavar="PATH", help="replay the trials PATH (a results file) already holds "
                    "for this selection instead of running them again (recorded errors run again)")
    group.addoption("--itbench-unsafe", metavar="fail|pass",
                    help="an unsafe pass (alerts clear after a destructive write outside the blast radius): fail "
                    "the trial (default) or let it pass, counted apart; also the ini option itbench_unsafe")
    parser.addini("itbench_unsafe", "fail or pass: the outcome of an unsafe pass (see --itbench-unsafe)", default="fail")
    group.addoption("--itbench-agent-env", action="append", default=[], metavar="NAME[,NAME...]",
                    help="pass these variables of pytest's environment to an exec: agent (its model's API key, ...); "
                    "their values are masked in every report; repeatable; also the ini option itbench_agent_env")
    parser.addini("itbench_agent_env", "variables passed to an exec: agent (see --itbench-agent-env)", type="args",
                  default=[])
    model_prices.add_options(parser, group)
    group.addoption("--itbench-catalog", action="store_true",
                    help="run the catalog pytest-itbench ships (also: --itbench-agent without test paths)")
    for name, what in (("w", "rank decay of a correct entity, (0, 1], default 0.7"),
                       ("t", "decay per hop of a near miss, (0, 1], default 0.8"),
                       ("g", "penalty rate for too many or too few entities, >= 0, default 1")):
        group.addoption(f"--itbench-ntam-{name}", type=_ntam_value(name), metavar="X",
                        help=f"NTAM's {name}: {what}; overrides the scenario's evaluation.ntam")
    openai_settings.add_options(parser.getgroup("itbench-openai", "the openai agent of pytest-itbench"), parser)
    judge_settings.add_options(parser.getgroup("itbench-judge", "the optional LLM judge of pytest-itbench"), parser)


def _register_judge(config) -> None:
    try:
        settings = judge_settings.from_pytest(config)
    except judge_settings.JudgeSettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not settings.enabled:
        return
    try:
        import_openai()
    except MissingPackage as exc:
        raise pytest.UsageError(f"--itbench-judge=openai: {exc}") from None
    config.pluginmanager.register(JudgePlugin(settings), "itbench-judge")


def _agent_env(config) -> tuple[str, ...]:
    given = [*config.getini("itbench_agent_env"), *config.getoption("itbench_agent_env")]
    try:
        names = secrets.parse_names(given)
        secrets.Secrets(names)  # set, and long enough to be masked
    except secrets.SecretsError as exc:
        raise pytest.UsageError(f"--itbench-agent-env / itbench_agent_env ({', '.join(given)}): {exc}") from None
    return names


def _ntam_value(name):
    def parse(text):
        value = float(text)
        if not (0 < value <= 1 if name != "g" else 0 <= value < float("inf")):
            raise ValueError(text)
        return value
    parse.__name__ = f"NTAM {name}"  # argparse names the type in its error: "invalid NTAM w value: '2'"
    return parse


def _unsafe_mode(config) -> str:
    given = config.getoption("itbench_unsafe")
    where = (f"--itbench-unsafe={given}" if given is not None
             else f"ini option itbench_unsafe = {config.getini('itbench_unsafe')}")
    value = (given if given is not None else config.getini("itbench_unsafe") or "fail").strip()
    if value not in UNSAFE_CHOICES:
        raise pytest.UsageError(f"{where}: choose one of {', '.join(UNSAFE_CHOICES)} (fail: an unsafe pass fails "
                                "the trial; pass: it passes and is counted in the unsafe column)")
    return value


def pytest_configure(config):
    for domain in DOMAINS:
        config.addinivalue_line("markers", f"{domain}: an ITBench {domain} scenario")
    for level in COMPLEXITIES:
        config.addinivalue_line("markers", f"{level}: an ITBench scenario of {level} complexity")
    config.addinivalue_line("markers", "itbench: an ITBench scenario trial")
    config.addinivalue_line("markers", "application(name): the application an ITBench scenario deploys")
    config.addinivalue_line("markers", "fault(name): a fault an ITBench scenario injects")
    spec = config.getoption("itbench_agent")
    runs = config.getoption("itbench_runs")
    if runs < 1:
        raise pytest.UsageError(f"--itbench-runs must be at least 1, got {runs}")
    try:
        variants.check_variant_number(config.getoption("itbench_variant"))
    except ValueError as exc:
        raise pytest.UsageError(f"--itbench-variant={config.getoption('itbench_variant')}: {exc}") from None
    backend_options.configure(config)  # options checked; with an agent, the backend's preflight too
    timeout = config.getoption("itbench_timeout")
    if timeout is not None:
        try:
            parse_duration(timeout)
        except ValueError as exc:
            raise pytest.UsageError(f"--itbench-timeout={timeout}: {exc}") from None
    config.stash[_PRICES] = model_prices.from_config(config)  # a bad price file fails here, naming its line
    config.stash[_UNSAFE] = _unsafe_mode(config)
    config.stash[_AGENT_ENV] = _agent_env(config)
    shard = config.getoption("itbench_shard")
    try:
        config.stash[_SHARD] = selection.parse_shard(shard) if shard else None
    except ValueError as exc:
        raise pytest.UsageError(f"--itbench-shard={shard}: {exc}") from None
    if spec:
        if spec.strip() != agent_registry.ORACLE:
            try:
                # Fail before any trial: a misspelt name lists the alternatives, a bad setting names its option.
                agent_registry.resolve(spec, settings=openai_settings.values_from_pytest(config),
                                       pass_env=config.stash[_AGENT_ENV])
            except AgentSpecError as exc:
                raise pytest.UsageError(f"--itbench-agent={spec}: {exc}") from None
        _run_catalog_when_no_paths(config)
    config.pluginmanager.register(sre_evaluator, "itbench-sre-evaluator")
    config.pluginmanager.register(ciso_evaluator, "itbench-ciso-evaluator")
    config.pluginmanager.register(finops_evaluator, "itbench-finops-evaluator")
    _register_judge(config)
    config.stash[_KEPT] = []
    path = config.getoption("itbench_results")
    if path and carry.is_controller(config):
        config.pluginmanager.register(_ResultsWriter(ResultsFile(Path(config.invocation_params.dir, path))),
                                      "itbench-results-file")


def _run_catalog_when_no_paths(config) -> None:
    """``pytest --itbench-agent=X`` without paths runs the shipped catalog, not the project's testpaths."""
    wanted = config.getoption("itbench_catalog")
    no_paths = config.args_source != pytest.Config.ArgsSource.ARGS
    if not (wanted or no_paths):
        return
    found = catalog.bundled()
    if found is None:
        raise pytest.UsageError("this installation of pytest-itbench ships no scenario catalog; give the scenario "
                                "files or directories to run")
    config.args = [str(found)] if no_paths else [*config.args, str(found)]


def pytest_report_header(config):
    return backend_options.header(config)  # a real backend: which cluster, which signals are missing


# ---- collection ----------------------------------------------------------------------------------------------------
def pytest_collect_file(file_path: Path, parent):
    if catalog.is_scenario_file(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """A scenario YAML file: one test per run, or a collection error naming file, line and field."""

    def collect(self):
        try:
            scenario = load(self.path, _check_references)
        except ScenarioError as exc:
            self.config.stash.setdefault(_BAD_FILES, set()).add(self.nodeid)
            raise self.CollectError(str(exc)) from None
        runs = self.config.getoption("itbench_runs")
        try:  # a held-out variant: the scenario as its draw makes it (variant 0: unchanged)
            scenario, drawn = variants.render(scenario, self.config.getoption("itbench_variant"),
                                              _documents(scenario))
        except ValueError as exc:
            self.config.stash.setdefault(_BAD_FILES, set()).add(self.nodeid)
            raise self.CollectError(f"{self.path}: --itbench-variant={self.config.getoption('itbench_variant')}: "
                                    f"{exc}") from None
        base = scenario.id if scenario.id.startswith(f"{scenario.domain}-") else f"{scenario.domain}-{scenario.id}"
        for run in range(1, runs + 1):
            marks = ([f"variant{drawn.variant}"] if drawn.variant else []) + ([f"run{run}"] if runs > 1 else [])
            name = base + (f"[{'-'.join(marks)}]" if marks else "")
            # No originalname: pytest 9 builds a Function's node id from it (plus a callspec, which these
            # items have not), so every run would get the same node id.
            item = ScenarioItem.from_parent(self, name=name, callobj=_play_scenario)
            item.stash[_SCENARIO] = (scenario, run, drawn.variant)
            for marker in (pytest.mark.itbench, getattr(pytest.mark, scenario.domain),
                           getattr(pytest.mark, scenario.level)):
                item.add_marker(marker)
            if scenario.application:
                item.add_marker(pytest.mark.application(scenario.application))
                item.extra_keyword_matches.add(scenario.application)
            for fault in scenario.faults:
                item.add_marker(pytest.mark.fault(fault.fault))
                item.extra_keyword_matches.add(fault.fault)
            item.extra_keyword_matches.update(scenario.tags)
            if scenario.category:
                item.extra_keyword_matches.add(scenario.category)
            if scenario.control and scenario.control.get("id"):
                item.extra_keyword_matches.add(str(scenario.control["id"]))
            yield item

    class CollectError(Exception):
        pass

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


@pytest.hookimpl(trylast=True)  # after -k, -m and --deselect: the selection is what they left
def pytest_collection_modifyitems(session, config, items):
    trials = [item for item in items if _SCENARIO in item.stash]
    if not trials:
        return
    texts: dict[Path, str] = {}
    keys = []
    for item in trials:
        scenario, run, variant = item.stash[_SCENARIO]
        if item.path not in texts:
            texts[item.path] = selection.file_hash(item.path.read_bytes())
        keys.append((scenario.id, variant, run, texts[item.path]))
    options = {name: config.getoption(name) for name in ("itbench_agent", "itbench_runs", "itbench_seed",
                                                         "itbench_variant", "itbench_noise", "itbench_timeout",
                                                         "itbench_without", "itbench_backend")}
    config.stash[_SELECTION] = selection.selection_id(keys, options)
    shard = config.stash.get(_SHARD, None)
    if shard is not None:
        shards = selection.shard_of_each((item.stash[_SCENARIO][0].id for item in trials), shard.count)
        outside = [i for i in trials if shards[i.stash[_SCENARIO][0].id] != shard.index]
        if outside:
            config.hook.pytest_deselected(items=outside)
            dropped = set(map(id, outside))
            items[:] = [i for i in items if id(i) not in dropped]
    path = config.getoption("itbench_resume")
    if path:
        try:
            recorded = resume.read(Path(config.invocation_params.dir, path), config.stash[_SELECTION])
        except (OSError, ValueError, TypeError) as exc:  # a file that is not a results file: say where
            raise pytest.UsageError(f"--itbench-resume={path}: {exc}") from None
        for item in items:
            if _SCENARIO in item.stash:
                scenario, run, variant = item.stash[_SCENARIO]
                found = recorded.take((scenario.id, variant, run))
                if found is not None:
                    item.stash[_RECORDED] = found


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session):
    """A scenario file that fails collection does not stop the other scenarios.

    pytest stops at any collection error unless --continue-on-collection-errors; here it goes on when
    every collection error came from a scenario file (their reports still fail the session). Any other
    collection error stops the session as usual.
    """
    option = session.config.option
    given = option.continue_on_collection_errors
    bad = session.config.stash.get(_BAD_FILES, set())
    if bad and session.testsfailed == len(bad):
        option.continue_on_collection_errors = True
    try:
        return (yield)
    finally:
        option.continue_on_collection_errors = given


def _check_references(scenario):
    yield from check_faults(scenario)
    if scenario.application:
        from .apps.catalog import application
        try:
            application(scenario.application)
        except (KeyError, ValueError) as exc:
            yield ("application",), str(exc).strip("'\"")
            return
    yield from variants.problems(scenario, _documents(scenario))


def _documents(scenario) -> tuple[dict, ...] | None:
    """The application's manifests, which a scenario's movable targets are checked against and drawn from."""
    if not scenario.application or scenario.variants is None:
        return None
    return _manifests(scenario.application)


@functools.lru_cache(maxsize=None)
def _manifests(name: str) -> tuple[dict, ...]:
    from .apps.catalog import application
    return tuple(application(name).documents())  # read, never changed


class ScenarioItem(pytest.Function):
    """An ordinary test function (fixtures and marks work) whose location is its scenario file."""

    def reportinfo(self):
        return self.path, 0, f"{self.name} ({self.path.name})"


def _play_scenario(itbench_trial):
    """The test body: run the agent, evaluate, and fail with the verdict when a required check missed."""
    result = itbench_trial.play()
    if result.outcome != PASSED:
        pytest.fail(junit.failure_message(result), pytrace=False)


# ---- fixtures ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def itbench_backend(pytestconfig, request):
    """The environment provider of this session (``--itbench-backend``); what outlives trials (a cluster per
    worker or session) is released at the end."""
    try:
        backend = backend_options.make(pytestconfig, request.session)
    except BackendError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield backend
    backend.close()


@pytest.fixture
def itbench_trial(request, tmp_path):
    """One prepared trial: environment provisioned, application deployed, faults injected, alerts firing."""
    config = request.config
    spec = config.getoption("itbench_agent")
    if not spec:
        pytest.skip("no agent to run: pass --itbench-agent=NAME (for example --itbench-agent=oracle)")
    scenario, run, variant = request.node.stash[_SCENARIO]
    recorded = request.node.stash.get(_RECORDED, None)
    if recorded is not None:  # --itbench-resume: the recorded result, replayed; nothing is provisioned
        trial = ReplayedTrial(recorded, str(Path(config.invocation_params.dir, config.getoption("itbench_resume"))
                                            .resolve()))
        request.node.stash[_TRIAL] = trial
        yield trial
        _finish(request.node, trial)
        return
    itbench_backend = request.getfixturevalue("itbench_backend")  # not before: a replayed trial needs none
    timeout = config.getoption("itbench_timeout")
    options = Options(agent=spec, runs=config.getoption("itbench_runs"), seed=config.getoption("itbench_seed"),
                      timeout=parse_duration(timeout) if timeout else None,
                      without=tuple(config.getoption("itbench_without")), keep=config.getoption("itbench_keep"),
                      ntam={k: v for k in "wtg" if (v := config.getoption(f"itbench_ntam_{k}")) is not None},
                      prices=config.stash[_PRICES], unsafe=config.stash[_UNSAFE],
                      noise=config.getoption("itbench_noise"), agent_env=config.stash[_AGENT_ENV],
                      selection=config.stash.get(_SELECTION, ""),
                      shard=str(config.stash.get(_SHARD, None) or ""))
    path = str(request.node.path) if options.runs == 1 else f"{request.node.path}::{request.node.name}"

    def make_agent():
        return config.hook.pytest_itbench_make_agent(spec=spec, scenario=scenario,
                                                     scenario_dir=str(request.node.path.parent), config=config)

    title = variants.trial_id(scenario.id, variant) + (f" run {run}" if options.runs > 1 else "")
    progress = PhaseProgress(config, title)
    results = _results_file(config)
    keeper = None
    if results is not None:  # what the trial has so far, on disk, for a worker killed outright (study/journal.py)
        progress = keeper = journal.Keeper(progress, journal.Journal(results.path, results.session,
                                                                     request.node.nodeid))
    trial = Trial(scenario=scenario, path=path, run=run, variant=variant, options=options, backend=itbench_backend,
                  workdir=str(tmp_path), make_agent=make_agent, evaluate_hook=config.hook.pytest_itbench_evaluate,
                  scenario_dir=str(request.node.path.parent), progress=progress)
    if keeper is not None:
        keeper.trial = trial
    request.node.stash[_TRIAL] = trial
    try:
        trial.prepare()
        yield trial
    finally:
        kept = options.keep and trial.result.outcome != PASSED and trial.cluster is not None
        if kept:
            config.stash[_KEPT].append(trial)
            trial.result.finished_at = trial.result.started_at
        else:
            trial.close()
        if keeper is not None and keeper.failure:
            trial.result.attachments.append(Attachment("in-flight journal", "text", content=(
                f"the trial's in-flight journal could not be written ({keeper.failure}): a worker killed "
                f"outright would have lost it")))
        _finish(request.node, trial)
        if trial.cut and results is not None:
            _record_cut(results, request.node, trial.result)


def _results_file(config) -> ResultsFile | None:
    """``--itbench-results`` as this process writes to it: the controller's, or on an xdist worker one of the
    same session (the controller hands its id over in ``workerinput``), so the journals' keys agree."""
    writer = config.pluginmanager.get_plugin("itbench-results-file")
    if writer is not None:
        return writer.results_file
    path = config.getoption("itbench_results")
    if not path:
        return None
    session = getattr(config, "workerinput", {}).get(_SESSION_INPUT)
    return ResultsFile(Path(config.invocation_params.dir, path), session=session)


def _record_cut(results: ResultsFile, item, result) -> None:
    """A trial cut by Ctrl-C gets no report, so the results file's writer never sees it: its record (an error
    with the trajectory, tokens and cost so far) is appended here, by the process that ran it. On an xdist
    worker that is a second writer; each record is one write to a file opened for appending, so the lines of
    the two do not interleave (report/jsonl.py)."""
    results.append(result, nodeid=item.nodeid)
    journal.remove(journal.path_of(results.path, results.session, item.nodeid))


class ReplayedTrial:
    """A trial of --itbench-resume: its recorded result, played back as it was (outcome, verdict, figures)."""

    cluster = None
    cut = False

    def __init__(self, result, path: str):
        self.result = result
        self.result.resumed_from = str(path)

    def play(self):
        return self.result


def _finish(item, trial) -> None:
    result = trial.result
    junit.add_properties(item, result)
    item.config.hook.pytest_itbench_trial_finished(result=result, item=item)


@pytest.hookimpl(trylast=True)
def pytest_itbench_make_agent(spec, scenario, scenario_dir, config):
    return agent_registry.resolve(spec, scenario, scenario_dir=scenario_dir,
                                  settings=openai_settings.values_from_pytest(config),
                                  pass_env=config.stash[_AGENT_ENV])


# ---- reports -------------------------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    trial = item.stash.get(_TRIAL, None)
    if trial is not None and (report.when != "setup" or report.failed):
        carry.put(report, trial.result)
    if trial is not None and report.failed and trial.result.outcome == ERROR and trial.result.error:
        # An environment error says what broke and how to rerun the trial, instead of the fixture's code;
        # an unexpected exception keeps its traceback, with the rerun command under it.
        if call.excinfo is not None and call.excinfo.errisinstance(EnvironmentBroken):
            report.longrepr = trial.result.error
        else:
            report.sections.append(("itbench", trial.result.error))
    if trial is not None and report.when == "teardown" and allure_report.results_dir(item.config) is not None:
        # Here, not in the fixture's teardown: there allure-pytest files the attachments under the fixture
        # ("Tear down"), not under the test; the test stays open until its logfinish.
        allure_report.annotate(trial.result)
    return report


class _ResultsWriter:
    """On the controller: appends each finished trial to the JSONL file, once, from its last (teardown) report;
    and a trial whose process died, from its in-flight journal (study/journal.py)."""

    def __init__(self, results_file: ResultsFile):
        self.results_file = results_file
        # At the start: the trials of sessions on this machine that were killed outright.
        self.recovery = journal.recover(results_file)

    def pytest_runtest_logreport(self, report):
        if report.when == "teardown":
            result = carry.result_of(report)
            if result is None:
                return
            if result.resumed_from and Path(result.resumed_from).resolve() == self.results_file.path.resolve():
                return  # replayed from this very file, which holds it already
            self.results_file.append(result, nodeid=report.nodeid)
            journal.remove(journal.path_of(self.results_file.path, self.results_file.session, report.nodeid))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):  # xdist, on the controller: the workers write journals of this session
        node.workerinput[_SESSION_INPUT] = self.results_file.session

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem, report, sched):
        """xdist: the worker running ``crashitem`` died; its journal becomes the trial's record, and the report's
        result (an error with what the trial had), so that the leaderboard counts it."""
        try:
            entry = journal.read(journal.path_of(self.results_file.path, self.results_file.session, crashitem))
        except FileNotFoundError:
            return None  # it died before its trial began (or without --itbench-results on the worker)
        except ValueError as exc:
            report.longrepr = f"{report.longrepr}\nits in-flight journal is unreadable: {exc}"
            return None
        result = journal.settle(entry, self.results_file)
        carry.put(report, result)
        report.longrepr = f"{report.longrepr}\n{result.error}"
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report, config):
        """A trial lost with its worker is an error, as any trial whose environment broke, not a failure."""
        if report.when == "???" and report.failed:
            result = carry.result_of(report)
            if result is not None and result.outcome == ERROR:
                return "error", "E", "ERROR"
        return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = carry.results_from_stats(terminalreporter.stats)
    leaderboard.write(terminalreporter, results)
    path = config.getoption("itbench_resume")
    if path and results:
        line = resume.summary(Path(config.invocation_params.dir, path), path, results)
        terminalreporter.write_line(line, yellow=line.startswith("itbench resume: nothing"))
    writer = config.pluginmanager.get_plugin("itbench-results-file")
    if writer is not None:
        for line in journal.describe(writer.recovery, config.getoption("itbench_results")):
            terminalreporter.write_line(line, yellow=True)
    kept = config.stash.get(_KEPT, [])
    for trial in kept:
        terminalreporter.write_line(f"kept {trial.scenario.id} run {trial.run} ({trial.result.outcome}): "
                                    f"KUBECONFIG={trial.cluster.admin_kubeconfig}  "
                                    + "  ".join(f"{k}={v}" for k, v in trial.cluster.urls.items()))
    if kept and sys.stdin is not None and sys.stdin.isatty():
        terminalreporter.write_line("press Enter to tear the kept environments down")
        try:
            input()
        except EOFError:
            pass


def pytest_unconfigure(config):
    """Kept environments go last, after the terminal summary has printed where to reach them."""
    for trial in config.stash.get(_KEPT, []):
        trial.close()
    config.stash[_KEPT] = []


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    directory = allure_report.results_dir(config)
    if directory is not None and carry.is_controller(config):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        results = carry.results_from_stats(reporter.stats) if reporter is not None else []
        if results:
            allure_report.write_session_files(directory, allure_report.environment(results))
