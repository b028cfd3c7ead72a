"""``%dra`` and ``%%dra``: the notebook front end over drawb's subcommands."""

from __future__ import annotations

import sys

from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Unicode, observe
from traitlets.config import Configurable

import drawb.notebook.builder  # noqa: F401  (registers the notebook's own subcommand, %dra builder)
from drawb.errors import DrawbError
from drawb.session import Session


@magics_class
class DRAMagics(Magics, Configurable):
    """The DRA workbench. Options are set with ``%config DRAMagics.<option> = value``."""

    namespace = Unicode("default", config=True, help="namespace for claims, templates and pods drawb creates")
    scenario = Unicode("default", config=True, help="simulated scenario used when no kubeconfig is given")
    kubeconfig = Unicode(None, allow_none=True, config=True, help="kubeconfig path of a real cluster")
    context = Unicode(None, allow_none=True, config=True, help="kubeconfig context of a real cluster")
    kubernetes_version = Unicode("1.34", config=True, help="Kubernetes version whose rules drawb checks against")
    template_dir = Unicode(None, allow_none=True, config=True, help="a folder of your own manifest templates")
    short_errors = Bool(True, config=True, help="print drawb errors as one named line with a hint, no traceback")

    def __init__(self, shell=None, **kwargs):
        self.session = Session()
        Configurable.__init__(self, config=shell.config if shell is not None else None)
        Magics.__init__(self, shell=shell, **kwargs)
        self._sync_session()
        if shell is not None:
            self.session.user_ns = shell.user_ns

    @observe("namespace", "scenario", "kubeconfig", "context", "kubernetes_version", "template_dir")
    def _on_option(self, change) -> None:
        self._sync_session()

    def _sync_session(self) -> None:
        for name in ("namespace", "scenario", "kubeconfig", "context", "kubernetes_version", "template_dir"):
            setattr(self.session, name, getattr(self, name))

    @line_cell_magic
    def dra(self, line: str = "", cell: str | None = None):
        """Run a drawb subcommand: ``%dra <subcommand> [options]`` (``%dra help`` lists them)."""
        from drawb.commands.registry import problems_of, problems_text, run_line

        try:
            result = run_line(self.session, line, cell)
            problems = problems_of(result)
            if problems:
                print(problems_text(problems), file=sys.stderr)
            return result
        except DrawbError as exc:
            if not self.short_errors:
                raise
            print(exc.render(), file=sys.stderr)
            return None


def reference_doc() -> str:
    """The docstring ``%dra?`` shows: every subcommand with its options."""
    from drawb.commands.registry import reference

    return (
        "Run a drawb subcommand: %dra <subcommand> [options], or %%dra <subcommand> with a cell.\n\n"
        "Subcommands:\n\n" + reference()
        + "\n\nOptions (set with %config DRAMagics.<name> = value): "
        + ", ".join(sorted(DRAMagics.class_own_traits(config=True)))
    )

