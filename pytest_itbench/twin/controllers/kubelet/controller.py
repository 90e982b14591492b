"""The kubelet: one controller for the kubelets of every node.

Pods are keyed by namespace and name and handled by the kubelet of their
``spec.nodeName``: a :class:`~.worker.PodWorker` per pod holds what that
node's runtime knows of it. A node that is not Ready runs no kubelet, so its
pods are neither started nor updated until it is Ready again. The kubelet
writes as ``system:node:<node>`` with the field manager ``kubelet``, and
records events with the node as their source host.

The pieces a harness may reach: ``registry`` (the images nodes can pull,
:mod:`pytest_itbench.twin.images`) and ``behaviours`` (the chain of
container behaviour providers, :mod:`pytest_itbench.twin.containers.behaviour`),
where the application behaviour sheets plug in, and ``network`` (what a
connection from a container gets, :mod:`pytest_itbench.twin.containers.network`),
which the workload engine replaces with its own model; by default it is judged
from Services and Endpoints in the store and from who listens on this kubelet's
nodes.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from ... import quantity
from ...containers.behaviour import Behaviours
from ...containers.network import Network, StoreNetwork
from ...images import default_registry
from ...store import Change
from ..manager import Controller, ControllerManager
from . import eviction
from .node import NodeAgent, node_ready
from .pulls import ImageManager
from .worker import PodWorker


class Kubelet(Controller):
    name = "kubelet"
    identity = "system:node"
    field_manager = "kubelet"
    watches = ("pods", "nodes")

    def __init__(self, manager: ControllerManager):
        super().__init__(manager)
        self.logs = manager.logs
        self.metrics = manager.metrics
        self.pods = self.resource("", "v1", "pods")
        self.registry = default_registry()
        self.images = ImageManager(self.registry, self.rng)
        self.behaviours = Behaviours()
        self.network: Network = StoreNetwork(self.store, self.listening)
        self.nodes: dict[str, NodeAgent] = {}
        self.workers: dict[tuple[str, str], PodWorker] = {}
        self.pods_by_node: dict[str, set[tuple[str, str]]] = {}

    # ---- what to look at ----------------------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        obj, old = change.obj, change.old
        if change.bucket == "nodes":
            name = obj["metadata"]["name"]
            if change.type == "MODIFIED" and old is not None and node_ready(obj) == node_ready(old):
                # a new capacity changes the eviction signal (what the kubelet reads from its machine)
                return [("node", name)] if _capacity(obj) != _capacity(old) else ()
            pods = sorted(self.pods_by_node.get(name, ()))
            return [("node", name)] + [("pod", ns, pod) for ns, pod in pods]
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        node = (obj.get("spec") or {}).get("nodeName")
        if change.type == "DELETED":
            if node:
                self.pods_by_node.get(node, set()).discard(key)
            return [("pod", *key)]
        if not node:
            return ()
        self.pods_by_node.setdefault(node, set()).add(key)
        if change.type == "MODIFIED" and old is not None and _status_only(obj, old):
            return ()  # a status write: the kubelet's pod config ignores those
        return [("pod", *key)]

    # ---- reconciling ------------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        if key[0] == "node":
            return self._sync_node(key[1])
        _, namespace, name = key
        pod = self.store.get("pods", namespace, name)
        worker = self.workers.get((namespace, name))
        if pod is None:
            if worker is not None:
                worker.forget()
                del self.workers[(namespace, name)]
            return None
        node_name = pod["spec"].get("nodeName")
        if worker is not None and (worker.uid != pod["metadata"]["uid"] or worker.node.name != node_name):
            worker.forget()
            del self.workers[(namespace, name)]
            worker = None
        if not node_name:
            return None
        node = self.store.get("nodes", "", node_name)
        if not node_ready(node):
            return None
        if worker is None:
            worker = PodWorker(self, self._agent(node), pod)
            self.workers[(namespace, name)] = worker
        after = worker.sync(pod, now)
        if worker.gone:
            worker.forget()
            self.workers.pop((namespace, name), None)
        return after

    def _agent(self, node: dict) -> NodeAgent:
        name = node["metadata"]["name"]
        agent = self.nodes.get(name)
        if agent is None:
            agent = self.nodes[name] = NodeAgent.from_node(node)
        return agent

    def _sync_node(self, name: str) -> float | None:
        """Report the node's own usage while its kubelet runs (what metrics-server scrapes from it), and evict
        a pod while the node is short of memory (:mod:`.eviction`); under pressure it looks again every
        monitoring interval."""
        node = self.store.get("nodes", "", name)
        if node is None:
            self.nodes.pop(name, None)
            return None
        if not node_ready(node):
            self.metrics.clear_node_usage(name)
            return None
        agent = self._agent(node)
        cpu, memory = agent.node_usage()
        self.metrics.set_node_usage(name, cpu=cpu, memory=memory)
        return self._evict(node, agent, memory)

    def _evict(self, node: dict, agent: NodeAgent, working_set: int) -> float | None:
        capacity = ((node.get("status") or {}).get("capacity") or {}).get("memory")
        capacity = int(quantity.value(capacity)) if capacity else None
        if not eviction.under_pressure(capacity, working_set):
            return None
        now = self.clock.now()
        if now + 1e-9 < agent.next_eviction_at:
            return agent.next_eviction_at - now
        name = node["metadata"]["name"]
        candidates = [w.eviction_candidate() for key, w in sorted(self.workers.items())
                      if w.node.name == name and w.evictable()]
        ranked = eviction.rank(candidates)
        if ranked:
            victim = ranked[0]
            self.workers[victim.key].evict(eviction.message(victim, capacity - working_set), now)
            self.enqueue(("pod", *victim.key))
            agent.next_eviction_at = now + eviction.MONITORING_INTERVAL
        return eviction.MONITORING_INTERVAL

    def listening(self, namespace: str, name: str, port: int) -> bool:
        """Whether a running container of the pod listens on ``port`` now (what a connection to it finds)."""
        worker = self.workers.get((namespace, name))
        if worker is None:
            return False
        now = self.clock.now()
        return any(slot.current is not None and slot.current.running and slot.current.process is not None
                   and slot.current.process.listens(port, slot.current.since_start(now)) for slot in worker.slots)

    def new_container_id(self) -> str:
        return f"{self.rng.getrandbits(256):064x}"


def _capacity(node: dict):
    return ((node.get("status") or {}).get("capacity") or {}).get("memory")


def _status_only(obj: dict, old: dict) -> bool:
    if obj.get("spec") is not old.get("spec"):
        return False
    meta, old_meta = obj["metadata"], old["metadata"]
    return (meta.get("deletionTimestamp") == old_meta.get("deletionTimestamp")
            and meta.get("deletionGracePeriodSeconds") == old_meta.get("deletionGracePeriodSeconds"))
