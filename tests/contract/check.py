"""``drawb.check`` as functions of a cluster, a fresh namespace and a way to inject nvidia-smi faults.

The same bodies run against the local control plane (tests/live/test_check_live.py: the real
API server, scheduler and resourceclaim controller, kwok and the fake driver) and, where the
backend can, against the simulated cluster. ``faults(name)`` makes the namespace's pods see the
wrong devices (``wrong-uuid``), none (``no-gpu``), or their own again (``None``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from drawb.check import FAILED, MISMATCH, NO_GPU_VISIBLE, PASS, RUN_LABEL, TIMEOUT, Verdict, check
from drawb.cluster.protocol import Cluster

Faults = Callable[[str | None], None]
NOTHING = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B300'"


def run(cluster: Cluster, namespace: str, **what) -> tuple[Verdict, list[str]]:
    """A check with its progress lines collected."""
    lines: list[str] = []
    what.setdefault("timeout", 60)
    verdict = check(cluster, namespace=namespace, progress=lines.append, **what)
    return verdict, lines


def leftovers(cluster: Cluster, namespace: str) -> list[str]:
    """What checks left: pods and claim templates with a run label, and claims generated for a pod.

    The test namespaces hold nothing else of that kind, apart from a user's own claim (no owner).
    """
    found = [f"{kind}/{o['metadata']['name']}" for kind in ("Pod", "ResourceClaimTemplate")
             for o in cluster.list(kind, namespace) if RUN_LABEL in (o["metadata"].get("labels") or {})]
    found += [f"ResourceClaim/{c['metadata']['name']}" for c in cluster.list("ResourceClaim", namespace)
              if any(o.get("kind") == "Pod" for o in c["metadata"].get("ownerReferences") or [])]
    return found


def assert_nothing_left(cluster: Cluster, namespace: str, timeout: float = 30) -> None:
    """Within ``timeout``, nothing of any check remains (generated claims go with their pod)."""
    sleep = getattr(cluster, "sleep", time.sleep)
    deadline = time.monotonic() + timeout
    while leftovers(cluster, namespace):
        assert time.monotonic() < deadline, f"left behind: {leftovers(cluster, namespace)}"
        sleep(0.2)


def allocated_uuids(verdict: Verdict) -> set[str]:
    return {e.uuid for e in verdict.expected}


def seen_uuids(verdict: Verdict) -> set[str]:
    return {u for c in verdict.containers for u in (*c.seen.gpus, *(m[0] for m in c.seen.migs))}


# ---- PASS ----------------------------------------------------------------------------------------


def one_full_gpu_passes(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, lines = run(cluster, namespace, template="single-gpu")
    assert verdict.status == PASS, verdict
    [device] = verdict.expected
    assert device.type == "gpu" and device.uuid.startswith("GPU-")
    assert seen_uuids(verdict) == {device.uuid}
    stages = [s.stage for s in verdict.stages]
    for stage in ("applied", "claim", "allocated", "scheduled", "running", "verdict"):
        assert stage in stages, (stage, lines)
    assert any(line.startswith("  | GPU 0: ") and device.uuid in line for line in lines), lines
    assert verdict.node and verdict.claim
    assert_nothing_left(cluster, namespace)


def mig_profile_passes(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, _ = run(cluster, namespace, template="mig-profile", values={"profile": "1g.10gb"})
    assert verdict.status == PASS, verdict
    [device] = verdict.expected
    assert (device.type, device.profile) == ("mig", "1g.10gb") and device.uuid.startswith("MIG-")
    [container] = verdict.containers
    assert container.seen.migs == ((device.uuid, device.parent_uuid, "1g.10gb"),) and not container.seen.gpus
    assert_nothing_left(cluster, namespace)


def two_gpus_pass(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, _ = run(cluster, namespace, template="multi-gpu-one-node", values={"count": 2, "distinct_attribute": []})
    assert verdict.status == PASS, verdict
    assert len(verdict.expected) == 2 and seen_uuids(verdict) == allocated_uuids(verdict)
    assert_nothing_left(cluster, namespace)


def two_containers_sharing_one_claim_pass(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, lines = run(cluster, namespace, template="shared-claim")
    assert verdict.status == PASS, verdict
    assert [c.name for c in verdict.containers] == ["first", "second"]
    assert verdict.containers[0].seen == verdict.containers[1].seen
    assert any(line.startswith("first | GPU 0") for line in lines) and any(line.startswith("second | GPU 0") for line in lines)
    assert_nothing_left(cluster, namespace)


def query_csv_payload_passes(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, lines = run(cluster, namespace, template="single-gpu", payload="query")
    assert verdict.status == PASS, verdict
    assert any(line.startswith("  | index, uuid, name, memory.total [MiB], driver_version") for line in lines), lines
    assert_nothing_left(cluster, namespace)


def selector_with_class_and_node_passes(cluster: Cluster, namespace: str, faults: Faults) -> None:
    h200 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"
    node = next(s["spec"]["nodeName"] for s in cluster.list("ResourceSlice")
                if any(d["attributes"].get("productName", {}).get("string") == "NVIDIA H200" for d in s["spec"]["devices"]))
    verdict, _ = run(cluster, namespace, selector=h200, device_class="gpu.nvidia.com", node=node)
    assert verdict.status == PASS, verdict
    assert verdict.node == node and verdict.expected[0].product == "NVIDIA H200"
    assert_nothing_left(cluster, namespace)


# ---- failures --------------------------------------------------------------------------------------


def wrong_uuid_is_a_mismatch_naming_both(cluster: Cluster, namespace: str, faults: Faults) -> None:
    faults("wrong-uuid")
    verdict, _ = run(cluster, namespace, template="single-gpu")
    assert verdict.status == MISMATCH, verdict
    [allocated] = allocated_uuids(verdict)
    [seen] = seen_uuids(verdict)
    assert seen != allocated and allocated in verdict.reason and seen in verdict.reason
    assert verdict.containers[0].missing and verdict.containers[0].unexpected
    assert_nothing_left(cluster, namespace)


def no_gpu_is_no_gpu_visible(cluster: Cluster, namespace: str, faults: Faults) -> None:
    faults("no-gpu")
    verdict, lines = run(cluster, namespace, template="single-gpu")
    assert verdict.status == NO_GPU_VISIBLE, verdict
    assert "  | No devices were found" in lines
    assert_nothing_left(cluster, namespace)


def selector_matching_nothing_times_out_with_the_schedulers_reason(cluster: Cluster, namespace: str,
                                                                  faults: Faults) -> None:
    started = time.monotonic()
    verdict, lines = run(cluster, namespace, selector=NOTHING, timeout=8)
    assert verdict.status == TIMEOUT, verdict
    assert "never scheduled after 8 s" in verdict.reason and "cannot allocate all claims" in verdict.reason
    assert any("pending" in line and "cannot allocate all claims" in line for line in lines), lines
    assert time.monotonic() - started < 8 + 15, "the check did not stop at its timeout"
    assert_nothing_left(cluster, namespace)


def a_failing_sample_is_failed_with_its_exit_code(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdict, _ = run(cluster, namespace, template="single-gpu", payload="sample", image="ubuntu:24.04",
                     command=["false"])
    assert verdict.status == FAILED, verdict
    assert "exit code 1" in verdict.reason and verdict.containers[0].lines[0].startswith("GPU 0: ")
    assert_nothing_left(cluster, namespace)


# ---- interruption and concurrency ------------------------------------------------------------------


def interrupt_when(stage_text: str) -> Callable[[str], None]:
    """A progress callback that presses Ctrl-C when a line containing ``stage_text`` is reported."""

    def progress(line: str) -> None:
        if stage_text in line:
            raise KeyboardInterrupt(f"interrupted at {line!r}")

    return progress


INTERRUPT_AT = ["] applied", "] pending", "  | GPU 0"]  # before allocation, while pending, while streaming


def interrupted_at_each_stage_leaves_nothing(cluster: Cluster, namespace: str, faults: Faults, where: str) -> None:
    what = {"selector": NOTHING} if "pending" in where else {"template": "single-gpu"}
    with pytest.raises(KeyboardInterrupt, match="interrupted at"):
        check(cluster, namespace=namespace, progress=interrupt_when(where), timeout=60, **what)
    assert_nothing_left(cluster, namespace)


def two_checks_at_once_do_not_collide(cluster: Cluster, namespace: str, faults: Faults) -> None:
    verdicts: list[Verdict] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            verdicts.append(run(cluster, namespace, template="single-gpu")[0])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert [v.status for v in verdicts] == [PASS, PASS], verdicts
    assert verdicts[0].pod != verdicts[1].pod and verdicts[0].claim != verdicts[1].claim
    assert allocated_uuids(verdicts[0]).isdisjoint(allocated_uuids(verdicts[1]))
    assert_nothing_left(cluster, namespace)


def an_existing_claim_is_checked_and_kept(cluster: Cluster, namespace: str, faults: Faults) -> None:
    """Expects a ResourceClaim ``user-claim`` (not drawb's) in the namespace."""
    before = cluster.get("ResourceClaim", "user-claim", namespace)
    verdict, _ = run(cluster, namespace, claim="user-claim")
    assert verdict.status == PASS, verdict
    assert verdict.claim == "user-claim"
    after = cluster.get("ResourceClaim", "user-claim", namespace)
    assert after is not None and after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["spec"] == before["spec"] and after["metadata"].get("labels") == before["metadata"].get("labels")
    assert_nothing_left(cluster, namespace)


PASSING = [one_full_gpu_passes, mig_profile_passes, two_gpus_pass, two_containers_sharing_one_claim_pass,
           query_csv_payload_passes, selector_with_class_and_node_passes]
FAULTY = [wrong_uuid_is_a_mismatch_naming_both, no_gpu_is_no_gpu_visible]
STOPPING = [selector_matching_nothing_times_out_with_the_schedulers_reason, a_failing_sample_is_failed_with_its_exit_code]
