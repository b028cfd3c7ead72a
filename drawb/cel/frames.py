"""`select` and `preview`: which devices of an inventory frame a selector (plus a class's selectors) picks, and which error."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from drawb import versions
from drawb.cel.selector import CELCompileError, Selector, compile_selector
from drawb.cel.vector import outcome
from drawb.errors import PROG, DrawbError

SUMMARY_COLUMNS = ("node", "driver", "pool", "device")
MAX_ROWS = 50  # rows shown in the text and HTML views


class UnknownDeviceClass(DrawbError, KeyError):
    """A preview names a DeviceClass that the cluster does not have."""

    hint = f"`{PROG} classes` lists the DeviceClasses"


@dataclass
class SelectResult:
    """Matching devices, devices whose evaluation errors (with the message), and the compiled selectors.

    `matched` and `error` hold the per-row outcome (aligned with the input frame); the `matches` and
    `errors` frames are cut from the input frame on first access.
    """

    frame: pd.DataFrame
    matched: np.ndarray
    failed: np.ndarray
    error: np.ndarray
    selector: Selector | None
    class_selectors: list[Selector] = field(default_factory=list)
    compile_error: CELCompileError | None = None
    _matches: pd.DataFrame | None = field(default=None, repr=False)
    _errors: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def total(self) -> int:
        """Devices in the frame."""
        return len(self.frame)

    @property
    def matches(self) -> pd.DataFrame:
        """The rows of the matching devices."""
        if self._matches is None:
            self._matches = self.frame[self.matched]
        return self._matches

    @property
    def errors(self) -> pd.DataFrame:
        """The rows of the devices whose evaluation errors, with an `error` column (the scheduler's message)."""
        if self._errors is None:
            errors = self.frame[self.failed].copy()
            errors["error"] = pd.array(list(self.error[self.failed]), dtype="string")
            self._errors = errors
        return self._errors

    @property
    def match_count(self) -> int:
        """Devices selected."""
        return int(self.matched.sum())

    @property
    def error_count(self) -> int:
        """Devices whose evaluation errors."""
        return int(self.failed.sum())

    @property
    def ok(self) -> bool:
        """True when the expression compiles and no device errors."""
        return self.compile_error is None and self.error_count == 0

    def summary(self) -> str:
        """One line: how many devices match, error, or the compile error."""
        if self.compile_error is not None:
            return f"CELCompileError: {self.compile_error}"
        text = f"{self.match_count} of {self.total} devices match"
        if self.error_count:
            text += f"; {self.error_count} devices error (the scheduler aborts an allocation that reaches them)"
        return text

    def __repr__(self) -> str:
        return f"<SelectResult: {self.summary()}>"

    def _head(self, rows: np.ndarray) -> pd.DataFrame:
        """The first MAX_ROWS selected rows (without cutting the whole selection), with their errors."""
        positions = np.flatnonzero(rows)[:MAX_ROWS]
        head = self.frame.iloc[positions]
        return head.assign(error=list(self.error[positions]))

    def __str__(self) -> str:
        parts = [self.summary()]
        if self.compile_error is not None:
            return parts[0]
        if self.match_count:
            parts.append(_table(_view(self._head(self.matched)), self.match_count))
        if self.error_count:
            parts.append("errors:\n" + _table(_view(self._head(self.failed), with_error=True), self.error_count))
        return "\n\n".join(parts)

    def _repr_html_(self) -> str:
        if self.compile_error is not None:
            return (
                "<div><b>CELCompileError</b> (the API server rejects this selector)"
                f"<pre>{html.escape(str(self.compile_error))}</pre></div>"
            )
        parts = [f"<p>{html.escape(self.summary())}</p>"]
        if self.match_count:
            parts.append(_view(self._head(self.matched)).to_html(index=False))
            if self.match_count > MAX_ROWS:
                parts.append(f"<p>First {MAX_ROWS} of {self.match_count} shown; all are in <code>.matches</code>.</p>")
        if self.error_count:
            parts.append("<p><b>Errors</b> (per device)</p>")
            parts.append(_view(self._head(self.failed), with_error=True).to_html(index=False))
            if self.error_count > MAX_ROWS:
                parts.append(f"<p>First {MAX_ROWS} of {self.error_count} shown; all are in <code>.errors</code>.</p>")
        return "<div>" + "".join(parts) + "</div>"


def _table(view: pd.DataFrame, total: int) -> str:
    text = view.to_string(index=False)
    if total > len(view):
        text += f"\n... and {total - len(view)} more"
    return text


def _view(frame: pd.DataFrame, with_error: bool = False) -> pd.DataFrame:
    columns = [c for c in SUMMARY_COLUMNS if c in frame]
    if with_error:
        columns.append("error")
    return frame[columns]


def _compile(
    expression: str | Selector, kubernetes_version: str, stored: bool, feature_gates: Mapping[str, bool] | None
) -> Selector:
    if isinstance(expression, Selector):
        return expression
    return compile_selector(
        expression, kubernetes_version=kubernetes_version, stored=stored, feature_gates=feature_gates
    )


def select(
    frame: pd.DataFrame,
    expression: str | Selector | Sequence[str | Selector],
    *,
    kubernetes_version: str = versions.DEFAULT,
    stored: bool = False,
    feature_gates: Mapping[str, bool] | None = None,
    class_selectors: Iterable[str | Selector] = (),
) -> SelectResult:
    """Evaluate selectors over every device of an inventory frame (vectorized; identical to `Selector.matches`).

    Class selectors (already stored, so compiled in the scheduler's environment) run first, then the
    request's selectors in order; the first `false` stops, any error makes the device an error.
    Raises CELCompileError when an expression does not compile.
    """
    request = [expression] if isinstance(expression, (str, Selector)) else list(expression)
    classes = [_compile(e, kubernetes_version, True, feature_gates) for e in class_selectors]
    compiled = [_compile(e, kubernetes_version, stored, feature_gates) for e in request]
    n = len(frame)
    pending = np.ones(n, dtype=bool)
    failed = np.zeros(n, dtype=bool)
    errors = np.full(n, None, dtype=object)
    for selector in classes + compiled:
        if not pending.any():
            break
        result = outcome(selector, frame)
        if result.failed.any():
            new = pending & result.failed[result.codes]
            errors[new] = result.messages[result.codes[new]]
            failed |= new
        pending &= result.matched[result.codes]
    return SelectResult(frame, pending, failed, errors, compiled[-1] if compiled else None, classes)


def class_selector_expressions(device_class: Mapping[str, Any]) -> list[str]:
    """The CEL expressions of a DeviceClass object, in order."""
    out = []
    for item in (device_class.get("spec") or {}).get("selectors") or []:
        expression = (item.get("cel") or {}).get("expression")
        if expression:
            out.append(expression)
    return out


def preview(
    frame: pd.DataFrame,
    expression: str,
    *,
    device_classes: Iterable[Mapping[str, Any]] = (),
    class_name: str | None = None,
    kubernetes_version: str = versions.DEFAULT,
    feature_gates: Mapping[str, bool] | None = None,
) -> SelectResult:
    """`select` for the notebook: a compile error is returned in the result (shown with its caret), not raised."""
    class_exprs: list[str] = []
    if class_name:
        classes = {c.get("metadata", {}).get("name"): c for c in device_classes}
        if class_name not in classes:
            known = ", ".join(sorted(k for k in classes if k))
            raise UnknownDeviceClass(f"no DeviceClass {class_name!r}; known: {known or 'none'}")
        class_exprs = class_selector_expressions(classes[class_name])
    try:
        return select(
            frame,
            expression,
            kubernetes_version=kubernetes_version,
            feature_gates=feature_gates,
            class_selectors=class_exprs,
        )
    except CELCompileError as err:
        n = len(frame)
        none = np.zeros(n, dtype=bool)
        return SelectResult(frame, none, none, np.full(n, None, dtype=object), None, [], err)
