"""Run a check pod through the Cluster protocol: apply, follow its stages, stream its log, judge, clean up.

One loop in the caller's thread polls the pod, its claim and its events (and the log once a
container started) every ``interval`` seconds, reporting each new stage and each new log line
through ``progress`` as it appears. Nothing here blocks on a stream, so a timeout or a
KeyboardInterrupt always reaches the ``finally`` that deletes what the check created (unless
``keep``). On the simulated cluster the loop waits in the cluster's own time (``cluster.sleep``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from drawb.check.manifests import RUN_LABEL, CheckObjects
from drawb.check.verdict import (
    FAILED,
    TIMEOUT,
    ContainerResult,
    Expected,
    Stage,
    Verdict,
    decide,
    expected_device,
    judge_container,
)
from drawb.cluster.protocol import Cluster, ClusterError, is_managed

DRIVER = "gpu.nvidia.com"
IMAGE_PULL = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
Progress = Callable[[str], None]
"""Where a check reports: each line of text as it happens. An object that also has ``stage(Stage)`` and
``log(container, line)`` methods gets stages and log lines through those instead (the notebook's check runner)."""


class CheckRun:
    """The state of one check while it runs."""

    def __init__(self, cluster: Cluster, objects: CheckObjects, *, payload: str, timeout: float,
                 progress: Progress | None = None, why_hint: str | None = None, interval: float = 0.1):
        self.cluster, self.objects, self.payload = cluster, objects, payload
        self.timeout, self.interval, self.why_hint = timeout, interval, why_hint
        self.progress = progress or (lambda line: None)
        self._on_stage = getattr(progress, "stage", None)
        self._on_log = getattr(progress, "log", None)
        self._sleep = getattr(cluster, "sleep", time.sleep)
        clock = getattr(getattr(cluster, "lifecycle", None), "clock", None)
        self._now = clock.now if clock is not None else time.monotonic
        self.started = self._now()
        self.stages: list[Stage] = []
        self._said: set[str] = set()
        self.claim_name = objects.claim_name
        self.node: str | None = None
        self.expected: list[Expected] = []
        self.lines: dict[str, list[str]] = {}
        self.pending_message = ""
        self.waiting_reason = ""
        self._events_seen: set[str] = set()
        self._events_at = -1.0
        self._events_version: str | None = None
        self._allocated_claims: dict[str, dict] = {}  # claim name -> the claim as last seen allocated

    def on_claim(self, event_type: str, claim: dict) -> None:
        """Watch handler: remember this run's claim while it is allocated.

        A short check pod can end, and its generated claim be released and deleted, between two
        polls (a loaded machine, a fast node); the watch still saw the allocation.
        """
        meta = claim.get("metadata") or {}
        owners = {ref.get("name") for ref in meta.get("ownerReferences") or () if ref.get("kind") == "Pod"}
        ours = meta.get("name") == self.claim_name or self.objects.pod_name in owners
        if ours and meta.get("namespace") == self.objects.namespace and (claim.get("status") or {}).get("allocation"):
            self._allocated_claims[meta["name"]] = claim

    # --- reporting ------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds since the check started (in the cluster's time)."""
        return self._now() - self.started

    def stage(self, stage: str, message: str, *, once: str | None = None) -> None:
        """Record and report a stage, once per ``once`` key (default: the message)."""
        key = once or f"{stage}:{message}"
        if key in self._said:
            return
        self._said.add(key)
        entry = Stage(round(self.elapsed(), 2), stage, message)
        self.stages.append(entry)
        if self._on_stage is not None:
            self._on_stage(entry)
        else:
            self.progress(str(entry))

    def log(self, container: str, line: str, *, several: bool) -> None:
        """Report one new log line of ``container`` (prefixed by its name when the pod has ``several``)."""
        if self._on_log is not None:
            self._on_log(container, line)
        else:
            self.progress(f"{container} | {line}" if several else f"  | {line}")

    # --- one poll -------------------------------------------------------------------------------

    def _pod(self) -> dict | None:
        return self.cluster.get("Pod", self.objects.pod_name, self.objects.namespace)

    def _claim(self, pod: dict) -> dict | None:
        if self.claim_name is None:
            statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
            name = next((s.get("resourceClaimName") for s in statuses if s.get("resourceClaimName")), None)
            if name is None:
                return None
            self.claim_name = name
            self.stage("claim", f"ResourceClaim {name} created from the template")
        claim = self.cluster.get("ResourceClaim", self.claim_name, self.objects.namespace)
        if claim is None or not (claim.get("status") or {}).get("allocation"):
            return self._allocated_claims.get(self.claim_name, claim)
        return claim

    def _read_allocation(self, claim: dict, pod: dict) -> None:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            return
        if not self.expected:
            self.expected, self.node, labels = allocated_devices(self.cluster, allocation)
            self.stage("allocated", f"{', '.join(labels)} on node {self.node or '?'}")
        reserved = [r.get("name") for r in (claim.get("status") or {}).get("reservedFor") or []]
        if pod["metadata"]["name"] in reserved:
            self.stage("reserved", f"claim {self.claim_name} reserved for pod {pod['metadata']['name']}")

    def _read_scheduling(self, pod: dict) -> None:
        status = pod.get("status") or {}
        scheduled = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        if pod.get("spec", {}).get("nodeName"):
            self.node = self.node or pod["spec"]["nodeName"]
            self.stage("scheduled", f"pod bound to node {pod['spec']['nodeName']}")
        elif scheduled and scheduled.get("status") == "False" and scheduled.get("message"):
            self.pending_message = scheduled["message"]
            hint = f" (see `{self.why_hint}`)" if self.why_hint else ""
            self.stage("pending", f"{scheduled.get('reason', 'Unschedulable')}: {scheduled['message']}{hint}",
                       once=f"pending:{scheduled['message']}")

    def _read_containers(self, pod: dict) -> None:
        for c in (pod.get("status") or {}).get("containerStatuses") or []:
            state = c.get("state") or {}
            waiting = state.get("waiting")
            if waiting and waiting.get("reason"):
                self.waiting_reason = waiting["reason"]
                message = waiting.get("message", "")
                self.stage("waiting", f"{c['name']}: {waiting['reason']}" + (f": {message}" if message else ""))
            elif "running" in state or "terminated" in state:  # one that already ended did run
                self.stage("running", f"container {c['name']} running")

    def _read_exits(self, pod: dict) -> None:
        for c in (pod.get("status") or {}).get("containerStatuses") or []:
            terminated = (c.get("state") or {}).get("terminated")
            if terminated is not None:
                self.stage("exited", f"container {c['name']} exited with code {terminated.get('exitCode')}")

    def _read_events(self, pod: dict) -> None:
        """Scheduler and kubelet events about the pod (FailedScheduling, Pulling, Failed, ...), once a second
        and whenever the pod changed (a kubelet's events come before the pod's status they lead to)."""
        version = pod["metadata"].get("resourceVersion")
        if self.elapsed() - self._events_at < 1.0 and version == self._events_version:
            return
        self._events_at, self._events_version = self.elapsed(), version
        uid = pod["metadata"].get("uid")
        try:
            events = self.cluster.list("Event", self.objects.namespace)
        except ClusterError:
            return
        for event in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
            involved = event.get("involvedObject") or {}
            if involved.get("name") != pod["metadata"]["name"] or (uid and involved.get("uid") not in (uid, None)):
                continue
            key = f"{event['metadata'].get('name')}:{event.get('count', 1)}"
            if key in self._events_seen or event.get("reason") in ("Scheduled",):
                continue
            self._events_seen.add(key)
            if event.get("reason") == "FailedScheduling":
                self.pending_message = self.pending_message or event.get("message", "")
                continue  # reported from the pod's PodScheduled condition, which holds the whole message
            self.stage("event", f"{event.get('type', 'Normal')} {event.get('reason')}: {event.get('message', '')}")

    def _read_logs(self, pod: dict) -> None:
        for c in (pod.get("status") or {}).get("containerStatuses") or []:
            state = c.get("state") or {}
            if "running" not in state and "terminated" not in state:
                continue
            try:
                lines = list(self.cluster.logs(pod["metadata"]["name"], self.objects.namespace, container=c["name"]))
            except ClusterError:
                continue  # not served yet
            seen = self.lines.setdefault(c["name"], [])
            multi = len(pod["spec"]["containers"]) > 1
            for line in lines[len(seen):]:
                self.log(c["name"], line, several=multi)
            seen[:] = lines

    def poll(self) -> Verdict | None:
        """Read everything once; the verdict when every container ended, else None."""
        pod = self._pod()
        if pod is None:
            return self.verdict(FAILED, "the pod was deleted while the check ran (by someone else?)")
        claim = self._claim(pod)
        if claim is not None:
            self._read_allocation(claim, pod)
        self._read_scheduling(pod)
        self._read_events(pod)
        self._read_containers(pod)
        self._read_logs(pod)
        self._read_exits(pod)
        return self._ended(pod)

    def _ended(self, pod: dict) -> Verdict | None:
        statuses = {c["name"]: c for c in (pod.get("status") or {}).get("containerStatuses") or []}
        names = [c["name"] for c in pod["spec"]["containers"]]
        codes = {}
        for name in names:
            terminated = ((statuses.get(name) or {}).get("state") or {}).get("terminated")
            if terminated is None:
                return None
            codes[name] = terminated.get("exitCode")
        results = []
        for name in names:  # the whole log once more: lines written just before the end
            lines = list(self.cluster.logs(pod["metadata"]["name"], self.objects.namespace, container=name))
            for line in lines[len(self.lines.get(name, [])):]:
                self.log(name, line, several=len(names) > 1)
            self.lines[name] = lines
            results.append(judge_container(name, codes[name], lines, self.expected, self.payload))
        status, reason = decide(results)
        return self.verdict(status, reason, results)

    def timed_out(self) -> Verdict:
        """TIMEOUT, with the cause: never scheduled (and why), image pull, no log, or still running."""
        waited = f"after {self.timeout:g} s"
        if self.node is None or not any(s.stage == "scheduled" for s in self.stages):
            why = self.pending_message or "the scheduler reported no reason"
            reason = f"never scheduled {waited}: {why}"
            if self.claim_name is None and self.objects.claim_template is not None:
                reason = f"never scheduled {waited}: the claim was not created from its template"
        elif self.waiting_reason in IMAGE_PULL:
            reason = f"image pull {waited}: {self.waiting_reason}"
        elif not any(self.lines.values()):
            reason = f"no log {waited}" + (f" (container waiting: {self.waiting_reason})" if self.waiting_reason else "")
        else:
            reason = f"container still running {waited}; its output so far is in the verdict"
        results = [ContainerResult(name, None, tuple(lines)) for name, lines in self.lines.items()]
        return self.verdict(TIMEOUT, reason, results)

    def verdict(self, status: str, reason: str, containers: list[ContainerResult] | None = None) -> Verdict:
        """A verdict with what this run observed."""
        self.stage("verdict", f"{status}: {reason}")
        return Verdict(status=status, reason=reason, run_id=self.objects.run_id, namespace=self.objects.namespace,
                       pod=self.objects.pod_name, claim=self.claim_name, node=self.node, payload=self.payload,
                       expected=list(self.expected), containers=list(containers or []), stages=list(self.stages),
                       seconds=self.elapsed(), cluster=getattr(self.cluster, "description", ""))


def allocated_devices(cluster: Cluster, allocation: dict) -> tuple[list[Expected], str | None, list[str]]:
    """The NVIDIA devices of an allocation (from the newest generation of their pools), their node, and labels."""
    results = [r for r in (allocation.get("devices") or {}).get("results") or []]
    pools = {r["pool"] for r in results if r.get("driver") == DRIVER}
    slices = [s for s in cluster.list("ResourceSlice")
              if s["spec"].get("driver") == DRIVER and s["spec"]["pool"]["name"] in pools]
    newest = {}
    for s in slices:
        pool = s["spec"]["pool"]
        newest[pool["name"]] = max(newest.get(pool["name"], 0), pool.get("generation", 0))
    devices, nodes = {}, {}
    for s in slices:
        pool = s["spec"]["pool"]
        if pool.get("generation", 0) == newest[pool["name"]]:
            for d in s["spec"].get("devices") or []:
                devices[(pool["name"], d["name"])] = d
                nodes[pool["name"]] = s["spec"].get("nodeName")
    expected, labels, node = [], [], None
    for r in results:
        if r.get("driver") != DRIVER:
            labels.append(f"{r.get('driver')}/{r.get('device')} (not compared: not an NVIDIA GPU)")
            continue
        device = devices.get((r["pool"], r["device"]))
        node = node or nodes.get(r["pool"])
        if device is None:
            labels.append(f"{r['device']} (pool {r['pool']}: not in any current ResourceSlice)")
            continue
        e = expected_device(r["pool"], device)
        expected.append(e)
        labels.append(f"{r['request']} -> {e.label}")
    return expected, node, labels


def cleanup(cluster: Cluster, objects: CheckObjects) -> list[str]:
    """Delete the check's pod and claim template (labelled by this run only); what was deleted."""
    deleted = []
    for doc in reversed(objects.documents):
        kind, name = doc["kind"], doc["metadata"]["name"]
        try:
            current = cluster.get(kind, name, objects.namespace)
        except ClusterError:
            current = None
        if current is None:
            continue
        labels = (current.get("metadata") or {}).get("labels") or {}
        if not is_managed(current) or labels.get(RUN_LABEL) != objects.run_id:
            continue  # never touch what this run did not create
        try:
            cluster.delete(kind, name, objects.namespace)
            deleted.append(f"{kind}/{name}")
        except ClusterError as exc:
            if exc.status != 404:
                raise
    return deleted


def run_check(cluster: Cluster, objects: CheckObjects, *, payload: str, timeout: float = 120, keep: bool = False,
              progress: Progress | None = None, why_hint: str | None = None, interval: float = 0.1) -> Verdict:
    """Apply the check's objects, follow them to a verdict within ``timeout`` seconds, then clean up."""
    run = CheckRun(cluster, objects, payload=payload, timeout=timeout, progress=progress, why_hint=why_hint,
                   interval=interval)
    verdict = None
    claims = None
    try:
        claims = cluster.watch("ResourceClaim") if hasattr(cluster, "watch") else None
        if claims is not None:
            claims.subscribe(run.on_claim)
    except ClusterError:  # e.g. RBAC allows claims in this namespace only: polling alone still works
        claims = None
    try:
        run.stage("start", f"checking {objects.source} in namespace {objects.namespace} (run {objects.run_id})")
        cluster.apply(objects.documents)
        run.stage("applied", ", ".join(f"{d['kind']}/{d['metadata']['name']}" for d in objects.documents))
        while verdict is None:
            verdict = run.poll()
            if verdict is None:
                if run.elapsed() > timeout:
                    verdict = run.timed_out()
                else:
                    run._sleep(interval)
        return verdict
    finally:
        if claims is not None:
            claims.unsubscribe(run.on_claim)
        if keep:
            if verdict is not None:
                verdict.kept = True
                run.progress(f"kept: objects labelled {RUN_LABEL}={objects.run_id}")
        else:
            _clean_up(run, verdict, unwinding=sys.exc_info()[1] is not None)


def _clean_up(run: CheckRun, verdict: Verdict | None, unwinding: bool) -> None:
    """Delete the run's objects; while another error unwinds, a failing cleanup is reported, not raised."""
    try:
        deleted = cleanup(run.cluster, run.objects)
    except ClusterError as exc:
        if not unwinding:
            raise
        run.progress(f"cleanup failed: {exc}; delete the objects labelled {RUN_LABEL}={run.objects.run_id}")
        return
    if verdict is not None:
        verdict.cleaned_up = deleted
    if deleted:
        run.progress(f"cleaned up {', '.join(deleted)}")
