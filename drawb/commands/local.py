"""``local``: this machine's GPUs, read through NVML, as the NVIDIA DRA driver would publish them."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

    from drawb.gpu.local import LocalGpus


class SliceYaml(str):
    """ResourceSlice YAML that displays as itself."""

    def __repr__(self) -> str:
        return str(self)


def slice_yaml(gpus: LocalGpus) -> SliceYaml:
    """The ResourceSlice as YAML, with a header saying where it came from."""
    import yaml

    header = (
        f"# The ResourceSlice the NVIDIA DRA driver (gpu.nvidia.com, v0.4.x defaults) would publish for node\n"
        f"# {gpus.node!r}, built by drawb from NVML readings taken {gpus.readings.get('captured')}.\n"
        "# The name suffix and the Node uid are drawb's: on a cluster the API server assigns them.\n"
    )
    return SliceYaml(header + yaml.safe_dump(gpus.slice, sort_keys=False))


class LocalReport:
    """What ``local`` shows: published devices, MIG profiles, live figures and the slice."""

    def __init__(self, gpus: LocalGpus):
        self.gpus = gpus

    @property
    def devices(self) -> pd.DataFrame:
        """One row per published device, one column per attribute and capacity (bare names)."""
        import pandas as pd

        rows = []
        for device in self.gpus.devices:
            row = {"device": device["name"]}
            row.update({k: next(iter(v.values())) for k, v in device["attributes"].items()})
            row.update({f"capacity.{k}": v["value"] for k, v in device.get("capacity", {}).items()})
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def mig_profiles(self) -> pd.DataFrame:
        """The MIG profiles each GPU offers, with the device names the driver gives each placement."""
        import pandas as pd

        rows = [
            {
                "gpu": r.gpu,
                "profile": r.profile.name,
                "id": r.profile.gi_profile_id,
                "instances": f"{'?' if r.instances_free is None else r.instances_free}/{r.instances_total}",
                "memory": f"{r.profile.memory_mib / 1024:.2f}Gi",
                "multiprocessors": r.profile.multiprocessors,
                "copyEngines": r.profile.copy_engines,
                "decoders": r.profile.decoders,
                "encoders": r.profile.encoders,
                "jpegEngines": r.profile.jpeg_engines,
                "ofaEngines": r.profile.ofa_engines,
                "placements": "?" if r.placements is None else " ".join(f"{s}:{n}" for s, n in r.placements),
                "device names": ", ".join(r.device_names),
            }
            for r in self.gpus.profiles
        ]
        return pd.DataFrame(rows)

    @property
    def live(self) -> pd.DataFrame:
        """Utilisation, memory in use, temperature and power per GPU, as NVML read them."""
        import pandas as pd

        return pd.DataFrame(self.gpus.live)

    @property
    def yaml(self) -> SliceYaml:
        """The ResourceSlice YAML the driver would publish."""
        return slice_yaml(self.gpus)

    def _title(self) -> str:
        r = self.gpus.readings
        count = len(self.gpus.devices)
        return (
            f"node {self.gpus.node}: {count} device(s) the NVIDIA DRA driver would publish "
            f"(NVML {r.get('nvml_version')}, driver {r.get('driver_version')}, read {r.get('captured')})"
        )

    def __str__(self) -> str:
        parts = [self._title()]
        for device in self.gpus.devices:
            parts.append(f"\n{device['name']}")
            for key, value in device["attributes"].items():
                parts.append(f"  {key}: {next(iter(value.values()))}  ({next(iter(value))})")
            for key, value in device.get("capacity", {}).items():
                parts.append(f"  capacity {key}: {value['value']}")
        parts += ["\nlive (as NVML read it)", _table(self.live)]
        if self.gpus.profiles:
            profiles = self.mig_profiles.drop(columns=["device names"])
            parts += [f"\nMIG profiles ({_MIG_NOTE})", _table(profiles)]
        for problem in self.gpus.problems:
            parts.append(f"\nWarning: {problem}")
        parts.append("\nThe ResourceSlice: `local --yaml`; load it into the simulated cluster: `connect --scenario local`")
        return "\n".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        devices = self.devices
        table = "<p>(no devices)</p>" if devices.empty else devices.set_index("device").T.to_html()
        parts = [f"<b>{html.escape(self._title())}</b>", table, "<b>live (as NVML read it)</b>", self.live.to_html(index=False)]
        if self.gpus.profiles:
            parts += [f"<b>MIG profiles</b> ({html.escape(_MIG_NOTE)})", self.mig_profiles.to_html(index=False)]
        parts += [f"<p><b>Warning:</b> {html.escape(p)}</p>" for p in self.gpus.problems]
        parts.append(f"<details><summary>ResourceSlice YAML</summary><pre>{html.escape(self.yaml)}</pre></details>")
        return "\n".join(parts)


_MIG_NOTE = "a MIG device is published once it exists, as gpu-<minor>-mig-<profile>-<id>-<placement start>"


def _table(frame: pd.DataFrame) -> str:
    return "(none)" if frame.empty else frame.to_string(index=False)


def load_readings(path: str) -> dict:
    """NVML readings saved with ``local --save``; a UsageError names what is wrong with the file."""
    from drawb.gpu.local import ReadingsError, check_readings

    try:
        return check_readings(json.loads(Path(path).read_text()))
    except OSError as exc:
        raise UsageError(f"cannot read NVML readings {path!r}: {exc.strerror}", hint=f"give a file saved with `{PROG} local --save FILE`") from None
    except (ValueError, ReadingsError) as exc:
        raise UsageError(f"{path}: {exc}", hint=f"give a file saved with `{PROG} local --save FILE`") from None


def _read(prog: str) -> dict:
    from drawb.gpu.nvml import NvmlUnavailable, read_nvml

    try:
        return read_nvml()
    except NvmlUnavailable as exc:
        exc.hint = f"{exc.hint}, or convert readings saved there with `{prog} local --save FILE`: `{prog} local --from FILE`"
        raise


@command(
    "local",
    "This machine's GPUs, read through NVML, as the NVIDIA DRA driver would publish them, with live figures.",
    arg("--yaml", action="store_true", help="show only the ResourceSlice YAML the driver would publish"),
    arg("--save", metavar="FILE", help="also save the raw NVML readings as JSON"),
    arg("--from", dest="source", metavar="FILE", help="convert NVML readings saved with --save instead of reading NVML"),
)
def local(session: Session, args, cell) -> LocalReport | SliceYaml:
    from drawb.gpu.local import convert

    readings = load_readings(args.source) if args.source else _read(session.prog)
    if args.save:
        Path(args.save).write_text(json.dumps(readings, indent=1) + "\n")
    report = LocalReport(convert(readings))
    return report.yaml if args.yaml else report
