"""Node selectors as the scheduler reads them: ``nodeSelector``, required node affinity, taints,
and the scheduler's node filters before DynamicResources (``node_filter``).

``NodeSelector`` terms are ORed, the requirements of a term ANDed; ``matchFields`` knows only
``metadata.name``, as in Kubernetes.
"""

from __future__ import annotations


def _requirement_matches(req: dict, values: dict[str, str]) -> bool:
    key, op, wanted = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    present = key in values
    if op == "In":
        return present and values[key] in wanted
    if op == "NotIn":
        return not present or values[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(wanted) == 1:
        try:
            have, limit = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > limit if op == "Gt" else have < limit
    return False


def term_matches(term: dict, node: dict) -> bool:
    """Whether one NodeSelectorTerm matches ``node`` (an empty term matches nothing)."""
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node["metadata"].get("labels") or {}
    names = {"metadata.name": node["metadata"]["name"]}
    return (all(_requirement_matches(r, labels) for r in expressions)
            and all(_requirement_matches(r, names) for r in fields))


def selector_matches(selector: dict | None, node: dict) -> bool:
    """Whether a NodeSelector (``nodeSelectorTerms``) matches ``node``; None matches every node."""
    if selector is None:
        return True
    return any(term_matches(t, node) for t in selector.get("nodeSelectorTerms") or ())


def pod_matches_node(pod: dict, node: dict) -> bool:
    """The NodeAffinity filter: ``spec.nodeSelector`` and required node affinity."""
    spec = pod["spec"]
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    return selector_matches(required, node) if required else True


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether one toleration tolerates one taint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", "")


def untolerated_taint(pod: dict, node: dict) -> dict | None:
    """The first NoSchedule/NoExecute taint of ``node`` the pod does not tolerate, if any."""
    tolerations = pod["spec"].get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


UNSCHEDULABLE_NODE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
_UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def node_filter(pod: dict, node: dict) -> str | None:
    """The filters the scheduler runs before DynamicResources, in its order: NodeUnschedulable,
    TaintToleration, NodeAffinity. The first one's reason (the scheduler's words), or None."""
    if (node.get("spec") or {}).get("unschedulable") and not any(
        tolerates(t, _UNSCHEDULABLE_TAINT) for t in pod["spec"].get("tolerations") or ()
    ):
        return UNSCHEDULABLE_NODE
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    if not pod_matches_node(pod, node):
        return NODE_AFFINITY
    return None
