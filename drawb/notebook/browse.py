"""``browse``: the device browser widget (``%dra browse``), every device with facets, search, sort and paging.

A subcommand of the notebook front end alone (``only="%dra"``): the ``drawb`` command line has no widgets
(``drawb devices`` is its table). The widget is imported on use, so loading the magics does not load its grid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.notebook.browser import DeviceBrowser

FACET_FLAGS = ("node", "product", "type", "profile", "state", "claim")


@command(
    "browse",
    "A device browser widget: every device, with facets (node, product, type, MIG profile, state, claim), "
    "search, sort and paging, live-updated from the cluster.",
    *(arg(f"--{facet}", help=f"start filtered to this {facet}") for facet in FACET_FLAGS),
    arg("--search", default="", help="start with this search text"),
    arg("--sort", default="", help="start sorted by this column"),
    arg("--page-size", type=int, default=25, help="rows per page (default 25)"),
    arg("--no-live", dest="live", action="store_false", help="do not follow the cluster's changes"),
    only="%dra",
)
def browse(session: Session, args, cell) -> DeviceBrowser:
    from traitlets import TraitError

    from drawb.notebook.browser import DeviceBrowser

    if args.page_size < 1:
        raise UsageError(f"--page-size {args.page_size}: must be at least 1", hint="e.g. --page-size 50")
    browser = DeviceBrowser(session, page_size=args.page_size, live=args.live)
    try:
        browser.filter(**{facet: getattr(args, facet) for facet in FACET_FLAGS if getattr(args, facet)})
        browser.search(args.search).sort(args.sort)
    except TraitError as exc:
        browser.close()
        raise UsageError(str(exc), hint="`%dra devices` lists the devices and their values") from None
    return browser
