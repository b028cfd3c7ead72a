"""The Job controller, as kube-controller-manager 1.34 runs it, on the simulated store.

A Job first gets what the API server gives it at creation: its selector and template labels
(``batch.kubernetes.io/controller-uid``, ``batch.kubernetes.io/job-name`` and their legacy twins) and the
defaults of ``parallelism`` (1), ``completions`` (1 when neither is set), ``backoffLimit`` (6),
``completionMode`` (NonIndexed), ``suspend`` and ``podReplacementPolicy``. Then, as the real controller:

* it keeps ``min(parallelism, completions - succeeded)`` pods active (a work queue, without
  ``completions``, keeps ``parallelism`` until one succeeds), each named ``<job>-`` plus 5 random characters
  (``<job>-<index>-`` plus 5 for ``Indexed``, whose pods also carry the completion index as label,
  annotation, ``JOB_COMPLETION_INDEX`` and hostname ``<job>-<index>``), owned by the Job, with the
  ``batch.kubernetes.io/job-tracking`` finalizer until it has counted the pod; ``SuccessfulCreate`` events;
  a pod the API server refuses (its ServiceAccount does not exist) is a ``FailedCreate`` warning
  (``Error creating: ...``), and the Job is synced again when a ServiceAccount its pods run as is created;
* it syncs a Job at once when the Job changes, and one second after its pods change (the controller's batch
  period: many pod changes, one sync);
* a pod that ended is counted (``succeeded``, ``failed``, ``completedIndexes``), a pod deleted before it
  ended counts as failed; the ``podFailurePolicy``'s first matching rule decides (``FailJob`` fails the Job,
  ``Ignore`` does not count the failure, ``Count`` counts it); a replacement waits out the back-off
  (10 s doubling per failure since the last success, at most 10 min);
* it fails the Job (``FailureTarget`` then ``Failed``, active pods deleted) when failures exceed
  ``backoffLimit`` (under restartPolicy OnFailure: container restarts reach it), when a ``FailJob`` rule
  matched, or after ``activeDeadlineSeconds`` on the simulated clock; it completes it (``SuccessCriteriaMet``
  then ``Complete``, ``completionTime``) once the completions are reached; ``suspend`` keeps no pod;
* ``ttlSecondsAfterFinished`` (the ttl-after-finished controller) deletes a finished Job, and deleting a
  Job deletes its pods (the garbage collector's background propagation).

Not modelled: ``backoffLimitPerIndex`` and the ``FailIndex`` action, ``successPolicy``, and
``podReplacementPolicy`` (a deleted pod is gone at once in the simulation).
"""

from __future__ import annotations

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.controllers.host import Host, NsKey
from drawb.cluster.sim.controllers.owners import (
    generated_name,
    is_done,
    is_ready,
    pod_from_template,
    record_failed_create,
)
from drawb.cluster.sim.controllers.queued import QueuedController
from drawb.cluster.sim.controllers.workload import users_of_account
from drawb.cluster.sim.tree import copy_tree

COMPONENT = "job-controller"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_ENV = "JOB_COMPLETION_INDEX"
POD_BACKOFF_SECONDS = 10.0
MAX_POD_BACKOFF_SECONDS = 600.0
SYNC_BATCH_SECONDS = 1.0  # the controller syncs a Job a second after its pods changed (syncJobBatchPeriod)
DEFAULT_BACKOFF_LIMIT = 6
_MAX_GENERATED_BASE = 58  # 63 characters less the 5 random ones

BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")


def is_finished(job: dict) -> str | None:
    """``Complete`` or ``Failed`` once the Job ended, else None."""
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return condition["type"]
    return None


def with_creation_defaults(job: dict) -> dict | None:
    """A copy of ``job`` with what the API server sets when it creates a Job; None if it has them."""
    spec = job.get("spec") or {}
    if spec.get("selector") and spec.get("backoffLimit") is not None and spec.get("completionMode"):
        return None
    job = copy_tree(job)
    meta, spec = job["metadata"], job.setdefault("spec", {})
    uid = meta.get("uid", "")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", DEFAULT_BACKOFF_LIMIT)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    if not spec.get("manualSelector"):
        labels = {CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: meta["name"], "controller-uid": uid,
                  "job-name": meta["name"]}
        spec.setdefault("selector", {"matchLabels": {CONTROLLER_UID_LABEL: uid}})
        template_meta = spec.setdefault("template", {}).setdefault("metadata", {})
        template_meta["labels"] = {**(template_meta.get("labels") or {}), **labels}
    return job


def parse_indexes(text: str) -> set[int]:
    """``"0-2,5"`` -> {0, 1, 2, 5} (the form of ``status.completedIndexes``)."""
    found: set[int] = set()
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


def format_indexes(indexes: set[int]) -> str:
    """{0, 1, 2, 5} -> ``"0-2,5"``."""
    parts, ordered = [], sorted(indexes)
    start = prev = None
    for i in [*ordered, None]:
        if start is not None and (i is None or i != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ",".join(parts)


def completion_index(pod: dict) -> int | None:
    """The completion index of an Indexed Job's pod."""
    value = (pod["metadata"].get("annotations") or {}).get(INDEX_KEY)
    return int(value) if value is not None and value.isdigit() else None


def matching_failure_rule(job: dict, pod: dict) -> tuple[str, str] | None:
    """(action, message) of the first ``podFailurePolicy`` rule a failed ``pod`` matches, as the controller words it."""
    meta = pod["metadata"]
    status = pod.get("status") or {}
    for index, rule in enumerate(((job["spec"].get("podFailurePolicy") or {}).get("rules")) or ()):
        action = rule.get("action", "")
        codes = rule.get("onExitCodes")
        if codes:
            for container in [*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())]:
                ended = (container.get("state") or {}).get("terminated")
                if not ended or not ended.get("exitCode") or codes.get("containerName") not in (None, container["name"]):
                    continue
                if (ended["exitCode"] in (codes.get("values") or ())) == (codes.get("operator") == "In"):
                    return action, (f"Container {container['name']} for pod {meta['namespace']}/{meta['name']} failed "
                                    f"with exit code {ended['exitCode']} matching {action} rule at index {index}")
        for wanted in rule.get("onPodConditions") or ():
            for condition in status.get("conditions") or ():
                if condition.get("type") == wanted.get("type") and condition.get("status") == wanted.get("status", "True"):
                    return action, (f"Pod {meta['namespace']}/{meta['name']} has condition {wanted['type']} matching "
                                    f"{action} rule at index {index}")
    return None


def pod_for(job: dict, serial: int, index: int | None) -> dict:
    """The pod the controller creates for ``job`` (its ``serial``-th pod; ``index`` for an Indexed Job)."""
    meta = job["metadata"]
    prefix = f"-{index}-" if index is not None else "-"
    base = meta["name"][: _MAX_GENERATED_BASE - len(prefix)] + prefix
    labels = {INDEX_KEY: str(index)} if index is not None else {}
    pod = pod_from_template(job, job["spec"].get("template") or {},
                            generated_name(base, "job-pod", meta["namespace"], meta.get("uid"), serial), base, labels)
    pod["metadata"]["finalizers"] = [TRACKING_FINALIZER]
    if index is None:
        return pod
    pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), INDEX_KEY: str(index)}
    spec = pod["spec"]
    spec.setdefault("hostname", f"{meta['name']}-{index}")
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        env = container.setdefault("env", [])
        if not any(e.get("name") == INDEX_ENV for e in env):
            env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
                "apiVersion": "v1", "fieldPath": f"metadata.labels['{INDEX_KEY}']"}}})
    return pod


def _condition(kind: str, reason: str, message: str, when: str) -> dict:
    return {"type": kind, "status": "True", "lastProbeTime": when, "lastTransitionTime": when, "reason": reason,
            "message": message}


class JobController(QueuedController):
    """Syncs every Job whose Job or pods changed, and the Jobs whose timers are due."""

    ACTION = "job"
    KIND = "Job"
    OWNED = "Pod"

    def __init__(self, host: Host):
        super().__init__(host)
        self._batched: dict[NsKey, None] = {}  # Jobs whose pods changed, synced once the batch period is over
        self._pods: dict[str, dict[NsKey, None]] = {}  # Job uid -> its pods' keys, in creation order
        self._lost: dict[str, int] = {}  # Job uid -> tracked pods deleted before they ended (counted as failed)
        self._created: dict[str, int] = {}  # Job uid -> pods created so far (each pod's name draws on it)
        self._started: dict[str, float] = {}  # Job uid -> simulated second it started
        self._ended: dict[str, float] = {}  # Job uid -> simulated second it finished
        self._failures: dict[str, tuple[int, float]] = {}  # Job uid -> (failures since a success, last failure)

    def changed(self, kind: str, key: NsKey, obj: dict, deleted: bool) -> None:
        """Follow Jobs and their pods; a new ServiceAccount queues the Jobs whose pods run as it."""
        if kind == "ServiceAccount":
            self._queue.update(dict.fromkeys([] if deleted else users_of_account(self.objects, obj)))
        else:
            super().changed(kind, key, obj, deleted)

    def _owned_changed(self, key: NsKey, obj: dict, deleted: bool, owner: dict) -> None:
        """Follow the pods Jobs control."""
        pods = self._pods.setdefault(owner.get("uid", ""), {})
        if deleted:
            pods.pop(key, None)
            if TRACKING_FINALIZER in (obj["metadata"].get("finalizers") or ()) and not is_done(obj):
                self._lost[owner.get("uid", "")] = self._lost.get(owner.get("uid", ""), 0) + 1
        else:
            pods[key] = None
        job_key = (key[0], owner["name"])
        if job_key not in self._batched:  # pod changes are batched: one sync a second per Job at most
            self._batched[job_key] = None
            self.host.after(SYNC_BATCH_SECONDS, self.ACTION, job_key, owner.get("uid", ""))

    def fire(self, key: NsKey, uid: str) -> None:
        """A timer of Job ``key`` is due (its pods' batched changes, its deadline, a back-off, its time to live)."""
        self._batched.pop(key, None)
        super().fire(key, uid)

    def pods_of(self, job: dict) -> list[dict]:
        """The pods ``job`` controls, in the order it created them."""
        keys = self._pods.get(job["metadata"].get("uid", ""), {})
        return [self.host.pods[k] for k in keys if k in self.host.pods]

    def _sync(self, key: NsKey) -> None:
        job, gone = self._take(key)
        if gone is not None:
            self._collect(gone)
        if job is None:
            return
        defaulted = with_creation_defaults(job)
        if defaulted is not None:
            job = self.host.update(defaulted)
            self.objects[key] = job
        uid = job["metadata"]["uid"]
        if is_finished(job):
            self._expire(key, job)
            return
        draft = copy_tree(job)
        status = draft.setdefault("status", {})
        finish = self._count(draft, uid)
        spec = draft["spec"]
        if spec.get("suspend"):
            self._delete(draft, [p for p in self.pods_of(draft) if not is_done(p)])
        elif not status.get("startTime"):
            status["startTime"] = self.host.timestamp()
            self._started[uid] = self.host.now
            if spec.get("activeDeadlineSeconds") is not None:
                self.host.after(float(spec["activeDeadlineSeconds"]), self.ACTION, key, uid)
        active = [p for p in self.pods_of(draft) if not is_done(p)]
        finish = finish or self._failure(draft, active) or self._success(draft, active)
        if finish is not None:
            self._delete(draft, active)
            active = []
            self._finish(draft, *finish)
        elif not spec.get("suspend"):
            active = self._manage(draft, active)
        self._write(job, draft, active)
        if finish is not None:
            self._expire(key, self.objects[key])

    def _count(self, job: dict, uid: str) -> tuple[str, str, str] | None:
        """Count the pods that ended since the last sync (their finalizer removed); a FailJob rule's failure."""
        status = job["status"]
        indexed = job["spec"].get("completionMode") == "Indexed"
        completed = parse_indexes(status.get("completedIndexes", ""))
        failure = None
        failed = self._lost.pop(uid, 0)
        succeeded = 0
        for pod in self.pods_of(job):
            if not is_done(pod) or TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or ()):
                continue
            if pod["status"]["phase"] == "Succeeded":
                index = completion_index(pod)
                if not indexed:
                    succeeded += 1
                elif index is not None and index < (job["spec"].get("completions") or 0):
                    completed.add(index)
                self._failures.pop(uid, None)
            else:
                rule = matching_failure_rule(job, pod)
                if rule is not None and rule[0] == "FailJob" and failure is None:
                    failure = ("PodFailurePolicy", "PodFailurePolicy", rule[1])
                if rule is None or rule[0] != "Ignore":
                    failed += 1
                    count, _ = self._failures.get(uid, (0, 0.0))
                    self._failures[uid] = (count + 1, self.host.now)
            untracked = copy_tree(pod)
            untracked["metadata"]["finalizers"] = [f for f in pod["metadata"]["finalizers"] if f != TRACKING_FINALIZER]
            if not untracked["metadata"]["finalizers"]:
                del untracked["metadata"]["finalizers"]
            self.host.update(untracked)
        if indexed:
            status["completedIndexes"] = format_indexes(completed)
            succeeded = len(completed) - status.get("succeeded", 0)
        for name, count in (("succeeded", succeeded), ("failed", failed)):
            if count:
                status[name] = status.get(name, 0) + count
        return failure

    def _failure(self, job: dict, active: list[dict]) -> tuple[str, str, str] | None:
        spec, status = job["spec"], job["status"]
        limit = spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT)
        if status.get("failed", 0) > limit or self._restarts_past_limit(spec, active, limit):
            return ("BackoffLimitExceeded", *BACKOFF_LIMIT_EXCEEDED)
        deadline = spec.get("activeDeadlineSeconds")
        started = self._started.get(job["metadata"]["uid"])
        if deadline is not None and started is not None and self.host.now - started >= deadline:
            return ("DeadlineExceeded", *DEADLINE_EXCEEDED)
        return None

    @staticmethod
    def _restarts_past_limit(spec: dict, active: list[dict], limit: int) -> bool:
        """Under restartPolicy OnFailure, the active pods' container restarts count against the limit."""
        if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
            return False
        restarts = sum(s.get("restartCount", 0) for p in active
                       for s in [*(p["status"].get("initContainerStatuses") or ()),
                                 *(p["status"].get("containerStatuses") or ())])
        return restarts > 0 if limit == 0 else restarts >= limit

    @staticmethod
    def _success(job: dict, active: list[dict]) -> tuple[str, str, str] | None:
        completions = job["spec"].get("completions")
        succeeded = job["status"].get("succeeded", 0)
        if completions is None:
            done = succeeded > 0 and not active
        else:
            done = succeeded >= completions
        return ("Completed", *COMPLETIONS_REACHED) if done else None

    def _finish(self, job: dict, event_reason: str, reason: str, message: str) -> None:
        status, when = job["status"], self.host.timestamp()
        conditions = status.setdefault("conditions", [])
        if event_reason == "Completed":
            conditions += [_condition("SuccessCriteriaMet", reason, message, when),
                           _condition("Complete", reason, message, when)]
            status["completionTime"] = when
            self.host.events.record(job, type_="Normal", reason="Completed", message="Job completed",
                                    component=COMPONENT, core_v1=True)
        else:
            conditions += [_condition("FailureTarget", reason, message, when), _condition("Failed", reason, message, when)]
            self.host.events.record(job, type_="Warning", reason=event_reason, message=message, component=COMPONENT,
                                    core_v1=True)
        self._ended[job["metadata"]["uid"]] = self.host.now

    def _manage(self, job: dict, active: list[dict]) -> list[dict]:
        """Create or delete pods so that as many are active as the Job wants; the active pods after."""
        spec, status = job["spec"], job["status"]
        uid = job["metadata"]["uid"]
        completions, parallelism = spec.get("completions"), spec.get("parallelism", 1)
        if completions is None:
            want = len(active) if status.get("succeeded") else parallelism
        else:
            want = max(0, min(parallelism, completions - status.get("succeeded", 0)))
        if len(active) > want:
            extra = sorted(active, key=lambda p: (p["status"].get("phase") == "Running", is_ready(p)))[: len(active) - want]
            self._delete(job, extra)
            return [p for p in active if p not in extra]
        missing = want - len(active)
        if missing <= 0:
            return active
        failures, last = self._failures.get(uid, (0, 0.0))
        wait = min(POD_BACKOFF_SECONDS * 2 ** (failures - 1), MAX_POD_BACKOFF_SECONDS) if failures else 0.0
        if self.host.now < last + wait:
            self.host.after(last + wait - self.host.now, self.ACTION, (job["metadata"]["namespace"],
                                                                       job["metadata"]["name"]), uid)
            return active
        indexes: list[int | None] = [None] * missing
        if spec.get("completionMode") == "Indexed":
            taken = parse_indexes(status.get("completedIndexes", "")) | {completion_index(p) for p in active}
            indexes = [i for i in range(completions or 0) if i not in taken][:missing]
        for index in indexes:
            serial = self._created.get(uid, 0)
            self._created[uid] = serial + 1
            try:
                pod = self.host.create(pod_for(job, serial, index))
            except ClusterError as exc:
                record_failed_create(self.host.events, job, f"Error creating: {exc}", COMPONENT)
                break
            active.append(pod)
            self.host.events.record(job, type_="Normal", reason="SuccessfulCreate",
                                    message=f"Created pod: {pod['metadata']['name']}", component=COMPONENT,
                                    core_v1=True)
        return active

    def _delete(self, job: dict, pods: list[dict]) -> None:
        for pod in pods:
            self.host.remove("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.host.events.record(job, type_="Normal", reason="SuccessfulDelete",
                                    message=f"Deleted pod: {pod['metadata']['name']}", component=COMPONENT,
                                    core_v1=True)
        uid = job["metadata"]["uid"]
        if pods and not is_finished(job):
            job["status"]["failed"] = job["status"].get("failed", 0) + self._lost.pop(uid, 0)

    def _write(self, job: dict, draft: dict, active: list[dict]) -> None:
        status = draft["status"]
        ordered = {k: status[k] for k in ("conditions", "startTime", "completionTime") if k in status}
        if active:
            ordered["active"] = len(active)
        for name in ("succeeded", "failed"):
            if status.get(name):
                ordered[name] = status[name]
        ordered["terminating"] = 0
        if draft["spec"].get("completionMode") == "Indexed":
            ordered["completedIndexes"] = status.get("completedIndexes", "")
        ordered["uncountedTerminatedPods"] = {}
        ordered["ready"] = sum(1 for p in active if is_ready(p))
        if ordered != job.get("status"):
            draft["status"] = ordered
            self.objects[(draft["metadata"]["namespace"], draft["metadata"]["name"])] = self.host.update(draft)

    def _expire(self, key: NsKey, job: dict) -> None:
        """The ttl-after-finished controller: delete a finished Job once its time to live is over."""
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        uid = job["metadata"]["uid"]
        if ttl is None:
            return
        due = self._ended.setdefault(uid, self.host.now) + ttl
        if self.host.now >= due:
            self.host.remove("Job", key[0], key[1])
        else:
            self.host.after(due - self.host.now, self.ACTION, key, uid)

    def _collect(self, uid: str) -> None:
        """The garbage collector: a deleted Job's pods go with it."""
        for key in list(self._pods.pop(uid, {})):
            if key in self.host.pods:
                self.host.remove("Pod", *key)
        for state in (self._lost, self._created, self._started, self._ended, self._failures):
            state.pop(uid, None)
