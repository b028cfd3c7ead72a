"""What the cluster map draws: each device's state for a selector, devices grouped by node and parent GPU,
and the per-pool summary of a large cluster. Pure: frames and objects in, plain records out."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from drawb.inventory.browse import natural

FREE, ALLOCATED, TAINTED, ERRORING, UNSELECTED = "free", "allocated", "tainted", "erroring", "not selected"
STATES = (FREE, ALLOCATED, TAINTED, ERRORING, UNSELECTED)
# Node labels that name a node pool, most specific first; the first one a node has is its pool.
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
    "nvidia.com/gpu.product",
)
NO_POOL = "(no pool label)"


@dataclass
class Device:
    """One device as the map draws it."""

    key: str  # driver/pool/device: unique in the cluster
    node: str
    name: str
    state: str
    label: str  # a short label: the MIG profile, or the device name
    title: str  # the hover text: attributes, claim and pod
    children: list[Device] = field(default_factory=list)  # MIG devices drawn inside a GPU
    published: bool = True  # False for a parent GPU that is not itself published (only its MIG devices are)


@dataclass
class Node:
    """One node: its GPUs (MIG devices inside their parent) and its other devices."""

    name: str
    pool: str
    gpus: list[Device]
    others: list[Device]

    def devices(self) -> list[Device]:
        """Every published device of the node, MIG children included."""
        out = []
        for gpu in self.gpus:
            out += ([gpu] if gpu.published else []) + gpu.children
        return out + self.others


@dataclass
class PoolSummary:
    """Devices of one product in one node pool, counted per state."""

    pool: str
    product: str
    nodes: int
    counts: dict[str, int]

    @property
    def devices(self) -> int:
        """Devices in the group."""
        return sum(self.counts.values())


def device_states(frame: pd.DataFrame, matched: np.ndarray | None = None,
                  failed: np.ndarray | None = None) -> np.ndarray:
    """Per device of ``frame`` (`drawb.inventory.browse.browse_frame`): erroring (its selector evaluation
    errors), not selected (a selector was given and it does not match), else allocated (held by a claim),
    tainted (a taint on the device), else free."""
    column = frame["state"]  # free | allocated | tainted, a categorical
    state = np.asarray(column.cat.categories, dtype=object)[column.cat.codes.to_numpy()]
    if matched is not None:
        state = np.where(np.asarray(matched, dtype=bool), state, UNSELECTED)
    if failed is not None:
        state = np.where(np.asarray(failed, dtype=bool), ERRORING, state)
    return state


def device_keys(frame: pd.DataFrame) -> np.ndarray:
    """``driver/pool/device`` per device of a browse frame (joined in Arrow)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def arrow(column: pd.Series) -> pa.Array:
        if isinstance(column.dtype, pd.CategoricalDtype):
            values = np.asarray(column.cat.categories, dtype=object)[column.cat.codes.to_numpy()]
            return pa.array(np.where(column.cat.codes.to_numpy() >= 0, values, ""), pa.large_string())
        return pa.array(column.astype(object).where(column.notna(), "").to_numpy(), pa.large_string())

    parts = [arrow(frame[c]) for c in ("driver", "pool", "device")]
    joined = pc.binary_join_element_wise(*parts, pa.scalar("/", pa.large_string()))
    return np.asarray(joined.to_numpy(zero_copy_only=False), dtype=object)


def node_pools(nodes: list[dict], labels: tuple[str, ...] = POOL_LABELS) -> dict[str, str]:
    """Node name -> its pool: the value of the first of ``labels`` it carries (NO_POOL if none)."""
    out = {}
    for node in nodes:
        meta = node.get("metadata") or {}
        node_labels = meta.get("labels") or {}
        out[meta.get("name", "")] = next((f"{node_labels[k]}" for k in labels if node_labels.get(k)), NO_POOL)
    return out


def layout_nodes(devices: pd.DataFrame, frame: pd.DataFrame, states: np.ndarray, pools: dict[str, str] | None = None,
                 errors: np.ndarray | None = None) -> list[Node]:
    """The nodes of ``devices`` (``frame``: its browse frame) in natural order, each with its GPUs (MIG
    devices inside the GPU whose UUID is their ``parentUUID``) and its other devices."""
    pools = pools or {}
    driver = devices["driver"].astype(object).to_numpy()
    uuid = _attribute(devices, "uuid")
    parent = _attribute(devices, "parentUUID")
    kinds = frame["type"].astype(object).to_numpy()
    by_node: dict[str, list[int]] = defaultdict(list)
    for i, node in enumerate(frame["node"].astype(object)):
        by_node[str(node)].append(i)
    out = []
    for node in sorted(by_node, key=natural):
        rows = sorted(by_node[node], key=lambda i: natural(str(frame["device"].iat[i])))
        made = {i: _device(devices, frame, i, states[i], None if errors is None else errors[i]) for i in rows}
        gpus: dict[str, Device] = {}
        order: list[Device] = []
        others: list[Device] = []
        for i in rows:
            if parent[i] is None and kinds[i] == "gpu" and driver[i] == "gpu.nvidia.com":
                gpus[uuid[i] or made[i].key] = made[i]
                order.append(made[i])
        for i in rows:
            if parent[i] is not None:
                host = gpus.get(parent[i])
                if host is None:
                    host = Device(f"{node}/{parent[i]}", node, _parent_name(made[i].name), "", _parent_name(made[i].name),
                                  f"GPU {parent[i]} (not published whole: only its MIG devices are)", published=False)
                    gpus[parent[i]] = host
                    order.append(host)
                host.children.append(made[i])
            elif made[i] not in order:
                others.append(made[i])
        out.append(Node(node, pools.get(node, NO_POOL), sorted(order, key=lambda d: natural(d.name)), others))
    return out


def summarise(frame: pd.DataFrame, states: np.ndarray, pools: dict[str, str]) -> list[PoolSummary]:
    """Devices of ``frame`` (a browse frame) counted per (node pool, product) and state, with the number of
    nodes in each group (a device without a product is counted under its driver). Counted over the
    categorical codes with numpy: no per-device Python."""
    nodes = list(frame["node"].cat.categories)
    pool_names = sorted({pools.get(n, NO_POOL) for n in nodes} | {NO_POOL}, key=natural)
    pool_index = {p: i for i, p in enumerate(pool_names)}
    pool_of_node = np.array([pool_index[pools.get(n, NO_POOL)] for n in nodes] + [pool_index[NO_POOL]])
    node_codes = frame["node"].cat.codes.to_numpy().astype(np.int64)  # -1 (no node) takes the last entry
    pool = pool_of_node[node_codes]
    products = list(frame["product"].cat.categories)
    driver_codes, drivers = pd.factorize(frame["driver"], use_na_sentinel=False)
    product_codes = frame["product"].cat.codes.to_numpy().astype(np.int64)
    product = np.where(product_codes >= 0, product_codes, len(products) + driver_codes)
    labels = products + [str(d) for d in drivers]
    state = pd.Categorical(states, categories=list(STATES)).codes.astype(np.int64)
    group = pool * len(labels) + product
    counts = np.bincount(group * len(STATES) + state, minlength=len(pool_names) * len(labels) * len(STATES))
    counts = counts.reshape(len(pool_names) * len(labels), len(STATES))
    pairs = np.unique(group * (len(nodes) + 1) + node_codes + 1)
    node_counts = np.bincount(pairs // (len(nodes) + 1), minlength=len(pool_names) * len(labels))
    out = []
    for g in np.flatnonzero(counts.sum(axis=1)):
        per_state = {s: int(counts[g, i]) for i, s in enumerate(STATES)}
        out.append(PoolSummary(pool_names[g // len(labels)], labels[g % len(labels)], int(node_counts[g]), per_state))
    return sorted(out, key=lambda s: (natural(s.pool), natural(s.product)))


def _attribute(devices: pd.DataFrame, name: str) -> np.ndarray:
    column = f"gpu.nvidia.com/{name}"
    if column not in devices:
        return np.full(len(devices), None, dtype=object)
    values = devices[column].astype(object).to_numpy()
    return np.array([v if isinstance(v, str) and v else None for v in values], dtype=object)


def _parent_name(child: str) -> str:
    """``gpu-4`` of ``gpu-4-mig-1g10gb-19-0``: the name the driver gives the GPU a MIG device is cut from."""
    head, sep, _ = child.partition("-mig-")
    return head if sep else child


def _device(devices: pd.DataFrame, frame: pd.DataFrame, i: int, state: str, error: str | None) -> Device:
    row = frame.iloc[i]
    profile = row["profile"] if isinstance(row["profile"], str) else None
    lines = [f"{row['node']} / {row['device']} ({state})"]
    for label, value in (("driver", row["driver"]), ("type", row["type"]), ("product", row["product"]),
                         ("profile", profile), ("memory", row["memory"]), ("claim", row["claim"]),
                         ("pod", row["pod"]), ("error", error)):
        if isinstance(value, str) and value:
            lines.append(f"{label}: {value}")
    for column in ("gpu.nvidia.com/uuid", "gpu.nvidia.com/parentUUID", "resource.kubernetes.io/pciBusID"):
        value = devices[column].iat[i] if column in devices else None
        if isinstance(value, str) and value:
            lines.append(f"{column.partition('/')[2]}: {value}")
    key = f"{row['driver']}/{row['pool']}/{row['device']}"
    return Device(key, str(row["node"]), str(row["device"]), state, profile or str(row["device"]), "\n".join(lines))


def grid(count: int, columns: int) -> tuple[int, int]:
    """(columns, rows) of a grid holding ``count`` items, at most ``columns`` wide."""
    cols = max(1, min(count, columns))
    return cols, max(1, math.ceil(count / cols))
