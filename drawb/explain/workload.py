"""``why deploy/NAME``, ``why job/NAME`` (and ReplicaSets, StatefulSets, DaemonSets, CronJobs): a workload
through its pods.

The workload is resolved to its pods through controller owner references (a Deployment through its
ReplicaSets, a CronJob through its Jobs). The answer says how many pods exist against how many the
workload wants, groups the pods alike (same phase, same scheduler message, same waiting reason) and,
for each group of Pending pods, gives the pod explanation of ``drawb.explain.pod`` for one of them with
how many share it; pods that ran say where and how they ended. A workload without pods says what its
controller waits for (suspended, scaled to zero, a back-off, a schedule, the controller's last
``FailedCreate``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import UTC, datetime

from drawb.alloc.view import PlanState
from drawb.api import cron
from drawb.explain.pod import explain
from drawb.explain.result import Answer, Explanation, section_html, section_lines
from drawb.explain.objects import meta, name_of, namespace_of
from drawb.plan.errors import NoClaims, ObjectNotFound

# The kind a workload's pods come through (a Deployment's ReplicaSets, a CronJob's Jobs), if not directly.
INTERMEDIATE = {"Deployment": "ReplicaSet", "CronJob": "Job"}
_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_SHOWN = 5  # pod names listed per group


@dataclass
class PodGroup:
    """Pods of the workload that are alike: one phase, one reason."""

    phase: str
    reason: str  # the scheduler's message, a container's waiting reason, how they ended; "" if none
    pods: list[str]
    nodes: list[str] = field(default_factory=list)
    explanation: Explanation | None = None  # Pending pods: the explanation of the first of them
    note: str = ""  # why no explanation is given


@dataclass
class WorkloadExplanation(Answer):
    """Why a workload has the pods it has."""

    SIMULATED = "simulated cluster: the controllers and the scheduler here are drawb's simulation"

    target: str  # "job ns/name"
    state: str
    summary: str
    desired: int | None = None  # pods (completions for a Job) it wants; None where it does not say
    counts: dict[str, int] = field(default_factory=dict)  # phase -> pods
    through: list[str] = field(default_factory=list)  # "ReplicaSet ns/name" the pods come through
    groups: list[PodGroup] = field(default_factory=list)
    waiting_for: str = ""  # without pods: what the controller waits for
    events: list[str] = field(default_factory=list)  # the workload's controller's warnings, latest last
    notes: list[str] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)
    kubernetes_version: str = ""
    feature_gates: dict[str, bool] = field(default_factory=dict)
    simulated: bool = False

    def __str__(self) -> str:
        lines = self._opening()
        if self.through:
            lines.append("pods through: " + ", ".join(self.through))
        if self.waiting_for:
            lines.append(f"waiting for: {self.waiting_for}")
        for group in self.groups:
            lines.append(f"\n{_group_title(group)}")
            if group.reason:
                lines.append(f"  {group.reason}")
            if group.note:
                lines.append(f"  {group.note}")
            if group.explanation is not None:
                lines += ["  " + line for line in str(group.explanation).splitlines()]
        lines += section_lines([("events", self.events), ("notes", self.notes)])
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        parts = self._opening_html()
        if self.waiting_for:
            parts.append(f"<p>waiting for: {e(self.waiting_for)}</p>")
        for group in self.groups:
            parts.append(f"<p><b>{e(_group_title(group))}</b>" + (f"<br><code>{e(group.reason)}</code>" if group.reason else "")
                         + (f"<br>{e(group.note)}" if group.note else "") + "</p>")
            if group.explanation is not None:
                parts.append(f"<blockquote>{group.explanation._repr_html_()}</blockquote>")
        parts += section_html([("events", self.events), ("notes", self.notes)])
        return "".join(parts) + "</div>"


def _group_title(group: PodGroup) -> str:
    shown = ", ".join(group.pods[:_SHOWN]) + (f" and {len(group.pods) - _SHOWN} more" if len(group.pods) > _SHOWN else "")
    where = f" on {', '.join(sorted(set(group.nodes)))}" if group.nodes else ""
    return f"{len(group.pods)} {group.phase}{where}: {shown}"


def _controlled_by(objects: list[dict], owner: dict) -> list[dict]:
    uid = meta(owner).get("uid")
    return [o for o in objects
            if any(r.get("controller") and r.get("uid") == uid for r in meta(o).get("ownerReferences") or ())]


def explain_workload(state: PlanState, workload: dict, intermediates: list[dict], now: datetime | None = None
                     ) -> WorkloadExplanation:
    """Why ``workload`` has the pods it has; ``intermediates``: the namespace's ReplicaSets (a Deployment) or Jobs
    (a CronJob) the pods may come through; ``now``: for a CronJob's next time (default: the wall clock)."""
    kind = workload["kind"]
    namespace, name = namespace_of(workload), name_of(workload)
    chain = _controlled_by(intermediates, workload) if kind in INTERMEDIATE else [workload]
    pods = [p for owner in chain for p in _controlled_by(state.pods, owner)]
    out = WorkloadExplanation(target=f"{kind.lower()} {namespace}/{name}", state="", summary="",
                              simulated=state.simulated)
    out.cited = [f"{kind} {namespace}/{name}", *(f"{o['kind']} {namespace}/{name_of(o)}" for o in chain if o is not workload)]
    if kind in INTERMEDIATE:
        out.through = [f"{INTERMEDIATE[kind]} {namespace}/{name_of(o)}" for o in chain]
    for phase in _PHASES:
        count = sum(1 for p in pods if _phase(p) == phase)
        if count:
            out.counts[phase] = count
    out.groups = _groups(state, pods)
    first = next((g.explanation for g in out.groups if g.explanation is not None), None)
    if first is not None:
        out.kubernetes_version, out.feature_gates = first.kubernetes_version, first.feature_gates
    out.events = [f"{e.get('reason', '')}: {e.get('message', '')}" for e in _events(state, [workload, *chain])
                  if e.get("type") == "Warning"][-5:]
    templates = sorted({e["resourceClaimTemplateName"] for p in pods if _phase(p) == "Pending"
                        for e in (p.get("spec") or {}).get("resourceClaims") or () if e.get("resourceClaimTemplateName")})
    if templates:
        out.notes.append(f"the pending pods' claims are made from ResourceClaimTemplate(s) {', '.join(templates)}: a "
                         "change to a claim goes there, and only pods created after it get claims from the new version")
    describe = {"Job": _job, "CronJob": _cronjob}.get(kind, _replicated)
    describe(out, workload, chain, pods, now or datetime.now(UTC))
    return out


def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _events(state: PlanState, objects: list[dict]) -> list[dict]:
    uids = {meta(o).get("uid") for o in objects}
    names = {(o["kind"], name_of(o)) for o in objects}
    return [e for e in state.events if (e.get("involvedObject") or {}).get("uid") in uids
            or ((e.get("involvedObject") or {}).get("kind"), (e.get("involvedObject") or {}).get("name")) in names]


def _reason(pod: dict) -> str:
    """What sets ``pod`` apart from its siblings in the same phase."""
    status = pod.get("status") or {}
    phase = _phase(pod)
    if phase == "Pending":
        scheduled = next((c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None)
        if scheduled and scheduled.get("status") == "False":
            return f"scheduler: {scheduled.get('message') or scheduled.get('reason', '')}"
        waiting = [(s.get("state") or {}).get("waiting", {}).get("reason") for s in status.get("containerStatuses") or ()]
        waiting = [w for w in waiting if w]
        return f"containers waiting: {', '.join(sorted(set(waiting)))}" if waiting else ""
    ended = [(s.get("name"), (s.get("state") or {}).get("terminated")) for s in status.get("containerStatuses") or ()]
    codes = [f"{n} exited {t.get('exitCode')}" + (f" ({t['reason']})" if t.get("reason") else "") for n, t in ended if t]
    if phase in ("Succeeded", "Failed"):
        return (status.get("reason", "") + ": " if status.get("reason") else "") + "; ".join(codes)
    waiting = [(s.get("state") or {}).get("waiting", {}).get("reason") for s in status.get("containerStatuses") or ()]
    return f"containers waiting: {', '.join(sorted({w for w in waiting if w}))}" if any(waiting) else ""


def _groups(state: PlanState, pods: list[dict]) -> list[PodGroup]:
    groups: dict[tuple[str, str], PodGroup] = {}
    order = {p: i for i, p in enumerate(_PHASES)}
    for pod in sorted(pods, key=lambda p: (order.get(_phase(p), 9), name_of(p))):
        key = (_phase(pod), _reason(pod))
        group = groups.get(key)
        if group is None:
            group = groups[key] = PodGroup(phase=key[0], reason=key[1], pods=[])
        group.pods.append(name_of(pod))
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            group.nodes.append(node)
    for group in groups.values():
        if group.phase != "Pending":
            continue
        try:
            group.explanation = explain(state, "Pod", namespace_of(pods[0]), group.pods[0])
        except NoClaims:
            group.note = "no ResourceClaim and no extended resource: DRA plays no part in where these pods run"
        except ObjectNotFound:
            group.note = "the pod went away while it was read"
        if group.explanation is not None and len(group.pods) > 1:
            group.note = f"the explanation of {group.pods[0]}, which the other {len(group.pods) - 1} share"
    return list(groups.values())


def _count_text(out: WorkloadExplanation) -> str:
    return ", ".join(f"{n} {phase}" for phase, n in out.counts.items()) or "no pod"


def _pending_state(out: WorkloadExplanation) -> str | None:
    return "pods-pending" if out.counts.get("Pending") else None


def _failed_create(out: WorkloadExplanation) -> str:
    created = [e for e in out.events if e.startswith("FailedCreate")]
    return f"the controller could not create pods: {created[-1]}" if created else ""


def _job(out: WorkloadExplanation, job: dict, chain: list[dict], pods: list[dict], now: datetime) -> None:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    completions, parallelism = spec.get("completions"), spec.get("parallelism", 1)
    out.desired = completions
    ended = next((c for c in status.get("conditions") or () if c.get("type") in ("Complete", "Failed")
                  and c.get("status") == "True"), None)
    wants = (f"{completions} completion(s), {parallelism} at a time" if completions is not None
             else f"a work queue of {parallelism} pod(s) at a time")
    done = (f"{status.get('succeeded', 0)} succeeded, {status.get('failed', 0)} failed (backoffLimit "
            f"{spec.get('backoffLimit', 6)}), {status.get('active', 0)} active")
    out.summary = f"Job {name_of(job)} wants {wants}: {done}; pods now: {_count_text(out)}."
    if ended is not None:
        out.state = "complete" if ended["type"] == "Complete" else "failed"
        out.summary += f" It {'completed' if ended['type'] == 'Complete' else 'failed'}"
        out.summary += f": {ended.get('reason', '')}, {ended.get('message', '')}".rstrip(", ") + "."
        return
    if spec.get("suspend"):
        out.state = "suspended"
        out.waiting_for = "spec.suspend to become false: the job controller keeps no pod of a suspended Job"
        return
    out.state = _pending_state(out) or ("running" if out.counts.get("Running") else "no-pods" if not pods else "starting")
    if not [p for p in pods if _phase(p) in ("Pending", "Running")]:
        if status.get("failed") and not status.get("active"):
            out.waiting_for = ("the pod failure back-off: after a failure the job controller waits 10 s, doubling per "
                               "failure since the last success (at most 10 min), before it creates the next pod")
        else:
            out.waiting_for = _failed_create(out) or "the job controller to create the pods (none created yet)"


def _replicated(out: WorkloadExplanation, workload: dict, chain: list[dict], pods: list[dict], now: datetime) -> None:
    kind, spec, status = workload["kind"], workload.get("spec") or {}, workload.get("status") or {}
    if kind == "DaemonSet":
        out.desired = status.get("desiredNumberScheduled")
        wants = (f"one pod on each of {out.desired} node(s)" if out.desired is not None
                 else "one pod on each node it selects (its status does not say how many yet)")
    else:
        out.desired = spec.get("replicas", 1)
        wants = f"{out.desired} replica(s)"
    out.summary = f"{kind} {name_of(workload)} wants {wants}; pods now: {_count_text(out)}."
    running = out.counts.get("Running", 0)
    out.state = _pending_state(out) or ("no-pods" if not pods and out.desired != 0 else
                                        "running" if out.desired is not None and running >= out.desired else "progressing")
    if pods or out.desired == 0:
        if out.desired == 0:
            out.waiting_for = "nothing: it is scaled to 0 replicas"
        elif kind == "StatefulSet" and spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady" and \
                out.desired is not None and len(pods) < out.desired:
            out.waiting_for = (f"pod {name_of(workload)}-{len(pods) - 1} to be Running and Ready: under podManagementPolicy "
                               "OrderedReady the StatefulSet controller creates the next pod only then")
        return
    if kind == "Deployment" and not chain:
        out.waiting_for = _failed_create(out) or "the deployment controller to create a ReplicaSet (none yet)"
    else:
        owner = {"Deployment": "replicaset", "StatefulSet": "statefulset", "DaemonSet": "daemonset"}.get(kind, "replicaset")
        out.waiting_for = _failed_create(out) or f"the {owner} controller to create the pods (none created yet)"


def _cronjob(out: WorkloadExplanation, cronjob: dict, chain: list[dict], pods: list[dict], now: datetime) -> None:
    spec, status = cronjob.get("spec") or {}, cronjob.get("status") or {}
    active = [a.get("name", "") for a in status.get("active") or ()]
    out.summary = (f"CronJob {name_of(cronjob)} runs on schedule {spec.get('schedule', '')!r}"
                   + (f" ({spec['timeZone']})" if spec.get("timeZone") else "")
                   + f": {len(chain)} Job(s) kept, {len(active)} active; last run "
                   + f"{status.get('lastScheduleTime') or 'never'}; pods now: {_count_text(out)}.")
    if spec.get("suspend"):
        out.state = "suspended"
        out.waiting_for = "spec.suspend to become false: the cronjob controller starts no Job meanwhile"
        return
    out.state = _pending_state(out) or ("running" if active else "scheduled")
    if not active:
        out.waiting_for = _next_run(spec, status, cronjob, now)


def _next_run(spec: dict, status: dict, cronjob: dict, now: datetime) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        schedule = cron.parse(spec.get("schedule", ""))
        zone = ZoneInfo(spec["timeZone"]) if spec.get("timeZone") else UTC
    except (cron.ScheduleError, ZoneInfoNotFoundError, ValueError) as err:
        return f"nothing: the cronjob controller cannot read the schedule ({err})"
    later = max(now, _time(status.get("lastScheduleTime") or meta(cronjob).get("creationTimestamp")) or now)
    moment = schedule.next_after(later.astimezone(zone))
    if moment is None:
        return "nothing: the schedule never fires in the next five years"
    return f"the next scheduled time, {moment.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"


def _time(text: str | None) -> datetime | None:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) if text else None
