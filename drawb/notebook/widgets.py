"""Notebook widgets: the selector builder, which checks and previews a CEL device selector as you type."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets
from traitlets import Int, TraitError, Unicode, observe, validate

from drawb.cel import SelectResult, preview
from drawb.notebook.selection_html import MAX_ROWS, compile_error_html, errors_html, matches_html, status_html
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_ROWS", "SelectorBuilder"]


class SelectorBuilder(widgets.VBox):
    """Type a CEL device selector; see whether the API server accepts it, which devices match and which error.

    The DeviceClass's selectors run first, then the expression, as the scheduler does. Every control
    has a programmatic twin: set ``expression``, ``device_class`` or ``node``; call ``refresh()``.
    """

    expression = Unicode("", help="the CEL selector being built; setting it re-evaluates")
    device_class = Unicode("", help="DeviceClass whose selectors run first ('' for none)")
    node = Unicode("", help="only devices on this node ('' for every node)")
    match_count = Int(0, read_only=True, help="devices that pass the class's selectors and the expression")
    error_count = Int(0, read_only=True, help="devices where evaluation errors (an allocation reaching one aborts)")
    compile_error = Unicode(None, allow_none=True, read_only=True, help="the API server's compile error, or None")

    def __init__(self, session: Session, *, expression: str = "", device_class: str = "", node: str = "", **kwargs):
        self._session = session
        self._frame: pd.DataFrame | None = None
        self._classes: list[dict] = []
        self._result: SelectResult | None = None
        self._text = widgets.Text(
            placeholder="device.attributes['gpu.nvidia.com'].type == 'mig'",
            description="selector",
            continuous_update=True,
            layout=widgets.Layout(width="100%"),
        )
        self._class_menu = widgets.Dropdown(description="class")
        self._node_menu = widgets.Dropdown(description="node")
        self._refresh_button = widgets.Button(description="Refresh", icon="refresh", tooltip="re-read the cluster")
        self._status = widgets.HTML()
        self._compile_box = widgets.HTML(layout=widgets.Layout(display="none"))
        self._matches = widgets.HTML()
        self._errors = widgets.HTML()
        super().__init__(
            children=[
                self._text,
                widgets.HBox([self._class_menu, self._node_menu, self._refresh_button]),
                self._status,
                self._compile_box,
                self._matches,
                self._errors,
            ],
            **kwargs,
        )
        self.add_class("drawb-selector-builder")
        self._status.add_class("drawb-builder-status")
        self._compile_box.add_class("drawb-builder-compile-error")
        for table in (self._matches, self._errors):
            table.add_class("jp-RenderedHTMLCommon")  # JupyterLab's DataFrame table style
        self._text.observe(self._on_text, names="value")
        self._class_menu.observe(self._on_class_menu, names="value")
        self._node_menu.observe(self._on_node_menu, names="value")
        self._refresh_button.on_click(lambda _button: self.refresh())
        self.refresh()
        self.device_class, self.node, self.expression = device_class, node, expression

    @property
    def result(self) -> SelectResult | None:
        """The last evaluation (None while the expression is empty)."""
        return self._result

    @property
    def text(self) -> widgets.Text:
        """The Text widget the selector is typed into."""
        return self._text

    def refresh(self) -> None:
        """Re-read the cluster's devices and DeviceClasses, then re-evaluate."""
        self._frame = self._session.devices()
        self._classes = self._session.cluster.list("DeviceClass")
        class_names = sorted(c["metadata"]["name"] for c in self._classes)
        nodes = sorted(self._frame["node"].dropna().unique())
        device_class, node = self.device_class, self.node
        self._class_menu.options = [("(no class)", "")] + [(n, n) for n in class_names]
        self._node_menu.options = [("(every node)", "")] + [(n, n) for n in nodes]
        self.device_class = device_class if device_class in class_names else ""
        self.node = node if node in nodes else ""
        self._class_menu.value, self._node_menu.value = self.device_class, self.node
        self._evaluate()

    @validate("device_class")
    def _check_class(self, proposal) -> str:
        name = proposal["value"]
        known = [o[1] for o in self._class_menu.options]
        if name and name not in known:
            raise TraitError(f"no DeviceClass {name!r}; known: {', '.join(known[1:]) or 'none'}")
        return name

    @validate("node")
    def _check_node(self, proposal) -> str:
        name = proposal["value"]
        known = [o[1] for o in self._node_menu.options]
        if name and name not in known:
            raise TraitError(f"no device on node {name!r}; nodes: {', '.join(known[1:]) or 'none'}")
        return name

    def _on_text(self, change) -> None:
        self.expression = change["new"]

    def _on_class_menu(self, change) -> None:
        self.device_class = change["new"] or ""

    def _on_node_menu(self, change) -> None:
        self.node = change["new"] or ""

    @observe("expression")
    def _on_expression(self, change) -> None:
        self._text.value = change["new"]
        self._evaluate()

    @observe("device_class")
    def _on_device_class(self, change) -> None:
        self._class_menu.value = change["new"]
        self._evaluate()

    @observe("node")
    def _on_node(self, change) -> None:
        self._node_menu.value = change["new"]
        self._evaluate()

    def _devices(self) -> pd.DataFrame:
        frame = self._frame
        return frame[frame["node"] == self.node] if self.node else frame

    def _evaluate(self) -> None:
        if self._frame is None:
            return
        frame = self._devices()
        if not self.expression.strip():
            self._result = None
            self._set_counts(0, 0, None)
            self._status.value = f"Type a CEL selector to check it against {len(frame)} devices."
            self._show(compile_error=None, matches="", errors="")
            return
        result = preview(
            frame,
            self.expression,
            device_classes=self._classes,
            class_name=self.device_class or None,
            kubernetes_version=self._session.rules_version,
        )
        self._result = result
        error = None if result.compile_error is None else str(result.compile_error)
        self._set_counts(result.match_count, result.error_count, error)
        self._status.value = status_html(result, self.device_class)
        if error is not None:
            self._show(compile_error=error, matches="", errors="")
        else:
            self._show(compile_error=None, matches=matches_html(result), errors=errors_html(result))

    def _set_counts(self, matches: int, errors: int, compile_error: str | None) -> None:
        self.set_trait("match_count", matches)
        self.set_trait("error_count", errors)
        self.set_trait("compile_error", compile_error)

    def _show(self, *, compile_error: str | None, matches: str, errors: str) -> None:
        if compile_error is None:
            self._compile_box.layout.display = "none"
            self._compile_box.value = ""
        else:
            self._compile_box.value = compile_error_html(compile_error)
            self._compile_box.layout.display = None
        self._matches.value = matches
        self._errors.value = errors
