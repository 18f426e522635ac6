"""The examples run and agree with Pinocchio."""

import runpy

import numpy as np
from conftest import ROOT


def _row(out: str, label: str) -> np.ndarray:
    line = next(line for line in out.splitlines() if line.startswith(label))
    return np.array(line.split(":", 1)[1].strip(" []").split(), dtype=float)


def test_quickstart(capsys):
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "M2 [2 dof]: joint_1_2 → joint_2_2" in out
    np.testing.assert_allclose(_row(out, "tau"), _row(out, "pinocchio"), rtol=1e-9)
    assert np.abs(_row(out, "FD(ID(a)) - a")).max() < 1e-10
