"""``explain``: why a pod is pending (or a claim unallocated), or why its claims got these devices.

First the states the scheduler is silent about or reports before any allocation (a template's claim
not created yet, a claim missing or being deleted, a DeviceClass missing, a claim reserved by another
pod, a claim allocated while the pod is not yet bound); then the funnel of ``drawb.explain.funnel``
for the claims still to allocate, the first stage that empties, near misses and what would make it fit.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from drawb.alloc import AllocationError
from drawb.api.nodeaffinity import node_exclusion, selector_matches
from drawb.api.resourcefit import ResourceFit, extended_requests
from drawb.alloc.view import PlanState
from drawb.explain import result as r
from drawb.explain.devices import DEVICE_STAGES, Drop
from drawb.explain.legacy import explain_legacy, extended_fit
from drawb.explain.funnel import EXAMPLES, Funnel, compute, drop_count, drops_at
from drawb.explain.ran import NOT_RECORDED, claim_fates, ended_text, has_ended, progress_text, recorded_devices
from drawb.explain.result import Explanation, Remedy, RequestReport, StageCount
from drawb.explain.objects import allocation_of, meta, name_of, namespace_of, results_of
from drawb.plan.errors import NoClaims, ObjectNotFound, OtherNamespace

RESERVED_FOR_MAX = 256
PRE_ENQUEUE = ("nothing: the scheduler holds the pod back in PreEnqueue, which writes no event and no condition "
               "(by design, kubernetes/kubernetes#130668)")
_KIND_WORDS = {"Pod": "pod", "ResourceClaim": "ResourceClaim"}


def explain(state: PlanState, kind: str, namespace: str, name: str) -> Explanation:
    """Why the Pod or ResourceClaim ``namespace/name`` is where it is."""
    if kind == "Pod":
        return explain_pod(state, namespace, name)
    return explain_claim(state, namespace, name)


def find(state: PlanState, kind: str, namespace: str, name: str) -> dict:
    """The object, or ObjectNotFound / OtherNamespace with the close names."""
    found = state.pod(namespace, name) if kind == "Pod" else state.claim(namespace, name)
    if found is not None:
        return found
    return find_among(state.pods if kind == "Pod" else state.claims, kind, namespace, name)


def find_among(objects: list, kind: str, namespace: str, name: str) -> dict:
    """The Pod or ResourceClaim ``namespace/name`` of ``objects``, or ObjectNotFound / OtherNamespace
    with the close names."""
    for obj in objects:
        if name_of(obj) == name and namespace_of(obj) == namespace:
            return obj
    word = _KIND_WORDS[kind]
    elsewhere = sorted(namespace_of(o) for o in objects if name_of(o) == name)
    if elsewhere:
        raise OtherNamespace(f"no {word} '{name}' in namespace '{namespace}'; it is in namespace "
                               f"'{elsewhere[0]}'" + (f" (and {len(elsewhere) - 1} more)" if len(elsewhere) > 1 else ""),
                               hint=f"add `-n {elsewhere[0]}`")
    close = difflib.get_close_matches(name, [name_of(o) for o in objects if namespace_of(o) == namespace], n=3)
    hint = (f"did you mean {', '.join(repr(c) for c in close)}?" if close
            else f"`{{prog}} {'pods' if kind == 'Pod' else 'claims'} -n {namespace}` lists them")
    raise ObjectNotFound(f"no {word} '{name}' in namespace '{namespace}'", kind=kind, hint=hint)


# --- pods ----------------------------------------------------------------------------------------


def explain_pod(state: PlanState, namespace: str, name: str) -> Explanation:
    """Why pod ``namespace/name`` is pending, or which devices its claims got and why."""
    pod = find(state, "Pod", namespace, name)
    entries = (pod.get("spec") or {}).get("resourceClaims") or []
    target = f"pod {namespace}/{name}"
    if not entries:
        wanted = extended_requests(pod)
        if wanted:
            out = _base(state, target)
            out.scheduler = _scheduler_says(state, pod)
            return explain_legacy(state, out, pod, wanted)
        raise NoClaims(f"pod {namespace}/{name} uses no ResourceClaim (spec.resourceClaims is empty): "
                             "DRA plays no part in where it runs",
                             hint="`{prog} events " + name + f" -n {namespace}` shows what the scheduler said")
    out = _base(state, target)
    out.scheduler = _scheduler_says(state, pod)
    if has_ended(pod):
        return _ended(state, out, pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    statuses = {s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    claims = []
    for entry in entries:
        claim_name = entry.get("resourceClaimName")
        template = entry.get("resourceClaimTemplateName")
        if not claim_name and template:
            if entry.get("name") in statuses and statuses[entry.get("name")] is None:
                continue  # the controller decided no claim is needed
            claim_name = statuses.get(entry.get("name"))
            if not claim_name:
                return _not_created(state, out, pod, entry, template)
        if not claim_name:
            return _done(out, r.INVALID, f"pod entry {entry.get('name')!r} names neither a claim nor a template")
        claim = state.claim(namespace, claim_name)
        if claim is None and node_name:
            out.cited.append(f"ResourceClaim {namespace}/{claim_name}")
            return _done(out, r.CLAIM_MISSING, f"{progress_text(pod, node_name)}; but its entry {entry.get('name')!r} "
                         f"names ResourceClaim {claim_name}, which no longer exists in namespace {namespace} (a claim "
                         "reserved for a pod keeps its finalizer until the pod ends: was it removed by hand?)")
        if claim is None:
            out.cited.append(f"ResourceClaim {namespace}/{claim_name}")
            out.scheduler = out.scheduler or PRE_ENQUEUE
            return _done(out, r.CLAIM_MISSING, f"the pod's entry {entry.get('name')!r} names ResourceClaim {claim_name}, "
                         f"which does not exist in namespace {namespace}; the pod waits until it does",
                         [Remedy("wait", f"create ResourceClaim {claim_name} in namespace {namespace}", claim=claim_name)])
        if meta(claim).get("deletionTimestamp") and not _reserved_for(claim, pod):
            out.cited.append(f"ResourceClaim {namespace}/{claim_name}")
            return _done(out, r.CLAIM_DELETING, f"ResourceClaim {claim_name} is being deleted (the scheduler: "
                         f"resourceclaim \"{claim_name}\" is being deleted); the pod cannot use it")
        claims.append(claim)
    out.cited += [f"ResourceClaim {namespace}/{name_of(c)}" for c in claims]
    pending = [c for c in claims if not allocation_of(c)]
    missing = _missing_class(state, pending)
    if missing:
        claim, request, class_name = missing
        out.cited.append(f"DeviceClass {class_name}")
        return _done(out, r.CLASS_MISSING, f"claim {name_of(claim)}, request {request}: device class {class_name} "
                     "does not exist, so the scheduler rejects the pod before looking at any node",
                     [Remedy("wait", f"create DeviceClass {class_name}, or use one of: "
                             + ", ".join(sorted(name_of(c) for c in state.classes)), claim=name_of(claim), request=request)])
    for claim in claims:
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if allocation_of(claim) and len(reserved) >= RESERVED_FOR_MAX and not _reserved_for(claim, pod):
            return _done(out, r.CLAIM_IN_USE, f"claim {name_of(claim)} is reserved by {len(reserved)} pods, the most "
                         "a claim can be (the scheduler: resourceclaim in use)")
    if not pending:
        if node_name:
            return _allocated(state, out, claims, progress_text(pod, node_name))
        if all(_reserved_for(c, pod) for c in claims):
            binding = any(res.get("bindingConditions") for c in claims for res in results_of(c))
            text = ("its claims are allocated and reserved for it, and the scheduler has not bound it to a node yet"
                    + ("; a device has binding conditions, which the driver must report before binding" if binding else
                       ": binding follows within moments"))
            explained = _allocated(state, out, claims, text)
            explained.state = r.BINDING
            return explained
    allocated = [c for c in claims if allocation_of(c)]
    eligible = _eligible(state, pod, allocated)
    out.excluded = {n: why for n, why in eligible.items() if why}
    shared = [c for c in allocated if not _reserved_for(c, pod)]
    if allocated and not any(why is None for why in eligible.values()):
        holders = sorted({p for c in shared for p in _reserving_pods(state, c)})
        where = ", ".join(_allocation_node(state, c) or "?" for c in allocated)
        state_name = r.RESERVED_ELSEWHERE if shared else r.PENDING
        out.stage = "node"
        summary = (f"claim(s) {', '.join(name_of(c) for c in allocated)} are allocated on node {where}"
                   + (f" and reserved by pod(s) {', '.join(holders)}" if holders else "")
                   + ", but the pod may not run there (the scheduler: resourceclaim not available on the node)")
        out.cited += [f"Pod {p}" for p in holders]
        return _done(out, state_name, summary,
                     [Remedy("allow-nodes", f"let the pod run on node {where}", nodes=[where])])
    if not pending:
        fits = [n for n, why in eligible.items() if why is None]
        return _done(out, r.FITS_NOW, f"every claim is allocated and node(s) {', '.join(fits[:3])} can take the pod; "
                     "the scheduler binds it on its next attempt")
    return _pending(state, out, pod, pending, eligible)


def _base(state: PlanState, target: str) -> Explanation:
    chosen = state.flavor
    return Explanation(target=target, state="", summary="", kubernetes_version=f"1.{chosen.minor}",
                       feature_gates=dict(chosen.gates), simulated=state.simulated)


def _done(out: Explanation, state: str, summary: str, remedies: list[Remedy] | None = None) -> Explanation:
    out.state, out.summary = state, summary
    out.remedies += remedies or []
    return out


def _scheduler_says(state: PlanState, pod: Mapping[str, Any]) -> str:
    """For a bound pod the scheduler's Scheduled event; else the PodScheduled=False condition (the full
    message), else the newest FailedScheduling event."""
    if (pod.get("spec") or {}).get("nodeName"):
        bound = [e for e in state.pod_events(pod) if e.get("reason") == "Scheduled"]
        return bound[-1].get("message", "") if bound else ""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return f"{cond.get('reason', '')}: {cond.get('message', '')}"
    events = [e for e in state.pod_events(pod) if e.get("reason") == "FailedScheduling"]
    return events[-1].get("message", "") if events else ""


def _reserved_for(claim: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    uid = meta(pod).get("uid")
    return any(ref.get("uid") == uid and ref.get("name") == name_of(pod)
               for ref in (claim.get("status") or {}).get("reservedFor") or [])


def _reserving_pods(state: PlanState, claim: Mapping[str, Any]) -> list[str]:
    return [f"{namespace_of(claim)}/{ref.get('name', '')}" for ref in (claim.get("status") or {}).get("reservedFor") or []
            if ref.get("resource") == "pods"]


def _not_created(state: PlanState, out: Explanation, pod: Mapping[str, Any], entry: Mapping[str, Any],
                 template: str) -> Explanation:  # fmt: skip
    namespace = namespace_of(pod)
    out.cited.append(f"ResourceClaimTemplate {namespace}/{template}")
    out.scheduler = PRE_ENQUEUE if not out.scheduler else out.scheduler
    if state.template(namespace, template) is None:
        return _done(out, r.NOT_CREATED, f"the pod's entry {entry.get('name')!r} uses ResourceClaimTemplate {template}, "
                     f"which does not exist in namespace {namespace}: the resourceclaim controller cannot create the claim",
                     [Remedy("wait", f"create ResourceClaimTemplate {template} in namespace {namespace}")])
    return _done(out, r.NOT_CREATED, f"the resourceclaim controller has not yet created the claim of entry "
                 f"{entry.get('name')!r} from ResourceClaimTemplate {template} (pod.status.resourceClaimStatuses "
                 "has no entry); the scheduler waits for it",
                 [Remedy("wait", "wait for kube-controller-manager's resourceclaim controller (is it running?)")])


def _missing_class(state: PlanState, claims: list[dict]) -> tuple[dict, str, str] | None:
    for claim in claims:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            wanted = ([(request.get("name", ""), request["exactly"].get("deviceClassName", ""))]
                      if request.get("exactly") is not None else
                      [(f"{request.get('name', '')}/{s.get('name', '')}", s.get("deviceClassName", ""))
                       for s in request.get("firstAvailable") or []])
            for request_name, class_name in wanted:
                if class_name and state.device_class(class_name) is None:
                    return claim, request_name, class_name
    return None


def _eligible(state: PlanState, pod: Mapping[str, Any], allocated: list[dict]) -> dict[str, str | None]:
    """Node -> why the pod may not use it (None: it may), for every node."""
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    fit = extended_fit(state, pod)
    plain = not (spec.get("nodeSelector") or required or allocated or fit)  # only the node's own spec can exclude it
    out: dict[str, str | None] = {}
    for node in state.nodes:
        node_spec = node.get("spec") or {}
        if plain and not node_spec.get("unschedulable") and not node_spec.get("taints"):
            out[name_of(node)] = None
        else:
            out[name_of(node)] = _excluded(pod, node, allocated, fit)
    return out


def _excluded(pod: Mapping[str, Any], node: Mapping[str, Any], allocated: list[dict],
              fit: ResourceFit | None = None) -> str | None:
    """Why the scheduler's filters before DynamicResources (and the claims already allocated) exclude
    ``node`` for ``pod``; None when the pod may use it."""
    exclusion = node_exclusion(pod, node) or (fit.exclusion(node) if fit is not None else None)
    if exclusion is not None:
        return exclusion.detail
    for claim in allocated:
        if not selector_matches(allocation_of(claim).get("nodeSelector"), node):
            return f"claim {name_of(claim)} is allocated on another node"
    return None


def _allocation_node(state: PlanState, claim: Mapping[str, Any]) -> str | None:
    for result in results_of(claim):
        for rs in state.slices:
            spec = rs.get("spec") or {}
            if spec.get("driver") == result.get("driver") and (spec.get("pool") or {}).get("name") == result.get("pool"):
                if spec.get("nodeName"):
                    return spec["nodeName"]
    selector = (allocation_of(claim) or {}).get("nodeSelector")
    for term in (selector or {}).get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return field["values"][0]
    return None


# --- pending: the funnel ---------------------------------------------------------------------------


def _pending(state: PlanState, out: Explanation, pod: Mapping[str, Any], pending: list[dict],
             eligible: Mapping[str, str | None]) -> Explanation:  # fmt: skip
    funnel = compute(state, pending, eligible)
    local = [n for n, why in eligible.items() if why is None]
    refused = next(((n, funnel.per_node.first(n).error) for n in local
                    if n in funnel.per_node and funnel.per_node.first(n).error), None) if funnel.refused else None
    if refused is not None and "selector #" in refused[1]:
        return _selector_refusal(out, pending, *refused)
    if funnel.validation_error:
        return _done(out, r.INVALID, "the allocator refuses the claim before trying any device, so the scheduler "
                     f"reports an error (SchedulerError), not unschedulable: {funnel.validation_error}",
                     _validation_remedies(pending, funnel.validation_error))
    out.requests = _reports(funnel, pending)
    out.fits_on = list(funnel.fits_on)
    out.stage, local_stage = funnel.stage, funnel.local_stage
    out.local_stage = local_stage if local_stage != out.stage else None
    error = _first_error(funnel, local)
    if error is not None and local_stage is not None:
        out.stage = out.local_stage = error.stage
        key = _drop_key(funnel, error)
        claim, request = _names(pending, funnel, key)
        if error.stage == "published":
            return _done(out, r.PENDING, f"the scheduler's allocator stops with an error (SchedulerError) when it "
                         f"reaches device {error.node}/{error.device[1]}/{error.device[2]}: {error.reason}; "
                         "the driver must republish the pool")
        return _done(out, r.PENDING, f"claim {claim}, request {request}: a selector fails with an error on device "
                     f"{error.node}/{error.device[1]}/{error.device[2]}, and the scheduler aborts the allocation "
                     f"(SchedulerError) instead of skipping it: {error.reason}",
                     [Remedy("drop-selectors", f"fix the selector of claim {claim}, request {request} so it cannot fail "
                             "(test for the attribute first, e.g. `'profile' in device.attributes['gpu.nvidia.com'] && ...`), "
                             "or drop it", claim=claim, request=request.split("/")[0])])
    if local_stage is None:
        node = next(n for n in funnel.fits_on if eligible.get(n) is None)
        return _done(out, r.FITS_NOW, f"drawb's allocator fits the claims on node {node} now; the scheduler places the pod "
                     "on its next attempt (it retries when claims, slices or classes change)")
    out.near_misses += _near_misses(funnel, pending, eligible, local)
    out.remedies += _remedies(state, funnel, pending, local, local_stage, eligible)
    out.notes += _preemption_note(state, pod, funnel, local, local_stage)
    blocking = out.stage if out.stage != "node" else local_stage
    where = "" if out.stage == local_stage else f" on the nodes the pod may use (cluster-wide: {out.stage})"
    return _done(out, r.PENDING, f"the first stage that leaves too few devices is '{blocking}' "
                 f"({r.STAGE_LABELS[blocking]}){where}" + _short_summary(funnel, pending, local, blocking))


def _selector_refusal(out: Explanation, claims: list[dict], node: str, message: str) -> Explanation:
    """The allocator stops on a selector error before its search (an ``All`` request evaluates every device)."""
    out.stage = "class" if message.startswith("class ") else "selectors"
    owner = message.split(":", 1)[0]
    claim = next((name_of(c) for c in claims if owner.endswith(f"/{name_of(c)}") or owner.startswith(f"claim {namespace_of(c)}/{name_of(c)},")), None)
    request = None
    if ", request " in owner:
        request = owner.split(", request ", 1)[1].split("/")[0]
    remedies = [Remedy("drop-selectors", f"fix the selector of claim {claim}" + (f", request {request}" if request else "")
                       + " so it cannot fail (test for the attribute first), or drop it", claim=claim, request=request)
                ] if claim and out.stage == "selectors" else []
    return _done(out, r.PENDING, f"on node {node} the scheduler's allocator stops with an error (SchedulerError) "
                 f"instead of skipping the device: {message}", remedies)


STAGE_INDEX = {s: i for i, s in enumerate((*DEVICE_STAGES, "constraints", "node"))}


def _reports(funnel: Funnel, claims: list[dict]) -> list[RequestReport]:
    reports = []
    for (claim_i, _), keys in funnel.groups.items():
        for key in keys:
            on_groups = [g for g in funnel.per_node.groups if key in g.by_key]
            if not on_groups:
                continue
            first = on_groups[0].by_key[key]  # the first node with the request is a group's first
            stages, empties = [], None
            for stage in DEVICE_STAGES:
                best = max(on_groups, key=lambda g: (len(g.by_key[key].survivors[stage]), -g.position))
                drops = drops_at(funnel, key, stage, EXAMPLES)
                stages.append(StageCount(stage, _survivors(funnel, on_groups, key, stage), best.first,
                                         len(best.by_key[key].survivors[stage]), drop_count(funnel, key, stage),
                                         [_drop_text(d) for d in drops]))
                if empties is None and not any(g.by_key[key].enough(stage) for g in on_groups):
                    empties = stage
            errors = [_drop_text(d) for g in on_groups for d in g.by_key[key].drops if d.error][:EXAMPLES]
            reports.append(RequestReport(f"{namespace_of(claims[claim_i])}/{name_of(claims[claim_i])}", first.name,
                                         first.class_name, "all" if first.all_mode else str(first.count),
                                         stages, empties, errors))
    return reports


def _survivors(funnel: Funnel, groups: list[Any], key: tuple[int, int, int], stage: str) -> int:
    """How many devices pass ``stage`` for ``key`` on some node (a device visible on several nodes once)."""
    if funnel.disjoint:
        return sum(len(g.members) * len(set(g.by_key[key].survivors[stage])) for g in groups)
    return len({d for g in groups for n in g.members for d in funnel.requests_on(n)[key].survivors[stage]})


def _drop_text(drop: Drop) -> str:
    return f"{drop.node}/{drop.device[2]}: {drop.reason}"


def _first_error(funnel: Funnel, local: list[str]) -> Drop | None:
    """A device whose pool or selector errors where the scheduler's search reaches it: on a node the pod
    may use with such a device, the allocator itself (exact to the scheduler's) is asked whether it stops."""
    if not funnel.has_errors:
        return None
    by_group: dict[int, list[Drop]] = {}  # the drops with an error of each group's first node
    for node in local:
        group = funnel.per_node.group_of.get(node)
        if group is None:
            continue
        errors = by_group.get(id(group))
        if errors is None:
            errors = by_group[id(group)] = [d for rs in group.by_key.values() for d in rs.drops if d.error]
        if not errors:
            continue
        try:
            funnel.run(node)
        except AllocationError as err:
            text = str(err)
            return next((d for d in errors if d.device[2] in text), errors[0]) if "selector #" in text or "pool" in text else None
    return None


def _drop_key(funnel: Funnel, drop: Drop) -> tuple[int, int, int]:
    for key, rs in funnel.requests_on(drop.node).items():
        if drop in rs.drops:
            return key
    raise LookupError(drop)


def _names(claims: list[dict], funnel: Funnel, key: tuple[int, int, int]) -> tuple[str, str]:
    for node in funnel.per_node:
        rs = funnel.first_requests(node).get(key)
        if rs is not None:
            return name_of(claims[key[0]]), rs.name
    return name_of(claims[key[0]]), ""


def _best(funnel: Funnel, nodes: list[str], stage: str) -> str | None:
    """The node the pod may use that comes closest at ``stage``: every request enough one stage earlier,
    most devices left after ``stage``."""
    if stage in ("constraints", "node"):
        ready = funnel.ok_nodes(nodes, "counters")
        return ready[0] if ready else None
    index = DEVICE_STAGES.index(stage)
    ready = (funnel.ok_nodes(nodes, DEVICE_STAGES[index - 1]) if index else [n for n in nodes if n in funnel.per_node])
    left: dict[int, int] = {}  # per group: the devices its requests keep after ``stage``
    best, most = None, -1
    for n in ready:  # the first node of the most
        group = funnel.per_node.group(n)
        count = left.get(id(group))
        if count is None:
            count = left[id(group)] = sum(len(rs.survivors[stage]) for rs in group.by_key.values())
        if count > most:
            best, most = n, count
    return best


def _short_keys(funnel: Funnel, node: str, stage: str) -> list[tuple[int, int, int]]:
    """The first key of every request (group) that has too few devices after ``stage`` on ``node``."""
    by_key = funnel.first_requests(node)
    short = []
    for keys in funnel.groups.values():
        present = [k for k in keys if k in by_key]
        if present and not any(by_key[k].enough(stage) for k in present):
            short.append(present[0])
    return short


def _short_summary(funnel: Funnel, claims: list[dict], local: list[str], stage: str) -> str:
    node = _best(funnel, local, stage)
    if node is None or stage in ("constraints", "node"):
        return ""
    parts = []
    for key in _short_keys(funnel, node, stage):
        rs = funnel.requests_on(node)[key]
        need = "all" if rs.all_mode else str(rs.count)
        parts.append(f"claim {name_of(claims[key[0]])}, request {rs.name} wants {need}, node {node} (the closest) has "
                     f"{len(rs.survivors[stage])} left after it")
    return (": " + "; ".join(parts)) if parts else ""


def _near_misses(funnel: Funnel, claims: list[dict], eligible: Mapping[str, str | None], local: list[str]) -> list[str]:
    misses = []
    for node in funnel.fits_on:
        if eligible.get(node):
            misses.append(f"the claims fit on node {node}, but the pod may not use it: {eligible[node]}")
    if not local:
        misses.append("no node passes the pod's own filters (node selector, affinity, taints): "
                      + "; ".join(f"{n}: {w}" for n, w in list(eligible.items())[:3]))
    misses += funnel.constraint_notes
    for node, error in list(funnel.errors.items())[:EXAMPLES]:
        misses.append(f"on node {node} the allocator stops with an error: {error}")
    return misses


def _remedies(state: PlanState, funnel: Funnel, claims: list[dict], local: list[str], stage: str,
              eligible: Mapping[str, str | None]) -> list[Remedy]:  # fmt: skip
    if stage == "node" or not local:
        nodes = [n for n in funnel.fits_on if eligible.get(n)] or [n for n in funnel.per_node if funnel.node_ok(n, "counters")]
        return [Remedy("allow-nodes", f"let the pod use node(s) {', '.join(nodes[:3])}"
                       + (f" ({eligible[nodes[0]]})" if nodes and eligible.get(nodes[0]) else ""), nodes=nodes[:3])] if nodes else []
    if stage == "constraints":
        out = []
        for claim in claims:
            constraints = ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
            if constraints:
                what = ", ".join(f"{k} {v}" for c in constraints for k, v in c.items() if k != "requests")
                out.append(Remedy("drop-constraints", f"claim {name_of(claim)}: drop or relax its constraints ({what})",
                                  claim=name_of(claim)))
        return out
    node = _best(funnel, local, stage)
    if node is None:
        return []
    out = []
    for key in _short_keys(funnel, node, stage):
        rs = funnel.requests_on(node)[key]
        claim = name_of(claims[key[0]])
        request = rs.name.split("/")[0]
        remedy = _remedy(state, funnel, node, rs, claim, request, stage)
        if remedy is not None:
            out.append(remedy)
    return out


def _remedy(state: PlanState, funnel: Funnel, node: str, rs: Any, claim: str, request: str, stage: str) -> Remedy | None:
    before = DEVICE_STAGES[DEVICE_STAGES.index(stage) - 1] if stage != "published" else None
    left = len(rs.survivors[stage])
    if stage in ("published", "class"):
        if left and not rs.all_mode:
            return Remedy("lower-count", f"claim {claim}, request {rs.name}: ask for {left} device(s) instead of "
                          f"{rs.count}: node {node} has only {left} that {r.STAGE_LABELS[stage]}",
                          claim=claim, request=request, count=left)
        return None
    if stage == "selectors":
        return Remedy("drop-selectors", f"claim {claim}, request {rs.name}: drop or loosen the request's selectors: "
                      f"on node {node}, {len(rs.survivors[before])} device(s) pass class {rs.class_name}",
                      claim=claim, request=request)
    drops = [d for d in rs.drops if d.stage == stage]
    missing = len(drops) if rs.all_mode else max(rs.count, 1) - left
    if stage == "taints":
        tolerations = []
        for drop in drops[:missing]:
            for taint in drop.taints:
                toleration = {"key": taint.get("key", ""), "operator": "Exists" if not taint.get("value") else "Equal",
                              **({"value": taint["value"]} if taint.get("value") else {}), "effect": taint.get("effect", "")}
                if toleration not in tolerations:
                    tolerations.append(toleration)
        text = ", ".join(f"{t['key']}{'=' + t['value'] if 'value' in t else ''}:{t['effect']}" for t in tolerations)
        return Remedy("tolerate", f"claim {claim}, request {rs.name}: tolerate the device taint(s) {text} "
                      f"(or clear them) to use {missing} more device(s) on node {node}",
                      claim=claim, request=request, tolerations=tolerations)
    freed: list[str] = []
    for drop in drops:
        if missing <= 0:
            break
        holders = [h.claim for d in drop.blocked_by for h in state.holders.get(d, []) if not h.admin]
        if holders:
            freed += [h for h in holders if h not in freed]
            missing -= 1
    if not freed:
        return None
    pods = sorted({p for d in drops for dev in d.blocked_by for h in state.holders.get(dev, []) if h.claim in freed
                   for p in h.pods})
    what = "devices" if stage == "free" else "shared counters"
    return Remedy("free", f"free {what} on node {node}: delete (or let finish) claim(s) {', '.join(freed)}"
                  + (f", used by pod(s) {', '.join(pods)}" if pods else ""), claims=freed)


def _validation_remedies(claims: list[dict], message: str) -> list[Remedy]:
    if "exceeds the claim limit" in message:
        return [Remedy("lower-count", "ask for at most 32 devices per claim (resource.k8s.io/v1 limit)", count=32)]
    if "feature is disabled" in message:
        return [Remedy("wait", "turn the named feature gate on in kube-apiserver and kube-scheduler, or drop the field")]
    return []


def _preemption_note(state: PlanState, pod: Mapping[str, Any], funnel: Funnel, local: list[str], stage: str) -> list[str]:
    if stage not in ("free", "counters"):
        return []
    priority = (pod.get("spec") or {}).get("priority") or 0
    holders = {h for n in local for dev in funnel.blocked_by(n, stage) for holder in state.holders.get(dev, [])
               for h in holder.pods}
    lower, unread = [], []
    for ref in sorted(holders):
        namespace, _, name = ref.partition("/")
        other = state.pod(namespace, name)
        if other is not None and ((other.get("spec") or {}).get("priority") or 0) < priority:
            lower.append(f"{ref} (priority {(other.get('spec') or {}).get('priority') or 0})")
        elif not state.pod_read(namespace):
            unread.append(ref)
    never = ("the scheduler does not preempt pods for DRA devices (DynamicResources rejects a node as unresolvable: "
             "'Preemption is not helpful for scheduling'); free the devices yourself")
    if lower:
        return [f"the pod has priority {priority}, higher than pod(s) {', '.join(lower)} holding the devices, but "
                + never]
    if unread and priority:
        return [f"the pod has priority {priority}; the priorities of pod(s) {', '.join(unread)} holding the devices "
                f"were not read (pods are read in namespace {state.pods_namespace} only), but whatever they are, "
                + never]
    return []


# --- allocated claims: why these devices ------------------------------------------------------------

_SHOWN_ATTRIBUTES = ("productName", "uuid", "index", "profile", "resource.kubernetes.io/pcieRoot", "parentUUID")


def _device_rows(state: PlanState, held: list[tuple[str, tuple[str, str, str]]]) -> list[r.AllocatedDevice]:
    """(claim/request, (driver, pool, device)) as rows: the device's node and its telling attributes."""
    wanted = {device_id for _, device_id in held}
    devices_by_id = {}
    for rs in state.slices:
        spec = rs.get("spec") or {}
        for device in spec.get("devices") or []:
            device_id = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), device.get("name", ""))
            if device_id in wanted:
                devices_by_id[device_id] = (spec.get("nodeName") or "", device)
    rows = []
    for label, device_id in held:
        node, device = devices_by_id.get(device_id, ("", {}))
        attributes = device.get("attributes") or {}
        shown = {}
        for key in _SHOWN_ATTRIBUTES:
            value = attributes.get(key) or attributes.get(f"{device_id[0]}/{key}")
            if value:
                shown[key] = next(iter(value.values()))
        rows.append(r.AllocatedDevice(label, f"{device_id[1]}/{device_id[2]}", node, shown))
    return rows


def _held(claims: list[dict]) -> list[tuple[str, tuple[str, str, str]]]:
    return [(f"{name_of(claim)}/{result.get('request', '')}",
             (result.get("driver", ""), result.get("pool", ""), result.get("device", "")))
            for claim in claims for result in results_of(claim)]


def _ended(state: PlanState, out: Explanation, pod: Mapping[str, Any]) -> Explanation:
    """A pod that ended: where it ran, how it ended, what became of its claims, the devices still on record."""
    namespace = namespace_of(pod)
    fates = claim_fates(state, pod)
    out.cited += [f"ResourceClaim {namespace}/{f.claim}" for f in fates if f.claim and state.claim(namespace, f.claim)]
    out.notes += [f.text for f in fates]
    held = _held([f.still_held for f in fates if f.still_held is not None])
    held += [item for item in recorded_devices(pod) if item not in held]
    out.devices = _device_rows(state, held)
    if not out.devices:
        out.notes.append(NOT_RECORDED)
    return _done(out, r.ENDED, ended_text(pod))


def _allocated(state: PlanState, out: Explanation, claims: list[dict], summary: str) -> Explanation:
    out.devices += _device_rows(state, _held(claims))
    out.notes.append("the scheduler's allocator takes, request by request, the first devices in pool and slice order "
                     "that pass the class and request selectors, are free, tolerated and fit the counters and "
                     "constraints; node order is the scheduler's scoring")
    out.notes += _same_choice(state, claims)
    return _done(out, r.ALLOCATED, summary)


def _same_choice(state: PlanState, claims: list[dict]) -> list[str]:
    """Whether drawb's allocator, given the node and every other allocation, picks the same devices."""
    from drawb.alloc import AllocationError, allocate

    notes = []
    for claim in claims:
        node = _allocation_node(state, claim)
        if node is None or node not in state.node_by_name:
            continue
        bare = {**claim, "status": {}}
        others = [c for c in state.allocated_claims if not (name_of(c) == name_of(claim) and namespace_of(c) == namespace_of(claim))]
        try:
            mine = allocate([bare], node=state.node_by_name[node], slices=state.slices_for(node), classes=state.classes,
                            allocated=others, kubernetes_version=state.kubernetes_version, feature_gates=state.feature_gates)
        except AllocationError as err:
            notes.append(f"claim {name_of(claim)}: drawb's allocator now refuses it on node {node}: {err}")
            continue
        got = sorted((x.get("pool"), x.get("device")) for x in results_of(claim))
        if mine is None:
            notes.append(f"claim {name_of(claim)}: it would not fit on node {node} now (devices changed since)")
        elif sorted((x["pool"], x["device"]) for x in mine[0]["devices"]["results"]) == got:
            notes.append(f"claim {name_of(claim)}: drawb's allocator picks the same devices on node {node}")
        else:
            notes.append(f"claim {name_of(claim)}: drawb's allocator would pick "
                         + ", ".join(x["device"] for x in mine[0]["devices"]["results"])
                         + f" on node {node} now (the scheduler's pool order is random in 1.34 and 1.35, or devices changed)")
    return notes


# --- claims -----------------------------------------------------------------------------------------


def explain_claim(state: PlanState, namespace: str, name: str) -> Explanation:
    """Why claim ``namespace/name`` is (not) allocated: through the pod waiting for it, if one does."""
    claim = find(state, "ResourceClaim", namespace, name)
    users = [p for p in state.pods if namespace_of(p) == namespace and name in _pod_claim_names(p)]
    reserved = _reserving_pods(state, claim)
    target = f"claim {namespace}/{name}"
    if allocation_of(claim):
        out = _base(state, target)
        out.cited.append(f"ResourceClaim {namespace}/{name}")
        out.cited += [f"Pod {p}" for p in reserved]
        text = (f"allocated, reserved for pod(s) {', '.join(reserved)}" if reserved
                else "allocated, reserved for no pod (the resourceclaim controller deallocates it unless a pod uses it)")
        return _allocated(state, out, [claim], text)
    pending = [p for p in users if not (p.get("spec") or {}).get("nodeName")]
    if pending:
        explained = explain_pod(state, namespace, name_of(pending[0]))
        explained.notes.insert(0, f"claim {name} is used by pod {name_of(pending[0])}: explaining that pod")
        explained.target = f"{target} (pod {namespace}/{name_of(pending[0])})"
        return explained
    out = _base(state, target)
    out.cited.append(f"ResourceClaim {namespace}/{name}")
    missing = _missing_class(state, [claim])
    if missing:
        out.cited.append(f"DeviceClass {missing[2]}")
        return _done(out, r.CLASS_MISSING, f"request {missing[1]}: device class {missing[2]} does not exist")
    funnel = compute(state, [claim], {name_of(n): None for n in state.nodes})
    out.requests = _reports(funnel, [claim]) if not funnel.validation_error else []
    out.fits_on = list(funnel.fits_on)
    out.stage = funnel.stage if not funnel.validation_error else None
    could = (f"it would fit on node {funnel.fits_on[0]}" if funnel.fits_on else
             f"it would not fit on any node now (first empty stage: {funnel.stage})" if not funnel.validation_error
             else f"the allocator refuses it: {funnel.validation_error}")
    return _done(out, r.UNUSED, "no pod uses this claim, and the scheduler allocates a claim only when it schedules a "
                 f"pod that uses it; {could}")


def _pod_claim_names(pod: Mapping[str, Any]) -> set[str]:
    names = {e.get("resourceClaimName") for e in (pod.get("spec") or {}).get("resourceClaims") or []}
    names |= {s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    return {n for n in names if n}
