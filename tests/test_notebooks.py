"""The tutorial notebooks (notebooks/*.ipynb) run in the suite through nbmake (pyproject's ``--nbmake``: each notebook
is a test, its cells executed in a fresh Jupyter kernel; an exception in any cell fails it).  Here: that they are
kept without outputs, that the runner fails a broken notebook rather than passing it, and that the inline viewer
draws the robot in a notebook exported to HTML."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_tutorials_are_there_without_outputs():
    """Four tutorials, each valid nbformat 4 with a Python 3 kernel, stored with no outputs and no execution counts
    (what runs them is the suite, not a stored result)."""
    assert [p.name for p in NOTEBOOKS] == ["01_load_and_validate.ipynb", "02_cassie_closed_loops.ipynb",
                                           "03_quadruped_standing.ipynb", "04_ilqr_derivatives.ipynb"]  # fmt: skip
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3"
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: outputs kept"


def test_the_runner_fails_a_broken_notebook(tmp_path):
    """nbmake as the suite calls it: a notebook whose second cell raises fails, one that runs passes."""
    for name, source in (("good", "x = 1 + 1\nassert x == 2"), ("broken", "raise RuntimeError('a broken cell')")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import numpy as np"),
                                             nbformat.v4.new_code_cell(source)])  # fmt: skip
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        (tmp_path / f"{name}.ipynb").write_text(json.dumps(nb))
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbmake", "-p", "no:cacheprovider", "-q", "--rootdir",
                          str(tmp_path), "-o", "addopts=", str(tmp_path)], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 1, run.stdout[-2000:]
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-2000:]
    assert "a broken cell" in run.stdout


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _exported_page(tmp_path, name: str, last_line: str) -> Path:
    """A notebook whose last cell shows a viewer of the gripper, executed in a Jupyter kernel (nbclient) and
    exported to HTML by nbconvert: the page a user shares."""
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    cells = ["import denoc_pin as dp\nviewer = dp.Viewer(dp.models.bundled('gripper'))", last_line]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    html, _ = HTMLExporter().from_notebook_node(nb)
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    return path


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); .ci/run installs it"
)
def test_the_inline_viewer_renders_in_the_exported_notebook(tmp_path):
    """A viewer as a cell's last value (``_repr_html_``: the self-contained page in an iframe's srcdoc) survives
    nbconvert's HTML export and draws the robot there: Chromium's picture of the exported notebook differs from the
    same notebook with the robot hidden in a patch of more than 150 pixels, inside the frame's area (below the
    cells' code), and the page is not blank."""
    from test_viewer import screenshot

    shown = _exported_page(tmp_path, "shown", "viewer")
    hidden = _exported_page(tmp_path, "hidden", "viewer.meshcat['denoc_pin'].set_property('visible', False)\nviewer")
    assert "<iframe srcdoc=" in shown.read_text(encoding="utf-8")
    a, b = screenshot(shown, tmp_path / "shown.png"), screenshot(hidden, tmp_path / "hidden.png")
    assert a.std() > 5, "blank page"
    robot = np.abs(a - b).sum(axis=2) > 30
    assert robot.sum() > 150, f"only {robot.sum()} pixels show the robot"
    rows, _ = np.nonzero(robot)
    assert rows.min() > 0.1 * robot.shape[0], "the difference is in the cells' code, not in the frame"
