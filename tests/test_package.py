"""The package as installed: its bundled models found through importlib.resources, its version read from the
metadata, the command line's names and version, and no path walked up from a module to the checkout.  `.ci/wheel`
runs this file from the unpacked sdist against the installed wheel."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path

import pinocchio as pin
import pytest
from conftest import ROOT

import denoc_pin as dp
from denoc_pin.tools import cli

PACKAGE = Path(dp.__file__).resolve().parent


def test_bundled_models_are_the_package_data_and_load_by_name():
    """The bundled robots: the checkout's urdf/ folder, installed as the data package denoc_pin.data.urdf (in the
    wheel, denoc_pin/data/urdf/; in an editable install, urdf/ itself), every file a BUNDLED name."""
    folder = Path(str(resources.files("denoc_pin.data.urdf")))
    files = sorted(p.name for p in folder.iterdir() if p.suffix == ".urdf")
    assert files == sorted(f"{name}.urdf" for name in dp.models.BUNDLED)
    installed = folder.resolve().is_relative_to(PACKAGE)
    assert installed or folder.resolve() == (ROOT / "urdf").resolve()
    for name in dp.models.BUNDLED:
        path = dp.models.bundled_file(name)
        assert path.resolve().parent == folder.resolve() and path.is_file()
        model = dp.models.bundled(name)
        pm = pin.buildModelFromUrdf(str(path))
        assert (model.nq, model.nv, list(model.names[1:])) == (pm.nq, pm.nv, list(pm.names)[1:])
    floating = dp.models.bundled("gripper", root_joint="free-flyer")  # keyword arguments reach the loader
    assert floating.nq == dp.models.bundled("gripper").nq + 7


def test_an_unknown_bundled_name_lists_the_valid_ones():
    with pytest.raises(dp.ModelError, match=r"no bundled model 'griper'; bundled: gripper, two_link, "):
        dp.models.bundled("griper")


def test_the_wheel_declares_every_package_and_data_file():
    """pyproject.toml lists every package (a subpackage left out would be missing from the wheel) and its
    package-data globs cover every file that is not Python, the urdf/ folder's included (mapped to
    denoc_pin.data.urdf by package-dir)."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11, as CI's
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {p.parent for p in (ROOT / "denoc_pin").rglob("__init__.py")}
    found = {".".join(f.relative_to(ROOT).parts) for f in folders} | {"denoc_pin.data.urdf"}
    assert sorted(config["packages"]) == sorted(found)
    assert config["package-dir"] == {"denoc_pin.data.urdf": "urdf"}
    for package, root in (("denoc_pin", ROOT / "denoc_pin"), ("denoc_pin.data.urdf", ROOT / "urdf")):
        globs = config["package-data"][package]
        data = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        data = [p for p in data if not p.endswith(".py") and "__pycache__" not in p]
        assert data and [p for p in data if not any(fnmatch.fnmatch(p, g) for g in globs)] == []


def test_the_version_is_pyprojects_read_from_the_metadata(capsys):
    declared = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert dp.__version__ == metadata.version("denoc-pin") == declared
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    line = capsys.readouterr().out
    assert line.startswith(f"denoc-pin {declared} (pinocchio {pin.__version__}, numba ")


def test_the_command_line_takes_bundled_names_from_any_folder(tmp_path, capsys):
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"^  {name} +\S", out, re.M) for name in dp.models.BUNDLED)
    res = subprocess.run([sys.executable, "-m", "denoc_pin.tools.cli", "info", "gripper"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "├── M2 [2 dof]: joint_1_2 → joint_2_2" in res.stdout
    assert cli.main(["info", "griper"]) == 2
    err = capsys.readouterr().err
    assert "'griper' is neither a file nor a model's name; did you mean gripper" in err
    assert "bundled: gripper, two_link, two_link_closed, four_bar" in err


WALK = re.compile(r"\.parents\s*\[|\.parent\s*\.\s*parent\b|['\"]\.\.['\"]")


def walks_up(source: str) -> list[str]:
    """Lines that build a path from ``__file__`` and climb above its folder: toward the checkout, which an installed
    package does not have."""
    return [f"line {i}: {line.strip()}" for i, line in enumerate(source.splitlines(), 1)
            if "__file__" in line and WALK.search(line)]  # fmt: skip


def test_the_checker_sees_a_walk_up():
    assert walks_up('URDF = Path(__file__).resolve().parents[1] / "urdf"\n') != []
    assert walks_up("ROOT = Path(__file__).parent.parent\n") != []
    assert walks_up('ROOT = os.path.join(os.path.dirname(__file__), "..")\n') != []
    assert walks_up('HERE = Path(__file__).resolve().parent\nVIEWS = Path(__file__).with_name("views.py")\n') == []


@pytest.mark.parametrize("folder", ["denoc_pin", "examples"])
def test_no_module_or_example_walks_up_to_the_checkout(folder):
    """The package finds its files with importlib.resources or beside its own modules, and the examples through the
    public API (``dp.models.bundled_file``): both work from a wheel installed anywhere."""
    root = PACKAGE if folder == "denoc_pin" else ROOT / folder
    sources = sorted(root.rglob("*.py"))
    assert sources
    found = {str(p.relative_to(root)): walks_up(p.read_text()) for p in sources}
    assert {k: v for k, v in found.items() if v} == {}
