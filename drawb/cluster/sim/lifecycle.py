"""The simulated control plane's loops: claims from templates, scheduling, nodes running pods.

``Lifecycle`` watches the simulated store (every write calls ``changed``) and, whenever the
cluster is used, catches up with the clock: it runs the resourceclaim controller
(``claims``), the scheduler (``scheduler``, allocating with ``drawb.alloc.Allocator``) and the
node agent (``kubelet``), and when the scheduler has placed what it can, the workload controllers
(``controllers``), until nothing is left to do, then fires the timed steps that are due
(a container starting, a command ending), each at its own time, in order. It keeps its own
indexes of the objects it needs (nodes in name order, slices per node), updated per change.

The store hands its objects out without copying them, so the loops never change a stored object:
each change is made on a copy (``copy_tree``) that is then stored in its place.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from drawb import versions
from drawb.alloc.taintrules import with_rule_taints
from drawb.cluster.sim import claims as claimctl
from drawb.cluster.sim import kubelet
from drawb.cluster.sim import taintevict
from drawb.cluster.sim.clock import Clock
from drawb.cluster.sim.controllers.apps import AppsControllers
from drawb.cluster.sim.controllers.cronjob import CronJobController
from drawb.cluster.sim.controllers.job import JobController
from drawb.cluster.sim.events import EventRecorder
from drawb.cluster.sim.podlogs import Run, simulate
from drawb.alloc.view import PlanState
from drawb.alloc.extended import extended_claim
from drawb.alloc.versions import minor_of
from drawb.api.resourcefit import resource_fit
from drawb.cluster.sim import deviceplugin
from drawb.cluster.sim.scheduler import Decision, reserved_for_pod, schedule
from drawb.cluster.sim.serviceaccounts import admit_pod
from drawb.cluster.sim.tree import copy_tree

SCHEDULER = "default-scheduler"
_IMAGE_EVENTS = ("present", "pulling", "pulled")
NsKey = tuple[str, str]


@dataclass
class ContainerRun:
    """What a node ran for one container: its log and its current run."""

    log: list[str] = field(default_factory=list)
    restarts: int = 0
    started: str = ""
    run: Run | None = None


@dataclass
class PodRun:
    """A pod a node accepted."""

    uid: str
    containers: dict[str, ContainerRun] = field(default_factory=dict)
    plugin_devices: dict[str, list[str]] = field(default_factory=dict)  # container -> device-plugin GPUs (device names)


class Lifecycle:
    """Controllers, scheduler and nodes of one simulated cluster."""

    def __init__(self, store: Callable[[dict], dict], discard: Callable[[str, str | None, str], None],
                 clock: Clock, kubernetes_version: str, feature_gates: dict[str, bool],
                 parent_memory_mib: dict[str, int], image_pull_seconds: float = kubelet.DEFAULT_PULL_SECONDS):
        self._store = store
        self._discard = discard
        self.clock = clock
        self.kubernetes_version = kubernetes_version
        self.feature_gates = feature_gates
        self.minor = minor_of(kubernetes_version)
        self._parent_memory = parent_memory_mib
        self.image_pull_seconds = image_pull_seconds
        self.now = clock.now()
        self.events = EventRecorder(self._store_quietly, self._timestamp)  # methods, no lambdas: it is pickled
        self.pods: dict[NsKey, dict] = {}
        self._pods_by_uid: dict[str, dict] = {}
        self.claims: dict[NsKey, dict] = {}
        self.templates: dict[NsKey, dict] = {}
        self.accounts: set[NsKey] = set()  # the ServiceAccounts, as the admission plugin's informer knows them
        self.nodes: dict[str, dict] = {}
        self.classes: dict[str, dict] = {}
        self._slices: dict[str, dict] = {}
        self._slices_by_node: dict[str | None, dict[str, dict]] = {}
        self._node_list: tuple[dict, ...] | None = None  # nodes in name order, until one changes
        self._slice_list: tuple[dict, ...] | None = None  # slices in name order, until one changes
        # (tuples: the scheduler's view knows the same tuple again at once, as the scheduler keeps its caches)
        self._claim_order: list[NsKey] | None = None  # claims' keys in order, until one is added or removed
        self._claim_work: dict[NsKey, None] = {}
        self._release_work: dict[NsKey, None] = {}
        self._schedule_queue: dict[NsKey, None] = {}
        self._node_work: dict[NsKey, None] = {}
        self._unschedulable: dict[NsKey, None] = {}
        self._failed_events: dict[NsKey, dict] = {}
        self._runs: dict[NsKey, PodRun] = {}
        self._timers: list[tuple[float, int, str, NsKey, str, str]] = []
        self._sequence = itertools.count()
        self._images: dict[str, set[str]] = {}
        self._busy = False
        self._quiet = False
        self.taint_rules: dict[str, dict] = {}
        self._rules_on = feature_gates.get(versions.rules(kubernetes_version).kind_gate("DeviceTaintRule") or "", False)
        self._evicts = feature_gates.get("DRADeviceTaints", False)  # kube-controller-manager runs the controller
        self._noexecute_slices: dict[str, dict] = {}
        self._evictions_dirty = False
        self._eviction_due: dict[NsKey, float] = {}
        self.workload_controllers = {c.ACTION: c for c in (JobController(self), CronJobController(self),
                                                            AppsControllers(self))}

    # --- what the workload controllers use (drawb.cluster.sim.controllers.host.Host) ---------------

    def create(self, obj: dict) -> dict:
        """Store a new object a controller made; the loops hear of it. A pod is admitted first: ClusterError
        (403) when its ServiceAccount does not exist (its ``generateName`` quoted, as the controller sends no name)."""
        if obj.get("kind") == "Pod":
            meta = obj["metadata"]
            namespace = meta.get("namespace") or "default"
            admit_pod(obj, lambda account: (namespace, account) in self.accounts,
                      meta.get("generateName") or meta["name"])
        return self._store(obj)

    def update(self, obj: dict) -> dict:
        """Store a controller's changed copy of an object."""
        return self._store_quietly(obj)

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """Delete an object as a controller does."""
        self._discard(kind, namespace, name)

    def after(self, seconds: float, action: str, key: NsKey, uid: str) -> None:
        """Call the workload controller of ``action`` back for ``key`` in ``seconds``."""
        self._timer(seconds, action, key, uid)

    def timestamp(self, at: float | None = None) -> str:
        """The simulated time ``at`` (now by default) as RFC 3339."""
        return self.clock.timestamp(self.now if at is None else at)

    def _timestamp(self) -> str:
        return self.clock.timestamp(self.now)

    # --- the store tells us what changed -----------------------------------------------------

    def _store_quietly(self, obj: dict) -> dict:
        """Write an object the loops made; its change is not fed back to them."""
        self._quiet = True
        try:
            return self._store(obj)
        finally:
            self._quiet = False

    def changed(self, kind: str, obj: dict, deleted: bool = False) -> None:
        """Index one stored or deleted object and queue the work it causes."""
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        for controller in self.workload_controllers.values():
            controller.changed(kind, key, obj, deleted)
        if kind == "Pod":
            self._pod_changed(key, obj, deleted)
        elif kind == "ResourceClaim":
            self._claim_changed(key, obj, deleted)
        elif kind == "ServiceAccount":
            if deleted:
                self.accounts.discard(key)
            else:
                self.accounts.add(key)
        elif kind == "ResourceClaimTemplate":
            self._index(self.templates, key, obj, deleted)
            if not deleted:
                self._claim_work.update(dict.fromkeys(k for k, p in self.pods.items() if k[0] == key[0]))
        elif kind == "Node":
            self._index(self.nodes, meta["name"], obj, deleted)
            self._node_list = None
            self._retry_unschedulable()
        elif kind == "DeviceClass":
            self._index(self.classes, meta["name"], obj, deleted)
            self._retry_unschedulable()
        elif kind == "ResourceSlice":
            self._slice_changed(meta["name"], obj, deleted)
            self._retry_unschedulable()
        elif kind == "DeviceTaintRule":
            self._index(self.taint_rules, meta["name"], obj, deleted)
            self._slice_list = None
            self._retry_unschedulable()
        if kind in ("Pod", "ResourceClaim", "ResourceSlice", "DeviceTaintRule"):
            self._evictions_dirty = True

    @staticmethod
    def _index(index: dict, key, obj: dict, deleted: bool) -> None:
        if deleted:
            index.pop(key, None)
        else:
            index[key] = obj

    def _pod_changed(self, key: NsKey, pod: dict, deleted: bool) -> None:
        old = self.pods.get(key)
        self._index(self.pods, key, pod, deleted)
        if old is not None:
            self._pods_by_uid.pop(old["metadata"].get("uid", ""), None)
        if not deleted:
            self._pods_by_uid[pod["metadata"].get("uid", "")] = pod
        if deleted or (old is not None and old["metadata"].get("uid") != pod["metadata"].get("uid")):
            self._runs.pop(key, None)
            self._schedule_queue.pop(key, None)
            self._unschedulable.pop(key, None)
            self._failed_events.pop(key, None)
            self._release_work.update(dict.fromkeys(self._claims_of(old or pod)))
            if deleted:
                self._retry_unschedulable()
                return
        if self._quiet:
            return
        self._claim_work[key] = None
        if not pod["spec"].get("nodeName"):
            self._schedule_queue[key] = None
        elif key not in self._runs:
            self._node_work[key] = None

    def _claims_of(self, pod: dict, ended: bool = False) -> list[NsKey]:
        """The pod's claims; ``ended``: those the resourceclaim controller looks at when the pod ends (before 1.35 it
        does not look at the claim the scheduler made for the pod's extended resources)."""
        ns = pod["metadata"]["namespace"]
        names = [name for name in claimctl.pod_claim_names(pod).values() if name]
        extended = claimctl.extended_claim_name(pod)
        if extended and not (ended and not versions.has(self.minor, "claims.extended_claim_released")):
            names.append(extended)
        return [(ns, name) for name in names]

    def _claim_changed(self, key: NsKey, claim: dict, deleted: bool) -> None:
        old = self.claims.get(key)
        self._index(self.claims, key, claim, deleted)
        if deleted or old is None:
            self._claim_order = None
        freed = deleted or (old is not None and _results(old) and not _results(claim))
        if freed:
            self._retry_unschedulable()
        if not deleted and not self._quiet:
            self._release_work[key] = None
            self._schedule_queue.update(dict.fromkeys(k for k in self._unschedulable if k[0] == key[0]))

    def _slice_changed(self, name: str, rs: dict, deleted: bool) -> None:
        old = self._slices.pop(name, None)
        self._slice_list = None
        if old is not None:
            self._slices_by_node.get(old["spec"].get("nodeName"), {}).pop(name, None)
        self._noexecute_slices.pop(name, None)
        if not deleted:
            self._slices[name] = rs
            self._slices_by_node.setdefault(rs["spec"].get("nodeName"), {})[name] = rs
            if taintevict.has_noexecute(rs):
                self._noexecute_slices[name] = rs

    def _retry_unschedulable(self) -> None:
        self._schedule_queue.update(self._unschedulable)
        self._unschedulable.clear()

    # --- running the loops ---------------------------------------------------------------------

    def catch_up(self) -> None:
        """Do everything the cluster would have done by now."""
        if self._busy:
            return
        self._busy = True
        try:
            now = self.clock.now()
            self._settle()
            while self._timers and self._timers[0][0] <= now:
                due, _, action, key, uid, container = heapq.heappop(self._timers)
                self.now = max(self.now, due)
                self._fire(action, key, uid, container)
                self._settle()
            self.now = max(self.now, now)
        finally:
            self._busy = False

    def next_due(self) -> float | None:
        """When the next timed step happens (None when nothing is pending)."""
        return self._timers[0][0] if self._timers else None

    def _settle(self) -> None:
        while (self._claim_work or self._release_work or self._schedule_queue or self._node_work
               or any(c.queued for c in self.workload_controllers.values())):
            while self._claim_work:
                key = next(iter(self._claim_work))
                del self._claim_work[key]
                self._create_claims(key)
            while self._release_work:
                key = next(iter(self._release_work))
                del self._release_work[key]
                self._release(key)
            while self._node_work:
                key = next(iter(self._node_work))
                del self._node_work[key]
                self._adopt(key)
            if self._schedule_queue:
                key = next(iter(self._schedule_queue))
                del self._schedule_queue[key]
                self._schedule(key)
            else:  # the workload controllers count pods once the scheduler has placed what it can
                for controller in self.workload_controllers.values():
                    controller.run()
        if self._evictions_dirty:
            self._evictions_dirty = False
            self._plan_evictions()

    def _timer(self, delay: float, action: str, key: NsKey, uid: str, container: str = "") -> None:
        heapq.heappush(self._timers, (self.now + delay, next(self._sequence), action, key, uid, container))

    # --- resourceclaim controller ------------------------------------------------------------------

    def _create_claims(self, key: NsKey) -> None:
        pod = self.pods.get(key)
        if pod is None or claimctl.is_done(pod):
            return
        made = []
        for entry, template_name in claimctl.missing_claims(pod):
            template = self.templates.get((key[0], template_name))
            if template is None:
                continue  # the controller retries once the template exists
            claim = claimctl.claim_from_template(pod, entry, template, self.minor)
            existing = self.claims.get((key[0], claim["metadata"]["name"]))
            if existing is None:
                self._store_quietly(claim)
            made.append({"name": entry, "resourceClaimName": claim["metadata"]["name"]})
        if made:
            pod = copy_tree(pod)
            status = pod.setdefault("status", {})
            status.setdefault("phase", "Pending")
            status["resourceClaimStatuses"] = [*(status.get("resourceClaimStatuses") or []), *made]
            self._store_quietly(pod)
            if not pod["spec"].get("nodeName"):
                self._schedule_queue[key] = None

    def _release(self, key: NsKey) -> None:
        claim = self.claims.get(key)
        if claim is None:
            return
        uids = [r.get("uid", "") for r in (claim.get("status") or {}).get("reservedFor") or ()]
        live = {uid: self._pods_by_uid[uid] for uid in uids if uid in self._pods_by_uid}
        draft = copy_tree(claim)
        if claimctl.release(draft, live):
            claim = self._store_quietly(draft)
            if not _results(claim):
                self._retry_unschedulable()
        if not (claim.get("status") or {}).get("reservedFor"):
            owner = claimctl.owning_pod(claim)
            pod = self.pods.get((key[0], owner[0])) if owner else None
            if owner and (pod is None or pod["metadata"].get("uid") != owner[1] or claimctl.is_done(pod)):
                self._discard("ResourceClaim", key[0], key[1])

    # --- scheduler -------------------------------------------------------------------------------

    def _ordered_nodes(self) -> tuple[dict, ...]:
        if self._node_list is None:
            self._node_list = tuple(self.nodes[n] for n in sorted(self.nodes))
        return self._node_list

    def _snapshot(self) -> PlanState:
        """The scheduler's view of the cluster for one attempt (its PreFilter state): the objects in the
        order the store lists them, so what the view keeps for them serves the commands' views too."""
        if self._slice_list is None:
            self._slice_list = tuple(with_rule_taints([self._slices[n] for n in sorted(self._slices)],
                                                      self._applied_rules()))
        if self._claim_order is None:
            self._claim_order = sorted(self.claims)
        return PlanState(nodes=self._ordered_nodes(), slices=self._slice_list,
                         classes=list(self.classes.values()), claims=[self.claims[k] for k in self._claim_order],
                         kubernetes_version=self.kubernetes_version, feature_gates=self.feature_gates)

    def _applied_rules(self) -> list[dict]:
        """The DeviceTaintRules the scheduler applies to devices (none while their gate is off)."""
        return [self.taint_rules[n] for n in sorted(self.taint_rules)] if self._rules_on else []

    # --- device taint eviction controller ----------------------------------------------------------

    def _due_evictions(self) -> dict[NsKey, tuple[float, str]]:
        if not self._evicts:
            return {}
        rules = self._applied_rules()
        if not self._noexecute_slices and not any(r["spec"].get("taint", {}).get("effect") == "NoExecute" for r in rules):
            return {}
        taints = taintevict.noexecute_taints(self._noexecute_slices.values(), self._slices.values(), rules)
        return taintevict.due_evictions(taints, self.claims.values(), self._pods_by_uid,
                                        taintevict.seconds_of(self.clock.timestamp), self.now)

    def _plan_evictions(self) -> None:
        """A timer for every pod a NoExecute taint evicts, at its time (a changed time replaces the old)."""
        for key, (when, uid) in self._due_evictions().items():
            if self._eviction_due.get(key) != when:
                self._eviction_due[key] = when
                self._timer(max(0.0, when - self.now), "evict", key, uid)

    def _evict(self, key: NsKey, uid: str) -> None:
        """Delete the pod if a taint still evicts it by now, marked as the controller marks it."""
        self._eviction_due.pop(key, None)
        pod = self.pods.get(key)
        due = self._due_evictions().get(key)
        if pod is None or pod["metadata"].get("uid") != uid or due is None:
            return
        if due[0] > self.now:
            self._eviction_due[key] = due[0]
            self._timer(due[0] - self.now, "evict", key, uid)
            return
        draft = copy_tree(pod)
        kubelet.mark_disrupted(draft, taintevict.REASON, taintevict.MESSAGE, self.clock.timestamp(self.now))
        pod = self._store_quietly(draft)
        self.events.record(pod, type_="Normal", reason="DeviceTaintManagerEviction", message="Marking for deletion",
                           component=taintevict.COMPONENT)
        self._discard("Pod", key[0], key[1])

    def decide(self, pod: dict, claims: list[dict]) -> Decision:
        """The scheduler's decision for ``pod`` whose claims (in pod order, all existing) are ``claims``."""
        fit = resource_fit(pod, self.pods.values(), self.classes.values(),
                           self.feature_gates.get("DRAExtendedResource", False), self.minor)
        extended = extended_claim(pod, self.classes.values(), self.kubernetes_version, self.feature_gates) if fit else None
        return schedule(pod, claims, self._ordered_nodes(), self._snapshot, lambda c: c in self.classes, fit, extended,
                        self.minor)

    def _schedule(self, key: NsKey) -> None:
        pod = self.pods.get(key)
        if pod is None or pod["spec"].get("nodeName") or claimctl.is_done(pod):
            return
        if pod["metadata"].get("deletionTimestamp"):
            return  # the scheduler skips a pod being deleted (seen in snapshots of namespaces going away)
        if pod["spec"].get("schedulingGates"):
            return  # PreEnqueue (SchedulingGates): the pod waits until its gates are removed
        names = claimctl.pod_claim_names(pod)
        if any(n is None for n in names.values()) or any((key[0], n) not in self.claims for n in names.values()):
            return  # PreEnqueue: a claim is not created yet; the pod waits without an event
        claims = [self.claims[(key[0], n)] for n in names.values()]
        decision = self.decide(pod, claims)
        if decision.scheduled:
            self._bind(key, pod, claims, decision)
        else:
            self._reject(key, pod, decision)

    def _bind(self, key: NsKey, pod: dict, claims: list[dict], decision: Decision) -> None:
        ref = {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"].get("uid", "")}
        for claim in claims:
            claim = copy_tree(claim)
            status = claim.setdefault("status", {})
            allocation = decision.allocations.get(claim["metadata"]["name"])
            if allocation is not None:
                status["allocation"] = allocation
                finalizers = claim["metadata"].setdefault("finalizers", [])
                if claimctl.DELETE_PROTECTION not in finalizers:
                    finalizers.append(claimctl.DELETE_PROTECTION)
            if not reserved_for_pod(claim, pod):
                status["reservedFor"] = [*(status.get("reservedFor") or []), ref]
            self._store_quietly(claim)
        pod = copy_tree(pod)
        if decision.extended is not None:  # PreBind: the claim created, allocated, reserved; the pod's status names it
            made = self._store_quietly(claimctl.extended_claim_object(decision.extended.claim, decision.extended_allocation,
                                                                      ref, self.clock.timestamp(self.now)))
            pod.setdefault("status", {})["extendedResourceClaimStatus"] = {
                "requestMappings": decision.extended.mappings, "resourceClaimName": made["metadata"]["name"]}
        kubelet.mark_scheduled(pod, decision.node, self.clock.timestamp(self.now))
        pod = self._store_quietly(pod)
        self._unschedulable.pop(key, None)
        self.events.record(pod, type_="Normal", reason="Scheduled", component=SCHEDULER, action="Binding",
                           message=f"Successfully assigned {key[0]}/{key[1]} to {decision.node}")
        self._accept(key, pod)

    def _reject(self, key: NsKey, pod: dict, decision: Decision) -> None:
        when = self.clock.timestamp(self.now)
        if decision.deallocate:
            claim = copy_tree(self.claims[(key[0], decision.deallocate)])
            for field_name in ("allocation", "reservedFor", "devices"):
                claim.get("status", {}).pop(field_name, None)
            self._store_quietly(claim)
            self._schedule_queue[key] = None
        else:
            self._unschedulable[key] = None
        draft = copy_tree(pod)
        if kubelet.mark_unschedulable(draft, decision.message, when, error=decision.error):
            pod = self._store_quietly(draft)
        previous = self._failed_events.get(key)
        if previous is not None and previous["message"] == decision.message:
            self._failed_events[key] = self.events.repeat(previous)
        else:
            self._failed_events[key] = self.events.record(pod, type_="Warning", reason="FailedScheduling",
                                                          component=SCHEDULER, action="Scheduling",
                                                          message=decision.message)

    # --- node agent ------------------------------------------------------------------------------

    def _accept(self, key: NsKey, pod: dict) -> None:
        uid = pod["metadata"].get("uid", "")
        self._runs[key] = PodRun(uid, {c["name"]: ContainerRun() for c in pod["spec"]["containers"]},
                                 self._plugin_devices(pod))
        pod = copy_tree(pod)
        kubelet.mark_creating(pod, self.clock.timestamp(self.now))
        pod = self._store_quietly(pod)
        claims = [self.claims.get(k) for k in self._claims_of(pod)]
        if len(claims) < len(pod["spec"].get("resourceClaims") or ()) or not all(
                c is not None and reserved_for_pod(c, pod) for c in claims):
            return  # a kubelet prepares only claims allocated and reserved for the pod: it never starts
        images = self._images.setdefault(pod["spec"]["nodeName"], set())
        at = 0.0  # one container after the other: its image pulled (if the node lacks it), then started
        for container in pod["spec"]["containers"]:
            image = container.get("image", "")
            if image in images:
                self._timer(at, "present", key, uid, container["name"])
            else:
                images.add(image)
                self._timer(at, "pulling", key, uid, container["name"])
                at += self.image_pull_seconds
                self._timer(at, "pulled", key, uid, container["name"])
            at += kubelet.START_SECONDS
            self._timer(at, "start", key, uid, container["name"])

    def _adopt(self, key: NsKey) -> None:
        """A pod created with ``spec.nodeName``: its node runs it (or, seeded Running, already does)."""
        pod = self.pods.get(key)
        if pod is None or key in self._runs or claimctl.is_done(pod):
            return
        if (pod.get("status") or {}).get("phase") != "Running":
            self._accept(key, pod)
            return
        uid = pod["metadata"].get("uid", "")
        run = self._runs[key] = PodRun(uid, plugin_devices=self._plugin_devices(pod))
        when = self.clock.timestamp(self.now)
        self._images.setdefault(pod["spec"]["nodeName"], set()).update(c.get("image", "") for c in pod["spec"]["containers"])
        for container in pod["spec"]["containers"]:
            argv = [*(container.get("command") or []), *(container.get("args") or [])]
            result = simulate(argv, self.container_devices(pod, container), self._smi_time(), self._parent_memory)
            run.containers[container["name"]] = ContainerRun(list(result.lines), 0, when, result)

    def node_images(self, node: str) -> set[str]:
        """Images a simulated node has pulled."""
        return set(self._images.get(node, ()))

    def _fire(self, action: str, key: NsKey, uid: str, name: str) -> None:
        if action == "evict":
            self._evict(key, uid)
            return
        if action in self.workload_controllers:
            self.workload_controllers[action].fire(key, uid)
            return
        pod = self.pods.get(key)
        run = self._runs.get(key)
        if pod is None or run is None or run.uid != uid:
            return  # the pod was deleted or replaced meanwhile
        if action in _IMAGE_EVENTS:
            self._image_event(action, pod, name)
            return
        pod = copy_tree(pod)
        container = next(c for c in pod["spec"]["containers"] if c["name"] == name)
        state = run.containers[name]
        when = self.clock.timestamp(self.now)
        if action == "start":
            argv = [*(container.get("command") or []), *(container.get("args") or [])]
            state.run = simulate(argv, self.container_devices(pod, container), self._smi_time(), self._parent_memory)
            state.started = when
            state.log.extend(state.run.lines)
            kubelet.mark_started(pod, container, state.restarts, when)
            if state.run.exit_code is not None:
                self._timer(state.run.seconds, "exit", key, uid, name)
        elif action == "exit":
            kubelet.mark_exited(pod, container, state.run, state.started, when)
            if kubelet.restarts(pod["spec"].get("restartPolicy", "Always"), state.run.exit_code or 0):
                delay = min(kubelet.BACKOFF_SECONDS * 2 ** state.restarts, kubelet.MAX_BACKOFF_SECONDS)
                kubelet.mark_backoff(pod, container, delay, when)
                state.restarts += 1
                self._timer(delay, "start", key, uid, name)
        pod = self._store_quietly(pod)
        if claimctl.is_done(pod):
            self._release_work.update(dict.fromkeys(self._claims_of(pod, ended=True)))

    def _image_event(self, action: str, pod: dict, name: str) -> None:
        """The kubelet's Pulling or Pulled event for container ``name``'s image."""
        image = next(c for c in pod["spec"]["containers"] if c["name"] == name).get("image", "")
        reason, message = {
            "present": ("Pulled", kubelet.present_message(image)),
            "pulling": ("Pulling", kubelet.pulling_message(image)),
            "pulled": ("Pulled", kubelet.pulled_message(image, self.image_pull_seconds)),
        }[action]
        self.events.record(pod, type_="Normal", reason=reason, message=message, component=kubelet.KUBELET,
                           host=pod["spec"]["nodeName"], field_path=f"spec.containers{{{name}}}")

    def _smi_time(self) -> str:
        from datetime import datetime

        stamp = datetime.strptime(self.clock.timestamp(self.now), "%Y-%m-%dT%H:%M:%SZ")
        return stamp.strftime("%a %b %e %H:%M:%S %Y")

    def _node_devices(self, node: str | None) -> list[tuple[tuple[str, str, str], dict]]:
        """((driver, pool, device), device) of the ResourceSlice devices ``node`` can reach, in slice order."""
        return [((s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]), d)
                for s in [*self._slices_by_node.get(node, {}).values(), *self._slices_by_node.get(None, {}).values()]
                for d in s["spec"].get("devices") or ()]

    def _plugin_devices(self, pod: dict) -> dict[str, list[str]]:
        """The GPUs a device plugin hands each container of ``pod`` on its node (those other pods there hold left out)."""
        node = pod["spec"].get("nodeName")
        if not deviceplugin.serves_gpus(self.nodes.get(node or "") or {}):
            return {}
        taken = {name for key, run in self._runs.items() if key in self.pods
                 and self.pods[key]["spec"].get("nodeName") == node and not claimctl.is_done(self.pods[key])
                 for names in run.plugin_devices.values() for name in names}
        return deviceplugin.assign(pod, [d for _, d in self._node_devices(node)], taken)

    def container_devices(self, pod: dict, container: dict) -> list[dict]:
        """The devices ``container`` sees: those allocated to the claims (or requests) it names, to the requests
        mapped to it in the claim made for its extended resources, and the GPUs a device plugin handed it."""
        names = claimctl.pod_claim_names(pod)
        ns = pod["metadata"]["namespace"]
        node_devices = self._node_devices(pod["spec"].get("nodeName"))
        by_id = dict(node_devices)
        wanted: list[tuple[str, str | None]] = [(names.get(ref["name"]) or "", ref.get("request"))
                                                for ref in (container.get("resources") or {}).get("claims") or ()]
        status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
        wanted += [(status.get("resourceClaimName", ""), m.get("requestName")) for m in status.get("requestMappings") or ()
                   if m.get("containerName") == container.get("name")]
        found: list[dict] = []
        for claim_name, request in wanted:
            claim = self.claims.get((ns, claim_name))
            if claim is None or not reserved_for_pod(claim, pod):
                continue
            for result in _results(claim):
                if request and result["request"].split("/")[0] != request:
                    continue
                device = by_id.get((result["driver"], result["pool"], result["device"]))
                if device is not None and device not in found:
                    found.append(device)
        run = self._runs.get((ns, pod["metadata"]["name"]))
        plugin = set(run.plugin_devices.get(container.get("name", ""), ())) if run else set()
        found += [d for _, d in node_devices if d["name"] in plugin and d not in found]
        return found

    def container_state(self, key: NsKey, container: str) -> str | None:
        """``running``, ``restarting`` or ``ended`` (for good); None when the pod is gone."""
        pod, run = self.pods.get(key), self._runs.get(key)
        if pod is None or run is None:
            return None
        status = next((s for s in pod["status"].get("containerStatuses") or () if s["name"] == container), {})
        state = status.get("state") or {}
        if "running" in state:
            return "running"
        return "ended" if "terminated" in state else "restarting"

    def container_log(self, key: NsKey, container: str) -> list[str] | None:
        """The lines a container printed so far; None when it has not started."""
        run = self._runs.get(key)
        state = run.containers.get(container) if run else None
        return None if state is None or state.run is None else list(state.log)


SERVER_FIELDS = ("uid", "creationTimestamp", "finalizers", "ownerReferences", "generateName")


def keep_server_fields(new: dict, existing: dict) -> None:
    """What an apply of an existing object leaves as it was: identity, status, the binding."""
    meta, old_meta = new["metadata"], existing.get("metadata") or {}
    for name in SERVER_FIELDS:
        if name in old_meta and name not in meta:
            meta[name] = old_meta[name]
    if "status" in existing:
        new["status"] = existing["status"]
    if existing.get("kind") == "Pod" and existing.get("spec", {}).get("nodeName"):
        new.setdefault("spec", {}).setdefault("nodeName", existing["spec"]["nodeName"])


def _results(claim: dict) -> list[dict]:
    return (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
