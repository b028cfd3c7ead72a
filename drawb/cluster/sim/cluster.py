"""SimCluster: the embedded simulated DRA cluster behind the Cluster protocol."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator, Mapping

from drawb.apirules.served import stable_versions
from drawb.cluster.protocol import (
    FIELD_MANAGER,
    KINDS,
    ClusterError,
    NotManagedByDrawb,
    about_object,
    is_managed,
    kind_of,
    with_managed_label,
)
from drawb.cluster.pod_account import DEFAULT as DEFAULT_ACCOUNT
from drawb.cluster.sim.catalog import MODELS
from drawb.cluster.sim.clock import Clock, WallClock
from drawb.cluster.sim.controllers.owners import WORKLOAD_KINDS, bump_generation
from drawb.cluster.sim.defaults import apply_defaults
from drawb.cluster.sim.gates import GatedFields
from drawb.cluster.sim.lifecycle import Lifecycle, keep_server_fields
from drawb.cluster.sim.podlogs import pod_logs
from drawb.cluster.sim.publish import stable_uuid
from drawb.cluster.sim.serviceaccounts import admit_pod, default_account
from drawb.cluster.sim.scenarios import Scenario, build_scenario
from drawb.cluster.sim.version import SimulatedVersion, simulated_version
from drawb.cluster.sim.namespaces import (
    SEEDED_NAMESPACES,
    namespace_not_found,
    namespace_object,
    set_namespace_defaults,
)
from drawb.cluster.sim.taintevict import stamp_time_added
from drawb.cluster.sim.tree import StoredDict, closed_after_loading, copy_tree, freeze, opened_for_loading
from drawb.cluster.sim.validate import check_name, check_rules, check_schema
from drawb.cluster.sim.watch import SimWatch
from drawb.cluster.sim.workloads import demo_workloads

Key = tuple[str, str | None, str]

# Reads share the stored objects, as a real cluster's informer store does: an object handed out never
# changes, because every writer (apply, the simulated controllers) stores a new object instead of
# changing the stored one. The stored objects are read-only (``tree.freeze``): a change raises.

class SimCluster:
    """An in-memory cluster loaded from a scenario; deterministic and offline.

    ``kubernetes_version`` (``"1.36"``, ``"v1.36.1"``) replaces the scenario's version and ``feature_gates``
    are set over the scenario's: the API server, scheduler and kubelets then run that version with those
    gates (``drawb.cluster.sim.version``)."""

    def __init__(self, scenario: str | Scenario = "default", *, workloads: bool = True, clock: Clock | None = None,
                 kubernetes_version: str | None = None, feature_gates: Mapping[str, bool] | None = None):
        self.scenario = build_scenario(scenario) if isinstance(scenario, str) else scenario
        self._init_state(clock, simulated_version(kubernetes_version or self.scenario.server_version,
                                                  {**self.scenario.feature_gates, **(feature_gates or {})}))
        own = isinstance(scenario, str)  # built here: its lists then hold the stored objects; a caller's stays unchanged
        s = self.scenario
        self._seed([namespace_object(n) for n in SEEDED_NAMESPACES], own=True)
        self._seed(s.nodes, own=own)
        self._seed(s.resource_slices, own=own, gated=not s.slices_as_built)
        self._seed(s.device_classes, own=own)
        self._seed(s.objects, own=own)
        if workloads and s.name == "default":
            self._seed(demo_workloads(), own=True)
        self._seed(self._missing_default_accounts(self._by_kind.get("Namespace", {}).values()), own=True)

    def _init_state(self, clock: Clock | None, version: SimulatedVersion) -> None:
        self.description = f"simulated cluster '{self.scenario.name}'"
        self.version = version.release
        self.rules = rules = version.rules
        self.feature_gates = version.gates
        self.apis = version.apis  # group versions off by default that its gates need served
        self.gated_fields = GatedFields(rules, version.gates)
        self.simulated = True  # front ends say so beside every answer that comes from it
        self._objects: dict[Key, dict] = {}
        self._by_kind: dict[str, dict[tuple[str, str], dict]] = {}  # kind -> (namespace or "", name) -> object
        self._order: dict[str, list[tuple[str, str]]] = {}  # kind -> its keys sorted, until one is added or removed
        self._versions = itertools.count(1)
        self._watches: dict[tuple[str, str | None], SimWatch] = {}
        self.writes = 0  # objects stored or removed so far: a kept cluster is written back when it changed
        self.kubernetes_version = rules.minor
        self.lifecycle = Lifecycle(self._store, self._discard, clock or WallClock(), rules.version,
                                   self.feature_gates, {m.product_name: m.memory_mib for m in MODELS.values()},
                                   self.scenario.image_pull_seconds)

    def _seed(self, objects: list[dict], *, own: bool, gated: bool = True) -> None:
        """Store a scenario's objects in one pass, as the API server would have them after creation (the
        disabled gates' fields dropped, server fields set, drawb's nodes' kubelets at the cluster's version):
        the same result as storing them one by one, without the per-object work nothing needs yet (no watch
        exists; one creation time for all). ``own``: the objects are changed there, and the list then holds the
        stored (read-only) objects; otherwise they are copied first and the list is left as it is.
        ``gated=False``: the objects are known to hold no feature-gated field (``Scenario.slices_as_built``)."""
        created = self.lifecycle.clock.timestamp(self.lifecycle.now)
        self._order.clear()  # the kinds' sorted keys are made again on the next list
        for index, obj in enumerate(objects):
            if not own:
                obj = copy_tree(obj)
            if gated:
                self.gated_fields.drop(obj)
            if obj.get("kind") == "Namespace":
                set_namespace_defaults(obj)
            elif obj.get("kind") == "Node" and self.scenario.simulated_kubelets:  # its kubelet runs our version
                obj.setdefault("status", {}).setdefault("nodeInfo", {})["kubeletVersion"] = self.version
            stored = self._put(obj, created)[2]
            if own:
                objects[index] = stored

    def _missing_default_accounts(self, namespaces) -> list[dict]:
        """The ``default`` ServiceAccounts the serviceaccount controller makes for ``namespaces`` that lack one."""
        names = [ns["metadata"]["name"] for ns in namespaces]
        return [default_account(n) for n in names if ("ServiceAccount", n, DEFAULT_ACCOUNT) not in self._objects]

    def _key(self, obj: dict) -> Key:
        kind = kind_of(obj.get("kind", ""))
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise ClusterError(f"{kind.kind} without metadata.name: every object needs a name")
        namespace = (meta.get("namespace") or "default") if kind.namespaced else None
        return (kind.kind, namespace, meta["name"])

    def _store(self, obj: dict) -> dict:
        """Store ``obj`` as the current version of its key; the stored, read-only object."""
        key, added, obj = self._put(obj)
        if added:
            self._order.pop(key[0], None)
        self._notify(key[0], "ADDED" if added else "MODIFIED", obj)
        return obj

    def _put(self, obj: dict, created: str | None = None) -> tuple[Key, bool, dict]:
        """Set the server's fields of ``obj`` (resourceVersion and namespace; uid and creationTimestamp,
        ``created`` or now, for a new object) and index it, frozen (``tree.freeze``); its key, whether the key
        is new, and the stored object. ``obj``'s top level and metadata may be changed: those of a stored
        object (a rollback puts one back) are copied first."""
        if type(obj) is StoredDict:
            obj = dict(obj)
        meta = obj["metadata"] = dict(obj.get("metadata") or {})
        meta["resourceVersion"] = version = str(next(self._versions))
        key = self._key(obj)
        if key[1] is not None:
            meta["namespace"] = key[1]
        if "uid" not in meta:  # set by the API server at creation: new for every new object
            meta["uid"] = stable_uuid("uid", key[0], key[1], key[2], version)[4:]
            meta.setdefault("creationTimestamp", created or self.lifecycle.clock.timestamp(self.lifecycle.now))
        added = key not in self._objects
        self.writes += 1
        obj = freeze(obj)
        self._objects[key] = obj
        self._by_kind.setdefault(key[0], {})[(key[1] or "", key[2])] = obj
        self.lifecycle.changed(key[0], obj)
        return key, added, obj

    def _discard(self, kind: str, namespace: str | None, name: str) -> None:
        """Remove an object as a controller or the garbage collector does (no ownership check)."""
        obj = self._objects.pop((kind, namespace, name), None)
        if obj is not None:
            self.writes += 1
            del self._by_kind[kind][(namespace or "", name)]
            self._order.pop(kind, None)
            self.lifecycle.changed(kind, obj, deleted=True)
            self._notify(kind, "DELETED", obj)

    def __reduce__(self) -> tuple:
        """What a kept cluster's file holds (``drawb.cluster.sim.state``): everything but the watches. Read
        back, it is made first and its stored objects after (``tree.opened_for_loading``)."""
        return _being_read, (), {**self.__dict__, "_watches": {}}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        closed_after_loading()

    def sleep(self, seconds: float) -> None:
        """Let simulated time pass (for real on the default wall clock)."""
        self.lifecycle.clock.sleep(seconds)
        self.lifecycle.catch_up()

    def _notify(self, kind: str, event_type: str, obj: dict) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        for key in ((kind, None), (kind, namespace)) if namespace else ((kind, None),):
            watch = self._watches.get(key)
            if watch is not None:
                watch.notify(event_type, obj)

    def watch(self, kind: str, namespace: str | None = None) -> SimWatch:
        """The live store of ``kind`` in ``namespace`` (None: every namespace): subscribers hear of every change
        there as it is made."""
        name = kind_of(kind).kind
        key = (name, namespace if kind_of(kind).namespaced else None)
        if key not in self._watches:
            self._watches[key] = SimWatch(name, lambda: self.list(name, key[1]))
        return self._watches[key]

    def close(self) -> None:
        """Stop every watch."""
        for watch in self._watches.values():
            watch.stop()
        self._watches.clear()

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None) -> list[dict]:
        """All objects of ``kind`` in (namespace, name) order: the stored objects themselves, read-only (the
        simulation keeps one shape per kind, whatever ``api_version`` it is read through)."""
        kind_of(kind)
        self.lifecycle.catch_up()
        stored = self._by_kind.get(kind, {})
        keys = self._order.get(kind)
        if keys is None:
            keys = self._order[kind] = sorted(stored)
        return [stored[k] for k in keys if namespace is None or k[0] == namespace]

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """One object, or None: the stored object itself, read-only."""
        ns = (namespace or "default") if kind_of(kind).namespaced else None
        self.lifecycle.catch_up()
        return self._objects.get((kind, ns, name))

    def apply(self, objects: list[dict], *, dry_run: bool = False,
              progress: Callable[[str, int, int], None] | None = None) -> list[dict]:
        """Store labelled copies of ``objects``, checked as the API server checks them; all are checked
        first, so none is half-applied. A Namespace among them counts as existing for the objects after it.
        ``progress(step, done, total)`` is told of each object."""
        step = progress or (lambda what, done, total: None)
        prepared = []
        new_namespaces: dict[str, dict] = {}
        new_accounts: set[tuple[str, str]] = set()
        for index, obj in enumerate(objects):
            step("dry run", index + 1, len(objects))
            with about_object(index):
                prepared.append(self._prepared(obj, new_namespaces, new_accounts))
        if dry_run:
            return prepared
        self.lifecycle.catch_up()
        stored, replaced = [], []
        try:
            for index, obj in enumerate(prepared):
                step("applying", index + 1, len(prepared))
                key = self._key(obj)
                replaced.append((key, self._objects.get(key)))
                stored.append(self._store(obj))
        except BaseException as exc:  # an interrupt: put back what was there, as the real cluster's rollback does
            for key, previous in reversed(replaced):
                if previous is None:
                    self._discard(*key)
                else:
                    self._store(previous)
            exc.add_note(f"rolled back: the {len(replaced)} object(s) written to the {self.description} are as "
                         "they were before")
            raise
        for account in self._missing_default_accounts(o for o in stored if o["kind"] == "Namespace"):
            self._store(account)
        self.lifecycle.catch_up()
        return [copy_tree(obj) for obj in stored]

    def _prepared(self, obj: dict, new_namespaces: dict[str, dict], new_accounts: set[tuple[str, str]]) -> dict:
        """A labelled copy of ``obj`` as the API server would store it, or the ClusterError it would answer.
        ``new_namespaces`` and ``new_accounts`` (namespace, name): those the objects before it create."""
        check_name(obj)
        key = self._key(obj)
        namespace = new_namespaces.get(key[1]) or self._objects.get(("Namespace", None, key[1]))
        if key[1] is not None and namespace is None:
            raise namespace_not_found(key[1])
        existing = self._objects.get(key)
        if existing is not None and not is_managed(existing):
            raise NotManagedByDrawb(
                f"{key[0]} '{key[2]}' exists and was not created by drawb; refusing to change it"
            )
        check_schema(obj, self.kubernetes_version, self.apis)
        labelled = with_managed_label(copy.deepcopy(obj))
        self.gated_fields.drop(labelled, existing)
        apply_defaults(labelled)
        if key[0] == "DeviceTaintRule":
            stamp_time_added(labelled, existing, self.lifecycle.clock.timestamp(self.lifecycle.clock.now()))
        if key[0] == "Pod":
            admit_pod(labelled, lambda account: existing is not None or self._account_exists(
                key[1], account, new_accounts, key[1] in new_namespaces))
        labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
        check_rules(labelled, self.kubernetes_version, lambda _name: labels)
        if key[0] == "Namespace":
            new_namespaces[key[2]] = set_namespace_defaults(labelled)
        elif key[0] == "ServiceAccount":
            new_accounts.add((key[1], key[2]))
        labelled["metadata"].setdefault("managedFields", [{"manager": FIELD_MANAGER, "operation": "Apply"}])
        if existing is not None:
            keep_server_fields(labelled, existing)
        if key[0] in WORKLOAD_KINDS:
            bump_generation(labelled, existing)
        return labelled

    def _account_exists(self, namespace: str, account: str, new_accounts: set[tuple[str, str]],
                        new_namespace: bool) -> bool:
        """Whether a pod created now in ``namespace`` finds ``account``: stored, applied before it in the same
        call, or ``default`` in a namespace the call creates (the controller makes it; the admission plugin waits
        for that one)."""
        return (("ServiceAccount", namespace, account) in self._objects or (namespace, account) in new_accounts
                or (account == DEFAULT_ACCOUNT and new_namespace))

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force_unmanaged: bool = False) -> None:
        """Delete an object drawb created (any object with ``force_unmanaged``)."""
        ns = (namespace or "default") if kind_of(kind).namespaced else None
        obj = self._objects.get((kind, ns, name))
        if obj is None:
            raise ClusterError(f"{kind} '{name}' not found", status=404, reason="NotFound")
        if not is_managed(obj) and not force_unmanaged:
            raise NotManagedByDrawb(f"{kind} '{name}' was not created by drawb; refusing to delete it")
        self.lifecycle.catch_up()
        if kind == "Namespace":  # the namespace controller deletes what is in it
            for key in [k for k in self._objects if k[1] == name]:
                self._discard(*key)
        self._discard(kind, ns, name)
        self.lifecycle.catch_up()

    def logs(self, pod: str, namespace: str, container: str | None = None, follow: bool = False) -> Iterator[str]:
        """What the pod's container printed, as the simulated node ran its command."""
        yield from pod_logs(self, pod, namespace, container, follow)

    def server_version(self) -> str:
        """The Kubernetes version the simulation follows (a snapshot's: the original's)."""
        return self.version

    def served_resources(self) -> set[str]:
        """Every kind drawb knows, as the simulation serves them all."""
        return {f"{k.api_version}/{k.plural}" for k in KINDS.values()}

    def group_versions(self, group: str) -> list[str]:
        """The versions of API ``group`` the simulation serves: ``resource.k8s.io``'s are those its minor
        serves by default; of the other groups, the stable versions Kubernetes has and those its gates need."""
        if group == "resource.k8s.io":
            return sorted(self.rules.served)
        return sorted(set(stable_versions(group, self.kubernetes_version))
                      | {api.rpartition("/")[2] for api in self.apis if api.rpartition("/")[0] == group})

    def feature_gates_metric(self) -> dict[str, bool] | None:
        """The simulated API server's DRA gates, as its ``kubernetes_feature_enabled`` metric would say."""
        return dict(self.feature_gates)


def _being_read() -> SimCluster:
    """An empty SimCluster that pickle is about to fill: its stored objects may be filled until it is."""
    opened_for_loading()
    return SimCluster.__new__(SimCluster)
