"""drawb, the DRA workbench: Kubernetes Dynamic Resource Allocation for GPUs in Jupyter."""

from drawb.release import VERSION as __version__


def load_ipython_extension(ipython) -> None:
    """Register the %dra magics (``%load_ext drawb``)."""
    from drawb.notebook.magics import DRAMagics, reference_doc, simulated_frame_html

    DRAMagics.dra.__doc__ = reference_doc()
    ipython.register_magics(DRAMagics(shell=ipython))
    html = ipython.display_formatter.formatters["text/html"]
    for module in ("pandas", "pandas.core.frame"):  # DataFrame.__module__ in pandas 3, in pandas 2
        html.for_type_by_name(module, "DataFrame", simulated_frame_html)  # pandas stays unimported


def unload_ipython_extension(ipython) -> None:
    """Stop the session's watches (``%unload_ext drawb``, and ``%reload_ext drawb`` before it loads again)."""
    magics = ipython.magics_manager.registry.get("DRAMagics")
    if magics is not None:
        magics.session.close()
