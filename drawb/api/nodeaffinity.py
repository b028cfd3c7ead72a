"""Nodes as the scheduler filters them before DynamicResources, in one place.

- Node selectors as ``nodeaffinity.NewNodeSelector`` parses them (``compile_node_selector``): terms
  ORed, the requirements of a term ANDed, ``matchFields`` knowing only ``metadata.name``; the lazy
  form the NodeAffinity plugin uses for a pod ignores the terms it cannot parse.
- Tolerations as ``core/v1`` ``Toleration.ToleratesTaint`` reads them (``tolerates``), for node and
  device taints alike.
- The filters NodeUnschedulable, TaintToleration and NodeAffinity, in the scheduler's order, with a
  reason code, the scheduler's words and the exact cause (``node_exclusion``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Obj = Mapping[str, Any]
NodePredicate = Callable[[Obj | None], bool]

UNSCHEDULABLE_NODE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
_UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
_INT64 = re.compile(r"[+-]?[0-9]+")


class NodeSelectorError(ValueError):
    """A node selector that nodeaffinity cannot parse."""


def _int64(text: Any) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: digits with an optional sign, nothing else."""
    if not isinstance(text, str) or not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _label_matcher(req: Obj) -> Callable[[Mapping[str, str]], bool]:
    key, op, values = req.get("key", ""), req.get("operator", ""), list(req.get("values") or [])
    if op in ("In", "NotIn"):
        if not values:
            raise NodeSelectorError(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        wanted = frozenset(values)
        if op == "In":
            return lambda labels: key in labels and labels[key] in wanted
        return lambda labels: key not in labels or labels[key] not in wanted
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise NodeSelectorError(f"{key}: values set must be empty for exists and does not exist")
        if op == "Exists":
            return lambda labels: key in labels
        return lambda labels: key not in labels
    if op in ("Gt", "Lt"):
        bound = _int64(values[0]) if len(values) == 1 else None
        if bound is None:
            raise NodeSelectorError(f"{key}: for 'Gt', 'Lt' operators, exactly one integer value is required")

        def compare(labels: Mapping[str, str]) -> bool:
            have = _int64(labels.get(key))
            return have is not None and (have > bound if op == "Gt" else have < bound)

        return compare
    raise NodeSelectorError(f"{op!r} is not a valid label selector operator")


def _field_matcher(req: Obj) -> Callable[[str], bool]:
    key, op, values = req.get("key", ""), req.get("operator", ""), list(req.get("values") or [])
    if key != "metadata.name":
        raise NodeSelectorError(f"{key!r} is not a valid field selector key")
    if op not in ("In", "NotIn"):
        raise NodeSelectorError(f"{op!r} is not a valid field selector operator")
    if len(values) != 1:
        raise NodeSelectorError(f"unexpected number of value ({len(values)}) for node field selector operator {op!r}")
    value = values[0]
    if op == "In":
        return lambda name: name == value
    return lambda name: name != value


def compile_node_selector(selector: Obj, lazy: bool = False) -> NodePredicate:
    """A predicate over Node objects. A term that cannot be parsed raises NodeSelectorError (every
    error, joined), or with ``lazy`` is dropped, as the NodeAffinity plugin does for a pod's terms."""
    terms = []
    errors = []
    for term in selector.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches no objects
        try:
            terms.append(([_label_matcher(r) for r in exprs], [_field_matcher(r) for r in fields]))
        except NodeSelectorError as err:
            errors.append(str(err))
    if errors and not lazy:
        raise NodeSelectorError(", ".join(errors))

    def match(node: Obj | None) -> bool:
        if node is None:
            return False
        metadata = node.get("metadata") or {}
        labels, name = metadata.get("labels") or {}, metadata.get("name", "")
        return any(all(m(labels) for m in label_reqs) and all(m(name) for m in field_reqs)
                   for label_reqs, field_reqs in terms)

    return match


def selector_matches(selector: Obj | None, node: Obj) -> bool:
    """Whether a NodeSelector (``nodeSelectorTerms``) matches ``node``, terms it cannot parse ignored;
    None matches every node."""
    return selector is None or compile_node_selector(selector, lazy=True)(node)


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """Whether one toleration tolerates one taint (node or device): ``Toleration.ToleratesTaint``."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def untolerated_taint(pod: Obj, node: Obj) -> Obj | None:
    """The first NoSchedule/NoExecute taint of ``node`` the pod does not tolerate, if any."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _required_affinity(pod: Obj) -> Obj | None:
    spec = pod.get("spec") or {}
    return ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")


def pod_matches_node(pod: Obj, node: Obj) -> bool:
    """The NodeAffinity filter: ``spec.nodeSelector`` and required node affinity."""
    return _affinity_miss(pod, node) is None


@dataclass(frozen=True)
class NodeExclusion:
    """Why a filter before DynamicResources turns a node away: ``code`` (``unschedulable``, ``taint``
    or ``node-affinity``), ``scheduler`` (the words of the scheduler's FailedScheduling event) and
    ``detail`` (the exact cause, for a person)."""

    code: str
    scheduler: str
    detail: str


def _affinity_miss(pod: Obj, node: Obj) -> str | None:
    """What of the pod's nodeSelector or required node affinity ``node`` misses, or None."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return f"the pod's nodeSelector {key}={value} does not match (node has {key}={labels.get(key, '<none>')})"
    required = _required_affinity(pod)
    if required and not compile_node_selector(required, lazy=True)(node):
        try:
            compile_node_selector(required)
        except NodeSelectorError as err:
            return f"the pod's required node affinity cannot be parsed: {err}"
        return "the pod's required node affinity does not match"
    return None


def node_exclusion(pod: Obj, node: Obj) -> NodeExclusion | None:
    """The first of NodeUnschedulable, TaintToleration and NodeAffinity that turns ``node`` away for
    ``pod``, or None."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or ()
    if (node.get("spec") or {}).get("unschedulable") and not any(tolerates(t, _UNSCHEDULABLE_TAINT) for t in tolerations):
        return NodeExclusion("unschedulable", UNSCHEDULABLE_NODE, "the node is unschedulable (cordoned)")
    taint = untolerated_taint(pod, node)
    if taint is not None:
        key, value, effect = taint.get("key"), taint.get("value", ""), taint.get("effect")
        return NodeExclusion("taint", f"node(s) had untolerated taint {{{key}: {value}}}",
                             f"node taint {key}={value}:{effect} not tolerated by the pod")
    miss = _affinity_miss(pod, node)
    if miss is not None:
        return NodeExclusion("node-affinity", NODE_AFFINITY, miss)
    return None


def node_filter(pod: Obj, node: Obj) -> str | None:
    """The scheduler's words for the first filter before DynamicResources that turns ``node`` away, or None."""
    exclusion = node_exclusion(pod, node)
    return exclusion.scheduler if exclusion else None
