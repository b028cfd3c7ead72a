"""The simulated CronJob controller on the simulated clock, and the schedule as robfig/cron reads it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.api.cron import ScheduleError, parse

NS = "default"


def at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


@pytest.mark.parametrize(("schedule", "after", "expected"), [
    ("*/15 * * * *", "2026-01-01 00:07", "2026-01-01 00:15"),
    ("0 3 * * *", "2026-01-01 03:00", "2026-01-02 03:00"),
    ("30 8 * * MON-FRI", "2026-01-02 09:00", "2026-01-05 08:30"),  # Friday 9:00 -> Monday
    ("0 0 1 JAN *", "2026-03-01 00:00", "2027-01-01 00:00"),
    ("0 0 13 * 5", "2026-01-01 00:00", "2026-01-02 00:00"),  # both days restricted: the 13th or a Friday
    ("0 0 */10 * 5", "2026-01-01 00:00", "2026-01-02 00:00"),  # */10 is restricted too (a step clears the star)
    ("0 0 * * 5", "2026-01-01 00:00", "2026-01-02 00:00"),
    ("0 0 13 * *", "2026-01-01 00:00", "2026-01-13 00:00"),
    ("5/20 * * * *", "2026-01-01 00:06", "2026-01-01 00:25"),
    ("@hourly", "2026-01-01 00:00", "2026-01-01 01:00"),
    ("@weekly", "2026-01-01 00:00", "2026-01-04 00:00"),
    ("@every 90s", "2026-01-01 00:00", "2026-01-01 00:01"),
    ("0 0 30 2 *", "2026-01-01 00:00", None),
])
def test_next_time_of_a_schedule(schedule, after, expected):
    found = parse(schedule).next_after(at(after))
    if schedule == "@every 90s":
        assert (found - at(after)).total_seconds() == 90
        return
    assert found == (at(expected) if expected else None)


@pytest.mark.parametrize(("schedule", "message"), [
    ("* * * *", "expected exactly 5 fields, found 4: * * * *"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("a * * * *", "failed to parse int from a: a"),
])
def test_a_bad_schedule_is_refused_as_robfig_cron_words_it(schedule, message):
    with pytest.raises(ScheduleError, match=message.replace("*", r"\*").replace("(", r"\(").replace(")", r"\)")):
        parse(schedule)


def cronjob(name: str, schedule: str, script: str = "sleep 30", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": NS},
            "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox",
                                                          "command": ["sh", "-c", script]}]}}}}}}


@pytest.fixture
def sim():
    return SimCluster(workloads=False, clock=ManualClock())


def jobs(sim: SimCluster) -> list[str]:
    return [j["metadata"]["name"] for j in sim.list("Job", NS)]


def events(sim: SimCluster, name: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in sim.list("Event", NS)
            if e["involvedObject"]["kind"] == "CronJob" and e["involvedObject"]["name"] == name]


def test_a_cronjob_creates_its_jobs_on_the_simulated_clock(sim):
    sim.apply([cronjob("nightly", "*/5 * * * *", "sleep 10")])
    stored = sim.get("CronJob", "nightly", NS)
    assert stored["spec"]["concurrencyPolicy"] == "Allow" and stored["spec"]["successfulJobsHistoryLimit"] == 3
    assert jobs(sim) == []
    sim.sleep(300)  # 2026-01-01T00:05:00Z
    minutes = int(at("2026-01-01 00:05").timestamp()) // 60
    assert jobs(sim) == [f"nightly-{minutes}"]
    job = sim.get("Job", f"nightly-{minutes}", NS)
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2026-01-01T00:05:00Z"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    status = sim.get("CronJob", "nightly", NS)["status"]
    assert status["lastScheduleTime"] == "2026-01-01T00:05:00Z" and [a["name"] for a in status["active"]] == jobs(sim)
    sim.sleep(20)
    status = sim.get("CronJob", "nightly", NS)["status"]
    assert "active" not in status and status["lastSuccessfulTime"]
    assert events(sim, "nightly") == [("SuccessfulCreate", f"Created job nightly-{minutes}"),
                                      ("SawCompletedJob", f"Saw completed job: nightly-{minutes}, condition: Complete")]
    sim.sleep(300 * 4)
    assert len(jobs(sim)) == 3  # successfulJobsHistoryLimit: the oldest finished Jobs are deleted
    assert ("SuccessfulDelete", f"Deleted job nightly-{minutes}") in events(sim, "nightly")
    assert not [p for p in sim.list("Pod", NS) if p["metadata"]["labels"]["job-name"] == f"nightly-{minutes}"]


def test_forbid_skips_a_time_while_a_job_runs_and_replace_replaces_it(sim):
    sim.apply([cronjob("forbid", "* * * * *", "sleep 90", concurrencyPolicy="Forbid"),
               cronjob("replace", "* * * * *", "sleep 90", concurrencyPolicy="Replace")])
    sim.sleep(60)
    sim.sleep(60)
    assert [n.split("-")[0] for n in jobs(sim)] == ["forbid", "replace"]
    assert ("JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid") \
        in events(sim, "forbid")
    replaced = [r for r, _ in events(sim, "replace")]
    assert replaced == ["SuccessfulCreate", "SuccessfulDelete", "SuccessfulCreate"]


def test_suspend_stops_new_jobs_and_on_resume_only_the_latest_missed_time_runs(sim):
    sim.apply([cronjob("held", "* * * * *", "true", suspend=True)])
    sim.sleep(600)
    assert jobs(sim) == []
    sim.apply([cronjob("held", "* * * * *", "true", suspend=False)])
    assert jobs(sim) == [f"held-{int(at('2026-01-01 00:10').timestamp()) // 60}"]  # not one per minute missed


def test_a_missed_time_past_the_starting_deadline_is_not_run(sim):
    sim.apply([cronjob("late", "0 * * * *", "true", suspend=True, startingDeadlineSeconds=60)])
    sim.sleep(3600 + 120)
    sim.apply([cronjob("late", "0 * * * *", "true", suspend=False, startingDeadlineSeconds=60)])
    assert jobs(sim) == []
    sim.sleep(3600)
    assert len(jobs(sim)) == 1


def test_deleting_a_cronjob_deletes_its_jobs_and_their_pods(sim):
    sim.apply([cronjob("gone", "* * * * *")])
    sim.sleep(61)
    assert jobs(sim) and sim.list("Pod", NS)
    sim.delete("CronJob", "gone", NS)
    assert jobs(sim) == [] and sim.list("Pod", NS) == []


def test_the_simulated_api_server_refuses_a_bad_schedule_and_a_job_that_restarts_always(sim):
    from drawb.cluster.protocol import ClusterError

    with pytest.raises(ClusterError, match=r'CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 \* \* \* \*": '
                                           r"end of range \(61\) above maximum \(59\): 61"):
        sim.apply([cronjob("bad", "61 * * * *")])
    forever = cronjob("forever", "* * * * *")
    forever["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(ClusterError, match='spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": '
                                           'supported values: "OnFailure", "Never"'):
        sim.apply([forever])
    assert sim.list("CronJob", NS) == []
