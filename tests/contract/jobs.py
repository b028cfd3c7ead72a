"""The Job contract: the same Jobs, the same outcomes, simulated and real.

Each case applies a ResourceClaimTemplate and a Job to a fresh namespace and checks what the control
plane made of them: the pods the job controller created (names, labels, owner), how many at a time,
the claim the resourceclaim controller made for each, the scheduler's verdict, how the pods ended and
the Job's status, conditions and events. tests/unit/sim runs them against the simulated cluster,
tests/live against the local control plane (the real job controller, kwok nodes).

On the local control plane kwok's ``pod-complete`` stage ends every Running pod a Job owns as Succeeded
(exit code 0) about a second after it starts, whatever its command: a Job's pod never fails there, and
never runs longer. ``CASES`` compare what that leaves comparable (the pods made, how many at a time, their
claims, the scheduler's verdict, a Job that completes: status, conditions, events; ``why job/NAME``);
``SIMULATED_CASES`` run on the simulated cluster alone, where a pod ends as its command does (a failing Job).
"""

from __future__ import annotations

import re

from drawb import versions
from drawb.cluster.protocol import Cluster
from tests.contract.lifecycle import IMAGE, PREEMPTION, SUFFIX, _template, _unschedulable, _wait

JOB_NAME = "batch.kubernetes.io/job-name"


def _job(name: str, ns: str, template: str, script: str, **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns},
            "spec": {**spec, "template": {"spec": {
                "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                "containers": [{"name": "main", "image": IMAGE, "command": ["sh", "-c", script],
                                "resources": {"claims": [{"name": "gpu"}]}}]}}}}


def _pods(cluster: Cluster, ns: str, job: str) -> list[dict]:
    return [p for p in cluster.list("Pod", ns) if (p["metadata"].get("labels") or {}).get(JOB_NAME) == job]


def _active(pods: list[dict]) -> list[dict]:
    return [p for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")]


def _finished(cluster: Cluster, ns: str, name: str) -> dict | None:
    job = cluster.get("Job", name, ns) or {}
    ended = [c for c in job.get("status", {}).get("conditions") or () if c["type"] in ("Complete", "Failed")
             and c["status"] == "True"]
    return job if ended else None


def _why(cluster: Cluster, ns: str, target: str):
    """``why TARGET`` on ``cluster``, through the command as both front ends run it."""
    from drawb.commands.registry import run_line
    from drawb.session import Session

    session = Session()
    session._cluster = cluster
    return run_line(session, f"why {target} -n {ns}")


def _job_events(cluster: Cluster, ns: str, name: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in cluster.list("Event", ns)
            if e["involvedObject"].get("kind") == "Job" and e["involvedObject"].get("name") == name]


# --- the cases ----------------------------------------------------------------------------------

def a_job_runs_three_completions_two_at_a_time(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns), _job("train", ns, "single-gpu", "nvidia-smi -L; sleep 3",
                                                     completions=3, parallelism=2)])
    first = _wait(cluster, lambda: (pods := _pods(cluster, ns, "train")) and len(pods) >= 2 and pods, "two pods of train")
    assert len(first) == 2  # parallelism 2: the third waits for one to succeed (each runs for 3 s)
    uid = cluster.get("Job", "train", ns)["metadata"]["uid"]
    most = 0

    def complete():
        nonlocal most
        most = max(most, len(_active(_pods(cluster, ns, "train"))))
        return _finished(cluster, ns, "train")

    job = _wait(cluster, complete, "job train finished", timeout=180)
    assert most <= 2
    pods = _pods(cluster, ns, "train")
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Succeeded"}
    for pod in pods:
        meta = pod["metadata"]
        assert re.fullmatch(f"train-{SUFFIX}", meta["name"]), meta["name"]
        assert {k: meta["labels"][k] for k in ("batch.kubernetes.io/controller-uid", "controller-uid", "job-name")} == {
            "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "job-name": "train"}
        assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": uid,
                                            "controller": True, "blockOwnerDeletion": True}]
        [claim] = pod["status"]["resourceClaimStatuses"]
        assert re.fullmatch(f"{meta['name']}-gpu-{SUFFIX}", claim["resourceClaimName"]), claim
        assert pod["spec"]["nodeName"]
    status = job["status"]
    assert (status["succeeded"], status.get("failed", 0), status.get("active", 0)) == (3, 0, 0)
    assert [(c["type"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")]
    assert status["completionTime"] and status["startTime"]
    events = _job_events(cluster, ns, "train")
    assert sorted(m for r, m in events if r == "SuccessfulCreate") == sorted(
        f"Created pod: {p['metadata']['name']}" for p in pods)
    assert ("Completed", "Job completed") in events
    _wait(cluster, lambda: not [c for c in cluster.list("ResourceClaim", ns)], "the pods' claims deleted")
    why = _why(cluster, ns, "job/train")
    assert (why.state, why.counts, why.desired) == ("complete", {"Succeeded": 3}, 3)
    assert [(g.phase, len(g.pods), g.reason) for g in why.groups] == [("Succeeded", 3, "main exited 0 (Completed)")]


def a_jobs_pods_that_cannot_fit_stay_pending(cluster: Cluster, ns: str) -> None:
    b200 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"  # no node has one
    cluster.apply([_template("b200", ns, selector=b200), _job("greedy", ns, "b200", "nvidia-smi -L",
                                                             completions=4, parallelism=2)])
    pods = _wait(cluster, lambda: (found := _pods(cluster, ns, "greedy")) and len(found) >= 2 and found, "pods of greedy")
    silent = versions.rules(cluster.server_version()).number >= 37  # PostFilter says nothing when it frees nothing
    message = f"0/4 nodes are available: 4 cannot allocate all claims. {'' if silent else 'still not schedulable, '}{PREEMPTION}"
    for pod in pods:
        condition, event = _unschedulable(cluster, ns, pod["metadata"]["name"])
        assert (condition["reason"], condition["message"]) == ("Unschedulable", message)
        assert (event["type"], event["message"]) == ("Warning", message)
    assert len(_pods(cluster, ns, "greedy")) == 2  # no more than parallelism while they wait
    job = _wait(cluster, lambda: (j := cluster.get("Job", "greedy", ns)) and j.get("status", {}).get("active") == 2 and j,
                "job greedy counting 2 active pods")
    assert not job["status"].get("conditions") and not job["status"].get("failed")
    why = _why(cluster, ns, "job/greedy")
    assert (why.state, why.counts, why.desired) == ("pods-pending", {"Pending": 2}, 4)
    [group] = why.groups
    assert sorted(group.pods) == sorted(p["metadata"]["name"] for p in pods)
    assert group.reason == f"scheduler: {message}" and group.explanation.state == "pending"
    assert group.explanation.stage == "selectors"


def a_failing_job_stops_at_its_backoff_limit(cluster: Cluster, ns: str) -> None:
    cluster.apply([_template("single-gpu", ns), _job("crash", ns, "single-gpu", "nvidia-smi -L; exit 3",
                                                     backoffLimit=0)])
    job = _wait(cluster, lambda: _finished(cluster, ns, "crash"), "job crash finished", timeout=120)
    [pod] = _pods(cluster, ns, "crash")
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    assert job["status"]["failed"] == 1 and not job["status"].get("succeeded")
    assert [(c["type"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
    assert ("BackoffLimitExceeded", "Job has reached the specified backoff limit") in _job_events(cluster, ns, "crash")


CASES = [a_job_runs_three_completions_two_at_a_time, a_jobs_pods_that_cannot_fit_stay_pending]
SIMULATED_CASES = [a_failing_job_stops_at_its_backoff_limit]
