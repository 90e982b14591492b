"""What the model is told: a system prompt per domain (text files beside this module) and the task.

The prompts describe the job, the tools and the shape of the hand-in, nothing of any scenario. The
task message carries the task's text and what a real operator would know besides (the namespaces, the
signals on offer, the time), but not the scenario's id, which often names the fault.
"""

from __future__ import annotations

from importlib import resources

from ..base import Task

DOMAINS = ("sre", "finops", "ciso")

# What each offered signal gives the model, for the task message.
SIGNALS = {
    "prometheus": "Prometheus metrics (promql_query, promql_range_query)",
    "alertmanager": "Alertmanager's alerts (alerts)",
    "jaeger": "Jaeger traces (trace_services, trace_search, trace_dependencies)",
    "topology": "the topology graph (topology_nodes, topology_edges, topology_graph)",
}


def system_prompt(domain: str) -> str:
    """The system prompt of ``domain``; an unknown domain gets the SRE one (an operator's job is closest)."""
    name = domain if domain in DOMAINS else "sre"
    return resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()


def task_message(task: Task, *, max_steps: int) -> str:
    lines = ["Your task:", "", task.text.strip(), ""]
    if task.namespaces:
        lines.append(f"Your rights lie in the namespace(s): {', '.join(task.namespaces)}.")
    offered = [SIGNALS[name] for name in SIGNALS if task.urls.get(name)]
    if task.domain != "ciso":
        lines.append("Signals offered in this trial: " + ("; ".join(offered) if offered else "none besides kubectl")
                     + "; logs through kubectl.")
    if task.domain == "ciso":
        lines.append("Your working directory is where write_file writes, kubectl and run_script run, and the files "
                     "you hand in must be (give paths relative to it).")
    lines.append(f"You have {task.time_limit:g} seconds and at most {max_steps} turns; hand in before either "
                 f"runs out.")
    return "\n".join(lines)


NO_TOOL_CALLED = ("You answered without calling a tool. Go on with a tool call; when you are done, hand in with "
                  "{handin}.")
