"""HTML for the result of a selector on the device frame: the status line, the compile error with its caret,
and the tables of matching and erroring devices (the selector builder's look, shared by the claim builder)."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd

from drawb.cel import SelectResult

MAX_ROWS = 200  # devices rendered in each table; the counts always cover every device


def compile_error_html(error: str) -> str:
    """The API server's compile error, caret line and all, in a red monospace box."""
    return (
        '<pre style="font-family: monospace; white-space: pre; overflow-x: auto; '
        'color: #b00020; background: #fff5f5; padding: 6px; margin: 0">'
        f"{html.escape(error)}</pre>"
    )


def status_html(result: SelectResult, device_class: str) -> str:
    """One line: how many devices match, and how many error (or that the selector does not compile)."""
    if result.compile_error is not None:
        return "<b>CELCompileError</b>: the API server rejects this selector."
    scope = f" (DeviceClass {html.escape(device_class)} first)" if device_class else ""
    text = f"<b>{result.match_count}</b> of {result.total} devices match{scope}"
    if result.error_count:
        text += f"; <b>{result.error_count}</b> devices error (the scheduler aborts an allocation that reaches them)"
    return text + "."


def _more(count: int, limit: int) -> str:
    return f"<p>First {limit} of {count} shown.</p>" if count > limit else ""


# (header, attribute or capacity name under the row's driver, whether it is a capacity); None: a frame column
_MATCH_CELLS = [("node", None, False), ("device", None, False), ("type", "type", False),
                ("product", "productName", False), ("memory", "memory", True), ("profile", "profile", False)]


def _natural(name: str) -> tuple:
    """Sort key that puts ``gpu-2`` before ``gpu-10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))


def _cell(value: object) -> str:
    return "" if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)


def matches_html(result: SelectResult, limit: int = MAX_ROWS) -> str:
    """The first ``limit`` matching devices as a table (node, device, type, product, memory, profile), sorted by
    node and device. Written from the columns directly: pandas' per-operation overhead (it deep-copies a frame's
    attrs each time) made this table most of a builder update at 100,000 devices."""
    if result.match_count == 0:
        return ""
    frame = result.frame
    drivers_present = [d for d in frame["driver"].dropna().unique()]
    wanted = ["node", "device", "driver"] + [f"capacity:{d}/{n}" if cap else f"{d}/{n}"
                                             for d in drivers_present for _, n, cap in _MATCH_CELLS if n]
    positions = [frame.columns.get_loc(c) for c in wanted if c in frame.columns]
    small = frame.iloc[np.flatnonzero(result.matched)[:limit], positions]  # one cut of the rows shown
    small.attrs = {}
    arrays = {c: small[c].to_numpy(dtype=object) for c in small.columns}
    drivers = arrays["driver"]
    cells: list[list[str]] = [[] for _ in drivers]
    for header, name, capacity in _MATCH_CELLS:
        for i, (out, driver) in enumerate(zip(cells, drivers)):
            column = header if name is None else f"capacity:{driver}/{name}" if capacity else f"{driver}/{name}"
            values = arrays.get(column)
            out.append("" if values is None else _cell(values[i]))
    cells.sort(key=lambda row: (row[0], _natural(row[1])))
    head = "".join(f"<th>{h}</th>" for h, _, _ in _MATCH_CELLS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>\n" for row in cells)
    table = (f'<table border="0" class="dataframe drawb-builder-matches" style="margin-left: 0">\n'
             f'<thead><tr style="text-align: right;">{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>')
    return table + _more(result.match_count, limit)


def errors_html(result: SelectResult, limit: int = MAX_ROWS) -> str:
    """The first ``limit`` erroring devices, grouped by node and the scheduler's message."""
    if result.error_count == 0:
        return ""
    rows = np.flatnonzero(result.failed)[:limit]
    errors = result.frame.iloc[rows][["node", "device"]].assign(error=list(result.error[rows]))
    groups = errors.groupby(["node", "error"], sort=True)["device"].agg(", ".join)
    table = groups.reset_index().rename(columns={"device": "devices"})[["node", "devices", "error"]]
    html_table = table.to_html(index=False, border=0, classes="drawb-builder-errors")
    return "<p><b>Errors</b> (the scheduler's message)</p>" + _left(html_table) + _more(result.error_count, limit)


def _left(table: str) -> str:
    """A pandas HTML table aligned left (Lab's table style centres it)."""
    return table.replace("<table ", '<table style="margin-left: 0" ', 1)
