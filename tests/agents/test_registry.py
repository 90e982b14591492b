"""--itbench-agent resolution: built-ins, entry points, module:attribute, exec:, and unknown names."""

from __future__ import annotations

import sys
import textwrap
import uuid

import pytest

from pytest_itbench.agents import AgentSpecError, ExecAgent, Submission, Trajectory, available, resolve
from pytest_itbench.agents.guard import GuardedAgent
from pytest_itbench.agents.noop import NoopAgent
from pytest_itbench.agents.oracle import Oracle
from pytest_itbench.scenario import loads

AGENT_MODULE = """
from pytest_itbench.agents import Submission

class Agent:
    name = "by-class"
    def run(self, task, trajectory):
        return Submission(notes=self.name)

class NeedsKey:
    def __init__(self, api_key):
        self.api_key = api_key
    def run(self, task, trajectory):
        return Submission()

def factory():
    agent = Agent()
    agent.name = "by-factory"
    return agent

instance = Agent()
instance.name = "by-object"

class Holder:
    inner = instance

not_an_agent = 42

def with_secret():
    from pytest_itbench.agents import ExecAgent
    return ExecAgent("sh -c 'exit 0'", pass_env=["MY_API_KEY"])
"""


@pytest.fixture
def module_name(tmp_path, monkeypatch):
    """An importable module holding agents in every form, under a name no other test uses."""
    name = f"agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("attribute,notes", [("Agent", "by-class"), ("factory", "by-factory"),
                                             ("instance", "by-object"), ("Holder.inner", "by-object")])
def test_module_attribute_instantiates_calls_or_uses(module_name, make_task, attribute, notes):
    agent = resolve(f"{module_name}:{attribute}")
    assert isinstance(agent, GuardedAgent) and agent.name == f"{module_name}:{attribute}"
    assert agent.run(make_task(), Trajectory()).notes == notes


@pytest.mark.parametrize("attribute,expected", [
    ("Agnet", "has no attribute 'Agnet' (did you mean Agent?)"),
    ("not_an_agent", "gave 42, which has no run(task, trajectory) method"),
    ("NeedsKey", "TypeError: NeedsKey.__init__() missing 1 required positional argument: 'api_key' (it is called "
                 "without arguments; give a factory"),
])
def test_module_attribute_that_is_no_agent_is_a_usage_error(module_name, attribute, expected):
    with pytest.raises(AgentSpecError) as failure:
        resolve(f"{module_name}:{attribute}")
    assert expected in str(failure.value)


def test_a_module_that_cannot_be_imported_says_how_to_make_it_importable():
    with pytest.raises(AgentSpecError, match=r"cannot import 'no_such_agents' .* add its directory to sys.path"):
        resolve("no_such_agents:Agent")


def test_a_module_whose_own_import_fails_shows_that_error(tmp_path, monkeypatch):
    name = f"broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import a_dependency_that_is_missing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AgentSpecError, match=f"importing '{name}' .* failed: No module named "
                                             "'a_dependency_that_is_missing'"):
        resolve(f"{name}:Agent")


def install_distribution(site, monkeypatch, entry_points: str, module: str, module_text: str) -> None:
    """A distribution's dist-info on a fresh sys.path entry, as pip would leave it."""
    dist_info = site / "fake_agents-1.2.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-agents\nVersion: 1.2\n")
    (dist_info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    (site / f"{module}.py").write_text(module_text)
    monkeypatch.syspath_prepend(str(site))


def test_entry_points_are_listed_and_resolved(tmp_path, monkeypatch, make_task):
    module = f"fake_agents_{uuid.uuid4().hex[:8]}"
    install_distribution(tmp_path / "site", monkeypatch, f"""
        [pytest_itbench.agents]
        fake = {module}:Agent
        fake-factory = {module}:factory
        broken = {module}_missing:Agent
        noop = {module}:Agent
        """, module, AGENT_MODULE)
    try:
        assert {"fake", "fake-factory", "broken", "noop", "oracle"} <= set(available())
        assert resolve("fake").run(make_task(), Trajectory()).notes == "by-class"
        assert resolve("fake-factory").run(make_task(), Trajectory()).notes == "by-factory"
        assert isinstance(resolve("noop").agent, NoopAgent)  # a built-in name is not taken over
        with pytest.raises(AgentSpecError, match=rf"agent 'broken' could not be loaded from entry point broken = "
                                                 rf"{module}_missing:Agent \(from fake-agents 1.2\)"):
            resolve("broken")
    finally:
        sys.modules.pop(module, None)


def test_an_unknown_name_lists_the_available_agents_and_the_accepted_forms(tmp_path, monkeypatch):
    install_distribution(tmp_path / "site", monkeypatch, "[pytest_itbench.agents]\nmine = os:getcwd\n",
                         "unused_module", "")
    with pytest.raises(AgentSpecError) as failure:
        resolve("orcale")
    message = str(failure.value)
    assert isinstance(failure.value, ValueError)
    assert message.startswith("unknown agent 'orcale' (did you mean oracle?)")
    listed = next(line for line in message.splitlines() if line.startswith("Available agents: "))
    assert {"mine", "noop", "oracle"} <= set(listed.removeprefix("Available agents: ").split(", "))
    for form in ("NAME ", "module:attribute ", "exec:COMMAND ", "pytest_itbench.agents", "docs/agents.md"):
        assert form in message


def test_builtins_and_exec(make_task, tmp_path):
    noop = resolve("noop")
    assert noop.name == "noop" and noop.run(make_task(), Trajectory()) == Submission()
    assert isinstance(resolve(" exec:sh -c 'exit 0' "), ExecAgent)
    assert resolve("exec:sh -c 'exit 0'").argv[1:] == ["-c", "exit 0"]


def test_an_exec_agent_from_a_factory_keeps_its_own_deadline_handling(module_name):
    agent = resolve(f"{module_name}:with_secret")
    assert isinstance(agent, ExecAgent) and agent.pass_env == ("MY_API_KEY",)


def test_only_the_oracle_is_handed_the_scenario(tmp_path):
    scenario = loads("""
id: ciso-x
title: x
domain: ciso
complexity: easy
task: Write a policy.
ground_truth: {}
""")
    oracle = resolve("oracle", scenario, scenario_dir=tmp_path)
    assert isinstance(oracle.agent, Oracle)
    assert oracle.agent.scenario is scenario and oracle.agent.scenario_dir == tmp_path
    assert vars(resolve("noop", scenario).agent) == {}
