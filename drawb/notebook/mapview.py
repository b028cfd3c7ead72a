"""The cluster map in the notebook (``%dra map``): the SVG with a hover tooltip, and a click showing the
device's attributes, claim and pod in a detail pane.

The SVG is drawn in the browser by a small anywidget (``MapCanvas``): hovering a device shows its
``<title>`` text in a tooltip beside the pointer and reports the device in ``hovered``; a click reports it
in ``selected``. Everything else (the selector, the DeviceClass, the detail pane) is kernel-side.
"""

from __future__ import annotations

import anywidget
import ipywidgets as widgets
from traitlets import Bool, Unicode, observe

from drawb.map import ClusterMap
from drawb.session import Session

_ESM = """
function render({ model, el }) {
  const canvas = document.createElement("div");
  canvas.className = "drawb-map-canvas";
  canvas.style.overflow = "auto";
  const tip = document.createElement("div");
  tip.className = "drawb-map-tooltip";
  tip.style.cssText = "display:none;position:fixed;z-index:1000;pointer-events:none;white-space:pre;" +
    "background:#263238;color:#fff;font:12px monospace;padding:6px 8px;border-radius:4px;max-width:520px";
  el.appendChild(canvas);
  el.appendChild(tip);
  const draw = () => { canvas.innerHTML = model.get("svg"); };
  draw();
  model.on("change:svg", draw);
  const deviceAt = (event) => event.target.closest ? event.target.closest("[data-key]") : null;
  const report = (name, value) => {
    if (model.get(name) !== value) { model.set(name, value); model.save_changes(); }
  };
  canvas.addEventListener("mousemove", (event) => {
    const device = deviceAt(event);
    if (!device) { tip.style.display = "none"; report("hovered", ""); return; }
    const title = device.querySelector(":scope > title");
    tip.textContent = title ? title.textContent : device.dataset.key;
    tip.style.left = (event.clientX + 14) + "px";
    tip.style.top = (event.clientY + 14) + "px";
    tip.style.display = "block";
    report("hovered", device.dataset.key);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; report("hovered", ""); });
  canvas.addEventListener("click", (event) => {
    const device = deviceAt(event);
    if (device) { report("selected", device.dataset.key); }
  });
}
export default { render };
"""


class MapCanvas(anywidget.AnyWidget):
    """An SVG whose ``[data-key]`` groups report hover and click."""

    _esm = _ESM
    svg = Unicode("", help="the SVG document shown").tag(sync=True)
    hovered = Unicode("", help="the data-key of the device under the pointer ('' for none)").tag(sync=True)
    selected = Unicode("", help="the data-key of the device last clicked ('' for none)").tag(sync=True)


class MapView(widgets.VBox):
    """The cluster map with a selector, a DeviceClass, and a detail pane for the device clicked.

    Programmatic twins: set ``selector``, ``device_class`` or ``detail`` (re-draws), ``select(key)`` (a
    click on device ``driver/pool/device``), ``refresh()`` (re-read the cluster); ``map`` is the drawn
    `drawb.map.ClusterMap` (``map.state_of(key)``, ``map.counts``).

    CSS classes, for browser tests: ``drawb-map-view`` (the widget), ``drawb-map-selector``,
    ``drawb-map-class``, ``drawb-map-refresh``, ``drawb-map-error``, ``drawb-map-detail``; in the SVG
    ``drawb-map`` (the document), ``drawb-map-node``, ``drawb-map-device`` with ``drawb-map-<state>``
    (free, allocated, tainted, erroring, not-selected; ``drawb-map-parent`` for a GPU published only as
    MIG devices), ``drawb-map-legend-<state>``, ``drawb-map-pool`` and ``drawb-map-bar``; and
    ``drawb-map-tooltip`` for the hover text.
    """

    selector = Unicode("", help="a CEL selector: devices it leaves out are grey, devices where it errors red")
    device_class = Unicode("", help="a DeviceClass whose selectors run first ('' for none)")
    detail = Bool(None, allow_none=True, help="True: every device; False: the pool summary; None: by size")
    error = Unicode(None, allow_none=True, read_only=True, help="why the last drawing failed (a bad selector), or None")

    def __init__(self, session: Session, cluster_map: ClusterMap | None = None, *, selector: str = "",
                 device_class: str = "", detail: bool | None = None, **kwargs):
        self._session = session
        self._map = cluster_map
        self._selector = widgets.Text(value=selector, description="selector", continuous_update=False,
                                      placeholder="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                      layout=widgets.Layout(width="60%"))
        classes = sorted(c["metadata"]["name"] for c in session.cluster.list("DeviceClass"))
        self._class = widgets.Dropdown(options=[("(no class)", "")] + [(n, n) for n in classes], description="class")
        self._refresh = widgets.Button(description="Refresh", icon="refresh", tooltip="re-read the cluster")
        self._error = widgets.HTML()
        self.canvas = MapCanvas()
        self._detail = widgets.HTML()
        super().__init__(children=[widgets.HBox([self._selector, self._class, self._refresh]), self._error,
                                   self.canvas, self._detail], **kwargs)
        self.add_class("drawb-map-view")
        for name, control in (("selector", self._selector), ("class", self._class), ("refresh", self._refresh),
                              ("error", self._error), ("detail", self._detail)):
            control.add_class(f"drawb-map-{name}")
        self._drawing = cluster_map is None
        self.selector, self.device_class, self.detail = selector, device_class, detail
        self._drawing = False
        if cluster_map is None:
            self.refresh()
        else:
            self.canvas.svg = cluster_map.svg
        self._selector.observe(lambda change: setattr(self, "selector", change["new"]), names="value")
        self._class.observe(lambda change: setattr(self, "device_class", change["new"] or ""), names="value")
        self._refresh.on_click(lambda _button: self.refresh())
        self.canvas.observe(lambda change: self._show(change["new"]), names="selected")

    @property
    def map(self) -> ClusterMap:
        """The map drawn now."""
        return self._map

    def select(self, key: str) -> None:
        """Show device ``driver/pool/device`` in the detail pane, as a click on it does."""
        self.canvas.selected = key
        self._show(key)

    def refresh(self) -> None:
        """Re-read the cluster and draw the map again."""
        from drawb.commands.map import cluster_map_of
        from drawb.errors import DrawbError

        try:
            self._map = cluster_map_of(self._session, self.selector, self.device_class or None, self.detail)
        except DrawbError as exc:
            self.set_trait("error", exc.render(prog="%dra"))
            self._error.value = f"<pre style='color:#b00020;margin:0'>{_escape(self.error)}</pre>"
            return
        self.set_trait("error", None)
        self._error.value = ""
        self.canvas.svg = self._map.svg
        if self.canvas.selected:
            self._show(self.canvas.selected)

    @observe("selector", "device_class", "detail")
    def _on_query(self, change) -> None:
        self._selector.value, self._class.value = self.selector, self.device_class
        if not self._drawing:
            self.refresh()

    def _show(self, key: str) -> None:
        from drawb.notebook.browser import device_detail_html

        if not key:
            self._detail.value = ""
            return
        devices = self._session.devices()
        keys = devices["driver"].astype(str) + "/" + devices["pool"].astype(str) + "/" + devices["device"].astype(str)
        rows = devices[(keys == key).to_numpy()]
        if rows.empty:
            self._detail.value = f"<i>{_escape(key)}: no longer in the cluster</i>"
            return
        state = self._map.state_of(key) if self._map is not None else ""
        self._detail.value = f"<div>state: <b>{_escape(state)}</b></div>" + device_detail_html(rows.iloc[0])


def _escape(text: str) -> str:
    import html

    return html.escape(text)
