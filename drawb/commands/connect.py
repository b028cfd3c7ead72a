"""``connect``, ``scenarios`` and ``help``: choosing a cluster and finding your way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb import versions
from drawb.commands.registry import arg, command, find, reference
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd


class Connected:
    """What ``%dra connect`` reports: which cluster, which version, and the real clusters within reach when it
    chose the simulated one by default."""

    def __init__(self, description: str, version: str, found: list[tuple[str, str]] = (), gates: str = "",
                 state: str = ""):
        self.description, self.version, self.found, self.gates = description, version, list(found), gates
        self.state = state  # where the command line keeps the simulated cluster between commands

    def _found_lines(self) -> list[str]:
        return [f"  {what}: {how}" for what, how in self.found]

    def __repr__(self) -> str:
        text = f"Connected to {self.description}, Kubernetes {self.version}"
        if self.gates:
            text += f"\nFeature gates: {self.gates}"
        if self.state:
            text += f"\nState: {self.state}"
        if self.found:
            text += "\nReal clusters found (connect to one with its option):\n" + "\n".join(self._found_lines())
        return text

    def _repr_html_(self) -> str:
        from html import escape

        html = f"<b>Connected</b> to {escape(self.description)}, Kubernetes <code>{escape(self.version)}</code>"
        if self.gates:
            html += f"<br>Feature gates: {escape(self.gates)}"
        if self.state:
            html += f"<br>State: {escape(self.state)}"
        if self.found:
            items = "".join(f"<li>{escape(what)}: <code>{escape(how)}</code></li>" for what, how in self.found)
            html += f"<br>Real clusters found (connect to one with its option):<ul>{items}</ul>"
        return html


@command(
    "connect",
    "Connect to the simulated cluster (default), or to a real one: the pod's own (--in-cluster) or a kubeconfig's.",
    arg("--kubeconfig", help="path of a kubeconfig file (a real cluster)"),
    arg("--context", help="kubeconfig context to use (a real cluster)"),
    arg("--in-cluster", action="store_true",
        help="the cluster this pod runs in, as its service account (JupyterHub, Kubeflow)"),
    arg("--scenario", help="simulated scenario: default, synthetic:<nodes>[x<devices per node>], or a scenario file (.yaml)"),
    arg("--snapshot", help="replay a snapshot file (`snapshot save`, `snapshot from-files`) in the simulated cluster"),
    arg("--simulated", action="store_true",
        help="the simulated cluster (the scenario option's), whatever the kubeconfig, context and target options say"),
    arg("--kubernetes-version", dest="version",
        help=f"the Kubernetes version the simulated cluster runs: {', '.join(versions.known())} (or a full release, "
             "e.g. v1.36.1; default: the scenario's, else the kubernetes_version option's)"),
    arg("--feature-gates", dest="gates", metavar="NAME=BOOL,...",
        help="DRA feature gates of the simulated cluster, e.g. DRAExtendedResource=true,DRADeviceTaints=true "
             "(default: the scenario's, else the version's defaults)"),
    arg("--reset", action="store_true",
        help="start the simulated cluster afresh: the command line keeps it between commands, in a state file per "
             "scenario, version and gates; this forgets that file"),
)
def connect(session: Session, args, cell) -> Connected:
    simulated_only = [flag for flag, given in (("--simulated", args.simulated), ("--scenario", args.scenario),
                                               ("--kubernetes-version", args.version),
                                               ("--feature-gates", args.gates is not None),
                                               ("--reset", args.reset)) if given]
    if simulated_only and (args.kubeconfig or args.context or args.in_cluster):
        raise UsageError(f"{', '.join(simulated_only)} {'chooses' if len(simulated_only) == 1 else 'choose'} the "
                         "simulated cluster; --kubeconfig, --context and "
                         "--in-cluster a real one", hint="give one kind")
    if args.in_cluster and (args.kubeconfig or args.context):
        raise UsageError("--in-cluster uses the pod's service account; --kubeconfig and --context a kubeconfig",
                         hint="give one way to reach the cluster")
    cluster = session.connect(kubeconfig=args.kubeconfig, context=args.context, scenario=args.scenario,
                              snapshot=args.snapshot, simulated=args.simulated, in_cluster=args.in_cluster,
                              kubernetes_version=args.version, feature_gates=args.gates, reset=args.reset)
    plain = not any((args.kubeconfig, args.context, args.in_cluster, args.snapshot, *simulated_only))
    found = []
    if plain and getattr(cluster, "simulated", False):
        from drawb.cluster.connect import found_clusters

        found = [(f.what, _how(session.prog, f.option)) for f in found_clusters(session.kubeconfig)]
    return Connected(cluster.description, cluster.server_version(), found, _gates_line(cluster),
                     _state_line(session, args.reset))


def _state_line(session: Session, reset: bool) -> str:
    """Where the command line keeps the simulated cluster, and whether this command started it."""
    kept = session.kept_state()
    if kept is None:
        return "started afresh (its kept state forgotten)" if reset else ""
    path, new, options = kept
    how = "started afresh" if new else "as the last command left it"
    return (f"{how}, kept between commands in {path}; simulated time goes on with the clock between them "
            f"(`{session.prog} connect --reset{' ' + options if options else ''}` starts it afresh)")


def _gates_line(cluster) -> str:
    """The simulated cluster's DRA gates set away from its minor's defaults (a real cluster's are not shown)."""
    if not getattr(cluster, "simulated", False):
        return ""
    rules, gates = cluster.rules, cluster.feature_gates
    changed = [f"{name}={str(on).lower()}" for name, on in sorted(gates.items()) if on != rules.gates[name].default]
    return (", ".join(changed) + f" (the rest: {rules.minor}'s defaults)") if changed else f"{rules.minor}'s defaults"


def _how(prog: str, option: str) -> str:
    """The command that connects with ``option``: a connect in a notebook, a global option on the command line."""
    return f"{prog} connect {option}" if prog.startswith("%") else f"{prog} {option} <subcommand>"


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
