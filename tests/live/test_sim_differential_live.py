"""The simulated-cluster differential: the same manifests (tests/live/differential_manifests.py: the seed's
templates and demo workloads, the public corpus's workloads, a generated Deployment and Job) applied to the
simulated cluster and to the real control plane (kwok nodes carrying the default scenario's nodes, the fake
driver's slices and classes) end the same way: the same pod phases, the same node where only one node fits,
the same claim states (allocated or not, device count, the pods in ``reservedFor``) and the same
FailedScheduling message (the pod's ``PodScheduled`` condition, which carries the scheduler's last
FailedScheduling text).

Configurations: the live tier's version with its default gates, and at a minor where DRAExtendedResource is
off by default, again with it on. CI runs the module at 1.34 (both) and, marked every_version, at the newest
release. One control plane per configuration.

The real scheduler breaks ties between nodes at random, and pods competing for the same devices are scheduled
in an order neither side controls. So the manifests are applied in waves whose pods cannot compete: a wave's
pods together hold at most four devices (the smallest node's count) when each runs alone on a fresh simulated
cluster, and a workload holding more runs in a wave of its own. Each wave is one apply per side: the real
cluster's previous wave is deleted first, and the simulated side is a fresh cluster (a manual clock, moved on
by as long as the real wave took to settle). Where a pod's nodes differ, both may fit: the pod's group is simulated
again with its pods pinned to the real scheduler's nodes, and that run is compared (a node that still differs is
one the simulated cluster finds no room on).

Normalization, for names that are random on the real cluster: a claim made from a template is known by its pod
and its name in the pod (``ns/pod/gpu``), and a message that names such a claim names that key instead; the device a
selector's CEL runtime error names (1.37) is left out, as it depends on where other pods went; a
controller's pods are known together by their workload (``ns/Deployment:NAME``, ``ns/Job:NAME``), compared as a
multiset, whether bound rather than where. Nothing else in the messages is normalized.
"""

from __future__ import annotations

import copy
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

import pytest

from drawb import versions
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.testing import build
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.live.corpus_run import dra_gates
from tests.live.differential_manifests import Group, corpus, generated, seed

pytestmark = [pytest.mark.live, pytest.mark.every_version]

RULES = versions.rules(build.target_k8s_version())
WAVE_DEVICES = 4  # the smallest node's GPUs (the L4 node's four)
STABLE_S = 4.0  # the real cluster's wave has settled when nothing compared changed for this long
WAVE_TIMEOUT_S = 60.0
CONFIGS = {"default gates": {}}
if not RULES.defaults().get("DRAExtendedResource"):
    CONFIGS["DRAExtendedResource on"] = {"DRAExtendedResource": True}

# Disagreements left to the work that owns them, each a namespace or "namespace/name" -> why: those manifests
# are left out of the comparison (always, or where the control plane has DRAExtendedResource on).
KNOWN: dict[str, str] = {}  # none left at every gate setting
# Disagreements only reached where the legacy pods run, with DRAExtendedResource on.
KNOWN_WITH_EXTENDED_RESOURCES: dict[str, str] = {
    "testdata-default/j-e2e-1": "the Job's pod runs a program the simulation cannot run (the image's own "
        "entrypoint): the simulated pod keeps running, while kwok completes every pod a Job owns",
}


@dataclass
class Side:
    """What one side ended with: per pod (phase, node, FailedScheduling message), per claim (allocated, devices,
    reserved for); each a sorted tuple of them (a controller's pods and their claims are one entry)."""

    pods: dict[str, tuple] = field(default_factory=dict)
    claims: dict[str, tuple] = field(default_factory=dict)


@dataclass
class Run:
    """One configuration's outcome: both sides, the documents each refused, and the nodes the simulated cluster
    can also use for a pod the two sides placed differently."""

    config: str
    real: Side = field(default_factory=Side)
    sim: Side = field(default_factory=Side)
    refused_by_sim: dict[str, str] = field(default_factory=dict)
    pinned: list[str] = field(default_factory=list)  # groups simulated again where the real scheduler put them
    waves: int = 0
    manifests: int = 0
    seconds: float = 0.0
    spent: dict[str, float] = field(default_factory=dict)  # seconds per step, summed over the waves

    def timed(self, step: str, since: float) -> float:
        """Add the seconds since ``since`` to ``step``; now."""
        now = time.monotonic()
        self.spent[step] = self.spent.get(step, 0.0) + now - since
        return now


# From 1.37 a selector's CEL runtime error names the first device it failed on: which one that is depends on the
# devices other pods hold, and those the real scheduler placed at random among the nodes that fit.
CEL_ERROR_DEVICE = re.compile(r"(selector #\d+ on device )[^:\s]+:")


def _made_by(meta: dict) -> str | None:
    """The workload that made a pod (``Deployment:NAME``, ``Job:NAME``), None for a pod applied as it is."""
    owner = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), None)
    if owner is None:
        return None
    if owner["kind"] == "ReplicaSet":  # NAME-<pod template hash>
        return f"Deployment:{owner['name'].rsplit('-', 1)[0]}"
    return f"{owner['kind']}:{owner['name']}"


def _multiset(seen: dict[str, list[tuple]]) -> dict[str, tuple]:
    return {key: tuple(sorted(values, key=repr)) for key, values in seen.items()}


def observe(pods: list[dict], claims: list[dict], namespaces: set[str]) -> Side:
    """The compared state of the pods and claims in ``namespaces``. A pod is known by its name, or a controller's
    pods together by their workload (their names are random); a claim by its name, or by its pod's and its name
    in the pod (a template's claims have random names), and a message naming such a claim names its key."""
    identity: dict[tuple[str, str], str] = {}
    rows = []
    for pod in pods:
        meta, status = pod["metadata"], pod.get("status") or {}
        if meta["namespace"] not in namespaces:
            continue
        made_by = _made_by(meta)
        key = identity[(meta["namespace"], meta["name"])] = f"{meta['namespace']}/{made_by or meta['name']}"
        scheduled = next((c for c in status.get("conditions") or () if c["type"] == "PodScheduled"), {})
        message = scheduled.get("message") if scheduled.get("status") == "False" else None
        node = pod["spec"].get("nodeName")
        if made_by and node:
            node = "(bound)"  # where a controller's pods go among several fitting nodes is the scheduler's draw
        rows.append((key, status.get("phase"), node, message))
    claims_seen: dict[str, list[tuple]] = defaultdict(list)
    claim_names: dict[str, str] = {}  # namespace/name -> the claim's key, for the messages that name it
    for claim in claims:
        meta, status = claim["metadata"], claim.get("status") or {}
        if meta["namespace"] not in namespaces:
            continue
        owner = next((o["name"] for o in meta.get("ownerReferences") or () if o.get("kind") == "Pod"), None)
        key = f"{meta['namespace']}/{meta['name']}"
        if owner is not None:
            in_pod = (meta.get("annotations") or {}).get("resource.kubernetes.io/pod-claim-name", "<extended resources>")
            key = claim_names[f"{meta['namespace']}/{meta['name']}"] = \
                f"{identity.get((meta['namespace'], owner), owner)}/{in_pod}"
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        reserved = sorted(identity.get((meta["namespace"], r.get("name", "")), r.get("name", ""))
                          for r in status.get("reservedFor") or ())
        claims_seen[key].append(("allocation" in status, len(results), tuple(reserved)))
    pods_seen: dict[str, list[tuple]] = defaultdict(list)
    for key, phase, node, message in rows:
        if message:
            for name, claim_key in claim_names.items():  # a template's claim's random name, as its key
                message = message.replace(name, f"<{claim_key}>")
            message = CEL_ERROR_DEVICE.sub(r"\1<a device>:", message)
        pods_seen[key].append((phase, node, message))
    return Side(_multiset(pods_seen), _multiset(claims_seen))


@dataclass
class Twin:
    """Makes simulated clusters like the control plane: the default scenario at its version and DRA gates, with
    the corpus's classes."""

    version: str
    gates: dict[str, bool]
    classes: list[dict]

    def fresh(self) -> SimCluster:
        sim = SimCluster("default", workloads=False, clock=ManualClock(), kubernetes_version=self.version,
                         feature_gates=self.gates)
        sim.apply(copy.deepcopy(self.classes))
        return sim


def simulate(twin: Twin, groups: list[Group], objects: list[dict], seconds: float,
             refused: dict[str, str] | None = None) -> Side:
    """The groups' objects applied at once to a fresh simulated cluster, ``seconds`` later; what the simulated
    API server refuses is left out and put in ``refused``."""
    sim = twin.fresh()
    sim.apply([g.namespace_object() for g in groups])
    kept = []
    for obj in objects:
        try:
            sim.apply([copy.deepcopy(obj)], dry_run=True)
            kept.append(obj)
        except ClusterError as err:
            if refused is not None:
                refused[f"{obj['metadata'].get('namespace')}/{obj['kind']}/{obj['metadata']['name']}"] = str(err)
    sim.apply(copy.deepcopy(kept))
    for _ in range(int(seconds / 0.5) + 1):  # timed steps (image pulls, commands ending) in their order
        sim.sleep(0.5)
    return observe(sim.list("Pod"), sim.list("ResourceClaim"), {g.namespace for g in groups})


def footprint(twin: Twin, group: Group) -> int:
    """Devices the group's pods hold when they run alone on a fresh simulated cluster."""
    return sum(state[1] for states in simulate(twin, [group], group.objects, 0).claims.values() for state in states)


def waves(twin: Twin, groups: list[Group]) -> list[list[Group]]:
    """Groups packed into waves whose pods cannot compete for devices (see the module)."""
    packed: list[tuple[int, list[Group]]] = []
    for group in groups:
        size = footprint(twin, group)
        spot = next((w for w in packed if w[0] + size <= WAVE_DEVICES), None) if size <= WAVE_DEVICES else None
        if spot is None:
            packed.append((size, [group]))
        else:
            packed[packed.index(spot)] = (spot[0] + size, [*spot[1], group])
    return [w[1] for w in packed]


def accepted_by_server(kube: KubeCluster, group: Group) -> list[dict]:
    """The group's documents the real API server accepts (a server-side dry run of each)."""
    kept = []
    for obj in group.objects:
        try:
            kube.apply([copy.deepcopy(obj)], dry_run=True)
        except ClusterError:
            continue
        kept.append(obj)
    return kept


def real_side(api, namespaces: set[str]) -> Side:
    return observe(api.get(path_for("Pod"))["items"], api.get(path_for("ResourceClaim"))["items"], namespaces)


def settle(api, namespaces: set[str]) -> Side:
    """The real wave once nothing compared changed for STABLE_S (at most WAVE_TIMEOUT_S)."""
    started = time.monotonic()
    last, since = None, started
    while True:
        now = time.monotonic()
        seen = real_side(api, namespaces)
        if seen != last:
            last, since = seen, now
        elif now - since >= STABLE_S or now - started > WAVE_TIMEOUT_S:
            return seen
        time.sleep(0.5)


def clear(api, namespaces: set[str]) -> None:
    """Delete the wave's pods (at once), claims and templates on the real cluster; wait until they are gone."""
    for ns in namespaces:  # the controllers first, or they would make the pods again
        paths = [path_for("Deployment", namespace=ns), f"/apis/apps/v1/namespaces/{ns}/replicasets",
                 *(path_for(kind, namespace=ns) for kind in ("Job", "Pod", "ResourceClaim", "ResourceClaimTemplate"))]
        for path in paths:
            api.request("DELETE", path, query={"gracePeriodSeconds": "0", "propagationPolicy": "Background"})
    wait_for(lambda: not any(p["metadata"]["namespace"] in namespaces for p in api.get(path_for("Pod"))["items"])
             and not any(c["metadata"]["namespace"] in namespaces for c in api.get(path_for("ResourceClaim"))["items"]),
             timeout=60, interval=0.5, what="the wave's pods and claims deleted")


def pinned(obj: dict, node: str) -> dict:
    """A copy of a pod that only ``node`` may take."""
    pod = copy.deepcopy(obj)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}
    return pod


def known(group: Group, extended_resources: bool) -> Group:
    """The group without what KNOWN leaves out (and KNOWN_WITH_EXTENDED_RESOURCES, with that gate on)."""
    left_out = {**KNOWN, **(KNOWN_WITH_EXTENDED_RESOURCES if extended_resources else {})}
    if group.namespace in left_out:
        return Group(group.namespace, group.source, [], group.labels)
    objects = [o for o in group.objects if f"{group.namespace}/{o['metadata']['name']}" not in left_out]
    return Group(group.namespace, group.source, objects, group.labels)


def run_config(cp, config: str) -> Run:
    """Every wave on both sides."""
    started = time.monotonic()
    version = cp.api().get("/version")["gitVersion"]
    extended_resources = cp.feature_enabled("DRAExtendedResource")
    groups = [known(g, extended_resources) for g in seed(version) + corpus(version) + generated(version)]
    # cluster-scoped objects (DeviceClasses) outlive a wave on the real cluster: both sides have them all along
    classes = [o for g in groups for o in g.objects if o["kind"] == "DeviceClass"]
    groups = [Group(g.namespace, g.source, [o for o in g.objects if o["kind"] != "DeviceClass"], g.labels)
              for g in groups if g.namespace]
    groups = [g for g in groups if g.objects]
    api, kube = cp.api(), KubeCluster(kubeconfig=str(cp.kubeconfig))
    run = Run(config)
    try:
        kube.apply(copy.deepcopy(classes))
        kube.apply([g.namespace_object() for g in groups])
        for g in groups:
            wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", g.namespace)), timeout=120,
                     what=f"default ServiceAccount in {g.namespace}")
        accepted = {g.namespace: accepted_by_server(kube, g) for g in groups}
        run.manifests = len(classes) + sum(map(len, accepted.values()))
        step = run.timed("namespaces and dry runs", started)
        twin = Twin(version, dra_gates(cp), classes)
        packed = waves(twin, groups)
        step = run.timed("packing", step)
        for wave in packed:
            run.waves += 1
            namespaces = {g.namespace for g in wave}
            kube.apply(copy.deepcopy([o for g in wave for o in accepted[g.namespace]]))
            applied = step = run.timed("real apply", step)
            real = settle(api, namespaces)
            step = run.timed("real settle", step)
            seconds = time.monotonic() - applied  # the simulated side gets as long as the real one had
            simulated = simulate(twin, wave, [o for g in wave for o in accepted[g.namespace]], seconds,
                                 run.refused_by_sim)
            for group in wave:
                nodes = {k: v[0][1] for k, v in real.pods.items()
                         if k.startswith(f"{group.namespace}/") and ":" not in k and v[0][1]}
                if any(simulated.pods.get(k, ((None, None),))[0][1] != node for k, node in nodes.items()):
                    # both nodes may fit: the simulated cluster again, with the pods where the real scheduler put them
                    again = simulate(twin, [group], [
                        pinned(o, nodes[f"{group.namespace}/{o['metadata']['name']}"])
                        if o["kind"] == "Pod" and f"{group.namespace}/{o['metadata']['name']}" in nodes
                        else o for o in accepted[group.namespace]], seconds)
                    run.pinned.append(group.namespace)
                    simulated.pods.update(again.pods)
                    simulated.claims = {k: v for k, v in simulated.claims.items()
                                        if not k.startswith(f"{group.namespace}/")} | again.claims
            for mine, theirs in ((run.real, real), (run.sim, simulated)):
                mine.pods.update(theirs.pods)
                mine.claims.update(theirs.claims)
            step = run.timed("simulated", step)
            clear(api, namespaces)
            step = run.timed("real delete", step)
    finally:
        kube.close()
    run.seconds = time.monotonic() - started
    return run


@pytest.fixture(scope="module", params=list(CONFIGS), ids=lambda c: c.replace(" ", "-"))
def run(request, start_control_plane, timings) -> Run:
    cp = start_control_plane(CONFIGS[request.param])
    try:
        result = run_config(cp, request.param)
    finally:
        cp.cluster.down()
    timings[f"sim_differential[{request.param}]_s"] = result.seconds
    for step, seconds in result.spent.items():
        timings[f"sim_differential[{request.param}] {step}_s"] = seconds
    return result


def _differences(real: dict, sim: dict, index: int | None = None) -> dict:
    """Entries whose observations (or their field ``index``) differ between the sides."""
    def pick(entry):
        return entry if entry is None or index is None else tuple(sorted((o[index] for o in entry), key=repr))
    return {k: {"real": pick(real.get(k)), "simulated": pick(sim.get(k))}
            for k in sorted(set(real) | set(sim)) if pick(real.get(k)) != pick(sim.get(k))}


def test_the_differential_is_large(run):
    assert run.manifests >= 100, run.manifests
    assert len(run.real.pods) >= 60 and len(run.real.claims) >= 30
    phases = {o[0] for p in run.real.pods.values() for o in p}
    assert {"Pending", "Running", "Succeeded"} <= phases, phases


def test_the_simulated_cluster_accepts_what_the_server_accepts(run):
    assert run.refused_by_sim == {}


def test_same_pod_phases(run):
    assert _differences(run.real.pods, run.sim.pods, 0) == {}


def test_same_failed_scheduling_messages(run):
    assert _differences(run.real.pods, run.sim.pods, 2) == {}


def test_same_node_where_only_one_fits(run):
    """Where the two nodes differed, the simulated side is the run with the pods pinned to the real nodes: a node
    that still differs is one the simulated cluster finds no room on."""
    assert _differences(run.real.pods, run.sim.pods, 1) == {}


def test_same_claim_states(run):
    assert _differences(run.real.claims, run.sim.claims) == {}
