"""``check``: launch a CUDA check pod and prove it got exactly the devices allocated to its claim."""

from __future__ import annotations

import html
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drawb.cluster.refusal import Right, require_rights
from drawb.commands.registry import COMMANDS, JsonResult, arg, command
from drawb.errors import PROG
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.check.leftovers import Leftover
    from drawb.cluster.journal import Journal, Write


@command(
    "check",
    "Run a check pod on a template, an existing claim or a selector; stream its nvidia-smi output and "
    "compare the GPUs it saw with the devices allocated to its claim (PASS, MISMATCH, NO GPU VISIBLE, FAILED, "
    "TIMEOUT). Everything it creates is labelled and deleted afterwards unless --keep.",
    arg("template", nargs="?", help="a template with a pod: single-gpu, mig-profile, multi-gpu-one-node, shared-claim"),
    arg("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="a template parameter"),
    arg("--claim", help="check an existing ResourceClaim (the check pod uses it; the claim is never changed)"),
    arg("--selector", help="a CEL selector for the devices (with --class, default gpu.nvidia.com)"),
    arg("--class", dest="device_class", help="DeviceClass of the devices (with or without --selector)"),
    arg("--count", type=int, default=1, help="how many devices the selector asks for (default 1)"),
    arg("--payload", choices=("list", "query", "sample"), default="list",
        help="list: nvidia-smi -L (default); query: nvidia-smi --query-gpu CSV; sample: -L then --command"),
    arg("--command", help="the CUDA sample to run with --payload sample, e.g. /samples/vectorAdd"),
    arg("--image", help="container image (default: the template's, or nvcr.io/nvidia/cuda base)"),
    arg("--node", help="pin the pod to this node (node affinity; the scheduler still allocates)"),
    arg("-n", "--namespace", help="namespace for the check's objects (default: the namespace option)"),
    arg("--timeout", type=float, default=120, help="seconds before the verdict is TIMEOUT (default 120)"),
    arg("--keep", action="store_true", help="leave the pod and claim template in place for a look"),
    arg("--json", action="store_true", help="return the verdict as JSON"),
)
def check(session: Session, args, cell):
    from drawb.check import check as run
    from drawb.commands.render import collect_values

    if args.payload == "sample" and not args.image:
        from drawb.errors import UsageError

        raise UsageError("--payload sample needs --image: the image that holds the CUDA sample",
                         hint="e.g. --image nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0 --command /cuda-samples/vectorAdd")
    values = collect_values(args.sets, None, session.user_ns) if args.sets else {}
    namespace = args.namespace or session.namespace
    require_rights(session.cluster, f"{session.prog} check", _rights(namespace, with_template=not args.claim))
    why = f"{session.prog} why" if "why" in COMMANDS else None
    _report_leftovers(session, namespace)
    verdict = run(
        session.cluster, namespace=namespace, timeout=args.timeout, keep=args.keep,
        progress=getattr(session, "progress", None), why_hint=why,
        template=args.template, values=values, template_dirs=tuple(d for d in [session.template_dir] if d),
        claim=args.claim, selector=args.selector, device_class=args.device_class, count=args.count,
        payload=args.payload, command=shlex.split(args.command) if args.command else None, image=args.image,
        node=args.node,
    )
    return JsonResult(verdict.to_dict(), verdict.exit_status) if args.json else verdict


def _report_leftovers(session: Session, namespace: str) -> None:
    """Say so when killed checks left objects in ``namespace``, with the command that removes them."""
    from drawb.check.leftovers import find_leftovers
    from drawb.cluster.protocol import ClusterError

    progress = getattr(session, "progress", None)
    try:
        leftovers = find_leftovers(session.cluster, namespace)
    except ClusterError:  # a report on the side: the check itself says what it may not do
        return
    if leftovers and progress is not None:
        runs = sorted({leftover.run for leftover in leftovers})
        progress(f"leftovers of {len(runs)} killed run(s) in {namespace}: "
                 f"{', '.join(leftover.label for leftover in leftovers)}; `{session.prog} cleanup -n {namespace}` "
                 "removes them")


@dataclass
class Cleaned:
    """What ``cleanup`` found and removed (or, in a dry run, would remove)."""

    status: str
    leftovers: list

    def terminal_notes(self) -> list[str]:
        """The status line, which a terminal prints on stderr."""
        return [self.status]

    def __str__(self) -> str:
        rows = [(f"{o.kind}/{o.name}", o.namespace, o.run, o.owner) for o in self.leftovers]
        widths = [max([len(r[i]) for r in rows] + [6]) for i in range(3)]
        return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3]
                         for row in rows)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text("\n".join([self.status, str(self)]).rstrip())

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(o.kind)}/{html.escape(o.name)}</td><td>{html.escape(o.namespace)}</td>"
                       f"<td>{html.escape(o.run)}</td><td>{html.escape(o.owner)}</td></tr>" for o in self.leftovers)
        return (f"<div><b>{html.escape(self.status)}</b><table><tr><th>object</th><th>namespace</th><th>run</th>"
                f"<th>run by (host/pid/start)</th></tr>{rows}</table></div>")


@command(
    "cleanup",
    "Remove what killed runs left behind: the pods, claim templates and claims of checks (and doctor --live "
    "probes), which may hold GPUs, found by the process each names, which no longer runs; and roll back applies "
    "cut short (killed, or the API server gone while they rolled back), whole, from their journals. It lists what "
    "it removes (--dry-run: only lists); nothing else is touched.",
    arg("-n", "--namespace", help="where to look for checks' leftovers (default: the namespace option)"),
    arg("-A", "--all-namespaces", action="store_true", help="look in every namespace"),
    arg("--dry-run", action="store_true", help="list the leftovers without removing them"),
)
def cleanup(session: Session, args, cell) -> Cleaned:
    from drawb.check.leftovers import find_leftovers, remove

    if args.all_namespaces and args.namespace:
        from drawb.errors import UsageError

        raise UsageError("-n and -A contradict each other", hint="give one namespace with -n, or -A for all")
    namespace = None if args.all_namespaces else (args.namespace or session.namespace)
    where = "every namespace" if namespace is None else f"namespace {namespace}"
    session.leave_interrupted_applies()  # listed and rolled back here, with the rest
    cluster = session.cluster
    leftovers = find_leftovers(cluster, namespace)
    applies = cluster.interrupted_applies() if hasattr(cluster, "interrupted_applies") else []
    listed = leftovers + [_leftover(journal, write) for journal, writes in applies for write in writes]
    whole = "; an interrupted apply is rolled back whole, in every namespace it wrote" if listed[len(leftovers):] else ""
    runs = len({leftover.run for leftover in listed})
    if args.dry_run or not listed:
        if applies and not args.dry_run:
            cluster.finish_interrupted_applies()  # their journals: nothing of them is left to undo
        if not listed:
            return Cleaned(f"no leftovers of killed runs in {where}", [])
        return Cleaned(f"dry run: {len(listed)} object(s) of {runs} killed run(s) in {where} would be removed"
                       f"{whole}", listed)
    require_rights(session.cluster, f"{session.prog} cleanup", _delete_rights(listed))
    removed = remove(cluster, leftovers)
    outcomes = cluster.finish_interrupted_applies() if applies else []
    removed += [_leftover(o.journal, write) for o in outcomes for write in o.removed + o.restored]
    remain = "".join(f"; {o.left_behind()}" for o in outcomes if o.remaining).replace(PROG, session.prog)
    return Cleaned(f"removed {len(removed)} object(s) of {runs} killed run(s) in {where}{whole}{remain}", removed)


def _leftover(journal: Journal, write: Write) -> Leftover:
    """A write of an interrupted apply as a cleanup lists it."""
    from drawb.check.leftovers import Leftover

    return Leftover(write.kind, write.namespace or "", write.name, journal.run, journal.owner)


def _rights(namespace: str, with_template: bool) -> list[Right]:
    """What a check writes and reads back in ``namespace``: its claim template (unless it uses a claim), its pod,
    the pod's log."""
    writes = ("get", "create", "patch", "delete")
    rights = [Right(verb, "pods", "", namespace) for verb in writes] + [Right("get", "pods/log", "", namespace)]
    if with_template:
        rights += [Right(verb, "resourceclaimtemplates", "resource.k8s.io", namespace) for verb in writes]
    return rights


def _delete_rights(leftovers: list) -> list[Right]:
    """get and delete on the kind of every leftover, in its namespace."""
    from drawb.cluster.protocol import kind_of

    rights = []
    for leftover in leftovers:
        known = kind_of(leftover.kind)
        group = known.api_version.rpartition("/")[0]
        rights += [Right(verb, known.plural, group, leftover.namespace) for verb in ("get", "delete")]
    return list(dict.fromkeys(rights))
