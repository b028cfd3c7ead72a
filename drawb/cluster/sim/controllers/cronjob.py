"""The CronJob controller, as kube-controller-manager 1.34 runs it, on the simulated clock.

A CronJob gets the API server's defaults (``concurrencyPolicy: Allow``, ``suspend: false``, history limits 3
successful and 1 failed). At each time its ``schedule`` fires (``drawb.api.cron``, in
``timeZone`` when set, else UTC) it creates a Job ``<cronjob>-<scheduled time in minutes since 1970>`` from
``jobTemplate``, owned by the CronJob and annotated ``batch.kubernetes.io/cronjob-scheduled-timestamp``, and
records it in ``status.active`` and ``status.lastScheduleTime``. Of the times missed meanwhile (the
simulated cluster was not used) only the latest runs, unless ``startingDeadlineSeconds`` has passed
(``MissSchedule``). ``concurrencyPolicy: Forbid`` skips a time while a Job is active (``JobAlreadyActive``;
the time runs once the Job ended, if still within the deadline), ``Replace`` deletes the active Jobs first.
A finished Job leaves ``status.active`` (``SawCompletedJob``; ``lastSuccessfulTime``) and the finished Jobs
beyond the history limits are deleted, oldest first. ``suspend`` stops new Jobs. Deleting a CronJob deletes
its Jobs (and they their pods).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from drawb.api import cron
from drawb.cluster.sim.controllers.host import Host, NsKey
from drawb.cluster.sim.controllers.job import is_finished
from drawb.cluster.sim.controllers.owners import owner_reference
from drawb.cluster.sim.controllers.queued import QueuedController
from drawb.cluster.sim.tree import copy_tree

COMPONENT = "cronjob-controller"
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
TOO_MANY_MISSED = 100


def job_name(cronjob: str, scheduled: datetime) -> str:
    """The name the controller gives the Job of the run scheduled at ``scheduled``."""
    return f"{cronjob}-{int(scheduled.timestamp()) // 60}"


def job_for(cronjob: dict, scheduled: datetime) -> dict:
    """The Job the controller creates from ``cronjob``'s template for the run at ``scheduled``."""
    meta = cronjob["metadata"]
    template = cronjob["spec"].get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    job_meta: dict = {"name": job_name(meta["name"], scheduled), "namespace": meta["namespace"]}
    if template_meta.get("labels"):
        job_meta["labels"] = dict(template_meta["labels"])
    job_meta["annotations"] = {**(template_meta.get("annotations") or {}),
                               SCHEDULED_ANNOTATION: scheduled.isoformat().replace("+00:00", "Z")}
    job_meta["ownerReferences"] = [owner_reference(cronjob)]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": copy_tree(template.get("spec") or {})}


def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rfc1123z(moment: datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S %z")


class CronJobController(QueuedController):
    """Syncs every CronJob whose CronJob or Jobs changed, and those whose next time is due."""

    ACTION = "cronjob"
    KIND = "CronJob"
    OWNED = "Job"

    def __init__(self, host: Host):
        super().__init__(host)
        self._jobs: dict[str, dict[NsKey, dict]] = {}  # CronJob uid -> the Jobs it controls
        self._due: dict[NsKey, datetime] = {}  # the scheduled time each CronJob's timer is set for

    def _owned_changed(self, key: NsKey, obj: dict, deleted: bool, owner: dict) -> None:
        """Follow the Jobs CronJobs control."""
        jobs = self._jobs.setdefault(owner.get("uid", ""), {})
        old = jobs.pop(key, None)
        if not deleted:
            jobs[key] = obj
        if deleted or old is None or is_finished(old) != is_finished(obj):  # what the CronJob's sync reads
            self._queue[(key[0], owner["name"])] = None

    def _sync(self, key: NsKey) -> None:
        cronjob, gone = self._take(key)
        if gone is not None:
            self._due.pop(key, None)
            for job_key in list(self._jobs.pop(gone, {})):
                self.host.remove("Job", *job_key)
        if cronjob is None:
            return
        spec = cronjob.get("spec") or {}
        if any(spec.get(k) is None for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                             "failedJobsHistoryLimit")):
            draft = copy_tree(cronjob)
            draft["spec"] = {"concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3,
                             "failedJobsHistoryLimit": 1, **{k: v for k, v in spec.items() if v is not None}}
            cronjob = self.objects[key] = self.host.update(draft)
        draft = copy_tree(cronjob)
        draft.setdefault("status", {})
        self._follow_jobs(draft)
        self._start_due(key, draft)
        self._keep_history(draft)
        if draft["status"] != (cronjob.get("status") or {}):
            self.objects[key] = self.host.update(draft)

    def _owned(self, cronjob: dict) -> dict[NsKey, dict]:
        return self._jobs.get(cronjob["metadata"].get("uid", ""), {})

    def _follow_jobs(self, cronjob: dict) -> None:
        """Take finished and vanished Jobs out of ``status.active``."""
        status = cronjob["status"]
        ns = cronjob["metadata"]["namespace"]
        jobs = self._owned(cronjob)
        active = []
        for ref in status.get("active") or ():
            job = jobs.get((ns, ref["name"]))
            ended = is_finished(job) if job is not None else None
            if job is None:
                self._event(cronjob, "Normal", "MissingJob", f"Active job went missing: {ref['name']}")
            elif ended:
                self._event(cronjob, "Normal", "SawCompletedJob", f"Saw completed job: {ref['name']}, condition: {ended}")
                completed = (job.get("status") or {}).get("completionTime")
                if ended == "Complete" and completed and completed > status.get("lastSuccessfulTime", ""):
                    status["lastSuccessfulTime"] = completed
            else:
                active.append(ref)
        self._set_active(status, active)

    @staticmethod
    def _set_active(status: dict, active: list[dict]) -> None:
        if active:
            status["active"] = active
        else:
            status.pop("active", None)

    def _start_due(self, key: NsKey, cronjob: dict) -> None:
        spec, status = cronjob["spec"], cronjob["status"]
        try:
            schedule = cron.parse(spec.get("schedule", ""))
        except cron.ScheduleError as err:
            self._event(cronjob, "Warning", "UnparseableSchedule", f'unparseable schedule: "{spec.get("schedule", "")}" : {err}')
            return
        try:
            zone = ZoneInfo(spec["timeZone"]) if spec.get("timeZone") else UTC
        except (ZoneInfoNotFoundError, ValueError) as err:
            self._event(cronjob, "Warning", "UnknownTimeZone", f"invalid timeZone: {spec['timeZone']!r}: {err}")
            return
        if spec.get("suspend"):
            return
        now = _parse_time(self.host.timestamp())
        earliest = _parse_time(status.get("lastScheduleTime") or cronjob["metadata"]["creationTimestamp"])
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - timedelta(seconds=deadline))
        scheduled, missed = None, 0
        moment = schedule.next_after(earliest.astimezone(zone))
        while moment is not None and moment <= now:
            scheduled, missed = moment, missed + 1
            moment = schedule.next_after(moment)
        if moment is not None and self._due.get(key) != moment:  # one timer per scheduled time
            self._due[key] = moment
            self.host.after(max(0.0, (moment - now).total_seconds()), self.ACTION, key, cronjob["metadata"]["uid"])
        if scheduled is None:
            return
        if missed > TOO_MANY_MISSED:
            self._event(cronjob, "Warning", "TooManyMissedTimes",
                        f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds "
                        "or check clock skew")
        name = job_name(cronjob["metadata"]["name"], scheduled)
        if (key[0], name) in self._owned(cronjob) or status.get("lastScheduleTime") == _format_time(scheduled):
            return
        if deadline is not None and scheduled < now - timedelta(seconds=deadline):
            self._event(cronjob, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}")
            return
        active = status.get("active") or []
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            self._event(cronjob, "Normal", "JobAlreadyActive",
                        "Not starting job because prior execution is running and concurrency policy is Forbid")
            return
        if policy == "Replace":
            for ref in active:
                self.host.remove("Job", key[0], ref["name"])
                self._event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {ref['name']}")
            active = []
        job = self.host.create(job_for(cronjob, scheduled))
        self._event(cronjob, "Normal", "SuccessfulCreate", f"Created job {name}")
        job_meta = job["metadata"]
        self._set_active(status, [*active, {"apiVersion": "batch/v1", "kind": "Job", "name": name,
                                            "namespace": key[0], "uid": job_meta["uid"],
                                            "resourceVersion": job_meta["resourceVersion"]}])
        status["lastScheduleTime"] = _format_time(scheduled)

    def _keep_history(self, cronjob: dict) -> None:
        """Delete the finished Jobs beyond the history limits, oldest first."""
        spec = cronjob["spec"]
        for outcome, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                               ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            ended = [j for j in self._owned(cronjob).values() if is_finished(j) == outcome]
            ended.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
            for job in ended[: max(0, len(ended) - limit)]:
                self.host.remove("Job", job["metadata"]["namespace"], job["metadata"]["name"])
                self._event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {job['metadata']['name']}")

    def _event(self, cronjob: dict, type_: str, reason: str, message: str) -> None:
        self.host.events.record(cronjob, type_=type_, reason=reason, message=message, component=COMPONENT,
                                core_v1=True)
