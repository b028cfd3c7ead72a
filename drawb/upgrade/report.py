"""The upgrade check's result: one finding per problem, each with where it is, what changes and the fix."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field, replace

from drawb.errors import PROG
from drawb.gpu.releases import DriverRelease

ERROR, WARNING = "error", "warning"

# The kinds of finding, in the order the report shows them.
KINDS = {
    "slice-shape": "a ResourceSlice shape the target refuses",
    "meaning": "an object whose meaning the target changes",
    "rbac": "a role that lacks a right the target asks for",
    "gate": "a feature gate in use that the target locks or removes",
    "served": "a group version the target does not serve",
    "attribute": "a selector reading an attribute the NVIDIA driver release does not publish",
    "manifest": "a manifest file that could not be read",
}


@dataclass(frozen=True)
class Finding:
    """One problem an upgrade would meet: its kind, level, the object and field, what happens, and the fix."""

    kind: str
    level: str  # "error": the target refuses or breaks it; "warning": it works, differently
    where: str  # "cluster", or the manifest file
    object: str  # "ResourceClaim gpu-test/claim", "ClusterRole my-scheduler", "kube-apiserver"
    path: str  # the field, "" for the whole object
    message: str
    fix: str

    def __post_init__(self):
        if self.kind not in KINDS or self.level not in (ERROR, WARNING):
            raise ValueError(f"finding kind {self.kind!r} / level {self.level!r} is not one drawb knows")


@dataclass
class UpgradeReport:
    """Every finding of one upgrade check, with what was checked."""

    source: str  # the cluster's description
    server_version: str  # "v1.34.4"
    current: str  # "1.34": the minor whose rules apply now
    target: str  # "1.37"
    release: DriverRelease | None  # the NVIDIA DRA driver release the selectors were checked against
    told: str  # how it is known: "told from the slices", "as named"
    manifests: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why

    def name_commands(self, prog: str) -> UpgradeReport:
        """The fixes naming drawb's commands as the front end ``prog`` (``%dra``, ``drawb``) spells them."""
        self.findings = [replace(f, message=f.message.replace(PROG, prog), fix=f.fix.replace(PROG, prog))
                         for f in self.findings]
        return self

    @property
    def driver_release(self) -> str:
        """``v0.4 (told from the slices)``, or why it is unknown."""
        return f"{self.release.name} ({self.told})" if self.release else "unknown (no gpu.nvidia.com slices of a known release)"

    @property
    def exit_status(self) -> int:
        """What ``drawb upgrade-check`` exits with: 1 when a finding is an error, else 0."""
        return 1 if any(f.level == ERROR for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        """How many findings of each kind."""
        return {kind: n for kind in KINDS if (n := sum(f.kind == kind for f in self.findings))}

    def summary(self) -> str:
        """One line: what was checked against what, and how many findings."""
        errors = sum(f.level == ERROR for f in self.findings)
        files = f" and {len(self.manifests)} manifest file(s)" if self.manifests else ""
        found = (f"{len(self.findings)} finding(s), {errors} error(s)" if self.findings
                 else "no findings")
        return (f"upgrade-check: {self.source} (Kubernetes {self.server_version}){files} against Kubernetes "
                f"{self.target}; NVIDIA DRA driver {self.driver_release}: {found}")

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "cluster": self.source,
            "serverVersion": self.server_version,
            "current": self.current,
            "target": self.target,
            "driverRelease": self.driver_release,
            "driverReleaseFacts": None if self.release is None else {
                "tags": list(self.release.tags), "date": self.release.date, "features": list(self.release.features),
                "notes": self.release.notes},
            "manifests": self.manifests,
            "counts": self.counts(),
            "findings": [asdict(f) for f in self.findings],
            "notes": self.notes,
        }

    def __str__(self) -> str:
        lines = [self.summary()]
        for f in self.findings:
            field_ = f" {f.path}" if f.path else ""
            lines += ["", f"{f.level.upper():<7}  {f.kind}  {f.where}: {f.object}{field_}",
                      f"{'':<7}  {f.message}", f"{'':<7}  fix: {f.fix}"]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colour = {ERROR: "#cf222e", WARNING: "#9a6700"}
        rows = "".join(
            f"<tr><td style='color:{colour[f.level]};font-weight:bold'>{f.level}</td><td>{f.kind}</td>"
            f"<td style='text-align:left'>{html.escape(f.where)}: {html.escape(f.object)} "
            f"<code>{html.escape(f.path)}</code></td><td style='text-align:left'>{html.escape(f.message)}</td>"
            f"<td style='text-align:left'>{html.escape(f.fix)}</td></tr>"
            for f in self.findings)
        notes = "".join(f"<p>note: {html.escape(n)}</p>" for n in self.notes)
        return (f"<p><b>{html.escape(self.summary())}</b></p><table><thead><tr><th>level</th><th>kind</th>"
                f"<th>where</th><th>what changes</th><th>fix</th></tr></thead><tbody>{rows}</tbody></table>{notes}")
