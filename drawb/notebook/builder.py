"""``builder`` and ``build``: the selector builder (``%dra builder``, one CEL selector checked and previewed as
you type) and the claim builder (``%dra build``, a whole claim and pod built by pointing and clicking).

Subcommands of the notebook front end alone (``only="%dra"``): the ``drawb`` command line has no widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.notebook.claimbuilder import ClaimBuilder
    from drawb.notebook.widgets import SelectorBuilder


@command(
    "builder",
    "A widget to build a CEL device selector: compile errors, matching devices and per-device errors as you type.",
    arg("--class", dest="device_class", help="run this DeviceClass's selectors first, as the scheduler does"),
    arg("--node", help="only devices on this node"),
    only="%dra",
)
def builder(session: Session, args, cell) -> SelectorBuilder:
    from traitlets import TraitError

    from drawb.notebook.widgets import SelectorBuilder

    try:
        return SelectorBuilder(session, device_class=args.device_class or "", node=args.node or "")
    except TraitError as exc:
        raise UsageError(str(exc), hint=f"`{PROG} classes` lists the DeviceClasses, `{PROG} devices` the nodes") from None


@command(
    "build",
    "A widget to build a whole claim: requests, conditions from the devices present, count or All, firstAvailable, "
    "constraints, sharing; live CEL, matches, predicted allocation and YAML; export, dry-run, apply, check.",
    arg("--from", dest="source", metavar="KIND/NAME|TEMPLATE",
        help="start from claim/NAME, template/NAME (a ResourceClaimTemplate in the cluster) or a bundled template"),
    arg("-n", "--namespace", help="namespace of the manifests and of --from (default: the namespace option)"),
    only="%dra",
)
def build(session: Session, args, cell) -> ClaimBuilder:
    from drawb.notebook.claimbuilder import ClaimBuilder

    namespace = args.namespace or ""
    if not args.source:
        widget = ClaimBuilder(session)
    else:
        kind, slash, name = args.source.partition("/")
        if not slash:
            widget = ClaimBuilder.from_template(session, args.source)
        elif kind.lower() in ("claim", "resourceclaim") and name:
            widget = ClaimBuilder.from_claim(session, name, namespace or None)
        elif kind.lower() in ("template", "resourceclaimtemplate") and name:
            widget = ClaimBuilder.from_claim_template(session, name, namespace or None)
        else:
            raise UsageError(f"--from {args.source!r}: expected claim/NAME, template/NAME or a bundled template",
                             hint=f"`{PROG} templates` lists the bundled templates")
    widget.namespace = namespace
    return widget
