"""The check runner widget (``%dra check``): a check's stages as they pass, its live log, and the verdict.

The widget runs nothing itself: it is handed a function that runs one check with the widget as its
progress reporter (``drawb.check.run``'s ``stage``/``log`` hooks) and returns the Verdict. Every
trait changes as the check reports, so the page follows a running check; ``run()`` is the twin of
the "Run again" button, and ``verdict`` keeps the programmatic result.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets
from traitlets import List, Unicode

from drawb.check import Verdict
from drawb.check.verdict import PASS, Stage

RUNNING = "RUNNING"
COLOURS = {PASS: "#1a7f37", RUNNING: "#9a6700"}  # any other verdict is red
FAILED_COLOUR = "#cf222e"
SAID_IN_VERDICT = ("cleaned up ", "kept: ")  # notes the verdict's own text repeats; others (a failed cleanup) show


class CheckRunner(widgets.VBox):
    """One CUDA check: its stages, the pod's streamed log and the verdict, updated while it runs.

    ``start(progress)`` runs the check, reporting through ``progress`` (this widget), and returns
    the Verdict. ``run()`` (the "Run again" button) runs it again; ``verdict`` is the last result.
    """

    status = Unicode("", read_only=True, help="RUNNING while the check runs, then the verdict (PASS, MISMATCH, ...)")
    reason = Unicode("", read_only=True, help="the verdict's reason ('' until it is known)")
    stages = List(read_only=True, help="the stages seen so far, as (seconds, stage, message)")
    log_text = Unicode("", read_only=True, help="the pod's log so far, one line per line (prefixed by container if several)")
    source = Unicode("", help="where the check ran, when not on a real cluster ('[from the simulated cluster ...]')")
    notes = List(read_only=True, help="other lines the check reported (cleanup, kept objects)")

    def __init__(self, start: Callable[[CheckRunner], Verdict], *, title: str = "check", source: str = "", **kwargs):
        self._start = start
        self._verdict: Verdict | None = None
        self._containers: set[str] = set()
        self._log_lines: list[tuple[str, str]] = []
        self._title = widgets.HTML()
        self._stage_table = widgets.HTML()
        self._log_box = widgets.HTML()
        self._verdict_box = widgets.HTML()
        self._again = widgets.Button(description="Run again", icon="repeat", tooltip="run the same check once more")
        super().__init__(children=[self._title, self._stage_table, self._log_box, self._verdict_box, self._again],
                         **kwargs)
        self.add_class("drawb-check-runner")
        self._title.add_class("drawb-check-title")
        self._stage_table.add_class("drawb-check-stages")
        self._stage_table.add_class("jp-RenderedHTMLCommon")  # JupyterLab's table style
        self._log_box.add_class("drawb-check-log")
        self._verdict_box.add_class("drawb-check-verdict")
        self._again.on_click(lambda _button: self.run())
        self._name = title
        self.source = source
        self._live_in: int | None = None
        self._show()

    @property
    def verdict(self) -> Verdict | None:
        """The last check's Verdict, as ``drawb check`` returns it (None while the first one runs)."""
        return self._verdict

    @property
    def passed(self) -> bool:
        """Whether the last check passed."""
        return self._verdict is not None and self._verdict.passed

    def run(self) -> Verdict:
        """Run the check (again) and return its verdict; the widget follows it as it runs."""
        self._reset()
        self._again.disabled = True
        try:
            verdict = self._start(self)
        except BaseException:
            self.set_trait("status", "")
            self._show()
            raise
        finally:
            self._again.disabled = False
        self._verdict = verdict
        self.set_trait("status", verdict.status)
        self.set_trait("reason", verdict.reason)
        self._show()
        return verdict

    # --- the progress hooks drawb.check.run calls -----------------------------------------------

    def stage(self, entry: Stage) -> None:
        """A stage passed."""
        self.set_trait("stages", [*self.stages, (entry.at, entry.stage, entry.message)])
        self._show()

    def log(self, container: str, line: str) -> None:
        """A new line of a container's log."""
        self._containers.add(container)
        self._log_lines.append((container, line))
        several = len(self._containers) > 1
        self.set_trait("log_text", "\n".join(f"{c} | {text}" if several else text for c, text in self._log_lines))
        self._show()

    def __call__(self, line: str) -> None:
        """Any other line the check reports (cleanup, kept objects)."""
        self.set_trait("notes", [*self.notes, line])
        self._show()

    # --- display ---------------------------------------------------------------------------------

    def show_live(self, shell=None):
        """Show the widget in the running cell now (to follow the check), and not again when the cell
        returns it; the display handle (None outside IPython) lets the caller refresh its text at the end."""
        from IPython.display import display

        self._live_in = getattr(shell, "execution_count", None) if shell is not None else None
        return display(self._repr_mimebundle_(), raw=True, display_id=True)

    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The widget view, with the whole text (stages, log, verdict) as its plain-text form, not cut short."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle:
            bundle["text/plain"] = repr(self)
        return bundle

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if self._live_in is not None and shell is not None and shell.execution_count == self._live_in:
            self._live_in = None  # the cell that ran the check already shows it
            return
        display(self._repr_mimebundle_(), raw=True)

    def _reset(self) -> None:
        self._verdict = None
        self._containers.clear()
        self._log_lines.clear()
        for name, value in (("status", RUNNING), ("reason", ""), ("stages", []), ("log_text", ""), ("notes", [])):
            self.set_trait(name, value)
        self._show()

    def _show(self) -> None:
        colour = COLOURS.get(self.status, FAILED_COLOUR)
        badge = f" <b style='color:{colour}'>{html.escape(self.status)}</b>" if self.status else ""
        source = f" <i>{html.escape(self.source)}</i>" if self.source else ""
        self._title.value = f"<b>{html.escape(self._name)}</b>{badge}{source}"
        left = "style='text-align:left'"
        rows = "".join(f"<tr><td>{at:.1f} s</td><td {left}>{html.escape(stage)}</td>"
                       f"<td {left}>{html.escape(message)}</td></tr>" for at, stage, message in self.stages)
        self._stage_table.value = (f"<table><thead><tr><th>at</th><th {left}>stage</th><th {left}>message</th></tr>"
                                   f"</thead><tbody>{rows}</tbody></table>" if rows else "")
        self._log_box.value = (f"<p>log</p><pre style='max-height:20em;overflow:auto'>{html.escape(self.log_text)}</pre>"
                               if self.log_text else "")
        if self._verdict is not None:
            notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes if not n.startswith(SAID_IN_VERDICT))
            self._verdict_box.value = self._verdict._repr_html_() + (f"<ul>{notes}</ul>" if notes else "")
        else:
            self._verdict_box.value = ""

    def __repr__(self) -> str:
        lines = [f"{self._name}: {self.status or 'starting'}" + (f" {self.source}" if self.source else "")]
        lines += [str(Stage(at, stage, message)) for at, stage, message in self.stages]
        lines += [f"  | {line}" for line in self.log_text.splitlines()]
        if self._verdict is not None:
            lines.append(str(self._verdict))
        return "\n".join(lines)
