"""The device browser (``%dra browse``): the device frame as a table with facets, search, sort and paging.

Design note. The grid is itables' ``ITable`` widget (DataTables in an anywidget), chosen over
ipydatagrid and over a hand-written HTML table: it installs from PyPI with no more than
``anywidget`` (ipydatagrid pulls in bqplot and py2vega), is actively released, works in JupyterLab
4 with ipywidgets 8, and draws a real HTML table, so a browser test reads its cells and rows. A
hand-written table would need its own escaping, selection and styling, which DataTables already
does well. The grid only ever holds one page: facets, search, sort and paging run kernel-side in
pandas (`drawb.inventory.browse.DeviceTable`), so 100,000 devices cost the browser 25 rows.

Live updates: the browser subscribes to the cluster's ResourceSlice and ResourceClaim watches
(the informers on a real cluster, the lifecycle's store events on the simulated one). An event
only marks the table stale and starts a timer; when it fires (at most once per ``throttle_s``) the
table is rebuilt from the session's live device inventory (``LiveDevices.current()``: allocations
joined from the same events), in that thread, without calling the cluster, and the page is redrawn
by setting traits.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import ipywidgets as widgets
import numpy as np
from traitlets import Bool, Dict, Int, TraitError, Unicode, observe, validate

from drawb.inventory.browse import COLUMNS, FACETS, NONE, DeviceTable, FacetError, Query
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

ANY = ""  # a facet menu's value for "every value"
DROPDOWN_FACETS = ("product", "type", "profile", "state")  # few values: a menu; node and claim: a combobox
COMBO_OPTIONS = 1000  # suggestions a combobox lists (typing any other value of the facet works too)


class DeviceBrowser(widgets.VBox):
    """Every device of the cluster in a table: filter by facets, search, sort and page through.

    Programmatic twins of every control: ``filter(profile="1g.10gb")``, ``search(text)``,
    ``sort(column, descending=False)``, the ``page`` trait (or ``next_page()``/``previous_page()``),
    ``select(i)`` (a row of the page, into the detail pane), ``refresh()``, ``flush()`` (a pending
    live redraw, now) and ``close()``. ``row_count`` is the number of devices the filters keep.

    CSS classes, for browser tests: ``drawb-browse`` (the whole widget), ``drawb-browse-facet-<facet>``
    (one per facet: node, product, type, profile, state, claim), ``drawb-browse-search``,
    ``drawb-browse-sort``, ``drawb-browse-descending``, ``drawb-browse-clear``,
    ``drawb-browse-refresh``, ``drawb-browse-prev``, ``drawb-browse-next``, ``drawb-browse-status``
    (the "rows a-b of N" line), ``drawb-browse-grid`` (the table) and ``drawb-browse-detail``.
    """

    filters = Dict(help="facet -> list of the values kept (NONE: devices without one); set it with filter()")
    query = Unicode("", help="the search text: rows whose node, device, type, product, profile, claim or pod contain it")
    sort_by = Unicode("", help="the column sorted by ('' for node, then device)")
    descending = Bool(False, help="sort from the largest down")
    page = Int(0, help="the page shown, from 0")
    page_size = Int(25, help="rows per page")
    page_count = Int(1, read_only=True, help="pages the kept rows fill (at least 1)")
    row_count = Int(0, read_only=True, help="devices the filters and the search keep")
    total = Int(0, read_only=True, help="devices in the cluster")
    selected = Unicode(None, allow_none=True, read_only=True, help="driver/pool/device shown in the detail pane")
    stale = Bool(False, read_only=True, help="the cluster changed and the redraw is pending")

    def __init__(self, session: Session, *, page_size: int = 25, live: bool = True, throttle_s: float = 1.0,
                 **kwargs):
        from itables.widget import ITable

        self._session = session
        self._throttle_s = throttle_s
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._watches: list[tuple[object, object]] = []
        self._rows = np.empty(0, dtype=np.int64)
        self._page_frame: pd.DataFrame | None = None
        self._syncing = False
        self._table = DeviceTable(session.devices())

        self._facets = {f: self._facet_control(f) for f in FACETS}
        self._search = widgets.Text(placeholder="search node, device, product, claim, pod...", description="search",
                                    continuous_update=True)
        self._sort = widgets.Dropdown(options=[("node, device", "")] + [(c, c) for c in COLUMNS], description="sort")
        self._descending = widgets.ToggleButton(description="descending", icon="sort-amount-desc")
        self._clear = widgets.Button(description="Clear filters", icon="times")
        self._refresh = widgets.Button(description="Refresh", icon="refresh", tooltip="re-read the cluster")
        self._prev = widgets.Button(description="", icon="chevron-left", tooltip="previous page",
                                    layout=widgets.Layout(width="40px"))
        self._next = widgets.Button(description="", icon="chevron-right", tooltip="next page",
                                    layout=widgets.Layout(width="40px"))
        self._status = widgets.HTML()
        self._grid = ITable(_empty_page(), paging=False, ordering=False, showIndex=False, select={"style": "single"},
                            layout={"topStart": None, "topEnd": None, "bottomStart": None, "bottomEnd": None},
                            classes="display compact nowrap")
        self._detail = widgets.HTML()
        super().__init__(
            children=[
                widgets.HBox([self._facets[f] for f in FACETS[:3]]),
                widgets.HBox([self._facets[f] for f in FACETS[3:]]),
                widgets.HBox([self._search, self._sort, self._descending, self._clear, self._refresh]),
                widgets.HBox([self._prev, self._next, self._status]),
                self._grid,
                self._detail,
            ],
            **kwargs,
        )
        self._add_classes()
        self._wire()
        self.page_size = page_size
        self._fill_menus()
        self._redraw()
        if live:
            self._subscribe()

    # -- programmatic twins ------------------------------------------------------------------

    def filter(self, **facets: str | Iterable[str] | None) -> DeviceBrowser:
        """Keep only devices whose facets have these values (a value, a list of values, or None to drop the
        facet's filter); e.g. ``filter(profile="1g.10gb", state="free")``. Returns the browser."""
        filters = dict(self.filters)
        for facet, values in facets.items():
            if values is None or values == ANY:
                filters.pop(facet, None)
            else:
                filters[facet] = [values] if isinstance(values, str) else list(values)
        self.filters = filters
        return self

    def clear(self) -> None:
        """Drop every filter and the search text."""
        self.filters, self.query = {}, ""

    def search(self, text: str) -> DeviceBrowser:
        """Keep only devices whose node, device, type, product, profile, claim or pod contain ``text``
        (case-insensitive). Returns the browser."""
        self.query = text
        return self

    def sort(self, column: str, descending: bool = False) -> DeviceBrowser:
        """Sort by ``column`` ('' for node, then device). Returns the browser."""
        self.descending = descending
        self.sort_by = column
        return self

    def next_page(self) -> None:
        """Show the next page (the last stays)."""
        self.page = min(self.page + 1, self.page_count - 1)

    def previous_page(self) -> None:
        """Show the previous page (the first stays)."""
        self.page = max(self.page - 1, 0)

    @property
    def rows(self) -> pd.DataFrame:
        """The rows of the page shown (the grid's data)."""
        return self._page_frame

    @property
    def table(self) -> DeviceTable:
        """The table the browser queries (every device of the last read)."""
        return self._table

    def select(self, row: int | None) -> None:
        """Show row ``row`` of the page in the detail pane (None: nothing)."""
        self._grid.selected_rows = [] if row is None else [row]
        self._show_detail(row)

    def refresh(self) -> None:
        """Re-read the cluster's devices and redraw, keeping the filters, search, sort and page."""
        with self._lock:
            self._cancel_timer()
            self._set_table(DeviceTable(self._session.devices()))

    def flush(self) -> None:
        """Redraw now if the cluster changed since the last redraw (what the live timer does)."""
        with self._lock:
            if self.stale:
                self._cancel_timer()
                self._redraw_live()

    def close(self) -> None:
        """Stop following the cluster and close the widget."""
        with self._lock:
            self._cancel_timer()
            for watch, handler in self._watches:
                watch.unsubscribe(handler)
            self._watches = []
        super().close()

    # -- traits ------------------------------------------------------------------------------

    @validate("filters")
    def _check_filters(self, proposal) -> dict:
        filters = {facet: list(values) for facet, values in proposal["value"].items() if values}
        try:
            self._table.mask(filters)
        except FacetError as exc:
            raise TraitError(str(exc)) from None
        return filters

    @validate("sort_by")
    def _check_sort(self, proposal) -> str:
        if proposal["value"] and proposal["value"] not in COLUMNS:
            raise TraitError(f"cannot sort by {proposal['value']!r}; columns: {', '.join(COLUMNS)}")
        return proposal["value"]

    @validate("page")
    def _check_page(self, proposal) -> int:
        return max(0, min(int(proposal["value"]), self.page_count - 1))

    @validate("page_size")
    def _check_page_size(self, proposal) -> int:
        if proposal["value"] < 1:
            raise TraitError("page_size must be at least 1")
        return proposal["value"]

    @observe("filters", "query", "sort_by", "descending", "page_size")
    def _on_query(self, change) -> None:
        if self._page_frame is None:
            return  # still in __init__: the first redraw comes once every control exists
        self.page = 0
        self._redraw()

    @observe("page")
    def _on_page(self, change) -> None:
        self._show_page()

    # -- drawing -----------------------------------------------------------------------------

    def _redraw(self) -> None:
        """Run the query over the table and show its page (the controls follow the traits)."""
        with self._lock:
            query = Query(filters={f: tuple(v) for f, v in self.filters.items()}, search=self.query,
                          sort=self.sort_by, descending=self.descending)
            self._rows = self._table.rows(query)
            count = len(self._rows)
            self.set_trait("total", len(self._table))
            self.set_trait("row_count", count)
            self.set_trait("page_count", max(1, -(-count // self.page_size)))
            if self.page > self.page_count - 1:
                self.page = self.page_count - 1
            self._sync_controls()
            self._show_page()

    def _show_page(self) -> None:
        frame = self._table.page(self._rows, self.page, self.page_size)
        self._page_frame = frame.reset_index(drop=True)
        self._grid.update(self._page_frame, selected_rows=[])
        first = self.page * self.page_size
        shown = f"rows {first + 1}-{first + len(frame)} of {self.row_count}" if len(frame) else "no rows"
        kept = "" if self.row_count == self.total else f" (filtered from {self.total} devices)"
        stale = " &middot; <i>updating...</i>" if self.stale else ""
        self._status.value = f"{shown}{kept} &middot; page {self.page + 1} of {self.page_count}{stale}"
        self._prev.disabled = self.page == 0
        self._next.disabled = self.page >= self.page_count - 1
        self._show_detail(None)

    def _show_detail(self, row: int | None) -> None:
        if row is None or self._page_frame is None or not 0 <= row < len(self._page_frame):
            self.set_trait("selected", None)
            self._detail.value = ""
            return
        position = self._rows[self.page * self.page_size + row]
        device = self._table.devices.iloc[position]
        self.set_trait("selected", f"{device['driver']}/{device['pool']}/{device['device']}")
        self._detail.value = device_detail_html(device)

    def _set_table(self, table: DeviceTable) -> None:
        self._table = table
        kept = {}
        for facet, values in self.filters.items():  # values that vanished from the cluster are dropped
            known = {v for v, _ in table.facet_values(facet)}
            if [v for v in values if v in known]:
                kept[facet] = [v for v in values if v in known]
        self._fill_menus()
        page = self.page
        if kept != self.filters:
            self.filters = kept
        self._redraw()
        self.page = page
        self.set_trait("stale", False)  # last: a reader that sees False sees the new rows
        self._show_page()

    # -- controls ----------------------------------------------------------------------------

    def _facet_control(self, facet: str) -> widgets.Widget:
        if facet in DROPDOWN_FACETS:
            return widgets.Dropdown(description=facet)
        return widgets.Combobox(description=facet, placeholder="any")

    def _fill_menus(self) -> None:
        self._syncing = True
        try:
            for facet, control in self._facets.items():
                values = self._table.facet_values(facet)
                if isinstance(control, widgets.Dropdown):
                    control.options = [("any", ANY)] + [(f"{v} ({n})", v) for v, n in values]
                else:
                    control.options = [v for v, _ in values[:COMBO_OPTIONS]]
        finally:
            self._syncing = False
        self._sync_controls()

    def _sync_controls(self) -> None:
        """Show the traits in the controls (after a programmatic change)."""
        self._syncing = True
        try:
            for facet, control in self._facets.items():
                values = self.filters.get(facet) or []
                value = values[0] if len(values) == 1 else ANY
                if isinstance(control, widgets.Dropdown):
                    control.value = value if value in {v for _, v in control.options} else ANY
                else:
                    control.value = value
            self._search.value = self.query
            self._sort.value = self.sort_by
            self._descending.value = self.descending
        finally:
            self._syncing = False

    def _wire(self) -> None:
        for facet, control in self._facets.items():
            control.observe(lambda change, facet=facet: self._on_facet(facet, change["new"]), names="value")
        self._search.observe(lambda change: self._from_control("query", change["new"]), names="value")
        self._sort.observe(lambda change: self._from_control("sort_by", change["new"] or ""), names="value")
        self._descending.observe(lambda change: self._from_control("descending", change["new"]), names="value")
        self._clear.on_click(lambda _button: self.clear())
        self._refresh.on_click(lambda _button: self.refresh())
        self._prev.on_click(lambda _button: self.previous_page())
        self._next.on_click(lambda _button: self.next_page())
        self._grid.observe(self._on_grid_selection, names="selected_rows")

    def _on_facet(self, facet: str, value: str) -> None:
        if self._syncing:
            return
        if value and isinstance(self._facets[facet], widgets.Combobox) and \
                value not in {v for v, _ in self._table.facet_values(facet)}:
            return  # still typing: not a value of the facet (yet)
        self.filter(**{facet: value or None})

    def _from_control(self, name: str, value) -> None:
        if not self._syncing:
            setattr(self, name, value)

    def _on_grid_selection(self, change) -> None:
        rows = change["new"]
        self._show_detail(rows[0] if rows else None)

    def _add_classes(self) -> None:
        self.add_class("drawb-browse")
        for facet, control in self._facets.items():
            control.add_class(f"drawb-browse-facet-{facet}")
        for name, control in (("search", self._search), ("sort", self._sort), ("descending", self._descending),
                              ("clear", self._clear), ("refresh", self._refresh), ("prev", self._prev),
                              ("next", self._next), ("status", self._status), ("grid", self._grid),
                              ("detail", self._detail)):
            control.add_class(f"drawb-browse-{name}")

    # -- live updates ------------------------------------------------------------------------

    def _subscribe(self) -> None:
        cluster = self._session.cluster
        self._session.live_devices()  # subscribed first: its frame has every event when ours arrive
        for kind in ("ResourceSlice", "ResourceClaim"):
            watch = cluster.watch(kind)
            watch.subscribe(self._on_event)
            self._watches.append((watch, self._on_event))

    def _on_event(self, event_type: str, obj: dict) -> None:
        with self._lock:
            self._changed()

    def _changed(self) -> None:
        self.set_trait("stale", True)
        if self._timer is None and self._throttle_s >= 0:
            self._timer = threading.Timer(self._throttle_s, self.flush)
            self._timer.daemon = True
            self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _redraw_live(self) -> None:
        """Rebuild the table from the session's live inventory as the events left it (no cluster call)."""
        self._set_table(DeviceTable(self._session.live_devices().current()))


def _empty_page() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: [] for c in COLUMNS})


def device_detail_html(device: pd.Series) -> str:
    """One device's attributes, capacities and holder as a two-column HTML table."""
    import pandas as pd

    rows = []
    for name, value in device.items():
        if str(name).endswith(":value") or name in ("consumes_counters", "request_policy"):
            continue
        if value is None or (not isinstance(value, (list, dict)) and pd.isna(value)):
            continue
        if isinstance(value, list):
            if not value:
                continue
            value = ", ".join(map(str, value))
        rows.append(f"<tr><th style='text-align:left'>{html.escape(str(name))}</th>"
                    f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>")
    held = "allocated to claim <b>{}</b>".format(html.escape(str(device.get("claim")))) if _present(
        device.get("claim")) else "free"
    title = html.escape(f"{device.get('node')} / {device.get('device')}")
    return (f"<div><b>{title}</b>: {held}</div>"
            f"<table class='jp-RenderedHTMLCommon' style='margin-left:0'>{''.join(rows)}</table>")


def _present(value: object) -> bool:
    import pandas as pd

    return value is not None and not (not isinstance(value, (list, dict)) and pd.isna(value))


__all__ = ["NONE", "DeviceBrowser", "device_detail_html"]
