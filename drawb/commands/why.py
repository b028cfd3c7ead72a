"""``why``: why a pod is pending (or a claim unallocated), or why its claims got these devices; why a workload
(Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) has the pods it has."""

from __future__ import annotations

from pathlib import Path

from drawb.commands.registry import JsonResult, arg, command
from drawb.errors import UsageError
from drawb.session import Session

# kubectl's names of the workload kinds (singular, plural, short)
WORKLOAD_KINDS = {
    **dict.fromkeys(("deploy", "deployment", "deployments"), "Deployment"),
    **dict.fromkeys(("rs", "replicaset", "replicasets"), "ReplicaSet"),
    **dict.fromkeys(("sts", "statefulset", "statefulsets"), "StatefulSet"),
    **dict.fromkeys(("ds", "daemonset", "daemonsets"), "DaemonSet"),
    **dict.fromkeys(("job", "jobs"), "Job"),
    **dict.fromkeys(("cj", "cronjob", "cronjobs"), "CronJob"),
}
_KINDS = {"pod": "Pod", "pods": "Pod", "po": "Pod", "claim": "ResourceClaim", "resourceclaim": "ResourceClaim",
          "resourceclaims": "ResourceClaim", **WORKLOAD_KINDS}


@command(
    "why",
    "Why a pod is pending or a claim is not allocated: the scheduler's view recomputed per request (devices of the "
    "class, passing the selectors, free, tolerated, fitting counters, constraints, nodes), the first stage that "
    "empties, near misses and what would make it fit; for allocated claims, why these devices; for a workload "
    "(deploy/, rs/, sts/, ds/, job/, cronjob/NAME), its pods against what it wants, each group of alike pending pods "
    "explained once, or what its controller waits for.",
    arg("target", nargs="?", help="POD, pod/NAME, claim/NAME or a workload: deploy/NAME, rs/NAME, sts/NAME, ds/NAME, "
        "job/NAME, cronjob/NAME (a bare name is a pod, else a claim)"),
    arg("-n", "--namespace", help="the object's namespace (default: the session's)"),
    arg("-f", "--file", help="a manifest file: explain the Pod or ResourceClaim it describes"),
    arg("--json", action="store_true", help="return the explanation as JSON"),
)
def why(session: Session, args, cell):
    from drawb.explain import explain
    from drawb.plan.errors import ObjectNotFound
    from drawb.plan.read import read_view

    if bool(args.target) == bool(args.file):
        raise UsageError("why needs one POD, pod/NAME, claim/NAME, a workload (deploy/NAME, job/NAME, ...) or --file FILE",
                         hint="e.g. `{prog} why gpu-pod -n gpu-test`")
    if args.file:
        kind, name, namespace = _from_file(args.file)
        namespace = args.namespace or namespace or session.namespace
    else:
        kind, name = _parse_target(args.target)
        namespace = args.namespace or session.namespace
    state = read_view(session.cluster, session.rules_version, explaining=True, namespace=namespace)
    if kind in WORKLOAD_KINDS.values():
        explanation = _why_workload(session, state, kind, namespace, name)
        return JsonResult(explanation.to_dict()) if args.json else explanation
    if kind is None:
        kind = "Pod" if state.pod(namespace, name) is not None or state.claim(namespace, name) is None else "ResourceClaim"
    try:
        explanation = explain(state, kind, namespace, name)
    except ObjectNotFound:
        if kind == "Pod":
            _pod_elsewhere(session, namespace, name)
        raise
    return JsonResult(explanation.to_dict()) if args.json else explanation


def _why_workload(session: Session, state, kind: str, namespace: str, name: str):
    """The workload's explanation: the workload, and the ReplicaSets or Jobs its pods may come through, read."""
    from drawb.explain.workload import INTERMEDIATE, explain_workload
    from drawb.plan.errors import ObjectNotFound

    workload = session.cluster.get(kind, name, namespace)
    if workload is None:
        raise ObjectNotFound(f"no {kind} '{name}' in namespace '{namespace}'", kind=kind,
                             hint=f"check the {kind}'s name and namespace (`-n NAMESPACE`)")
    intermediates = session.cluster.list(INTERMEDIATE[kind], namespace) if kind in INTERMEDIATE else []
    now = None
    lifecycle = getattr(session.cluster, "lifecycle", None)
    if lifecycle is not None:  # a simulated cluster: its own clock says when a CronJob runs next
        from datetime import UTC, datetime

        now = datetime.strptime(lifecycle.timestamp(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return explain_workload(state, workload, intermediates, now)


def _pod_elsewhere(session: Session, namespace: str, name: str) -> None:
    """OtherNamespace when a pod ``name`` is in another namespace: pods of every namespace are read for this
    error alone, where RBAC allows it (else the pod is just not found)."""
    from drawb.cluster.refusal import RbacRefused
    from drawb.explain.pod import find_among

    try:
        pods = session.cluster.list("Pod")
    except RbacRefused:
        return
    find_among(pods, "Pod", namespace, name)


def _parse_target(target: str) -> tuple[str | None, str]:
    prefix, sep, name = target.partition("/")
    if not sep:
        return None, target
    kind = _KINDS.get(prefix.lower())
    if kind is None or not name:
        raise UsageError(f"cannot read {target!r}: write POD, pod/NAME, claim/NAME or a workload: deploy/NAME, rs/NAME, "
                         "sts/NAME, ds/NAME, job/NAME, cronjob/NAME", hint="e.g. `{prog} why claim/gpu-claim`")
    return kind, name


def _from_file(path: str) -> tuple[str, str, str | None]:
    """(kind, name, namespace) of the first Pod or ResourceClaim in a manifest file; NotAManifest otherwise."""
    import yaml

    from drawb.plan.errors import NotAManifest

    file = Path(path)
    if not file.is_file():
        raise NotAManifest(f"{path}: no such file", hint="give the path of a YAML or JSON manifest")
    try:
        documents = [d for d in yaml.safe_load_all(file.read_text()) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        raise NotAManifest(f"{path} is not YAML or JSON{at}: {getattr(exc, 'problem', None) or exc}",
                           hint="give a Pod or ResourceClaim manifest") from None
    kinds = []
    for doc in documents:
        if not isinstance(doc, dict) or "kind" not in doc:
            continue
        kinds.append(str(doc["kind"]))
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        if doc["kind"] in ("Pod", "ResourceClaim") and name:
            return doc["kind"], name, (doc.get("metadata") or {}).get("namespace")
    found = f"it holds {', '.join(kinds)}" if kinds else "it holds no Kubernetes object (no document has a kind)"
    raise NotAManifest(f"{path} is not a Pod or ResourceClaim manifest: {found}",
                       hint="why explains a Pod or a ResourceClaim with metadata.name")
