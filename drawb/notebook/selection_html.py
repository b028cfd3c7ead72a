"""HTML for the result of a selector on the device frame: the status line, the compile error with its caret,
and the tables of matching and erroring devices (the selector builder's look, shared by the claim builder)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np

from drawb.cel import SelectResult
from drawb.inventory.view import summary_view

if TYPE_CHECKING:
    import pandas as pd

MATCH_COLUMNS = ["node", "device", "type", "product", "memory", "profile"]
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


_SHOWN = {"node", "driver", "device", "claim", "reserved_for"}  # summary_view's columns, and the attributes
_SHOWN_ATTRIBUTES = {"type", "productName", "profile", "memory"}  # it reads per driver


def _first_rows(result: SelectResult, mask: np.ndarray, limit: int) -> pd.DataFrame:
    """The first ``limit`` rows of the result's frame where ``mask`` is set, and only the columns summary_view
    reads, in one step: pandas deep-copies a frame's attrs on every operation, so the small frame drops them."""
    frame = result.frame
    columns = [i for i, c in enumerate(frame.columns) if c in _SHOWN or c.rsplit("/", 1)[-1] in _SHOWN_ATTRIBUTES]
    small = frame.iloc[np.flatnonzero(mask)[:limit], columns]
    small.attrs = {}
    return small


def _more(count: int, limit: int) -> str:
    return f"<p>First {limit} of {count} shown.</p>" if count > limit else ""


def matches_html(result: SelectResult, limit: int = MAX_ROWS) -> str:
    """The first ``limit`` matching devices as a table (node, device, type, product, memory, profile)."""
    if result.match_count == 0:
        return ""
    view = summary_view(_first_rows(result, result.matched, limit)).reindex(columns=MATCH_COLUMNS).astype(object)
    table = view.fillna("").to_html(index=False, border=0, classes="drawb-builder-matches")
    return _left(table) + _more(result.match_count, limit)


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
