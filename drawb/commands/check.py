"""``check``: launch a CUDA check pod and prove it got exactly the devices allocated to its claim."""

from __future__ import annotations

import shlex

from drawb.commands.registry import COMMANDS, JsonResult, arg, command
from drawb.session import Session


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
    why = f"{session.prog} why" if "why" in COMMANDS else None
    verdict = run(
        session.cluster, namespace=namespace, timeout=args.timeout, keep=args.keep,
        progress=getattr(session, "progress", None), why_hint=why,
        template=args.template, values=values, template_dirs=tuple(d for d in [session.template_dir] if d),
        claim=args.claim, selector=args.selector, device_class=args.device_class, count=args.count,
        payload=args.payload, command=shlex.split(args.command) if args.command else None, image=args.image,
        node=args.node,
    )
    return JsonResult(verdict.to_dict(), verdict.exit_status) if args.json else verdict
