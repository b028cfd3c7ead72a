"""``pools``: per resource pool, devices total, allocated, available and unavailable (and why), in the shape
of a ``ResourcePoolStatusRequest``'s answer; where the cluster serves that API (KEP-5677,
``resource.k8s.io/v1alpha3`` from 1.36 with ``DRAResourcePoolStatus``), its own answer beside drawb's, and
where the two differ, why.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from drawb import versions
from drawb.commands.registry import JsonResult, arg, command
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.plan.report import Report

KIND = "ResourcePoolStatusRequest"
WAIT_S = 30.0  # how long the server's controller gets to answer
COLUMNS = ["driver", "pool", "node", "generation", "slices", "total", "allocated", "available", "unavailable", "tainted",
           "counters_used_up", "error"]


def _server_status(session: Session, drivers: list[str], version: str) -> tuple[dict[str, Any] | None, str]:
    """The cluster's answer for ``drivers`` (one request per driver, the most pools each), and a note."""
    from drawb.cluster.refusal import Right, require_rights

    cluster = session.cluster
    require_rights(cluster, f"{session.prog} pools", [Right(v, "resourcepoolstatusrequests", "resource.k8s.io", None)
                                                        for v in ("get", "create", "delete")])
    pools: list[dict] = []
    count = 0
    for driver in drivers:
        name = f"drawb-pools-{uuid.uuid4().hex[:8]}"
        cluster.apply([{"apiVersion": f"resource.k8s.io/{version}", "kind": KIND, "metadata": {"name": name},
                        "spec": {"driver": driver, "limit": 1000}}])
        try:
            deadline = time.monotonic() + WAIT_S
            status = None
            while status is None and time.monotonic() < deadline:
                status = (cluster.get(KIND, name) or {}).get("status")
                if status is None:
                    time.sleep(0.2)
        finally:
            cluster.delete(KIND, name)
        if status is None:
            return None, f"the cluster's ResourcePoolStatusRequest for {driver} got no answer within {WAIT_S:g} s"
        pools += status.get("pools") or []
        count += status.get("poolCount") or 0
    return {"poolCount": count, "pools": pools}, ""


@command("pools", "Per resource pool: devices total, allocated, available and unavailable (tainted, shared counters "
         "used up), as the allocator counts them; beside the cluster's own ResourcePoolStatusRequest answer where it "
         "serves one, with why they differ.",
         arg("--driver", help="only the pools of this driver"),
         arg("--no-server", action="store_true", help="do not ask the cluster (no ResourcePoolStatusRequest is written)"),
         arg("--json", action="store_true", help="the result as JSON"))
def pools_command(session: Session, args, cell) -> Report | JsonResult:
    """drawb's counts, and the cluster's answer beside them where it serves one."""
    import pandas as pd

    from drawb.plan.pools import differences, pool_status
    from drawb.plan.report import Report
    from drawb.plan.target import gate_on, scheduled_taint_rules, scheduler_target, served_version

    cluster = session.cluster
    target = scheduler_target(cluster, session.rules_version)
    rules = versions.rules(target.kubernetes_version)
    status = pool_status(cluster.list("ResourceSlice"), cluster.list("ResourceClaim"),
                         scheduled_taint_rules(cluster, target), target.kubernetes_version, target.feature_gates,
                         args.driver)
    served = served_version(cluster, KIND, target.kubernetes_version)
    server, note = None, ""
    if args.no_server:
        note = "the cluster was not asked (--no-server)"
    elif served is None:
        note = ("the cluster serves no ResourcePoolStatusRequest" + (
            f" (Kubernetes {rules.minor} has it in resource.k8s.io/{rules.kind_versions(KIND)[0]} with "
            f"{rules.kind_gate(KIND)}, behind --runtime-config)" if rules.kind_versions(KIND) else
            f" (Kubernetes {rules.minor} has none; 1.36 and later do)"))
    elif not gate_on(target, rules.kind_gate(KIND)):
        note = f"{rules.kind_gate(KIND)} is off: nothing answers a ResourcePoolStatusRequest"
    else:
        from drawb.cluster.refusal import RightsMissing

        drivers = sorted({p.driver for p in status.pools}) or ([args.driver] if args.driver else [])
        try:
            server, note = _server_status(session, drivers, served)
        except RightsMissing as exc:  # drawb's own counts stand; say why the cluster was not asked
            note = f"the cluster was not asked: {exc}"
    found = differences(status, server, rules.has("pools.counts_taints")) if server is not None else []
    rows = [{"driver": p.driver, "pool": p.pool, "node": p.node, "generation": p.generation, "slices": p.slices,
             "total": p.total, "allocated": p.allocated, "available": p.available, "unavailable": p.unavailable,
             "tainted": p.tainted, "counters_used_up": p.counters, "error": p.validation_error or ""} for p in status.pools]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    totals = {k: sum(p.__dict__[k] or 0 for p in status.pools) for k in ("total", "allocated", "available", "unavailable")}
    sentence = (f"{len(status.pools)} pool(s): {totals['total']} devices, {totals['allocated']} allocated, "
                f"{totals['available']} available, {totals['unavailable']} unavailable (drawb, as the allocator counts)")
    if server is not None:
        sentence += (f"; the cluster's ResourcePoolStatusRequest answer differs in {len(found)} field(s)" if found
                     else "; the cluster's ResourcePoolStatusRequest answer agrees")
    elif note:
        sentence += f"; {note}"
    data = {"status": status.to_api(), "server": server, "differences": [d.__dict__ for d in found], "note": note or None,
            "kubernetes_version": target.kubernetes_version}
    if found:  # the differences follow the sentence, in text and HTML
        sentence += ".\n" + "\n".join(f"  {d.driver}/{d.pool} {d.field}: drawb {d.drawb}, server {d.server} ({d.why})"
                                            for d in found[:20]) + (f"\n  ... and {len(found) - 20} more" if len(found) > 20 else "")
    report = Report(sentence if found else sentence + ".", frame, data)
    return JsonResult(report.to_dict(), 0) if args.json else report
