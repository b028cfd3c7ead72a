"""The ``local`` scenario: this machine's GPUs, read through NVML, as one simulated GPU node.

``local`` reads NVML now; ``local:FILE`` loads readings saved with ``drawb local --save FILE``
(on a GPU machine) so the same node can be simulated anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.cluster.sim.nodes import gpu_node_object
from drawb.cluster.sim.scenarios.scenario import Scenario, ScenarioError
from drawb.gpu.local import SCENARIO, ReadingsError, check_readings, convert


def local_readings(path: str | None) -> dict:
    """NVML readings: read now (``path`` None) or loaded from a file saved with ``local --save``."""
    if path is None:
        from drawb.gpu.nvml import read_nvml

        return read_nvml()
    try:
        return check_readings(json.loads(Path(path).read_text()))
    except OSError as exc:
        raise ScenarioError(f"scenario local:{path}: cannot read the NVML readings: {exc.strerror}") from None
    except (ValueError, ReadingsError) as exc:
        raise ScenarioError(f"scenario local:{path}: {exc}") from None


def local_scenario(path: str | None = None):
    """The simulated cluster of one node: this machine (or the saved readings) as the driver publishes it."""
    gpus = convert(local_readings(path))
    products = sorted({d["attributes"]["productName"]["string"] for d in gpus.devices}) or ["none"]
    source = f"readings saved in {path}" if path else "NVML on this machine"
    description = (
        f"{len(gpus.devices)} device(s) of host {gpus.readings.get('hostname')} ({', '.join(products)}), "
        f"from {source} at {gpus.readings.get('captured')}"
    )
    node = gpu_node_object(SCENARIO, gpus.node, products[0], {"drawb.dev/source": "nvml"})
    return Scenario(
        name=SCENARIO,
        description=description,
        gpu_nodes=[],
        nodes=[node],
        resource_slices=[gpus.slice],
        device_classes=nvidia_device_classes(),
    )
