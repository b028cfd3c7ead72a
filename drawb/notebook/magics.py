"""``%dra`` and ``%%dra``: the notebook front end over drawb's subcommands."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Unicode, observe
from traitlets.config import Configurable

import drawb.notebook.browse  # noqa: F401  (registers the notebook's own subcommand, %dra browse)
import drawb.notebook.builder  # noqa: F401  (and %dra builder and build)
from drawb.errors import PROG, DrawbError
from drawb.session import Session, session_options

if TYPE_CHECKING:
    from drawb.commands.watching import WatchedTable

OPTION_NAMES = tuple(f.name for f in session_options())

# The session's options as config traitlets (``%config DRAMagics.namespace = "gpu-team"``).
SessionTraits = type(
    "SessionTraits",
    (Configurable,),
    {
        f.name: Unicode(f.default, allow_none=f.default is None, config=True, help=f.metadata["help"])
        for f in session_options()
    },
)


class CommandFailed(Exception):
    """A ``%dra`` command failed: the cell fails (so "Run all" stops there), and IPython shows only the
    error's named line and hint, without a traceback (as for IPython's own UsageError)."""

    def __init__(self, error: DrawbError):
        super().__init__(error.render(prog="%dra"))
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


class CommandInterrupted(KeyboardInterrupt):
    """A ``%dra`` command stopped by *Interrupt kernel*, after its own cleanup: the cell fails with one line
    saying so, without a traceback."""

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


def interrupted(line: str, exc: KeyboardInterrupt | None = None) -> CommandInterrupted:
    """The error a cell ends with when the user interrupts ``%dra <line>``: what the command undid on the way out
    (the notes on ``exc``, e.g. an apply's rollback), then the line saying it stopped."""
    notes = [note.replace(PROG, "%dra") for note in getattr(exc, "__notes__", [])]
    return CommandInterrupted("\n".join([*notes, f"Interrupted: %dra {(line.split() or ['help'])[0]} stopped before "
                                                  "it finished"]))


@magics_class
class DRAMagics(Magics, SessionTraits):
    """The DRA workbench. Options are set with ``%config DRAMagics.<option> = value``."""

    short_errors = Bool(True, config=True, help="print drawb errors as one named line with a hint, no traceback")

    def __init__(self, shell=None, **kwargs):
        self.session = Session(progress=print)  # steps of long commands (check) appear in the cell as they happen
        Configurable.__init__(self, config=shell.config if shell is not None else None)
        Magics.__init__(self, shell=shell, **kwargs)
        self._sync_session()
        if shell is not None:
            self.session.user_ns = shell.user_ns

    @observe(*OPTION_NAMES)
    def _on_option(self, change) -> None:
        setattr(self.session, change["name"], change["new"])  # only that one: the others may come from the cluster

    def _sync_session(self) -> None:
        for name in OPTION_NAMES:
            setattr(self.session, name, getattr(self, name))

    @line_cell_magic
    def dra(self, line: str = "", cell: str | None = None):
        """Run a drawb subcommand: ``%dra <subcommand> [options]`` (``%dra help`` lists them)."""
        from drawb.collector import collection_around_command

        with collection_around_command():  # the collector's policy is set here, once, around the command
            return self._dra(line, cell)

    def _dra(self, line: str, cell: str | None):
        from drawb.commands.registry import run_line, source_line, warnings_text

        if cell is None and _is_check(line):
            return self._check(line)
        try:
            result = run_line(self.session, line, cell)
        except DrawbError as exc:
            if not self.short_errors:
                raise
            raise CommandFailed(exc) from None
        except KeyboardInterrupt as exc:
            if not self.short_errors:
                raise
            raise interrupted(line, exc) from None
        source = source_line(self.session)
        if source:
            print(source)
        warnings = warnings_text(result)
        if warnings:
            print(warnings, file=sys.stderr)
        from drawb.commands.watching import WatchedTable

        if isinstance(result, WatchedTable):
            return show_watched(result)
        cluster_map = sys.modules.get("drawb.map")
        if cluster_map is not None and isinstance(result, cluster_map.ClusterMap):
            from drawb.notebook.mapview import MapView

            return MapView(self.session, result, selector=result.selector, device_class=result.device_class,
                           detail=result.detail)
        return result

    def _check(self, line: str):
        """``%dra check``: the check runner widget, shown in the cell while the check runs, then returned."""
        from drawb.commands.registry import run_line, source_line
        from drawb.notebook.checkrunner import CheckRunner

        def start(runner: CheckRunner):
            previous, self.session.progress = self.session.progress, runner
            try:
                verdict = run_line(self.session, line)
                runner.source = source_line(self.session)  # the session connects on its first command
                return verdict
            finally:
                self.session.progress = previous

        runner = CheckRunner(start, title=f"%dra {line.strip()}")
        handle = runner.show_live(self.shell)
        try:
            runner.run()
        except DrawbError as exc:
            if not self.short_errors:
                raise
            raise CommandFailed(exc) from None
        except KeyboardInterrupt as exc:
            if not self.short_errors:
                raise
            raise interrupted(line, exc) from None
        finally:
            if handle is not None:  # the cell keeps the final state, its text included; nothing if it never ran
                handle.update(runner._repr_mimebundle_() if runner.verdict else {"text/plain": ""}, raw=True)
        return runner


def _is_check(line: str) -> bool:
    """Whether ``line`` runs ``check`` for its widget (``--json`` asks for the JSON text instead)."""
    words = line.split()
    return words[:1] == ["check"] and "--json" not in words


def show_watched(table: WatchedTable) -> None:
    """Show a WatchedTable in the cell and update that display on every change, until its time is up or
    the user interrupts the kernel; the last table stays in the cell."""
    from IPython.display import display

    handle, changes = None, 0

    def show(frame, previous) -> None:
        nonlocal handle, changes
        if handle is None:
            handle = display(frame, display_id=True)
        else:
            handle.update(frame)
            changes += 1

    print(f"watching {table.title} on {table.cluster.description}"
          + (f" for {table.seconds:g} s" if table.seconds is not None else " (interrupt the kernel to stop)"))
    try:
        table.follow(show)
    except KeyboardInterrupt:  # how a watch without --for ends: the cell ends normally, as after --for
        pass
    print(f"stopped watching {table.title} after {changes} change(s)")


def simulated_frame_html(frame) -> str | None:
    """A DataFrame's HTML, under a caption naming the simulated cluster when its ``attrs`` say it came from it."""
    import html

    table = frame._repr_html_()
    info = frame.attrs.get("drawb") if isinstance(frame.attrs, dict) else None
    if table is None or not isinstance(info, dict) or not info.get("simulated"):
        return table
    caption = html.escape(f"from the {info.get('cluster', 'simulated cluster')}, not a real cluster", quote=False)
    return f"<p><i>{caption}</i></p>{table}"


def reference_doc() -> str:
    """The docstring ``%dra?`` shows: every subcommand with its options."""
    from drawb.commands.registry import reference

    return (
        "Run a drawb subcommand: %dra <subcommand> [options], or %%dra <subcommand> with a cell.\n\n"
        "Subcommands:\n\n" + reference()
        + "\n\nOptions (set with %config DRAMagics.<name> = value): "
        + ", ".join(sorted(DRAMagics.class_traits(config=True)))
    )

