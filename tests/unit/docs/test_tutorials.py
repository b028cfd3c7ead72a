"""The tutorials' notebooks: one that fails stops the site's build, naming it; widgets become text on the page."""

from __future__ import annotations

import nbformat
import pytest

from docsite import tutorials


def write(path, *sources: str, outputs: list | None = None) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    if outputs is not None:
        notebook.cells[0].outputs = outputs
    nbformat.write(notebook, str(path))


def test_a_failing_notebook_fails_the_build_by_name(tmp_path):
    """Both notebooks run (in kernels of their own); the one that raises is named with what it raised, and the
    other is written with its outputs."""
    (tmp_path / "notebooks").mkdir()
    write(tmp_path / "notebooks" / "good.ipynb", "print(6 * 7)")
    write(tmp_path / "notebooks" / "broken.ipynb", "1 + 1", "raise ValueError('planted in the notebook')")
    with pytest.raises(tutorials.NotebookFailed) as failed:
        tutorials.execute_all(tmp_path / "notebooks", tmp_path / "out")
    assert "broken.ipynb: exit status 1" in str(failed.value) and "planted in the notebook" in str(failed.value)
    assert "good.ipynb" not in str(failed.value)
    [cell] = nbformat.read(str(tmp_path / "out" / "good.ipynb"), as_version=4).cells
    assert cell.outputs[0]["text"] == "42\n"


def test_widget_views_become_text(tmp_path):
    view = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    outputs = [
        nbformat.v4.new_output("display_data", {tutorials.WIDGET_VIEW: view,
                                                "text/plain": "ClaimBuilder(children=(HBox(children=(Text(value='x'),)),))"}),
        nbformat.v4.new_output("display_data", {tutorials.WIDGET_VIEW: view, "text/plain": "%dra check single-gpu: PASS"}),
        nbformat.v4.new_output("display_data", {tutorials.WIDGET_VIEW: view}),
    ]
    write(tmp_path / "shown.ipynb", "b = %dra build", outputs=outputs)
    tutorials._without_widget_views(tmp_path / "shown.ipynb")
    shown = [o["data"] for o in nbformat.read(str(tmp_path / "shown.ipynb"), as_version=4).cells[0].outputs]
    assert shown == [{"text/plain": "[ClaimBuilder widget: run this notebook in JupyterLab to use it]"},
                     {"text/plain": "%dra check single-gpu: PASS"},
                     {"text/plain": "[a widget: run this notebook in JupyterLab to use it]"}]


def test_fingerprint_follows_every_file(tmp_path):
    """``mkdocs serve`` keeps the executed notebooks only while nothing under the notebooks and drawb changed."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("A = 1\n")
    before = tutorials.fingerprint(tmp_path / "pkg")
    assert tutorials.fingerprint(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "sub" / "a.py").write_text("A = 2\n")
    changed = tutorials.fingerprint(tmp_path / "pkg")
    (tmp_path / "pkg" / "b.py").write_text("")
    assert len({before, changed, tutorials.fingerprint(tmp_path / "pkg")}) == 3
