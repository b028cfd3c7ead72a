"""One scheduling attempt for one pod, as kube-scheduler 1.34's default profile makes it.

The filters that can reject a node in the simulation run in the scheduler's order:
NodeUnschedulable, TaintToleration, NodeAffinity (``nodeSelector`` and required node affinity),
then DynamicResources (claims already allocated must be available on the node, the others are
allocated by one ``drawb.alloc.Allocator`` per attempt, made once as the plugin's PreFilter
state and asked node by node as its Filter). Nodes are tried in name order and the first feasible
node is chosen (the real scheduler scores the feasible nodes and breaks ties at random; the
simulation picks deterministically). When no node fits, the message is the scheduler's
``FitError`` text: the per-node reasons counted and sorted, then the PostFilter messages of
DynamicResources and DefaultPreemption.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from drawb.api.nodeaffinity import node_filter, selector_matches

RESERVED_FOR_MAX = 256  # resourceapi.ResourceClaimReservedForMaxSize

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


@dataclass
class Decision:
    """The outcome of one attempt: a node and the new allocations, or why not."""

    node: str | None = None
    allocations: dict[str, dict] = field(default_factory=dict)  # claim name -> status.allocation
    deallocate: str | None = None  # a claim PostFilter deallocated to let the pod try again
    message: str = ""
    error: bool = False  # a scheduler error (SchedulerError), not "unschedulable"

    @property
    def scheduled(self) -> bool:
        """Whether a node was found."""
        return self.node is not None


class AllocationFailed(Exception):
    """The allocator reported an error (a broken selector, a disabled feature)."""


NodeAllocate = Callable[[dict], "list[dict] | None"]
Prepare = Callable[[list[dict]], NodeAllocate]


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


def fit_error(node_count: int, reasons: dict[str, int] | None, pre_filter: str | None, post_filter: list[str]) -> str:
    """The scheduler's FitError message."""
    message = f"0/{node_count} nodes are available:"
    if pre_filter:
        message += f" {pre_filter}."
    elif reasons:
        message += " " + ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items())) + "."
    preemption = f"preemption: 0/{node_count} nodes are available: {node_count} Preemption is not helpful for scheduling."
    return message + " " + ", ".join([*post_filter, preemption])


def schedule(pod: dict, claims: list[dict], nodes: Iterable[dict], node_count: int, prepare: Prepare,
             class_exists: Callable[[str], bool]) -> Decision:
    """Try ``nodes`` in order for ``pod`` whose claims (in pod order, all existing) are ``claims``.

    ``prepare(claims_to_allocate)`` is called once, when the first node passes the other filters;
    the function it returns (an Allocator's ``allocate``) takes a node and returns one allocation
    per claim, None when they do not fit on the node, or raises AllocationFailed (so may ``prepare``).
    """
    reason = _pre_filter(pod, claims, class_exists)
    if reason:
        return Decision(message=fit_error(node_count, None, reason, ["no new claims to deallocate"]))
    to_allocate = [c for c in claims if not (c.get("status") or {}).get("allocation")]
    allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
    reasons: dict[str, int] = {}
    unavailable: list[dict] = []
    allocate: NodeAllocate | None = None
    for node in nodes:
        reason = node_filter(pod, node)
        if reason is None and claims:
            missing = [c for c in allocated if not selector_matches(c["status"]["allocation"].get("nodeSelector"), node)]
            if missing:
                unavailable.extend(c for c in missing if c not in unavailable)
                reason = NOT_AVAILABLE
            elif to_allocate:
                try:
                    if allocate is None:
                        allocate = prepare(to_allocate)
                    results = allocate(node)
                except AllocationFailed as err:
                    return Decision(message=f'running "DynamicResources" filter plugin: {err}', error=True)
                if results is None:
                    reason = CANNOT_ALLOCATE
                else:
                    return Decision(node=node["metadata"]["name"],
                                    allocations={c["metadata"]["name"]: r for c, r in zip(to_allocate, results)})
        if reason is None:
            return Decision(node=node["metadata"]["name"])
        reasons[reason] = reasons.get(reason, 0) + 1
    post = "still not schedulable" if claims else "no new claims to deallocate"
    for claim in unavailable:
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if not reserved or len(reserved) == 1 and reserved_for_pod(claim, pod):
            return Decision(deallocate=claim["metadata"]["name"],
                            message=fit_error(node_count, reasons, None, ["deallocation of ResourceClaim completed"]))
    return Decision(message=fit_error(node_count, reasons, None, [post]))
