"""What the claim being built would do on a cluster now: the CEL of each request and the devices it matches,
the manifests and their validation, and the predicted allocation. Pure: the caller reads the cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from drawb.build.claim import ClaimSpec
from drawb.build.conditions import BuildError

if TYPE_CHECKING:
    import pandas as pd

    from drawb.cel import SelectResult
    from drawb.plan import PlanState
    from drawb.render import Issue

EVERY_DEVICE = "true"  # what a request without conditions is evaluated with: every device of its class


@dataclass
class ChoiceOutcome:
    """One request (or one alternative of it): its selector and what it matches."""

    request: str
    choice: str  # the alternative's name; the request's name for an ``exactly`` request
    device_class: str
    selector: str
    result: SelectResult | None = None
    problem: str | None = None  # the class is unknown, or the conditions are invalid

    @property
    def compile_error(self) -> str | None:
        """The API server's compile error of the selector, with its caret, or None."""
        error = None if self.result is None else self.result.compile_error
        return None if error is None else str(error)


@dataclass
class Allocation:
    """Where the simulated scheduler would put the pod now, and the devices its claim would get."""

    node: str | None
    devices: list[dict] = field(default_factory=list)  # {request, driver, pool, device}
    reason: str | None = None  # why none, when node is None


@dataclass
class Outcome:
    """Everything the builder shows for one state of the claim."""

    spec: ClaimSpec
    documents: list[dict] = field(default_factory=list)
    yaml: str = ""
    issues: list[Issue] = field(default_factory=list)
    choices: list[ChoiceOutcome] = field(default_factory=list)
    allocation: Allocation | None = None
    error: str | None = None  # the claim cannot be written out (a BuildError)

    @property
    def errors(self) -> list[Issue]:
        """Validation findings that would make the API server refuse the manifests."""
        return [i for i in self.issues if i.level == "error"]

    @property
    def valid(self) -> bool:
        """Whether the manifests can be exported, dry-run and applied."""
        return self.error is None and not self.errors and all(c.compile_error is None for c in self.choices)


def _choices(spec: ClaimSpec, frame: pd.DataFrame, classes: list[dict], version: str,
             gates: Mapping[str, bool] | None) -> list[ChoiceOutcome]:
    from drawb.cel import preview
    from drawb.cel.env import CEL_GATES

    gates = {k: v for k, v in (gates or {}).items() if k in CEL_GATES} or None  # those the CEL environment reads
    known = {(c.get("metadata") or {}).get("name") for c in classes}
    out = []
    for request in spec.requests:
        for choice in request.choices:
            name = choice.name if request.alternatives else request.name
            try:
                selector = choice.selector
            except BuildError as exc:
                out.append(ChoiceOutcome(request.name, name, choice.device_class, "", problem=str(exc)))
                continue
            item = ChoiceOutcome(request.name, name, choice.device_class, selector)
            if choice.device_class not in known:
                item.problem = f"no DeviceClass {choice.device_class!r} in the cluster"
            else:
                item.result = preview(frame, selector or EVERY_DEVICE, device_classes=classes,
                                      class_name=choice.device_class, kubernetes_version=version, feature_gates=gates)
            out.append(item)
    return out


def predict(documents: list[dict], namespace: str, state: PlanState) -> Allocation:
    """The node the simulated scheduler would pick for the pod of ``documents``, and its claim's devices there."""
    from drawb.alloc import AllocationError
    from drawb.plan.preview import try_nodes
    from drawb.plan.report import _reasons
    from drawb.plan.workload import resolve

    def find(kind: str, name: str, ns: str) -> dict | None:
        for doc in documents:
            if doc.get("kind") == kind and doc["metadata"].get("name") == name:
                return {**doc, "metadata": {**doc["metadata"], "namespace": ns}}
        return None

    pod = next(d for d in documents if d.get("kind") == "Pod")
    workload = resolve("Pod", pod["metadata"]["name"], namespace, find)
    try:
        result = try_nodes(workload, state, workload.claims, stop_at_first=True)
    except AllocationError as exc:
        return Allocation(None, reason=f"the scheduler would stop with an error: {exc}")
    if result.error:
        return Allocation(None, reason=f"the scheduler would stop with an error: {result.error}")
    if not result.fits:
        why = _reasons(result.rejected) or "there are no nodes"
        return Allocation(None, reason=f"fits on none of the {result.node_count} nodes now: {why}")
    fit = result.fits[0]
    devices = [dict(r) for a in fit.allocations for r in (a.get("devices") or {}).get("results") or []]
    return Allocation(fit.node, devices)


def evaluate(spec: ClaimSpec, *, frame: pd.DataFrame, classes: list[dict], state: PlanState | None,
             namespace: str, kubernetes_version: str, feature_gates: Mapping[str, bool] | None = None,
             cluster: Any = None) -> Outcome:
    """The outcome of ``spec`` on the cluster ``frame``/``classes``/``state`` describe (``state`` None: no
    prediction). ``cluster`` lets validation check the DeviceClasses and namespace against it."""
    from drawb.render import dump_documents, validate_documents

    outcome = Outcome(spec, choices=_choices(spec, frame, classes, kubernetes_version, feature_gates))
    try:
        outcome.documents = spec.documents(namespace)
    except BuildError as exc:
        outcome.error = str(exc)
        return outcome
    outcome.yaml = dump_documents(outcome.documents)
    outcome.issues = validate_documents(outcome.documents, kubernetes_version=kubernetes_version, cluster=cluster)
    if state is not None:
        if outcome.valid:
            outcome.allocation = predict(outcome.documents, namespace, state)
        else:
            outcome.allocation = Allocation(None, reason="fix the errors above first: the API server would refuse "
                                            "these manifests")
    return outcome
