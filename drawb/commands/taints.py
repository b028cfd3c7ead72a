"""``taints`` and ``taint``: device taints, with what they reach, and a DeviceTaintRule written with its
blast radius shown first.

``taints`` lists every taint of the cluster's devices: those its ResourceSlices publish (a driver's
health taints, such as NVIDIA's ``gpu.nvidia.com/xid``) and those of DeviceTaintRules, each with its
devices, the claims allocated on them and the pods those claims are reserved for.

``taint`` selects devices (``--device``, ``--driver``/``--pool``, or a CEL ``--selector`` evaluated on
the devices now) and shows which claims sit on them, which pods a NoExecute taint evicts (honouring
the allocation results' tolerations and ``tolerationSeconds``) and which pending pods lose their only
fit, per namespace; ``--dry-run`` and ``--apply`` then write the DeviceTaintRules (one per device, or one
for a whole driver or pool: a rule selects by driver, pool and device name alone) through the
``resource.k8s.io`` version the cluster serves them in.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from drawb import versions
from drawb.cluster.refusal import RbacRefused
from drawb.commands.registry import JsonResult, arg, command, with_warning
from drawb.cluster.protocol import ClusterError
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

    from drawb.plan.report import Report
    from drawb.plan.taints import Objects

EFFECTS = ("NoSchedule", "NoExecute", "None")
DEFAULT_KEY = "drawb/taint"
_JSON = arg("--json", action="store_true", help="the result as JSON")
TAINTS_COLUMNS = ["source", "key", "value", "effect", "time_added", "devices", "claims", "pods", "status"]


class TaintRuleNotServed(ClusterError):
    """The cluster serves no version of resource.k8s.io that has DeviceTaintRule."""


def _everywhere(session: Session, kind: str, unread: list[str]) -> list[dict]:
    """The ``kind`` objects of every namespace; where RBAC refuses that, those of the session's namespace, with
    ``kind`` added to ``unread``."""
    try:
        return session.cluster.list(kind)
    except RbacRefused:
        unread.append(kind)
        return session.cluster.list(kind, session.namespace)


def _unread_note(session: Session, unread: list[str]) -> str | None:
    """What a taint's reach leaves out when only the session's namespace could be read."""
    if not unread:
        return None
    return (f"{' and '.join(k + 's' for k in unread)} of namespace {session.namespace} only were read (RBAC refused "
            "listing them in every namespace): the claims a taint reaches are those of every namespace, their pods "
            f"are named only in {session.namespace}")


def _objects(session: Session) -> tuple[Objects, str | None, str | None]:
    """The cluster's objects a taint reaches, the version DeviceTaintRules are served in (None: none), and a note
    of what could not be read."""
    from drawb.plan.target import scheduled_taint_rules, scheduler_target, served_version
    from drawb.plan.taints import Objects

    cluster = session.cluster
    target = scheduler_target(cluster, session.rules_version)
    served = served_version(cluster, "DeviceTaintRule", target.kubernetes_version)
    unread: list[str] = []
    objects = Objects(nodes=cluster.list("Node"), slices=cluster.list("ResourceSlice"),
                      classes=cluster.list("DeviceClass"), claims=cluster.list("ResourceClaim"),
                      pods=_everywhere(session, "Pod", unread),
                      templates=_everywhere(session, "ResourceClaimTemplate", unread),
                      taint_rules=scheduled_taint_rules(cluster, target), kubernetes_version=target.kubernetes_version,
                      feature_gates=target.feature_gates)
    return objects, served, _unread_note(session, unread)


@command("taints", "Every device taint (from ResourceSlices and DeviceTaintRules) with the devices, claims and pods "
         "it reaches.", _JSON)
def taints_command(session: Session, args, cell) -> pd.DataFrame | JsonResult:
    """One row per taint and source."""
    import pandas as pd

    from drawb.plan.target import scheduler_target, served_version
    from drawb.plan.taints import taint_uses

    cluster = session.cluster
    target = scheduler_target(cluster, session.rules_version)
    served = served_version(cluster, "DeviceTaintRule", target.kubernetes_version)
    refused = None
    try:
        rules = cluster.list("DeviceTaintRule", api_version=f"resource.k8s.io/{served}") if served else []
    except RbacRefused as exc:
        rules, refused = [], exc
    unread: list[str] = []
    uses = taint_uses(cluster.list("ResourceSlice"), rules, cluster.list("ResourceClaim"),
                      _everywhere(session, "Pod", unread))
    records = [{"source": u.source, "key": u.taint.get("key", ""), "value": u.taint.get("value", ""),
                "effect": u.taint.get("effect", ""), "time_added": u.taint.get("timeAdded", ""),
                "devices": u.devices, "claims": u.claims, "pods": u.pods, "status": u.status} for u in uses]
    if args.json:
        note = _unread_note(session, unread)
        return JsonResult({"taints": records, **({"notes": [note]} if note else {})})
    from drawb.commands.registry import with_warning

    frame = pd.DataFrame([{**r, "devices": _per_pool(r["devices"]), "claims": ", ".join(r["claims"]),
                           "pods": ", ".join(r["pods"])} for r in records], columns=TAINTS_COLUMNS)
    if unread:
        frame = with_warning(frame, _unread_note(session, unread))
    if served is None:
        frame = with_warning(frame, f"the cluster serves no DeviceTaintRules ({_not_served(target.kubernetes_version)}): "
                                    "only the taints of ResourceSlices are listed")
    elif refused is not None:
        frame = with_warning(frame, f"{refused.title}: {refused}; only the taints of ResourceSlices are listed")
    return frame


def _per_pool(devices: list[str]) -> str:
    """``driver/pool: N devices`` per pool, or the device itself when it is the pool's only one."""
    pools: dict[str, list[str]] = {}
    for device in devices:
        pool, _, name = device.rpartition("/")
        pools.setdefault(pool, []).append(name)
    return ", ".join(f"{pool}/{names[0]}" if len(names) == 1 else f"{pool}: {len(names)} devices"
                     for pool, names in pools.items())


def _not_served(minor: str) -> str:
    have = versions.rules(minor).kind_versions("DeviceTaintRule")
    return (f"Kubernetes {minor} has them in resource.k8s.io {', '.join(have)}; start kube-apiserver with "
            f"--runtime-config=resource.k8s.io/{have[0]}=true") if have else f"Kubernetes {minor} has none"


def parse_device(text: str) -> tuple[str, str, str]:
    """``DRIVER/POOL/DEVICE`` (the pool may hold slashes) -> (driver, pool, device)."""
    driver, _, rest = text.partition("/")
    pool, _, device = rest.rpartition("/")
    if not driver or not pool or not device:
        raise UsageError(f"--device {text!r} is not DRIVER/POOL/DEVICE", hint="e.g. --device gpu.nvidia.com/node-1/gpu-0")
    return driver, pool, device


def _published(objects: Objects) -> dict[tuple[str, str, str], None]:
    found: dict[tuple[str, str, str], None] = {}
    for rs in objects.slices:
        spec = rs.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for device in spec.get("devices") or ():
            found[(driver, pool, device.get("name", ""))] = None
    return found


def _selected(session: Session, args, objects: Objects) -> tuple[list[tuple[str, str, str]], list[dict]]:
    """The devices chosen, and the deviceSelectors of the rules that taint them."""
    published = _published(objects)
    if args.devices:
        if args.driver or args.pool or args.selector:
            raise UsageError("--device names devices whole: give it alone, or --driver/--pool/--selector without it")
        chosen = [parse_device(d) for d in args.devices]
        missing = [d for d in chosen if d not in published]
        if missing:
            import difflib

            close = difflib.get_close_matches("/".join(missing[0]), ["/".join(d) for d in published], n=1)
            raise UsageError(f"no published device {'/'.join(missing[0])}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
                             hint=f"did you mean {close[0]}?" if close else f"`{PROG} devices` lists them")
        chosen = list(dict.fromkeys(chosen))
        return chosen, [{"driver": d, "pool": p, "device": n} for d, p, n in chosen]
    if not (args.driver or args.pool or args.selector):
        raise UsageError("name the devices to taint", hint="--device DRIVER/POOL/DEVICE, --driver D, --pool P or --selector CEL")
    chosen = [d for d in published if (args.driver in (None, d[0])) and (args.pool in (None, d[1]))]
    if args.selector:
        chosen = _by_selector(session, args.selector, set(chosen))
        return chosen, [{"driver": d, "pool": p, "device": n} for d, p, n in chosen]
    if not chosen:
        raise UsageError(f"no published device of {_scope(args)}", hint=f"`{PROG} devices` lists them")
    return chosen, [{k: v for k, v in (("driver", args.driver), ("pool", args.pool)) if v}]


def _scope(args) -> str:
    return " and ".join(f"{k} {v}" for k, v in (("driver", args.driver), ("pool", args.pool)) if v)


def _by_selector(session: Session, expression: str, within: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    from drawb.commands.select import select_devices

    frame = session.devices()
    keep = [(d, p, n) in within for d, p, n in zip(frame["driver"], frame["pool"], frame["device"])]
    result = select_devices(session, frame[keep], expression)
    if result.compile_error is not None:
        raise UsageError(f"--selector does not compile: {result.compile_error}", hint="check it with `select`")
    if result.error_count:
        raise UsageError(f"--selector errors on {result.error_count} device(s), for example: "
                         f"{result.errors.iloc[0].get('error')}", hint="guard the attribute with has() or `.?`")
    matches = result.matches
    chosen = list(zip(matches["driver"], matches["pool"], matches["device"]))
    if not chosen:
        raise UsageError("--selector selects no device", hint="preview it with `select`")
    return list(dict.fromkeys(chosen))


def taint_rules(selectors: list[dict], taint: dict, api_version: str) -> list[dict]:
    """One DeviceTaintRule per selector, named after what it selects and its taint (the same taint on the
    same devices has the same name, so applying again changes nothing)."""
    rules = []
    for selector in selectors:
        digest = hashlib.sha256(json.dumps([selector, taint], sort_keys=True).encode()).hexdigest()[:10]
        rules.append({"apiVersion": f"resource.k8s.io/{api_version}", "kind": "DeviceTaintRule",
                      "metadata": {"name": f"drawb-taint-{digest}"},
                      "spec": {"deviceSelector": dict(selector), "taint": dict(taint)}})
    return rules


def _taint(args, minor: str) -> dict:
    rules = versions.rules(minor)
    if args.effect not in EFFECTS or (args.effect == "None" and not rules.has("api.taint_effect_none")):
        allowed = [e for e in EFFECTS if e != "None" or rules.has("api.taint_effect_none")]
        raise UsageError(f"--effect {args.effect!r} is not a device taint effect of Kubernetes {rules.minor}",
                         hint=f"one of {', '.join(allowed)}")
    from drawb.api.names import invalid, is_label_value, is_qualified_name

    for flag, value, problems in (("--key", args.key, is_qualified_name(args.key)),
                                  ("--value", args.value or "", is_label_value(args.value or ""))):
        if problems:
            raise UsageError(invalid(flag, value, "; ".join(problems)), hint="a taint's key is a label key, its value a label value")
    taint = {"key": args.key, "effect": args.effect}
    if args.value:
        taint["value"] = args.value
    return taint


@command(
    "taint",
    "Show what a device taint would reach (devices, claims, evicted pods, pending pods losing their only fit), "
    "then --dry-run or --apply it as DeviceTaintRules.",
    arg("--device", dest="devices", action="append", default=[], metavar="DRIVER/POOL/DEVICE",
        help="a device to taint; repeat for more"),
    arg("--selector", help="a CEL device selector: taints the devices it selects now (one rule per device)"),
    arg("--driver", help="every device of this driver (with --pool: of that pool)"),
    arg("--pool", help="every device of this pool"),
    arg("--effect", required=True, help="NoSchedule, NoExecute, or None (1.35+: informational)"),
    arg("--key", default=DEFAULT_KEY, help=f"the taint's key (default {DEFAULT_KEY})"),
    arg("--value", help="the taint's value"),
    arg("--dry-run", action="store_true", help="server-side dry run of the DeviceTaintRules"),
    arg("--apply", action="store_true", help="dry run, then write the DeviceTaintRules"),
    _JSON,
)
def taint_command(session: Session, args, cell) -> Report | JsonResult:
    """The blast radius, then the rules dry-run or applied when asked."""
    from drawb.plan.taints import blast_radius

    if args.dry_run and args.apply:
        raise UsageError("--dry-run and --apply exclude each other", hint="--dry-run checks, --apply writes")
    objects, served, note = _objects(session)
    taint = _taint(args, objects.kubernetes_version)
    chosen, selectors = _selected(session, args, objects)
    radius = blast_radius(objects, chosen, taint)
    have = versions.rules(objects.kubernetes_version).kind_versions("DeviceTaintRule")
    rules = taint_rules(selectors, taint, served or have[0])
    written = None
    if args.dry_run or args.apply:
        if served is None:
            raise TaintRuleNotServed(f"the cluster serves no DeviceTaintRules: {_not_served(objects.kubernetes_version)}; "
                                     "nothing was written")
        from drawb.cluster.refusal import Right, require_rights

        require_rights(session.cluster, f"{session.prog} taint",
                       [Right(v, "devicetaintrules", "resource.k8s.io", None) for v in ("get", "create", "patch")])
        written = session.cluster.apply(rules, dry_run=not args.apply)
    report = _report(radius, rules, written, args, objects, served)
    if note:
        report.sentence += f" ({note})"
    return JsonResult(report.to_dict(), 0) if args.json else report


def _gate_note(objects: Objects, served: str | None) -> str:
    from drawb.plan.target import SchedulerTarget, gate_on

    rules = versions.rules(objects.kubernetes_version)
    gate, read = rules.kind_gate("DeviceTaintRule"), rules.kind_versions("DeviceTaintRule")[0]
    if gate_on(SchedulerTarget(objects.kubernetes_version, objects.feature_gates), gate):
        if served is None or served == read:
            return ""
        return (f" kube-scheduler {rules.minor} reads DeviceTaintRules through resource.k8s.io/{read}, which the cluster "
                f"does not serve: with {gate} on it never syncs and schedules no pod (add resource.k8s.io/{read}=true "
                "to kube-apiserver's --runtime-config).")
    return (f" {gate} is off: kube-scheduler and kube-controller-manager ignore DeviceTaintRules, so the rules would "
            "be stored and do nothing.")


def _report(radius, rules: list[dict], written: list[dict] | None, args, objects: Objects, served: str | None) -> Report:
    import pandas as pd

    from drawb.plan.report import Report
    from drawb.plan.taints import taint_text

    rows = [{"what": "device", "name": d, "detail": ""} for d in radius.devices]
    rows += [{"what": "claim", "name": c, "detail": "allocated on the devices"} for c in radius.claims]
    rows += [{"what": "evicted pod", "name": p, "detail": "at once" if s == 0 else f"{s:g} s after the taint (tolerationSeconds)"}
             for p, s in radius.evicted.items()]
    rows += [{"what": "pending pod losing its only fit", "name": p, "detail": ""} for p in radius.losing_fit]
    frame = pd.DataFrame(rows, columns=["what", "name", "detail"])
    state = ("applied" if args.apply else "dry run accepted" if args.dry_run else "preview only: nothing written "
             "(--dry-run checks, --apply writes)")
    effect = radius.taint.get("effect")
    sentence = (f"{taint_text(radius.taint)} on {len(radius.devices)} device(s): {len(radius.claims)} claim(s) on them, "
                f"{len(radius.evicted)} pod(s) evicted, {len(radius.losing_fit)} pending pod(s) lose their only fit"
                + ("" if effect == "NoExecute" else f" ({effect} evicts nothing)")
                + f"; {len(rules)} DeviceTaintRule(s), {state}." + _gate_note(objects, served))
    data = {"devices": radius.devices, "claims": radius.claims, "evicted_pods": sorted(radius.evicted),
            "pending_pods_losing_fit": radius.losing_fit,
            "evictions": [{"pod": p, "after_seconds": s} for p, s in radius.evicted.items()],
            "by_namespace": radius.by_namespace(), "taint": radius.taint,
            "rules": written if written is not None else rules,
            "written": "applied" if args.apply else "dry-run" if args.dry_run else None,
            "kubernetes_version": objects.kubernetes_version}
    return Report(sentence, frame, data)
