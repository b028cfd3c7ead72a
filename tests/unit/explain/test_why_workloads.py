"""``why job/NAME``, ``why deploy/NAME`` and the other workloads: their pods against what they want, the
pending ones explained once per alike group, what the controller waits for when there is no pod."""

from __future__ import annotations

import json

import pytest

from drawb.errors import DrawbError, UsageError
from tests.unit.explain.conftest import A100

IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"


def template(name: str = "one-gpu", selector: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": "gpu.nvidia.com"}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def pod_spec(script: str, claim_template: str = "one-gpu", policy: str = "Never") -> dict:
    return {"restartPolicy": policy,
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim_template}],
            "containers": [{"name": "main", "image": IMAGE, "command": ["sh", "-c", script],
                            "resources": {"claims": [{"name": "gpu"}]}}]}


def job(name: str, script: str, claim_template: str = "one-gpu", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {**spec, "template": {"spec": pod_spec(script, claim_template)}}}


def test_why_job_counts_its_pods_and_explains_the_pending_ones_once(sim):
    impossible = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"
    sim.apply(template("b200", impossible), job("big", "sleep 5", "b200", completions=4, parallelism=3))
    why = sim.why("job/big")
    assert why.target == "job default/big" and why.state == "pods-pending" and why.simulated
    assert why.counts == {"Pending": 3} and why.desired == 4
    assert why.summary.startswith("Job big wants 4 completion(s), 3 at a time: 0 succeeded, 0 failed (backoffLimit 6), "
                                  "3 active")
    [group] = why.groups
    assert group.phase == "Pending" and len(group.pods) == 3 and group.reason.startswith("scheduler: 0/")
    assert group.explanation.target == f"pod default/{group.pods[0]}" and group.explanation.state == "pending"
    assert group.note == f"the explanation of {group.pods[0]}, which the other 2 share"
    assert why.notes == ["the pending pods' claims are made from ResourceClaimTemplate(s) b200: a change to a claim "
                         "goes there, and only pods created after it get claims from the new version"]
    text = str(why)
    assert "3 Pending: " in text and "first empty stage" in text


def test_why_job_on_a_finished_job_says_where_its_pods_ran(sim):
    sim.apply(template(), job("done", "nvidia-smi -L", completions=2, parallelism=2))
    sim.cluster.sleep(10)
    why = sim.why("job/done")
    assert why.state == "complete" and why.counts == {"Succeeded": 2}
    [group] = why.groups
    assert group.phase == "Succeeded" and group.nodes == [A100, A100] and group.reason == "main exited 0 (Completed)"
    assert group.explanation is None
    assert why.summary.endswith("It completed: CompletionsReached, Reached expected number of succeeded pods.")


def test_why_job_on_a_failed_job_names_the_backoff_limit_and_the_exit_code(sim):
    sim.apply(template(), job("crash", "exit 2", backoffLimit=0))
    sim.cluster.sleep(5)
    why = sim.why("jobs/crash")
    assert why.state == "failed" and why.groups[0].reason == "main exited 2 (Error)"
    assert "BackoffLimitExceeded: Job has reached the specified backoff limit" in why.events


def test_why_job_waiting_out_the_backoff_says_so(sim):
    sim.apply(template(), job("retry", "exit 1", backoffLimit=3))
    sim.cluster.sleep(3)
    why = sim.why("job/retry")
    assert why.waiting_for.startswith("the pod failure back-off")


def test_why_suspended_job_and_json_shape(sim):
    sim.apply(template(), job("held", "true", suspend=True))
    data = json.loads(sim.why("job/held --json"))
    assert data["state"] == "suspended" and data["groups"] == [] and data["counts"] == {}
    assert data["waiting_for"].startswith("spec.suspend to become false")
    assert set(data) >= {"target", "state", "summary", "notes", "cited", "kubernetes_version", "feature_gates",
                         "simulated"}  # the keys every why answer has


def test_why_cronjob_says_when_it_runs_next(sim):
    sim.apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
               "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": pod_spec("true")}}}}})
    why = sim.why("cronjob/nightly")
    assert why.state == "scheduled" and why.waiting_for == "the next scheduled time, 2026-01-01T03:00:00Z"
    sim.cluster.sleep(3 * 3600 + 1)
    why = sim.why("cj/nightly")
    assert why.through == [f"Job default/nightly-{(1767225600 + 3 * 3600) // 60}"]
    assert sum(why.counts.values()) == 1


def _replicated(kind: str, name: str, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}}, **spec,
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec("sleep infinity", policy="Always")}}}


def test_why_deploy_follows_its_replicasets_to_the_pods(sim):
    sim.apply(template(), _replicated("Deployment", "web", replicas=2))
    sim.cluster.sleep(2)
    why = sim.why("deploy/web")
    [replicaset] = sim.cluster.list("ReplicaSet", "default")
    assert why.through == [f"ReplicaSet default/{replicaset['metadata']['name']}"]
    assert why.desired == 2 and why.counts == {"Running": 2} and why.state == "running"
    assert why.summary == "Deployment web wants 2 replica(s); pods now: 2 Running."


def test_why_deploy_explains_its_pending_replicas_once(sim):
    impossible = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"
    web = _replicated("Deployment", "web", replicas=3)
    web["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "b200"
    sim.apply(template("b200", impossible), web)
    why = sim.why("deployment/web")
    assert why.state == "pods-pending" and why.counts == {"Pending": 3}
    [group] = why.groups
    assert group.explanation.state == "pending" and group.note.endswith("which the other 2 share")


def test_why_deploy_without_pods_says_what_the_controller_waits_for(sim):
    sim.apply(template(), _replicated("StatefulSet", "db", replicas=0))
    why = sim.why("sts/db")
    assert why.waiting_for == "nothing: it is scaled to 0 replicas"


def test_why_on_a_missing_workload_and_a_bad_kind(sim):
    with pytest.raises(DrawbError, match="no Job 'nope' in namespace 'default'"):
        sim.why("job/nope")
    with pytest.raises(UsageError, match="deploy/NAME"):
        sim.why("svc/web")


def test_pods_and_events_show_a_jobs_pods_and_the_job_controllers_events(sim):
    from drawb.commands.registry import run_line

    sim.apply(template(), job("listed", "nvidia-smi -L", completions=2, parallelism=2))
    sim.cluster.sleep(5)
    made = sorted(p["metadata"]["name"] for p in sim.cluster.list("Pod", "default")
                  if p["metadata"]["name"].startswith("listed-"))
    pods = run_line(sim.session, "pods -n default")
    assert sorted(n for n in pods["pod"] if n.startswith("listed-")) == made
    assert set(pods[pods["pod"].isin(made)]["phase"]) == {"Succeeded"}
    events = run_line(sim.session, "events job/listed -n default")
    assert sorted(events["message"]) == sorted([*(f"Created pod: {n}" for n in made), "Job completed"])
    assert set(events["source"]) == {"job-controller-simulated"}


def test_ipython_shows_each_answer_as_its_text(sim):
    """A notebook's Out[] is the answer's text (IPython's printer), not the dataclass's field-by-field repr."""
    from IPython.lib.pretty import pretty

    impossible = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"
    sim.apply(template("b200", impossible), job("big", "sleep 5", "b200", completions=1))
    workload = sim.why("job/big")
    [group] = workload.groups
    for answer in (workload, group.explanation):
        assert pretty(answer) == str(answer) and pretty(answer).startswith("why ")
