"""kube-apiserver's APIService controllers: local APIServices registered, remote ones checked for availability.

* At start the API server registers a *local* APIService (no ``spec.service``)
  for each built-in group/version it serves, with the group and version
  priorities of its table and the label
  ``kube-aggregator.kubernetes.io/automanaged: onstart`` (created once: one a
  user deletes stays deleted). Local APIServices are ``Available`` from their
  creation (the registry's strategy sets the condition).
* The CRD registration controller keeps one local APIService per
  group/version some CustomResourceDefinition serves (priorities 1000 and
  100, label ``automanaged: "true"``): created, restored after a deletion or
  an edit, and deleted once no CRD serves it.
* The availability controller checks every APIService that points at a
  service, in kube-aggregator's order and words (v1.31, with Endpoints): the
  Service exists, a ClusterIP Service listens on the port, its Endpoints
  exist and have an address with that port's name, and then the discovery
  document answers. The twin serves no aggregated API servers and proxies
  nothing, so the last check fails (``FailedDiscoveryCheck``, connection
  refused at the service's address): a remote APIService is never
  Available.

All three react at once to the writes they watch (they run in the API
server, within milliseconds), through the API, as the API server's own
loopback identity.
"""

from __future__ import annotations

from ..apiserver.access.authn import user_for
from ..apiserver.registry import Ctx, DeleteOptions, ResourceAPI
from ..apiserver.resources import Resource
from ..errors import AlreadyExists, NotFound, StatusError
from ..store import clone
from .reactor import Reactor

GROUP = "apiregistration.k8s.io"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
ON_START, ALWAYS = "onstart", "true"
FIELD_MANAGER = "kube-apiserver"
CRD_PRIORITIES = (1000, 100)  # CRDs sort below every built-in group

# kube-apiserver v1.31's (group priority, version priority) per built-in group/version
# (cmd/kube-apiserver/app/aggregator.go over pkg/controlplane/apiserver's generic table). A served
# group/version missing here gets no APIService, as upstream.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}


def api_service_name(group: str, version: str) -> str:
    return f"{version}.{group}"


def local_api_service(group: str, version: str, priorities: tuple[int, int], managed: str) -> dict:
    spec: dict = {"version": version, "groupPriorityMinimum": priorities[0], "versionPriority": priorities[1]}
    if group:
        spec = {"group": group, **spec}
    return {"apiVersion": f"{GROUP}/v1", "kind": "APIService",
            "metadata": {"name": api_service_name(group, version), "labels": {AUTOMANAGED: managed}},
            "spec": spec}


class APIServiceControllers:
    def __init__(self, api: ResourceAPI, reactor: Reactor, ctx: Ctx):
        self.api = api
        self.apiservices = api.catalog.lookup(GROUP, "v1", "apiservices")
        self.services = api.catalog.lookup("", "v1", "services")
        self.endpoints = api.catalog.lookup("", "v1", "endpoints")
        self.crds = api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        self.ctx = Ctx(user=user_for("system:apiserver", ("system:masters",)), field_manager=FIELD_MANAGER,
                       user_agent=ctx.user_agent, trusted=True)
        self._by_service: dict[tuple[str, str], set[str]] = {}  # (namespace, name) -> APIServices using it
        reactor.register("apiservices", self.react)

    # ---- registration ---------------------------------------------------------------------------------
    def register_local(self) -> None:
        """The start-up registration: a local APIService per built-in group/version served."""
        served = {(res.group, res.version) for res in self.api.catalog.resources if res.crd is None}
        for group, version in sorted(served & set(PRIORITIES), key=lambda gv: api_service_name(*gv)):
            self._create(local_api_service(group, version, PRIORITIES[(group, version)], ON_START))

    def _crd_served(self) -> set[tuple[str, str]]:
        served = set()
        for crd in self.api.store.list(self.crds.bucket)[0]:
            spec = crd.get("spec") or {}
            for version in spec.get("versions") or ():
                if version.get("served") and spec.get("group") and version.get("name"):
                    served.add((spec["group"], version["name"]))
        return served - set(PRIORITIES)

    def sync_crd_api_services(self) -> None:
        """Create, restore or delete the APIServices of the CRDs' group/versions."""
        wanted = {api_service_name(g, v): local_api_service(g, v, CRD_PRIORITIES, ALWAYS)
                  for g, v in self._crd_served()}
        for current in self.api.store.list(self.apiservices.bucket)[0]:
            name = current["metadata"]["name"]
            if (current["metadata"].get("labels") or {}).get(AUTOMANAGED) != ALWAYS:
                wanted.pop(name, None)  # someone else's (or registered at start): left alone
                continue
            desired = wanted.pop(name, None)
            if desired is None:
                self._delete(name)
            elif current.get("spec") != desired["spec"]:
                updated = clone(current)
                updated["spec"] = desired["spec"]
                self._write(lambda: self.api.update(self.apiservices, None, name, updated, self.ctx, decoded=True))
        for name in sorted(wanted):
            self._create(wanted[name])

    # ---- availability -------------------------------------------------------------------------------------
    def react(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        bucket = res.bucket
        if bucket == self.apiservices.bucket:
            self._index(obj["metadata"]["name"], None if op == "delete" else obj, (old, obj))
            if op == "delete":
                if (obj["metadata"].get("labels") or {}).get(AUTOMANAGED) == ALWAYS:
                    self.sync_crd_api_services()
                return
            if (obj["metadata"].get("labels") or {}).get(AUTOMANAGED) == ALWAYS and \
                    old is not None and obj.get("spec") != old.get("spec"):
                self.sync_crd_api_services()
            self.check(obj["metadata"]["name"])
        elif bucket == self.crds.bucket:
            if old is None or op == "delete" or obj.get("spec") != old.get("spec"):
                self.sync_crd_api_services()
        elif bucket in (self.services.bucket, self.endpoints.bucket):
            key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            for name in sorted(self._by_service.get(key, ())):
                self.check(name)

    def _index(self, name: str, obj: dict | None, before: tuple) -> None:
        """Which APIServices point at which Service: the Service's and Endpoints' changes concern them."""
        for previous in before:
            key = _service_key(previous)
            if key is not None and key in self._by_service:
                self._by_service[key].discard(name)
                if not self._by_service[key]:
                    del self._by_service[key]
        key = _service_key(obj)
        if key is not None:
            self._by_service.setdefault(key, set()).add(name)

    def check(self, name: str) -> None:
        """One sync of the availability controller for the APIService ``name``."""
        current = self.api.store.get(self.apiservices.bucket, "", name)
        if current is None or not (current.get("spec") or {}).get("service"):
            return  # local APIServices are the local availability controller's, which has nothing to do
        status, reason, message = self.availability(current)
        conditions = [dict(c) for c in (current.get("status") or {}).get("conditions") or ()]
        existing = next((c for c in conditions if c.get("type") == "Available"), None)
        if existing is None:
            conditions.append({"type": "Available", "status": status,
                               "lastTransitionTime": self.api.clock.timestamp(), "reason": reason,
                               "message": message})
        else:
            if existing.get("status") != status:
                existing["status"] = status
                existing["lastTransitionTime"] = self.api.clock.timestamp()
            existing["reason"], existing["message"] = reason, message
        if conditions == ((current.get("status") or {}).get("conditions") or []):
            return
        updated = clone(current)
        updated["status"] = {**(current.get("status") or {}), "conditions": conditions}
        self._write(lambda: self.api.update(self.apiservices, None, name, updated, self.ctx, subresource="status",
                                            decoded=True))

    def availability(self, api_service: dict) -> tuple[str, str, str]:
        """(status, reason, message) of the Available condition, as the remote availability controller finds."""
        spec = api_service["spec"]
        ref = spec["service"]
        ns, svc_name, port = ref.get("namespace", ""), ref.get("name", ""), ref.get("port") or 443
        where = f'service/{svc_name} in "{ns}"'
        service = self.api.store.get(self.services.bucket, ns, svc_name)
        if service is None:
            return "False", "ServiceNotFound", f"{where} is not present"
        svc_spec = service.get("spec") or {}
        kind = svc_spec.get("type") or "ClusterIP"
        if kind == "ClusterIP":
            service_port = next((p for p in svc_spec.get("ports") or () if p.get("port") == port), None)
            if service_port is None:
                return "False", "ServicePortError", f"{where} is not listening on port {port}"
            port_name = service_port.get("name") or ""
            endpoints = self.api.store.get(self.endpoints.bucket, ns, svc_name)
            if endpoints is None:
                return "False", "EndpointsNotFound", f"cannot find endpoints for {where}"
            if not any(subset.get("addresses") and any((p.get("name") or "") == port_name
                                                       for p in subset.get("ports") or ())
                       for subset in endpoints.get("subsets") or ()):
                return "False", "MissingEndpoints", \
                    f'endpoints for {where} have no addresses with port name "{port_name}"'
        return "False", "FailedDiscoveryCheck", _discovery_failure(api_service, service, port)

    # ---- writing ------------------------------------------------------------------------------------------
    def _create(self, obj: dict) -> None:
        self._write(lambda: self.api.create(self.apiservices, None, obj, self.ctx))

    def _delete(self, name: str) -> None:
        self._write(lambda: self.api.delete(self.apiservices, None, name, DeleteOptions(), self.ctx))

    @staticmethod
    def _write(call) -> None:
        try:
            call()
        except (AlreadyExists, NotFound):
            pass  # someone else got there first; the next change brings the next look
        except StatusError:
            pass  # a conflicting write: the reaction it causes looks again


def _service_key(obj: dict | None) -> tuple[str, str] | None:
    ref = ((obj or {}).get("spec") or {}).get("service")
    if not ref:
        return None
    return ref.get("namespace", ""), ref.get("name", "")


def _discovery_failure(api_service: dict, service: dict, port: int) -> str:
    """What the discovery GET through the service's cluster address ends with: nothing listens there."""
    spec, svc_spec = api_service["spec"], service.get("spec") or {}
    kind = svc_spec.get("type") or "ClusterIP"
    if kind == "ExternalName":
        host = svc_spec.get("externalName", "")
    elif kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        if svc_spec.get("clusterIP") == "None":
            return 'cannot route to service with ClusterIP "None"'
        if not any(p.get("port") == port for p in svc_spec.get("ports") or ()):
            return f'no service port {port} found for service "{service["metadata"]["name"]}"'
        host = svc_spec.get("clusterIP", "")
    else:
        return f'unsupported service type "{kind}"'
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    path = f"/api/{spec.get('version', '')}" if api_service["metadata"]["name"] == "v1." else \
        f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"
    url = f"https://{address}{path}"
    return f'failing or missing response from {url}: Get "{url}": dial tcp {address}: connect: connection refused'
