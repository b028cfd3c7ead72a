"""The doctor's result: one row per check, each PASS, WARN or FAIL with its evidence and the fix."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"
_ORDER = {FAIL: 0, WARN: 1, PASS: 2}


@dataclass(frozen=True)
class Check:
    """One readiness check: what was looked at, what was found, and what to do about it."""

    name: str
    status: str
    evidence: str
    fix: str = ""

    def __post_init__(self):
        if self.status not in _ORDER:
            raise ValueError(f"check {self.name!r}: status {self.status!r} is not one of {', '.join(_ORDER)}")


@dataclass
class Report:
    """Every check of one doctor run, in the order they ran."""

    cluster: str
    server_version: str
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    simulated: bool = False
    feature_gates_metric: dict[str, bool] | None = None

    def add(self, name: str, status: str, evidence: str, fix: str = "") -> Check:
        """Record one check."""
        check = Check(name, status, evidence, fix)
        self.checks.append(check)
        return check

    def name_commands(self, prog: str) -> Report:
        """Fill the ``{prog}`` placeholder of hints with the front end's command (``%dra``, ``drawb``)."""
        self.checks = [Check(c.name, c.status, c.evidence.replace("{prog}", prog), c.fix.replace("{prog}", prog))
                       for c in self.checks]
        return self

    @property
    def worst(self) -> str:
        """FAIL if any check failed, else WARN if any warned, else PASS."""
        statuses = {c.status for c in self.checks}
        return next((s for s in (FAIL, WARN) if s in statuses), PASS)

    @property
    def exit_status(self) -> int:
        """What ``drawb doctor`` exits with: 1 when a check failed, else 0."""
        return 1 if self.worst == FAIL else 0

    def counts(self) -> dict[str, int]:
        """How many checks have each status."""
        return {s: sum(c.status == s for c in self.checks) for s in (PASS, WARN, FAIL)}

    def summary(self) -> str:
        """One line: the verdict and the counts."""
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items() if n)
        where = f"{self.cluster} (simulated)" if self.simulated and "simulated" not in self.cluster else self.cluster
        return f"doctor: {where}, Kubernetes {self.server_version}: {counts} in {self.seconds:.2f} s"

    def frame(self):
        """The checks as a DataFrame (check, status, evidence, fix)."""
        import pandas as pd

        return pd.DataFrame([asdict(c) for c in self.checks], columns=["name", "status", "evidence", "fix"]).rename(
            columns={"name": "check"})

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "cluster": self.cluster,
            "simulated": self.simulated,
            "serverVersion": self.server_version,
            "result": self.worst,
            "seconds": round(self.seconds, 3),
            "counts": self.counts(),
            "checks": [asdict(c) for c in self.checks],
            "featureGatesMetric": self.feature_gates_metric,
        }

    def __str__(self) -> str:
        width = max((len(c.name) for c in self.checks), default=5)
        lines = [self.summary(), ""]
        for c in self.checks:
            lines.append(f"{c.status:<4}  {c.name:<{width}}  {c.evidence}")
            if c.fix:
                lines.append(f"{'':<4}  {'':<{width}}  fix: {c.fix}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colour = {PASS: "#1a7f37", WARN: "#9a6700", FAIL: "#cf222e"}
        rows = "".join(
            f"<tr><td style='color:{colour[c.status]};font-weight:bold'>{c.status}</td><td>{html.escape(c.name)}</td>"
            f"<td style='text-align:left'>{html.escape(c.evidence)}</td>"
            f"<td style='text-align:left'>{html.escape(c.fix)}</td></tr>"
            for c in self.checks
        )
        return (f"<p><b>{html.escape(self.summary())}</b></p><table><thead><tr><th>status</th><th>check</th>"
                f"<th>evidence</th><th>fix</th></tr></thead><tbody>{rows}</tbody></table>")

