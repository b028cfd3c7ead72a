"""Run a notebook without a browser and print chosen outputs (``scripts/demo --headless``)."""

from __future__ import annotations

import sys
from pathlib import Path

TABLE_TAG = "device-table"
POD_TAG = "cuda-check"


def execute(path: str | Path, timeout: int = 300):
    """Execute every cell of the notebook at ``path`` in a fresh kernel; return the notebook."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(str(path), as_version=4)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(Path(path).parent)}}).execute()
    return notebook


def tagged_text(notebook, tag: str = TABLE_TAG) -> str:
    """The plain-text outputs of the cells tagged ``tag``."""
    texts = []
    for cell in notebook.cells:
        if tag in cell.get("metadata", {}).get("tags", []):
            for output in cell.get("outputs", []):
                if "data" in output and "text/plain" in output["data"]:
                    texts.append(output["data"]["text/plain"])
                elif output.get("output_type") == "stream":
                    texts.append(output["text"])
    return "\n".join(texts)


def main(argv: list[str] | None = None) -> int:
    """Execute the tour (or the notebook given) and print its device table and its cuda-check pod;
    ``--out FILE`` also writes the executed notebook there."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = None
    if "--out" in args:
        at = args.index("--out")
        out = Path(args[at + 1])
        del args[at:at + 2]
    path = Path(args[0]) if args else Path("notebooks/tour.ipynb")
    import nbformat
    import pandas as pd

    pd.set_option("display.width", 250)
    notebook = execute(path)
    if out is not None:
        nbformat.write(notebook, str(out))
    on_purpose = sum(any(o.get("output_type") == "error" for o in c.get("outputs", [])) for c in notebook.cells)
    shown = f" ({on_purpose} tagged raises-exception show their error on purpose)" if on_purpose else ""
    print(f"Executed {path}: {len(notebook.cells)} cells, no errors{shown}.\n")
    print(tagged_text(notebook))
    pod_text = tagged_text(notebook, POD_TAG)
    if pod_text:
        print("\n--- the cuda-check pod ---\n")
        print(pod_text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
