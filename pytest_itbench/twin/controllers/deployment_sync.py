"""One sync of one Deployment, step by step as kube-controller-manager's deployment controller takes them.

``DeploymentSync.run`` claims the ReplicaSets, then syncs only the status of a
Deployment being deleted, scales a paused one or one with a scaling event,
and otherwise rolls it out (RollingUpdate or Recreate), keeping revisions,
the replica annotations and the status conditions up to date. Writes go
through the controller's helpers, and the sync keeps its copies of what it
wrote current, so one sync never trips over its own writes.
"""

from __future__ import annotations

from ..clock import parse_time
from ..errors import AlreadyExists, StatusError
from ..selectors import LabelSelector
from ..store import clone
from . import deployment_replicas as rep
from . import deployment_status as st
from .controller_ref import claim, controller_of, controller_ref, selector_of, with_owner, without_owner
from .deployment_revisions import (
    REVISION, by_revision, desired_replicas_annotation, max_revision,
    replicas_annotations_need_update, set_deployment_revision, set_new_rs_annotations, set_replicas_annotations,
)
from .events import EventSource
from .item_backoff import BASE_DELAY
from .pod_template import HASH_LABEL, equal_ignore_hash, template_hash
from .replicaset import namespace_terminating

SOURCE = EventSource("deployment-controller")


class DeploymentSync:
    """One sync of one Deployment: the working copy ``d``, its ReplicaSets, and the steps upstream takes."""

    def __init__(self, controller, d: dict, now: float):
        self.c = controller
        self.d = d
        self.now = now
        self.stamp = controller.clock.timestamp(now)
        self.ns = d["metadata"]["namespace"]
        self.rs_list: list[dict] = []  # claimed ReplicaSets, kept current as this sync writes them

    def run(self) -> float | None:
        d = self.d
        spec_selector = d["spec"].get("selector")
        if spec_selector is not None and not spec_selector.get("matchLabels") and \
                not spec_selector.get("matchExpressions"):
            self._selecting_all()
            return None
        selector = selector_of(d)
        if selector is None:
            return None  # validation keeps invalid selectors out; upstream logs and gives up too
        self.rs_list = self._claim_replica_sets(selector)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = self._replica_sets(create=False)
            self._sync_status(old_rss + [new_rs], new_rs)
            return None
        self._check_paused_conditions()
        if self.d["spec"].get("paused") or self._is_scaling_event():
            self._sync_scale()
            return None
        if (self.d["spec"].get("strategy") or {}).get("type") == "Recreate":
            return self._rollout_recreate(selector)
        return self._rollout_rolling()

    def _selecting_all(self) -> None:
        self.c.events.record(self.d, "Warning", "SelectingAll",
                             "This deployment is selecting all pods. A non-empty selector is required.", SOURCE)
        status = self.d.setdefault("status", {})
        generation = self.d["metadata"].get("generation", 0)
        if status.get("observedGeneration", 0) < generation:
            status["observedGeneration"] = generation
            try:
                self.c.update_status(self.c.deployments, self.d)
            except StatusError:
                pass  # upstream ignores this write's error

    # ---- writing --------------------------------------------------------------------------------------
    def _write_status(self) -> None:
        self.d = clone(self.c.update_status(self.c.deployments, self.d))

    def _write_replica_set(self, rs: dict) -> dict:
        stored = self.c.update(self.c.replicasets, rs)
        uid = stored["metadata"]["uid"]
        self.rs_list = [stored if r["metadata"]["uid"] == uid else r for r in self.rs_list]
        return stored

    # ---- ReplicaSets ------------------------------------------------------------------------------------
    def _claim_replica_sets(self, selector: LabelSelector) -> list[dict]:
        ref = controller_ref(self.d)
        uid = self.d["metadata"]["uid"]
        return claim(self.d, selector, self.c.store.list("replicasets.apps", self.ns)[0],
                     adopt=lambda rs: self.c.update(self.c.replicasets, with_owner(rs, ref)),
                     release=lambda rs: self.c.update(self.c.replicasets, without_owner(rs, uid)))

    def _find_new(self) -> dict | None:
        """The oldest ReplicaSet whose template is the Deployment's."""
        template = self.d["spec"]["template"]
        for rs in rep.by_creation(self.rs_list):
            if equal_ignore_hash(rs["spec"]["template"], template):
                return rs
        return None

    def _replica_sets(self, create: bool) -> tuple[dict | None, list[dict]]:
        """The new ReplicaSet (created if asked and missing) and all the old ones, revisions brought up to date."""
        current = self._find_new()
        old_rss = [rs for rs in self.rs_list if current is None or rs["metadata"]["uid"] != current["metadata"]["uid"]]
        return self._new_replica_set(current, old_rss, create), old_rss

    def _new_replica_set(self, existing: dict | None, old_rss: list[dict], create: bool) -> dict | None:
        d = self.d
        new_revision = max_revision(old_rss) + 1
        desired, most = rep.replicas(d), rep.replicas(d) + rep.max_surge(d)
        if existing is not None:
            rs = clone(existing)
            annotations_changed = set_new_rs_annotations(d, rs, new_revision, True, desired, most)
            min_ready = d["spec"].get("minReadySeconds") or 0
            if annotations_changed or (rs["spec"].get("minReadySeconds") or 0) != min_ready:
                _set_min_ready_seconds(rs, min_ready)
                return self._write_replica_set(rs)
            needs_update = set_deployment_revision(d, rs["metadata"]["annotations"].get(REVISION, ""))
            if st.has_progress_deadline(d) and st.condition(d.get("status") or {}, st.PROGRESSING) is None:
                st.set_condition(d.setdefault("status", {}), st.new_condition(
                    st.PROGRESSING, "True", st.FOUND_NEW_RS, f'Found new replica set "{rs["metadata"]["name"]}"',
                    self.stamp))
                needs_update = True
            if needs_update:
                self._write_status()
            return rs
        if not create:
            return None
        return self._create_new_replica_set(old_rss, new_revision, desired, most)

    def _create_new_replica_set(self, old_rss: list[dict], new_revision: int, desired: int, most: int) -> dict:
        d = self.d
        template = clone(d["spec"]["template"])
        pod_hash = template_hash(d["spec"]["template"], (d.get("status") or {}).get("collisionCount"))
        template_meta = template.setdefault("metadata", {})
        template_meta["labels"] = {**(template_meta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = clone(d["spec"]["selector"])
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        name = f"{d['metadata']['name']}-{pod_hash}"
        rs: dict = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": name, "namespace": self.ns, "labels": dict(template_meta["labels"]),
                                 "ownerReferences": [controller_ref(d)]},
                    "spec": {"replicas": 0, "selector": selector, "template": template}}
        _set_min_ready_seconds(rs, d["spec"].get("minReadySeconds") or 0)
        rs["spec"]["replicas"] = rep.new_rs_replicas(d, old_rss + [rs], rs)
        set_new_rs_annotations(d, rs, new_revision, False, desired, most)
        already_exists = False
        try:
            created = self.c.create(self.c.replicasets, rs)
        except AlreadyExists:
            found = self.c.store.get("replicasets.apps", self.ns, name)
            if found is None:
                raise
            ref = controller_of(found)
            if not (ref is not None and ref.get("uid") == d["metadata"]["uid"] and
                    equal_ignore_hash(d["spec"]["template"], found["spec"]["template"])):
                self._count_hash_collision()
                raise
            created, already_exists = found, True
        except StatusError as exc:
            if namespace_terminating(exc):
                raise
            message = f'Failed to create new replica set "{name}": {exc.message}'
            if st.has_progress_deadline(d):
                st.set_condition(d.setdefault("status", {}), st.new_condition(
                    st.PROGRESSING, "False", st.FAILED_RS_CREATE, message, self.stamp))
                try:
                    self._write_status()
                except StatusError:
                    pass  # the failure to create is the news; upstream ignores this write's error
            self.c.events.record(d, "Warning", st.FAILED_RS_CREATE, message, SOURCE)
            raise
        self.rs_list.append(created)
        count = rep.replicas(created)
        if not already_exists and count > 0:
            self.c.events.record(d, "Normal", "ScalingReplicaSet",
                                 f"Scaled up replica set {name} from 0 to {count}", SOURCE)
        needs_update = set_deployment_revision(d, str(new_revision))
        if not already_exists and st.has_progress_deadline(d):
            st.set_condition(d.setdefault("status", {}), st.new_condition(
                st.PROGRESSING, "True", st.NEW_REPLICA_SET, f'Created new replica set "{name}"', self.stamp))
            needs_update = True
        if needs_update:
            self._write_status()
        return created

    def _count_hash_collision(self) -> None:
        """Another ReplicaSet holds the name: the next hash mixes in a higher collisionCount."""
        status = self.d.setdefault("status", {})
        status["collisionCount"] = status.get("collisionCount", 0) + 1
        try:
            self._write_status()
        except StatusError:
            pass

    # ---- scaling ------------------------------------------------------------------------------------------
    def _scale_replica_set(self, rs: dict, new_scale: int) -> tuple[bool, dict]:
        """Set a ReplicaSet's size and replica annotations; a ScalingReplicaSet event when the size changed."""
        desired, most = rep.replicas(self.d), rep.replicas(self.d) + rep.max_surge(self.d)
        old_scale = rep.replicas(rs)
        size_changes = old_scale != new_scale
        if not size_changes and not replicas_annotations_need_update(rs, desired, most):
            return False, rs
        copy = clone(rs)
        copy["spec"]["replicas"] = new_scale
        set_replicas_annotations(copy, desired, most)
        stored = self._write_replica_set(copy)
        if size_changes:
            direction = "up" if old_scale < new_scale else "down"
            self.c.events.record(self.d, "Normal", "ScalingReplicaSet",
                                 f"Scaled {direction} replica set {rs['metadata']['name']} from {old_scale} to "
                                 f"{new_scale}", SOURCE)
        return size_changes, stored

    def _scale_if_needed(self, rs: dict, new_scale: int) -> tuple[bool, dict]:
        if rep.replicas(rs) == new_scale:
            return False, rs
        return self._scale_replica_set(rs, new_scale)

    def _is_scaling_event(self) -> bool:
        """spec.replicas differs from what an active ReplicaSet was last scaled for."""
        new_rs, old_rss = self._replica_sets(create=False)
        want = rep.replicas(self.d)
        for rs in rep.active(old_rss + [new_rs]):
            desired = desired_replicas_annotation(rs)
            if desired is not None and desired != want:
                return True
        return False

    def _sync_scale(self) -> None:
        """Scaling events and paused Deployments: resize proportionally, clean up when paused, sync status."""
        new_rs, old_rss = self._replica_sets(create=False)
        self._scale(new_rs, old_rss)
        if self.d["spec"].get("paused"):
            self._cleanup(old_rss)
        self._sync_status(old_rss + [new_rs], new_rs)

    def _scale(self, new_rs: dict | None, old_rss: list[dict]) -> None:
        d = self.d
        want = rep.replicas(d)
        only = rep.active_or_latest(new_rs, old_rss)
        if only is not None:
            if rep.replicas(only) != want:
                self._scale_if_needed(only, want)
            return
        newest_first = list(reversed(rep.by_creation(old_rss)))
        if rep.is_saturated(d, new_rs):
            for old in rep.active(newest_first):
                self._scale_if_needed(old, 0)
            return
        if not rep.is_rolling_update(d):
            return
        all_rss = rep.active(newest_first + [new_rs])
        allowed = want + rep.max_surge(d) if want > 0 else 0
        to_add = allowed - rep.total_replicas(all_rss)
        if to_add > 0:
            all_rss = rep.by_size_newer(all_rss)
        elif to_add < 0:
            all_rss = rep.by_size_older(all_rss)
        added = 0
        sizes = []
        for rs in all_rss:
            share = rep.proportion(rs, d, to_add, added) if to_add else 0
            sizes.append(rep.replicas(rs) + share)
            added += share
        if all_rss and to_add:
            sizes[0] = max(sizes[0] + to_add - added, 0)  # leftovers go to the largest
        for rs, size in zip(all_rss, sizes):
            self._scale_replica_set(rs, size)

    # ---- rollouts ------------------------------------------------------------------------------------------
    def _rollout_rolling(self) -> float | None:
        new_rs, old_rss = self._replica_sets(create=True)
        all_rss = old_rss + [new_rs]
        if self._reconcile_new_replica_set(all_rss, new_rs):
            return self._sync_rollout_status(all_rss, new_rs)
        if self._reconcile_old_replica_sets(all_rss, rep.active(old_rss), new_rs):
            return self._sync_rollout_status(all_rss, new_rs)
        if st.deployment_complete(self.d, self.d.get("status") or {}):
            self._cleanup(old_rss)
        return self._sync_rollout_status(all_rss, new_rs)

    def _reconcile_new_replica_set(self, all_rss: list[dict], new_rs: dict) -> bool:
        want = rep.replicas(self.d)
        if rep.replicas(new_rs) == want:
            return False
        if rep.replicas(new_rs) > want:
            return self._scale_if_needed(new_rs, want)[0]
        return self._scale_if_needed(new_rs, rep.new_rs_replicas(self.d, all_rss, new_rs))[0]

    def _reconcile_old_replica_sets(self, all_rss: list[dict], old_rss: list[dict], new_rs: dict) -> bool:
        """Scale old ReplicaSets down as far as maxUnavailable allows, their unhealthy pods first."""
        if rep.total_replicas(old_rss) == 0:
            return False
        min_available = rep.replicas(self.d) - rep.max_unavailable(self.d)
        new_unavailable = rep.replicas(new_rs) - (new_rs.get("status") or {}).get("availableReplicas", 0)
        max_scaled_down = rep.total_replicas(all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        try:
            old_rss, cleaned = self._clean_up_unhealthy_replicas(old_rss, max_scaled_down)
            scaled = self._scale_down_old_replica_sets(old_rss + [new_rs], old_rss)
        except StatusError:
            return False  # upstream carries on to the status; the write will be retried on the next sync
        return cleaned + scaled > 0

    def _clean_up_unhealthy_replicas(self, old_rss: list[dict], most: int) -> tuple[list[dict], int]:
        old_rss = rep.by_creation(old_rss)
        total = 0
        for i, rs in enumerate(old_rss):
            if total >= most:
                break
            size = rep.replicas(rs)
            available = (rs.get("status") or {}).get("availableReplicas", 0)
            if size == 0 or size == available:
                continue
            count = min(most - total, size - available)
            _, old_rss[i] = self._scale_if_needed(rs, size - count)
            total += count
        return old_rss, total

    def _scale_down_old_replica_sets(self, all_rss: list[dict], old_rss: list[dict]) -> int:
        min_available = rep.replicas(self.d) - rep.max_unavailable(self.d)
        available = rep.status_sum(all_rss, "availableReplicas")
        if available <= min_available:
            return 0
        budget = available - min_available
        total = 0
        for rs in rep.by_creation(old_rss):
            if total >= budget:
                break
            size = rep.replicas(rs)
            if size == 0:
                continue
            count = min(size, budget - total)
            self._scale_if_needed(rs, size - count)
            total += count
        return total

    def _rollout_recreate(self, selector: LabelSelector) -> float | None:
        new_rs, old_rss = self._replica_sets(create=False)
        all_rss = old_rss + [new_rs]
        scaled_down = False
        for rs in rep.active(old_rss):
            scaled_down = self._scale_if_needed(rs, 0)[0] or scaled_down
        if scaled_down or self._old_pods_running(new_rs, old_rss, selector):
            return self._sync_rollout_status(all_rss, new_rs)
        if new_rs is None:
            new_rs, old_rss = self._replica_sets(create=True)
            all_rss = old_rss + [new_rs]
        self._scale_if_needed(new_rs, rep.replicas(self.d))
        if st.deployment_complete(self.d, self.d.get("status") or {}):
            self._cleanup(old_rss)
        return self._sync_rollout_status(all_rss, new_rs)

    def _old_pods_running(self, new_rs: dict | None, old_rss: list[dict], selector: LabelSelector) -> bool:
        """Old ReplicaSets still count pods, or pods of theirs (terminating ones too) have not finished."""
        if rep.status_sum(old_rss, "replicas") > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
        with self.c.store.lock:  # the API server's thread feeds the index
            old_pods = [key for uid in {rs["metadata"]["uid"] for rs in self.rs_list} - {new_uid}
                        for key in self.c.pod_index.owned(uid)]
        for ns, name in old_pods:
            pod = self.c.store.get("pods", ns, name)
            if pod is not None and selector.matches(pod["metadata"].get("labels")) and \
                    (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                return True
        return False

    def _cleanup(self, old_rss: list[dict]) -> None:
        """Delete the oldest old ReplicaSets beyond revisionHistoryLimit, if they are scaled down and settled."""
        if not st.has_revision_history_limit(self.d):
            return
        cleanable = [rs for rs in old_rss if rs is not None and not rs["metadata"].get("deletionTimestamp")]
        surplus = len(cleanable) - self.d["spec"]["revisionHistoryLimit"]
        for rs in by_revision(cleanable)[:max(surplus, 0)]:
            status = rs.get("status") or {}
            if status.get("replicas", 0) != 0 or rep.replicas(rs) != 0 or \
                    rs["metadata"].get("generation", 0) > status.get("observedGeneration", 0):
                continue
            self.c.delete(self.c.replicasets, self.ns, rs["metadata"]["name"])

    # ---- status ----------------------------------------------------------------------------------------------
    def _check_paused_conditions(self) -> None:
        """Mark pausing and resuming on the Progressing condition, so a pause does not count against the deadline."""
        d = self.d
        if not st.has_progress_deadline(d):
            return
        cond = st.condition(d.get("status") or {}, st.PROGRESSING)
        if cond is not None and cond.get("reason") == st.TIMED_OUT:
            return
        paused_noted = cond is not None and cond.get("reason") == st.PAUSED
        if d["spec"].get("paused") and not paused_noted:
            reason, message = st.PAUSED, "Deployment is paused"
        elif not d["spec"].get("paused") and paused_noted:
            reason, message = st.RESUMED, "Deployment is resumed"
        else:
            return
        st.set_condition(d.setdefault("status", {}), st.new_condition(st.PROGRESSING, "Unknown", reason, message,
                                                                      self.stamp))
        self._write_status()

    def _sync_status(self, all_rss: list[dict | None], new_rs: dict | None) -> None:
        status = st.calculate_status(all_rss, new_rs, self.d, self.stamp)
        if status != (self.d.get("status") or {}):
            self.d["status"] = status
            self._write_status()

    def _sync_rollout_status(self, all_rss: list[dict | None], new_rs: dict | None) -> float | None:
        """Status during a rollout, with the Progressing condition; the delay until the deadline check if stuck."""
        d = self.d
        status = st.calculate_status(all_rss, new_rs, d, self.stamp)
        if not st.has_progress_deadline(d):
            st.remove_condition(status, st.PROGRESSING)
        current = st.condition(d.get("status") or {}, st.PROGRESSING)
        finished = status.get("replicas", 0) == status.get("updatedReplicas", 0) and current is not None and \
            current.get("reason") == st.NEW_RS_AVAILABLE
        if st.has_progress_deadline(d) and not finished:
            self._note_progress(status, current, new_rs)
        failure = st.replica_failure(all_rss, new_rs)
        if failure is not None:
            st.set_condition(status, failure)
        else:
            st.remove_condition(status, st.REPLICA_FAILURE)
        if status == (d.get("status") or {}):
            return self._until_deadline_check(status)
        d["status"] = status
        self._write_status()
        return None

    def _note_progress(self, status: dict, current: dict | None, new_rs: dict | None) -> None:
        d = self.d
        subject = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs is not None else \
            f'Deployment "{d["metadata"]["name"]}"'
        if st.deployment_complete(d, status):
            st.set_condition(status, st.new_condition(st.PROGRESSING, "True", st.NEW_RS_AVAILABLE,
                                                      f"{subject} has successfully progressed.", self.stamp))
        elif st.deployment_progressing(d, status):
            cond = st.new_condition(st.PROGRESSING, "True", st.REPLICA_SET_UPDATED, f"{subject} is progressing.",
                                    self.stamp)
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime")
                st.remove_condition(status, st.PROGRESSING)
            st.set_condition(status, cond)  # a new lastUpdateTime even with the same reason: progress was made
        elif st.deployment_timed_out(d, status, self.now):
            st.set_condition(status, st.new_condition(st.PROGRESSING, "False", st.TIMED_OUT,
                                                      f"{subject} has timed out progressing.", self.stamp))

    def _until_deadline_check(self, status: dict) -> float | None:
        """A rollout that shows no progress is looked at again when its progress deadline passes."""
        d = self.d
        current = st.condition(d.get("status") or {}, st.PROGRESSING)
        if not st.has_progress_deadline(d) or current is None:
            return None
        if st.deployment_complete(d, status) or current.get("reason") == st.TIMED_OUT:
            return None
        from_ = parse_time(current["lastUpdateTime"])
        after = from_ + d["spec"]["progressDeadlineSeconds"] - self.now
        if after < 1:
            return BASE_DELAY  # rate-limited "now": the next tick
        return after + 1  # a second more, as upstream, so the deadline has passed


def _set_min_ready_seconds(rs: dict, value: int) -> None:
    if value:
        rs["spec"]["minReadySeconds"] = value
    else:
        rs["spec"].pop("minReadySeconds", None)

