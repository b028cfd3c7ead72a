"""``state``: the simulated cluster the command line keeps between commands; save it and load it back
(the notebook's kernel and the command line share it this way)."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session


class StateReport:
    """What ``state`` did, line by line."""

    def __init__(self, lines: list[str], prog: str = "%dra"):
        self.lines, self.prog = lines, prog

    def __repr__(self) -> str:
        return "\n".join(self.lines).replace(PROG, self.prog)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(repr(self))}</pre>"


@command(
    "state",
    "The simulated cluster kept between commands: `show` its state file (the default), `save [FILE]`, "
    "`load [FILE]` (without FILE: the state file the command line keeps for this scenario, version and gates).",
    arg("action", nargs="?", choices=("show", "save", "load"), default="show",
        help="show: where the state is kept; save: write the connected simulated cluster; load: connect to a "
             "saved one"),
    arg("file", nargs="?", metavar="FILE",
        help="a state file of your own (default: the command line's kept one); readable only by your drawb on "
             "this machine (to share a cluster, use `snapshot save`)"),
)
def state(session: Session, args, cell) -> StateReport:
    from drawb.cluster.sim.state import KeptState, read, read_header

    if args.action == "load":
        if args.file is None and session.keep_state:
            raise UsageError("the command line already reads the kept state of the simulated cluster it connects to",
                             hint=f"name a file: `{PROG} state load FILE`, or choose the cluster with its options")
        source = args.file
        if source is None:
            source = _kept(session).path
            kept = _kept(session)
            kept.acquire(session.progress)
            try:
                cluster = read(source) if kept.path.exists() else None
            finally:
                kept.release()
            if cluster is None:
                raise UsageError(f"no simulated cluster is kept in {source} yet",
                                 hint=f"run a `drawb` command (or `{PROG} state save`) on this scenario first")
        else:
            cluster = read(source)
        session.adopt(cluster)
        header, _, _ = read_header(source)
        lines = [f"Loaded {cluster.description} from {source} (saved {_ago(header.saved)})"]
        if session.keep_state:
            options = header.key.options()
            lines.append(f"  kept from now on for `drawb {options + ' ' if options else ''}<subcommand>`")
        return StateReport(lines, session.prog)
    if args.action == "save":
        header = session.keep_simulated(args.file)
        where = args.file or _kept(session).path
        return StateReport([f"Saved {header.description} ({header.objects} objects) to {where}",
                            f"  load it: `{PROG} state load{' ' + args.file if args.file else ''}`"], session.prog)
    if args.file:
        header, _, _ = read_header(args.file)
        return StateReport(_describe(args.file, header), session.prog)
    kept = KeptState(session.simulated_key())
    if not kept.path.exists():
        return StateReport([f"Nothing kept yet for this simulated cluster; the command line keeps it in {kept.path}"],
                           session.prog)
    header, _, _ = read_header(kept.path)
    return StateReport(_describe(kept.path, header), session.prog)


def _kept(session: Session):
    """The KeptState of the connected simulated cluster."""
    from drawb.cluster.sim.state import KeptState, key_of

    cluster = session.cluster
    if not getattr(cluster, "simulated", False):
        raise UsageError("only the simulated cluster is kept in a state file; a real cluster keeps its own",
                         hint=f"`{PROG} snapshot save FILE` saves a real cluster's DRA state")
    return KeptState(key_of(cluster))


def _describe(path, header) -> list[str]:
    options = header.key.options()
    return [f"{header.description}: kept in {path}",
            f"  saved {_ago(header.saved)}, {header.objects} objects, by drawb {header.build}",
            f"  the command line uses it for `drawb {options + ' ' if options else ''}<subcommand>`; "
            f"`{PROG} connect --reset{' ' + options if options else ''}` starts it afresh"]


def _ago(saved: str) -> str:
    """``2026-12-03T14:00:00Z (42 s ago)``."""
    try:
        then = datetime.strptime(saved, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return saved
    return f"{saved} ({int((datetime.now(UTC) - then).total_seconds())} s ago)"
