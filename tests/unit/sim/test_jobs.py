"""The simulated Job controller: pods, completions, parallelism, back-off, pod failure policy, Indexed, deadline, TTL."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.controllers.job import format_indexes, parse_indexes

NS = "default"
IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}


def job(name: str, script: str, *, policy: str = "Never", gpu: bool = True, **spec) -> dict:
    pod_spec: dict = {"restartPolicy": policy,
                      "containers": [{"name": "main", "image": IMAGE, "command": ["sh", "-c", script]}]}
    if gpu:
        pod_spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        pod_spec["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {**spec, "template": {"spec": pod_spec}}}


@pytest.fixture
def sim():
    return SimCluster(workloads=False, clock=ManualClock())


def pods(sim: SimCluster, name: str) -> list[dict]:
    return [p for p in sim.list("Pod", NS) if p["metadata"]["labels"].get("batch.kubernetes.io/job-name") == name]


def phases(sim: SimCluster, name: str) -> list[str]:
    return sorted(p["status"]["phase"] for p in pods(sim, name))


def status(sim: SimCluster, name: str) -> dict:
    return sim.get("Job", name, NS)["status"]


def conditions(sim: SimCluster, name: str) -> list[tuple[str, str]]:
    return [(c["type"], c.get("reason", "")) for c in status(sim, name).get("conditions") or ()]


def job_events(sim: SimCluster, name: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in sim.list("Event", NS)
            if e["involvedObject"]["kind"] == "Job" and e["involvedObject"]["name"] == name]


def test_parallelism_is_respected_and_completions_are_reached(sim):
    sim.apply([TEMPLATE, job("train", "nvidia-smi -L; sleep 5", completions=3, parallelism=2)])
    first = pods(sim, "train")
    assert len(first) == 2 and phases(sim, "train") == ["Pending", "Pending"]
    stored = sim.get("Job", "train", NS)
    uid = stored["metadata"]["uid"]
    assert stored["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert stored["spec"]["backoffLimit"] == 6 and stored["spec"]["completionMode"] == "NonIndexed"
    pod = first[0]
    assert pod["metadata"]["name"].startswith("train-") and len(pod["metadata"]["name"]) == len("train-") + 5
    assert pod["metadata"]["labels"] == {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "train",
                                         "controller-uid": uid, "job-name": "train"}
    assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": uid,
                                                   "controller": True, "blockOwnerDeletion": True}]
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert all(p["status"].get("resourceClaimStatuses") for p in first)  # each pod got its claim from the template
    sim.sleep(1)
    assert status(sim, "train")["active"] == 2 and status(sim, "train")["ready"] == 2
    sim.sleep(6)
    assert phases(sim, "train") == ["Running", "Succeeded", "Succeeded"]
    assert status(sim, "train")["succeeded"] == 2 and status(sim, "train")["active"] == 1
    sim.sleep(8)  # the job controller counts a pod a second after it ended (its batch period)
    assert phases(sim, "train") == ["Succeeded"] * 3
    done = status(sim, "train")
    assert done["succeeded"] == 3 and "active" not in done and done["completionTime"]
    assert conditions(sim, "train") == [("SuccessCriteriaMet", "CompletionsReached"), ("Complete", "CompletionsReached")]
    assert all("finalizers" not in p["metadata"] for p in pods(sim, "train"))  # counted: the tracking finalizer is gone
    assert [r for r, _ in job_events(sim, "train")] == ["SuccessfulCreate"] * 3 + ["Completed"]
    assert job_events(sim, "train")[-1] == ("Completed", "Job completed")
    assert not [c for c in sim.list("ResourceClaim", NS) if c.get("status", {}).get("allocation")]  # all released


def test_the_log_of_a_jobs_pod_is_what_its_command_printed(sim):
    sim.apply([TEMPLATE, job("smi", "nvidia-smi -L", completions=1)])
    sim.sleep(5)
    [pod] = pods(sim, "smi")
    assert list(sim.logs(pod["metadata"]["name"], NS))[0].startswith("GPU 0: NVIDIA A100")


def test_failures_beyond_the_backoff_limit_fail_the_job(sim):
    sim.apply([job("flaky", "exit 3", gpu=False, backoffLimit=2)])
    sim.sleep(2)
    assert status(sim, "flaky")["failed"] == 1 and phases(sim, "flaky") == ["Failed"]  # the replacement waits 10 s
    sim.sleep(10)
    assert phases(sim, "flaky") == ["Failed", "Failed"]
    sim.sleep(21)  # the second replacement waits 20 s
    assert phases(sim, "flaky") == ["Failed"] * 3
    st = status(sim, "flaky")
    assert st["failed"] == 3 and "completionTime" not in st
    assert conditions(sim, "flaky") == [("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
    assert job_events(sim, "flaky")[-1] == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    terminated = pods(sim, "flaky")[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 3  # the simulated command's exit code


def test_restarts_under_on_failure_count_against_the_backoff_limit(sim):
    sim.apply([job("retry", "exit 1", policy="OnFailure", gpu=False, backoffLimit=1)])
    sim.sleep(15)
    assert conditions(sim, "retry")[-1] == ("Failed", "BackoffLimitExceeded")
    assert pods(sim, "retry") == [] and status(sim, "retry")["failed"] == 1  # the restarting pod is deleted, counted


def test_pod_failure_policy_fail_job_and_ignore(sim):
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
                        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [7]}}]}
    sim.apply([job("fatal", "exit 42", gpu=False, backoffLimit=6, podFailurePolicy=policy),
               job("ignored", "exit 7", gpu=False, backoffLimit=0, podFailurePolicy=policy)])
    sim.sleep(2)
    assert conditions(sim, "fatal") == [("FailureTarget", "PodFailurePolicy"), ("Failed", "PodFailurePolicy")]
    [pod] = pods(sim, "fatal")
    message = f"Container main for pod default/{pod['metadata']['name']} failed with exit code 42 matching FailJob rule at index 0"
    assert status(sim, "fatal")["conditions"][-1]["message"] == message
    assert ("PodFailurePolicy", message) in job_events(sim, "fatal")
    assert sim.get("Job", "fatal", NS)["spec"]["podReplacementPolicy"] == "Failed"
    ignored = status(sim, "ignored")
    assert "failed" not in ignored and not conditions(sim, "ignored")  # an ignored failure is not counted
    assert len(pods(sim, "ignored")) > 2  # and the pod is replaced at once, with no back-off


def test_indexed_job_runs_each_index_once(sim):
    sim.apply([TEMPLATE, job("shard", "sleep 1", completions=3, parallelism=3, completionMode="Indexed")])
    made = pods(sim, "shard")
    indexes = sorted(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in made)
    assert indexes == ["0", "1", "2"]
    by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in made}
    assert by_index["1"]["metadata"]["name"].startswith("shard-1-")
    assert by_index["1"]["spec"]["hostname"] == "shard-1"
    assert by_index["1"]["spec"]["containers"][0]["env"] == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}]
    sim.sleep(5)
    st = status(sim, "shard")
    assert st["completedIndexes"] == "0-2" and st["succeeded"] == 3
    assert conditions(sim, "shard")[-1] == ("Complete", "CompletionsReached")


def test_a_work_queue_job_completes_when_one_pod_succeeded_and_none_runs(sim):
    sim.apply([job("queue", "sleep 1", gpu=False, parallelism=2)])
    assert sim.get("Job", "queue", NS)["spec"].get("completions") is None
    assert len(pods(sim, "queue")) == 2
    sim.sleep(5)
    assert status(sim, "queue")["succeeded"] == 2 and conditions(sim, "queue")[-1][0] == "Complete"


def test_active_deadline_on_the_simulated_clock_fails_the_job(sim):
    sim.apply([job("slow", "sleep 100", gpu=False, activeDeadlineSeconds=30)])
    sim.sleep(29)
    assert phases(sim, "slow") == ["Running"]
    sim.sleep(2)
    assert conditions(sim, "slow")[-1] == ("Failed", "DeadlineExceeded")
    assert pods(sim, "slow") == [] and status(sim, "slow")["failed"] == 1
    assert ("DeadlineExceeded", "Job was active longer than specified deadline") in job_events(sim, "slow")
    assert [r for r, _ in job_events(sim, "slow")] == ["SuccessfulCreate", "SuccessfulDelete", "DeadlineExceeded"]


def test_ttl_after_finished_deletes_the_job_and_deleting_a_job_deletes_its_pods(sim):
    sim.apply([job("short", "true", gpu=False, ttlSecondsAfterFinished=60), job("long", "sleep 100", gpu=False)])
    sim.sleep(5)
    assert conditions(sim, "short")[-1][0] == "Complete"
    sim.sleep(60)
    assert sim.get("Job", "short", NS) is None and pods(sim, "short") == []
    assert len(pods(sim, "long")) == 1
    sim.delete("Job", "long", NS)
    assert pods(sim, "long") == []


def test_suspended_job_creates_no_pod(sim):
    sim.apply([job("held", "true", gpu=False, suspend=True)])
    sim.sleep(5)
    assert pods(sim, "held") == [] and "startTime" not in status(sim, "held")


def test_completed_indexes_round_trip():
    assert format_indexes({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert parse_indexes("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    assert format_indexes(set()) == "" and parse_indexes("") == set()


def test_a_kept_cluster_keeps_its_jobs_running(sim):
    import pickle

    sim.apply([job("kept", "sleep 3", gpu=False, completions=2)])
    again = pickle.loads(pickle.dumps(sim))
    again.sleep(10)
    assert status(again, "kept")["succeeded"] == 2
