"""``why`` against the real scheduler: for generated pods the real scheduler keeps pending, drawb names
the failing stage, and doing what drawb says (edit the claim, or free the named devices by deleting
the claims holding them) lets the real scheduler allocate the pod. And the bad inputs of ``why``, on
the command line against the real cluster.

The pods come from the allocator issue's scenario generator (``drawb.testing.alloc_scenarios``) and
are applied with ``drawb.testing.alloc_live`` (one pod per node, pinned with a nodeSelector), as in
the allocator differential. drawb reads everything back through its Cluster protocol (KubeCluster:
the objects as the API server stores them, the server's version and its feature-gate metric).
A pod counts when drawb's explanation names a stage and remedies for it alone, and drawb's own
re-explanation of the remedied objects says the pod fits: those remedies are applied for real and
the real scheduler must then allocate every such pod.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from drawb.alloc.view import PlanState
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import ClusterError
from drawb.explain import explain
from drawb.explain import result as r
from drawb.explain.remedies import EDITS, edited_claim
from drawb.plan.read import read_view
from drawb.session import Session
from drawb.testing import alloc_live
from drawb.testing.alloc_scenarios import GATES, SCENARIO_LABEL, generate_many, nvidia_classes
from drawb.testing.api import path_for
from drawb.testing.views import changed_view

pytestmark = pytest.mark.live

SCENARIOS = 120
WANTED = 40


@pytest.fixture(scope="module")
def cluster(start_control_plane):
    """Partitionable devices and device taints on (the 1.34 scheduler then needs v1alpha3 served)."""
    cp = start_control_plane(GATES, runtime_config="resource.k8s.io/v1alpha3=true")
    yield cp
    cp.cluster.down()


def _scenario_view(state: PlanState, scenario: str) -> PlanState:
    """The objects of one scenario (its nodes, slices and claims; every class): scenarios share no device,
    so this is all the scheduler weighs for its pods, and explaining each pod on its own view keeps the
    module fast."""
    def mine(obj: dict) -> bool:
        return (obj["metadata"].get("labels") or {}).get(SCENARIO_LABEL) == scenario

    return changed_view(state, pods=[p for p in state.pods if mine(p)], claims=[c for c in state.claims if mine(c)],
                        slices=[s for s in state.slices if mine(s)], nodes=[n for n in state.nodes if mine(n)],
                        templates=[], events=[])


def _remedied(state: PlanState, remedies) -> PlanState:
    """The state after the remedies: freed claims gone, edited claims replaced."""
    claims = list(state.claims)
    for remedy in remedies:
        if remedy.kind == "free":
            claims = [c for c in claims if f"{c['metadata']['namespace']}/{c['metadata']['name']}" not in remedy.claims]
        else:
            claims = [edited_claim(c, remedy) if c["metadata"]["name"] == remedy.claim else c for c in claims]
    return changed_view(state, claims=claims)


def _apply_for_real(api, namespace: str, state: PlanState, remedies, own: list[dict]) -> None:
    freed = False
    edits: dict[str, list] = {}
    for remedy in remedies:
        if remedy.kind == "free":
            for ref in remedy.claims:
                api.delete(path_for("ResourceClaim", ref.split("/")[1], namespace))
            freed = True
            continue
        edits.setdefault(remedy.claim, []).append(remedy)
    for name, changes in edits.items():  # several edits of one claim: one new claim with all of them
        body = state.claim(namespace, name)
        for remedy in changes:
            body = edited_claim(body, remedy)
        _replace_unallocated(api, namespace, body)
    if freed:  # the scheduler does not requeue a pod when another claim is deleted: its own claim, again, does
        for claim in own:
            if not any(x.kind in EDITS and x.claim == claim["metadata"]["name"] for x in remedies):
                _replace_unallocated(api, namespace, _bare(claim))


def _replace_unallocated(api, namespace: str, body: dict) -> None:
    """Delete a pending pod's claim and create ``body`` in its place, unless the scheduler allocated it
    meanwhile (a freed device can requeue the pod on its own): the delete carries the resourceVersion
    of the unallocated claim, and the server refuses it (409) once the scheduler has written an allocation."""
    path = path_for("ResourceClaim", body["metadata"]["name"], namespace)
    current = api.get_or_none(path)
    if current is not None:
        if current.get("status", {}).get("allocation"):
            return
        preconditions = {"uid": current["metadata"]["uid"], "resourceVersion": current["metadata"]["resourceVersion"]}
        try:
            api.request("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": preconditions})
        except ClusterError as err:
            if err.status == 409:
                return
            raise
        _gone(api, namespace, body["metadata"]["name"])
    api.create(body)


def _bare(claim: dict) -> dict:
    meta = claim["metadata"]
    return {"apiVersion": claim["apiVersion"], "kind": claim["kind"], "spec": claim["spec"],
            "metadata": {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}}


def _gone(api, namespace: str, name: str) -> None:
    deadline = time.monotonic() + 30
    while api.get_or_none(path_for("ResourceClaim", name, namespace)) is not None:
        assert time.monotonic() < deadline, f"claim {name} not deleted"
        time.sleep(0.2)


def _allocated(api, namespace: str, placements, timeout: float = 90) -> set[str]:
    """The pods of ``placements`` whose claims all get an allocation within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        claims = {c["metadata"]["name"]: c for c in api.get(path_for("ResourceClaim", namespace=namespace))["items"]}
        done = {p.pod for p in placements
                if all((claims.get(c["metadata"]["name"]) or {}).get("status", {}).get("allocation") for c in p.claims)}
        if len(done) == len(placements) or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def test_why_names_a_stage_whose_removal_lets_the_real_scheduler_allocate(cluster, timings):
    started = time.monotonic()
    api = cluster.api()
    namespace = alloc_live.admin_namespace(cluster, "why")
    scenarios = generate_many(SCENARIOS, prefix="wy")
    alloc_live.publish(api, scenarios, nvidia_classes(), cluster.cluster.pod_log_dir)
    run = "why"
    kube = KubeCluster(kubeconfig=str(cluster.kubeconfig))
    try:
        alloc_live.create_allocated(api, namespace, scenarios, run)
        time.sleep(1)  # the scheduler's claim informer sees the existing allocations first
        placements = alloc_live.launch(api, namespace, scenarios, run)
        alloc_live.outcomes(api, namespace, placements)
        pending = [p for p in placements if p.kind in ("unschedulable", "error")]
        session = Session()
        session._cluster = kube
        state = read_view(kube, session.rules_version, explaining=True)
        assert state.kubernetes_version == api.get("/version")["gitVersion"]  # the server's, as it says it
        assert state.feature_gates["DRAPartitionableDevices"]
        stages, chosen, problems = {}, [], []
        for placement in pending:
            view = _scenario_view(state, placement.scenario.name)
            why = explain(view, "Pod", namespace, placement.pod)
            if why.state not in (r.PENDING, r.INVALID):
                problems.append(f"{placement.pod}: the real scheduler says {placement.kind} ({placement.message}); "
                                f"drawb: {why.state} {why.summary}")
                continue
            if placement.kind == "error" and why.state == r.PENDING:
                assert "error" in why.summary or "abort" in why.summary, (placement.pod, placement.message, why.summary)
            remedies = [x for x in why.remedies if x.kind in EDITS or x.kind == "free"]
            # A toleration of a NoExecute device taint was not followed by an allocation within 150 s in a run
            # here (wy0030-n1), like ad0135-n0 in the allocator differential: left out, see docs/developer/control-plane.md.
            no_execute = any(t.get("effect") == "NoExecute" for x in remedies for t in x.tolerations)
            if why.state == r.PENDING and remedies and not no_execute and explain(_remedied(view, remedies), "Pod", namespace,
                                                               placement.pod).state == r.FITS_NOW:
                chosen.append((placement, why.local_stage or why.stage, remedies))
            stages[why.local_stage or why.stage or why.state] = stages.get(why.local_stage or why.stage or why.state, 0) + 1
        assert not problems, "\n".join(problems)
        print(f"\nwhy live: {len(placements)} pods, {len(pending)} pending; stages named {stages}; "
              f"{len(chosen)} with a remedy drawb predicts enough")
        assert len(chosen) >= WANTED, (len(chosen), stages)
        for placement, _, remedies in chosen:
            _apply_for_real(api, namespace, state, remedies, placement.claims)
        allocated = _allocated(api, namespace, [p for p, _, _ in chosen], timeout=150)
        missed = [f"{p.pod}: stage {stage}, remedies {[x.text for x in remedies]}" for p, stage, remedies in chosen
                  if p.pod not in allocated]
        print(f"why live: the real scheduler allocated {len(allocated)} of {len(chosen)} remedied pods; "
              f"{time.monotonic() - started:.0f}s")
        assert not missed, "\n".join(missed)
        assert len({stage for _, stage, _ in chosen}) >= 4  # several different stages, not one kind of fix
    finally:
        kube.close()
        alloc_live.clean(api, namespace, run)
        timings["why_live_s"] = time.monotonic() - started


def _drawb(cp, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drawb.cli", "--kubeconfig", str(cp.kubeconfig), *args],
                          capture_output=True, text=True, timeout=120)


def test_bad_inputs_are_named_errors_on_the_command_line(cluster, tmp_path):
    api = cluster.api()
    namespace = cluster.create_namespace("why-bad")
    other = cluster.create_namespace("why-other")
    try:
        labels = {"app.kubernetes.io/managed-by": "drawb"}
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": namespace, "labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "ubuntu:22.04"}]}})
        api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "far", "namespace": other, "labels": labels},
                    "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})
        not_yaml = tmp_path / "notes.txt"
        not_yaml.write_text("just: [unclosed\n")
        service = tmp_path / "service.yaml"
        service.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")
        cases = [
            (("why", "nosuchpod", "-n", namespace), "PodNotFound: no pod 'nosuchpod'"),
            (("why", "plain", "-n", namespace), "NoClaims: pod " + namespace + "/plain uses no ResourceClaim"),
            (("why", "claim/far", "-n", namespace), f"OtherNamespace: no ResourceClaim 'far' in namespace '{namespace}'"),
            (("why", "-f", str(not_yaml)), "NotAManifest:"),
            (("why", "-f", str(service)), "NotAManifest:"),
        ]
        for args, expected in cases:
            done = _drawb(cluster, *args)
            assert done.returncode == 2, (args, done.stdout, done.stderr)
            assert done.stderr.startswith(expected), (args, done.stderr)
            assert "Hint:" in done.stderr and "Traceback" not in done.stderr
        done = _drawb(cluster, "why", "claim/far", "-n", other, "--json")
        assert done.returncode == 0 and '"state": "not-used-by-a-pod"' in done.stdout
    finally:
        api.delete(path_for("Namespace", namespace))
        api.delete(path_for("Namespace", other))
