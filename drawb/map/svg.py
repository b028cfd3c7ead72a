"""The cluster map as SVG: a small builder of our own (rectangles, text, groups with a hover title).

Every device is a ``<g class="drawb-map-device drawb-map-<state>" data-key="driver/pool/device">``
holding a ``<title>`` (the hover text: attributes, claim, pod) and its rectangle; MIG devices are
groups inside their GPU's group. The summary draws one stacked bar per node pool and product.
"""

from __future__ import annotations

from html import escape

from drawb.map.model import ALLOCATED, ERRORING, FREE, STATES, TAINTED, UNSELECTED, Device, Node, PoolSummary, grid

COLOURS = {FREE: "#43a047", ALLOCATED: "#1e88e5", TAINTED: "#fb8c00", ERRORING: "#e53935", UNSELECTED: "#d5d5d5"}
TEXT_ON = {FREE: "#fff", ALLOCATED: "#fff", TAINTED: "#000", ERRORING: "#fff", UNSELECTED: "#555"}
FONT = "font-family:DejaVu Sans,Helvetica,Arial,sans-serif"

GPU_W, GPU_H, GAP, GPUS_PER_ROW, PAD, TITLE_H, OTHER = 76, 64, 6, 4, 10, 24, 16
NODE_W = 2 * PAD + GPUS_PER_ROW * GPU_W + (GPUS_PER_ROW - 1) * GAP
BAR_W, ROW_H, LABEL_W = 420, 30, 330


def _attrs(**attributes: object) -> str:
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(str(v), quote=True)}"'
                   for k, v in attributes.items() if v is not None)


def rect(x: float, y: float, w: float, h: float, **attributes: object) -> str:
    """An SVG rectangle."""
    return f"<rect{_attrs(x=round(x, 1), y=round(y, 1), width=round(w, 1), height=round(h, 1), **attributes)}/>"


def text(x: float, y: float, content: str, size: float = 11, **attributes: object) -> str:
    """An SVG text line (escaped)."""
    style = f"{FONT};font-size:{size}px"
    return f"<text{_attrs(x=round(x, 1), y=round(y, 1), style=style, **attributes)}>{escape(content)}</text>"


def group(children: list[str], **attributes: object) -> str:
    """An SVG group."""
    return f"<g{_attrs(**attributes)}>{''.join(children)}</g>"


def document(width: float, height: float, body: list[str], title: str) -> str:
    """A standalone SVG document."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="drawb-map" width="{round(width)}" height="{round(height)}" '
            f'viewBox="0 0 {round(width)} {round(height)}"><title>{escape(title)}</title>'
            f'{rect(0, 0, width, height, fill="#ffffff")}{"".join(body)}</svg>')


def legend(counts: dict[str, int], y: float) -> list[str]:
    """One coloured square per state, with the number of devices in it."""
    out, x = [], PAD
    for state in STATES:
        if state == UNSELECTED and not counts.get(state):
            continue
        label = f"{state} ({counts.get(state, 0)})"
        out.append(group([rect(x, y, 12, 12, fill=COLOURS[state], stroke="#555"), text(x + 16, y + 10, label)],
                         class_=f"drawb-map-legend drawb-map-legend-{state.replace(' ', '-')}"))
        x += 28 + 7 * len(label)
    return out


def _device_group(device: Device, x: float, y: float, w: float, h: float, size: float) -> list[str]:
    """A device's rectangle with its label, then (for a GPU) its MIG devices inside."""
    published = device.published
    fill = COLOURS.get(device.state, "#fff") if published else "#fafafa"
    border = {"stroke": "#333", "stroke_width": 1} if published else {"stroke": "#777", "stroke_dasharray": "4 2"}
    inner = [f"<title>{escape(device.title)}</title>", rect(x, y, w, h, fill=fill, rx=3, **border)]
    colour = TEXT_ON.get(device.state, "#000") if published else "#333"
    inner.append(text(x + 3, y + size + 2, device.label, size=size, fill=colour))
    if device.children:
        cols, rows = grid(len(device.children), 2)
        top = y + size + 6
        cw, ch = (w - 4 - (cols - 1) * 2) / cols, (h - (top - y) - 3 - (rows - 1) * 2) / rows
        for n, child in enumerate(device.children):
            cx, cy = x + 2 + (n % cols) * (cw + 2), top + (n // cols) * (ch + 2)
            inner += _device_group(child, cx, cy, cw, ch, 7)
    state = device.state.replace(" ", "-") if published else "parent"
    return [group(inner, class_=f"drawb-map-device drawb-map-{state}", data_key=device.key,
                  data_state=device.state if published else None)]


def node_height(node: Node) -> float:
    """The height of a node's box."""
    rows = -(-len(node.gpus) // GPUS_PER_ROW)
    others = -(-len(node.others) // 16)
    return TITLE_H + rows * (GPU_H + GAP) + (others * (OTHER + 4) + 14 if others else 0) + PAD - GAP


def node_box(node: Node, x: float, y: float) -> list[str]:
    """A node: its name, GPUs (with MIG devices inside) and other devices."""
    body = [rect(x, y, NODE_W, node_height(node), fill="#f4f6f8", stroke="#90a4ae", rx=6),
            text(x + PAD, y + 16, node.name, size=12, font_weight="bold"),
            text(x + NODE_W - PAD, y + 16, node.pool, size=9, fill="#607d8b", text_anchor="end")]
    top = y + TITLE_H
    for n, gpu in enumerate(node.gpus):
        gx = x + PAD + (n % GPUS_PER_ROW) * (GPU_W + GAP)
        gy = top + (n // GPUS_PER_ROW) * (GPU_H + GAP)
        body += _device_group(gpu, gx, gy, GPU_W, GPU_H, 9)
    if node.others:
        oy = top + (-(-len(node.gpus) // GPUS_PER_ROW)) * (GPU_H + GAP)
        body.append(text(x + PAD, oy + 9, "other devices", size=8, fill="#607d8b"))
        for n, device in enumerate(node.others):
            device.label = ""
            ox, row = x + PAD + (n % 16) * (OTHER + 2), oy + 14 + (n // 16) * (OTHER + 4)
            body += _device_group(device, ox, row, OTHER, OTHER, 7)
    return [group(body, class_="drawb-map-node", data_node=node.name)]


def _heading(title: str, subtitle: str) -> list[str]:
    return [text(PAD, 18, title, size=14, font_weight="bold"), text(PAD, 34, subtitle, size=10, fill="#455a64")]


def detail_svg(nodes: list[Node], counts: dict[str, int], title: str, subtitle: str = "", columns: int = 2) -> str:
    """Every node with every device."""
    columns = max(1, min(columns, len(nodes)))
    body = _heading(title, subtitle) + legend(counts, 44)
    y0, heights = 66, [node_height(n) for n in nodes]
    rows = [max(heights[i:i + columns]) for i in range(0, len(nodes), columns)]
    for n, node in enumerate(nodes):
        row = n // columns
        body += node_box(node, PAD + (n % columns) * (NODE_W + GAP * 2), y0 + sum(rows[:row]) + row * GAP * 2)
    width = 2 * PAD + columns * NODE_W + (columns - 1) * GAP * 2
    height = y0 + sum(rows) + len(rows) * GAP * 2 + PAD
    return document(max(width, 560), height, body, f"{title}; {subtitle}")


def summary_svg(groups: list[PoolSummary], counts: dict[str, int], title: str, subtitle: str = "") -> str:
    """One stacked bar per node pool and product: devices per state, with counts."""
    body = _heading(title, subtitle) + legend(counts, 44)
    y = 76
    body.append(text(PAD, y, "node pool / product", size=10, fill="#607d8b"))
    body.append(text(PAD + LABEL_W, y, "devices by state", size=10, fill="#607d8b"))
    for item in groups:
        y += ROW_H
        parts = [text(PAD, y + 13, f"{item.pool} / {item.product}", size=11),
                 text(PAD, y + 25, f"{item.nodes} nodes, {item.devices} devices", size=9, fill="#607d8b")]
        x = PAD + LABEL_W
        for state in STATES:
            count = item.counts.get(state, 0)
            if not count:
                continue
            w = BAR_W * count / max(item.devices, 1)
            parts.append(group([f"<title>{escape(f'{item.pool} / {item.product}: {count} {state}')}</title>",
                                rect(x, y + 4, w, 18, fill=COLOURS[state])],
                               class_=f"drawb-map-bar drawb-map-{state.replace(' ', '-')}", data_count=count))
            x += w
        summary = ", ".join(f"{item.counts[s]} {s}" for s in STATES if item.counts.get(s))
        parts.append(text(PAD + LABEL_W + BAR_W + 8, y + 17, summary, size=10))
        body.append(group(parts, class_="drawb-map-pool", data_pool=item.pool, data_product=item.product))
    return document(PAD * 2 + LABEL_W + BAR_W + 300, y + ROW_H + PAD, body, f"{title}; {subtitle}")
