"""The denoc-pin command line."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from denoc_pin import cli, validate


def test_validate_passes_on_bundled_urdf(capsys):
    assert cli.main(["validate", str(ROOT / "urdf" / "gripper.urdf"), "--samples", "3"]) == 0
    out = capsys.readouterr().out
    assert "forward_dynamics" in out and "aba" in out and "PASS" in out and "FAIL" not in out


@pytest.mark.parametrize("robot", ["panda", "ur5", "talos_left_arm"])
def test_validate_example_robots_by_name(robot, capsys):
    assert cli.main(["validate", robot, "--samples", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and len(report["checks"]) == 11
    assert all(c["max_rel"] <= 1e-9 or c["max_abs"] <= 1e-12 for c in report["checks"])


def test_validate_exit_code_1_when_a_check_fails(monkeypatch, capsys):
    monkeypatch.setattr(validate, "RTOL", -1.0)
    monkeypatch.setattr(validate, "ATOL", -1.0)
    assert cli.main(["validate", str(ROOT / "urdf" / "two_link.urdf"), "--samples", "1"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_bad_model_exit_code_2_with_message(tmp_path, capsys):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    assert cli.main(["validate", str(bad)]) == 2
    assert "malformed XML" in capsys.readouterr().err
    assert cli.main(["info", str(tmp_path / "missing.urdf")]) == 2


def test_info_prints_the_module_tree(capsys):
    assert cli.main(["info", str(ROOT / "urdf" / "gripper.urdf")]) == 0
    out = capsys.readouterr().out
    assert "├── M2 [2 dof]: joint_1_2 → joint_2_2" in out and "total mass (moving bodies): 1 kg" in out


def test_console_script_is_installed():
    exe = [sys.executable, "-m", "denoc_pin.cli"]
    res = subprocess.run(
        [*exe, "info", str(ROOT / "urdf" / "two_link.urdf")], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "alpha → delta" in res.stdout


def test_validate_checks_the_loops_of_a_closed_urdf(capsys):
    assert cli.main(["validate", str(ROOT / "urdf" / "four_bar.urdf"), "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "constrained_fd q̈" in out and "dense KKT (denoc_matrices)" in out and "constrained_id" in out
