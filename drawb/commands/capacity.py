"""``capacity``: how many more copies of a pod, claim or template fit now, per node and in total."""

from __future__ import annotations

from drawb.commands.preview import FILE, JSON, NAMESPACE, TARGET, workload_for
from drawb.commands.registry import JsonResult, command
from drawb.session import Session


@command("capacity", "How many more copies of a pod, claim or template fit now, per node and in total; what runs "
         "out first, MIG devices left unusable, shared counters left.", TARGET, FILE, NAMESPACE, JSON)
def capacity_command(session: Session, args, cell):
    from drawb.plan import capacity
    from drawb.plan.read import read_view
    from drawb.plan.report import capacity_report

    workload = workload_for(session, args.target, args.file, args.namespace)
    state = read_view(session.cluster, session.rules_version)
    report = capacity_report(capacity(workload, state), state.where)
    return JsonResult(report.to_dict(), report.exit_status) if args.json else report
