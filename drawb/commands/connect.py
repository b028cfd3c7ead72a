"""``connect``, ``scenarios`` and ``help``: choosing a cluster and finding your way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command, find, reference
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd


class Connected:
    """What ``%dra connect`` reports: which cluster, which version."""

    def __init__(self, description: str, version: str):
        self.description, self.version = description, version

    def __repr__(self) -> str:
        return f"Connected to {self.description}, Kubernetes {self.version}"

    def _repr_html_(self) -> str:
        return f"<b>Connected</b> to {self.description}, Kubernetes <code>{self.version}</code>"


@command(
    "connect",
    "Connect to the simulated cluster (default) or to a real one through a kubeconfig.",
    arg("--kubeconfig", help="path of a kubeconfig file (a real cluster)"),
    arg("--context", help="kubeconfig context to use (a real cluster)"),
    arg("--scenario", help="simulated scenario: default, synthetic:<nodes>[x<devices per node>], or a scenario file (.yaml)"),
    arg("--snapshot", help="replay a snapshot file (`snapshot save`, `snapshot from-files`) in the simulated cluster"),
    arg("--simulated", action="store_true",
        help="the simulated cluster (the scenario option's), whatever the kubeconfig and context options say"),
)
def connect(session: Session, args, cell) -> Connected:
    if (args.simulated or args.scenario) and (args.kubeconfig or args.context):
        raise UsageError("--simulated and --scenario choose the simulated cluster; --kubeconfig and --context a real one",
                         hint="give one kind")
    cluster = session.connect(kubeconfig=args.kubeconfig, context=args.context, scenario=args.scenario,
                              snapshot=args.snapshot, simulated=args.simulated)
    return Connected(cluster.description, cluster.server_version())


@command("scenarios", "List the simulated cluster's scenarios.")
def scenarios(session: Session, args, cell) -> pd.DataFrame:
    import pandas as pd

    from drawb.cluster.sim.scenarios import list_scenarios

    return pd.DataFrame(list(list_scenarios().items()), columns=["scenario", "description"])


class Help(str):
    """Plain help text that displays as preformatted text in a notebook."""

    def __repr__(self) -> str:
        return str(self)


@command("help", "Show this reference, or one subcommand's options.", arg("subcommand", nargs="?"))
def help_(session: Session, args, cell) -> Help:
    if args.subcommand:
        return Help(find(args.subcommand, session.prog).usage(session.prog))
    return Help(reference(session.prog))
