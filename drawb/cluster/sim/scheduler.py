"""One scheduling attempt for one pod, as kube-scheduler 1.34's default profile makes it.

The filters that can reject a node in the simulation run in the scheduler's order:
NodeUnschedulable, TaintToleration, NodeAffinity (``nodeSelector`` and required node affinity),
NodeResourcesFit for extended resources (``drawb.api.resourcefit``: ``Insufficient nvidia.com/gpu``
where no device plugin advertises enough), then DynamicResources (claims already allocated must be available on the node, the others are
allocated by ``drawb.alloc``, with the claim the scheduler makes for extended resources a DeviceClass serves where
the node leaves them to DRA: ``drawb.alloc.extended``), through ``drawb.alloc.verdicts`` over the cluster's ``PlanState``
made once per attempt as the plugin's PreFilter state: nodes of the same signature are allocated
once, as ``preview`` allocates them. Nodes are tried in name order and the first feasible node is
chosen (the real scheduler scores the feasible nodes and breaks ties at random; the simulation
picks deterministically). When no node fits, the message is the scheduler's ``FitError`` text:
the per-node reasons counted and sorted, then the PostFilter messages of DynamicResources (from 1.37 on
it says nothing where it deallocates nothing) and DefaultPreemption (all pods have the same priority here: where only pods bound to a node take the
extended resources the pod needs, preemption finds no victims).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from drawb import versions
from drawb.alloc import AllocationError
from drawb.alloc.extended import ExtendedClaim, NodeClaim
from drawb.alloc.verdicts import NOT_AVAILABLE, Verdict, node_reason, verdicts
from drawb.alloc.view import PlanState, rename
from drawb.api.nodeaffinity import selector_matches
from drawb.api.resourcefit import ResourceFit, counted_reasons

RESERVED_FOR_MAX = 256  # resourceapi.ResourceClaimReservedForMaxSize


@dataclass
class Decision:
    """The outcome of one attempt: a node and the new allocations, or why not."""

    node: str | None = None
    allocations: dict[str, dict] = field(default_factory=dict)  # claim name -> status.allocation
    deallocate: str | None = None  # a claim PostFilter deallocated to let the pod try again
    extended: NodeClaim | None = None  # the extended-resource claim to create, its allocation in ``extended_allocation``
    extended_allocation: dict | None = None
    message: str = ""
    error: bool = False  # a scheduler error (SchedulerError), not "unschedulable"

    @property
    def scheduled(self) -> bool:
        """Whether a node was found."""
        return self.node is not None


Snapshot = Callable[[], PlanState]


def reserved_for_pod(claim: dict, pod: dict) -> bool:
    """Whether ``claim.status.reservedFor`` names ``pod``."""
    uid = pod["metadata"].get("uid")
    return any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or ())


def _pre_filter(pod: dict, claims: list[dict], class_exists: Callable[[str], bool]) -> str | None:
    """The DynamicResources PreFilter checks; the reason the pod cannot go anywhere, or None."""
    namespace = pod["metadata"]["namespace"]
    for claim in claims:
        status = claim.get("status") or {}
        if status.get("allocation"):
            if len(status.get("reservedFor") or ()) >= RESERVED_FOR_MAX and not reserved_for_pod(claim, pod):
                return "resourceclaim in use"
            continue
        for request in (claim.get("spec") or {}).get("devices", {}).get("requests") or ():
            if request.get("exactly") is not None:
                wanted = [(request["name"], request["exactly"].get("deviceClassName", ""))]
            elif request.get("firstAvailable"):
                wanted = [(f"{request['name']}/{sub['name']}", sub.get("deviceClassName", ""))
                          for sub in request["firstAvailable"]]
            else:
                return (f"resource claim {namespace}/{claim['metadata']['name']}, request {request.get('name')}: "
                        "unknown request type")
            for name, class_name in wanted:
                if class_name and not class_exists(class_name):
                    return f"request {name}: device class {class_name} does not exist"
    return None


def _histogram(reasons: dict[str, int]) -> str:
    return ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items() if count))


def _quiet(minor: int, message: str) -> str:
    """DynamicResources' PostFilter message where it deallocates nothing: none from 1.37 on."""
    return "" if versions.has(minor, "scheduler.quiet_post_filter") else message


def fit_error(node_count: int, reasons: dict[str, int] | None, pre_filter: str | None, post_filter: list[str],
              no_victims: int = 0) -> str:
    """The scheduler's FitError message; ``no_victims``: nodes where preemption looked for victims in vain."""
    message = f"0/{node_count} nodes are available:"
    if pre_filter:
        message += f" {pre_filter}."
    elif reasons:
        message += " " + _histogram(reasons) + "."
    preemption = f"preemption: 0/{node_count} nodes are available: " + _histogram(
        {"No preemption victims found for incoming pod": no_victims,
         "Preemption is not helpful for scheduling": node_count - no_victims}) + "."
    return message + " " + ", ".join([*filter(None, post_filter), preemption])


def schedule(pod: dict, claims: list[dict], nodes: Sequence[dict], snapshot: Snapshot,
             class_exists: Callable[[str], bool], fit: ResourceFit | None = None,
             extended: ExtendedClaim | None = None, minor: int = 34) -> Decision:
    """Try ``nodes`` (in name order) for ``pod`` whose claims (in pod order, all existing) are ``claims``,
    whose extended resources ``fit`` checks (None: it asks for none) and ``extended`` serves through DRA
    (None: no DeviceClass serves them, or DRAExtendedResource is off), by kube-scheduler 1.<minor>.

    ``snapshot()`` is called once, after the PreFilter checks pass: the cluster's ``PlanState`` (its nodes
    are ``nodes``), whose alike-node grouping allocates the new claims once per signature; it may raise
    AllocationError (the version's or gates' error), reported at the first node that passes the other filters.
    """
    reason = _pre_filter(pod, claims, class_exists)
    if reason:
        return Decision(message=fit_error(len(nodes), None, reason, [_quiet(minor, "no new claims to deallocate")]))
    to_allocate = [c for c in claims if not (c.get("status") or {}).get("allocation")]
    allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
    reasons: dict[str, int] = {}
    unavailable: list[dict] = []
    no_victims = 0
    try:
        for verdict in _verdicts(pod, to_allocate, allocated, nodes, snapshot, fit, extended):
            if verdict.reason is None:
                name = verdict.node["metadata"]["name"]
                made = rename(verdict.allocations, verdict.source, verdict.view)
                return Decision(node=name, allocations={c["metadata"]["name"]: a for c, a in zip(to_allocate, made)},
                                extended=verdict.extended,
                                extended_allocation=made[len(to_allocate)] if verdict.extended else None)
            if verdict.reason == NOT_AVAILABLE:
                missing = [c for c in allocated if not selector_matches(c["status"]["allocation"].get("nodeSelector"),
                                                                         verdict.node)]
                unavailable.extend(c for c in missing if c not in unavailable)
            elif fit is not None and verdict.reason.startswith("Insufficient ") and fit.resolvable(verdict.node):
                no_victims += 1
            for reason in counted_reasons(verdict.reason, verdict.node, fit):
                reasons[reason] = reasons.get(reason, 0) + 1
    except AllocationError as err:
        return Decision(message=f'running "DynamicResources" filter plugin: {err}', error=True)
    post = _quiet(minor, "still not schedulable" if claims or extended else "no new claims to deallocate")
    for claim in unavailable:
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if not reserved or len(reserved) == 1 and reserved_for_pod(claim, pod):
            return Decision(deallocate=claim["metadata"]["name"],
                            message=fit_error(len(nodes), reasons, None, ["deallocation of ResourceClaim completed"],
                                              no_victims))
    return Decision(message=fit_error(len(nodes), reasons, None, [post], no_victims))


def _verdicts(pod: dict, to_allocate: list[dict], allocated: list[dict], nodes: Sequence[dict],
              snapshot: Snapshot, fit: ResourceFit | None, extended: ExtendedClaim | None) -> Iterator[Verdict]:
    """``drawb.alloc.verdicts`` over the snapshot; when it cannot be made, the node filters alone until
    the first node that would allocate, where its error is raised."""
    try:
        state = snapshot()
    except AllocationError as err:
        failed = err
    else:
        yield from verdicts(state, pod, to_allocate, allocated, fit, extended)
        return
    for node in nodes:
        reason = node_reason(pod, node, allocated, fit=fit)
        if reason is None and (to_allocate or extended and extended.for_node(node)):
            raise failed
        yield Verdict(node, reason)
