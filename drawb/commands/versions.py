"""``versions``: the Kubernetes minors drawb models and their DRA feature gates, from drawb.versions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb import versions
from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

_STAGES = {"alpha": "alpha", "beta": "beta", "ga": "GA", "deprecated": "deprecated"}


def _cell(gate: versions.Gate | None) -> str:
    if gate is None:
        return "-"
    return ", ".join([_STAGES[gate.stage], "on" if gate.default else "off", *(["locked"] if gate.locked else [])])


@command(
    "versions",
    "The Kubernetes versions drawb models: each DRA feature gate's stage and default per minor, or one minor in detail.",
    arg("--minor", metavar="VERSION", help="one version's gates with the components that read them and the fields "
                                           "they guard, e.g. 1.36 or v1.36.3"),
)
def versions_(session: Session, args, cell) -> pd.DataFrame:
    import pandas as pd

    if args.minor:
        try:
            rules = versions.rules(args.minor)
        except (versions.NotAKubernetesVersion, versions.UnsupportedKubernetesVersion) as exc:
            raise UsageError(str(exc), hint=exc.hint) from None
        rows = [{"gate": g.name, "stage": _STAGES[g.stage], "default": "on" if g.default else "off",
                 "locked": g.locked, "components": ", ".join(g.components), "guards": "; ".join(g.fields)}
                for g in sorted(rules.gates.values(), key=lambda g: g.name)]
        frame = pd.DataFrame(rows)
        frame.attrs["drawb"] = {"warnings": [f"Kubernetes {rules.minor} (facts of {rules.release}); resource.k8s.io "
                                             f"served by default: {', '.join(rules.served)}; with --runtime-config: "
                                             f"{', '.join(v for v in rules.available if v not in rules.served)}"]}
        return frame
    known = [versions.rules(minor) for minor in versions.known()]
    names = sorted({name for rules in known for name in rules.gates})
    columns = {"gate": names, **{rules.minor: [_cell(rules.gates.get(name)) for name in names] for rules in known}}
    return pd.DataFrame(columns)
