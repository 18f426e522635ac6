"""The denoc-pin command line."""

import json
import re
import subprocess
import sys

import psutil
import pytest
from conftest import ROOT, URDF_DIR

from denoc_pin.tools import cli, validate


def test_validate_passes_on_bundled_urdf(capsys):
    assert cli.main(["validate", str(URDF_DIR / "gripper.urdf"), "--samples", "3"]) == 0
    out = capsys.readouterr().out
    assert "forward_dynamics" in out and "aba" in out and "PASS" in out and "FAIL" not in out


@pytest.mark.parametrize("robot", ["panda", "ur5", "talos_left_arm"])
def test_validate_example_robots_by_name(robot, capsys):
    assert cli.main(["validate", robot, "--samples", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and len(report["checks"]) == 39  # 11 dynamics, 9 derivative, 19 kinematics rows
    assert all(c["max_rel"] <= 1e-9 or c["max_abs"] <= 1e-12 for c in report["checks"])


def test_validate_exit_code_1_when_a_check_fails(monkeypatch, capsys):
    monkeypatch.setattr(validate, "RTOL", 1e-30)
    monkeypatch.setattr(validate, "ATOL", 1e-300)
    assert cli.main(["validate", str(URDF_DIR / "two_link.urdf"), "--samples", "1"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_the_validate_rule_is_the_printed_quantity(capsys):
    """A sample passes when ‖x − y‖∞ ≤ max(1e-9 ‖y‖∞, 1e-12); the row shows that sample's error, tolerance and ratio,
    so no row reads "pass" beside a ratio above 1, and a NaN fails for good."""
    c = validate.Check("a", "b")
    c.add([3e-13], [0.0])  # y zero: the absolute floor, ratio 0.3
    c.add([1.0 + 2e-10], [1.0])  # relative 2e-10: ratio 0.2
    assert c.passed and (c.worst_abs, c.worst_tol, c.worst_ratio) == (3e-13, 1e-12, 3e-13 / 1e-12)
    assert c.max_rel == float("inf")  # kept in the JSON, not the judge
    c.add([1e-6 + 2e-12], [1e-6])  # y tiny: tol = max(1e-15, 1e-12), ratio 2
    assert not c.passed and c.worst_ratio == pytest.approx(2.0, rel=1e-3)
    n = validate.Check("a", "b")
    n.add([float("nan")], [1.0])
    n.add([1.0], [1.0])
    assert not n.passed and n.worst_ratio != n.worst_ratio
    assert cli.main(["validate", "two_link", "--samples", "2"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.endswith((" pass", " FAIL"))]
    assert len(rows) == 39 and all(r[-1] == "pass" and float(r[-2]) <= 1.0 for r in rows)


def test_missing_paths_are_named(capsys):
    assert cli.main(["validate", "no_robots/", "no_more/"]) == 2
    assert "no_robots/: no such file or folder" in capsys.readouterr().err
    assert cli.main(["info", "missing.urdf"]) == 2
    assert "missing.urdf: no such file or folder" in capsys.readouterr().err
    assert cli._resolve("alexander_v1.lowerBodyOnly").name == "alexander_v1.lowerBodyOnly.urdf"  # a name with a dot


def test_bad_model_exit_code_2_with_message(tmp_path, capsys):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    assert cli.main(["validate", str(bad)]) == 2
    assert "malformed XML" in capsys.readouterr().err
    assert cli.main(["info", str(tmp_path / "missing.urdf")]) == 2


def test_info_prints_the_module_tree(capsys):
    assert cli.main(["info", str(URDF_DIR / "gripper.urdf")]) == 0
    out = capsys.readouterr().out
    assert "├── M2 [2 dof]: joint_1_2 → joint_2_2" in out and "total mass (moving bodies): 1 kg" in out


def test_console_script_is_installed():
    exe = [sys.executable, "-m", "denoc_pin.tools.cli"]
    res = subprocess.run([*exe, "info", str(URDF_DIR / "two_link.urdf")], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "alpha → delta" in res.stdout


def test_validate_checks_the_loops_of_a_closed_urdf(capsys):
    assert cli.main(["validate", str(URDF_DIR / "four_bar.urdf"), "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "constrained_fd q̈" in out and "dense KKT (denoc_matrices)" in out and "constrained_id" in out


def test_simulate_writes_trajectory_plot_and_viewer(tmp_path, capsys):
    import numpy as np

    import denoc_pin as dp

    out, png, html = tmp_path / "t.npz", tmp_path / "q.png", tmp_path / "v.html"
    argv = ["simulate", str(URDF_DIR / "gripper.urdf"), "--t", "0.2", "--q0", "-1.0471975511965976", "0", "0",
            "0", "--out", str(out), "--plot", str(png), "--html", str(html)]  # fmt: skip
    assert cli.main(argv) == 0
    assert "rk4, 0.2 s simulated" in capsys.readouterr().out
    traj = dp.Trajectory.load(out)
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    ref = dp.simulate(model, np.deg2rad([-60.0, 0, 0, 0]), np.zeros(4), 0.2, progress=False)
    np.testing.assert_allclose(traj.q, ref.q, atol=1e-13)
    assert png.stat().st_size > 5000 and "MeshCat.Viewer" in html.read_text()


def test_simulate_adaptive_closed_loop_assembles_q0(tmp_path, capsys):
    out = tmp_path / "t.csv"
    argv = ["simulate", str(URDF_DIR / "four_bar.urdf"), "--t", "0.1", "--q0", "0.3", "1", "1.2",
            "--method", "dop853", "--out", str(out)]  # fmt: skip
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "assembled to q0" in text and "adaptive steps" in text
    assert len(out.read_text().splitlines()) == 102


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--q0", "1", "2"], r"q0 must have shape \(4,\), got \(2,\)"), (["--dt", "-1"], "dt must be a positive")],
)
def test_simulate_bad_arguments_exit_2(extra, message, capsys):
    assert cli.main(["simulate", str(URDF_DIR / "gripper.urdf"), *extra]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_view_serves_and_plays_a_saved_trajectory(tmp_path, capsys):
    """``view`` serves, plays and stops its live server; a trajectory of another model is an error (exit 2) that
    leaves no server running (it is refused before one starts)."""

    def servers() -> int:
        return sum("meshcat_server" in " ".join(p.cmdline()) for p in psutil.Process().children(recursive=True))

    traj = tmp_path / "t.npz"
    assert cli.main(["simulate", str(URDF_DIR / "two_link.urdf"), "--t", "0.1", "--out", str(traj)]) == 0
    before = servers()
    assert cli.main(["view", str(URDF_DIR / "two_link.urdf"), "--traj", str(traj), "--no-wait", "--speed", "10"]) == 0
    assert "MeshCat viewer: http://127.0.0.1:" in capsys.readouterr().out
    assert cli.main(["view", str(URDF_DIR / "gripper.urdf"), "--traj", str(traj), "--no-wait"]) == 2
    assert "holds q of size 2, the model has nq = 4" in capsys.readouterr().err
    assert servers() == before


@pytest.mark.parametrize("name", sorted(p.name for p in (URDF_DIR).glob("*.urdf")))
def test_simulate_runs_every_bundled_urdf_with_default_arguments(name, capsys):
    # Closed loops included: q0 defaults to the neutral configuration, which the assembly must close.
    assert cli.main(["simulate", str(URDF_DIR / name)]) == 0
    out = capsys.readouterr().out
    assert "rk4, 1.0 s simulated" in out
    assert float(re.search(r"energy balance drift (\S+) of the peak", out).group(1)) < 1e-4  # RK4 at the default dt


def test_a_warned_defect_is_one_warning_line_and_strict_refuses_it(tmp_path, capsys):
    path = tmp_path / "g.urdf"
    path.write_text((URDF_DIR / "gripper.urdf").read_text().replace('version="1.0"', 'version="0.0"', 1))
    assert cli.main(["info", str(path)]) == 0
    err = capsys.readouterr().err
    assert err == f"denoc-pin: warning: {path}: the XML declaration's version is '0.0', not '1.0'\n"
    assert cli.main(["info", str(path), "--strict"]) == 2
    assert "strict=True refuses" in capsys.readouterr().err


def test_info_lists_the_frames(capsys):
    assert cli.main(["info", "panda", "--frames"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line[:5].strip().isdigit()]
    assert [r[1] for r in rows[:3]] == ["universe", "panda_link0", "panda_joint1"]
    tcp = next(r for r in rows if r[1] == "panda_hand_tcp")
    assert tcp[2:4] == ["body", "panda_joint7"] and float(tcp[6]) == pytest.approx(0.2104, abs=1e-4)


def test_info_and_validate_read_cassie_from_its_sdf(capsys):
    from denoc_pin.loaders.robots import robots_dir

    sdf = str(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf")
    assert cli.main(["info", sdf]) == 0
    out = capsys.readouterr().out
    assert out.count("loop joint") == 4 and "spherical, left-achilles-rod -> left-hip-pitch" in out
    assert cli.main(["validate", sdf, "--root-joint", "free-flyer", "--samples", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(c["algorithm"], c["reference"]): c for c in report["checks"]}
    referee = "50 digits (pin M, h, J)"
    assert report["passed"] and rows["constrained_fd q̈", referee]["max_rel"] <= 1e-9
    pin_row = rows["constraintDynamics q̈", referee]
    assert pin_row["info"] and pin_row["max_rel"] > 1e-3  # shown beside ours: it does not converge here


def test_validate_reads_an_mjcf_file(capsys):
    xml = str(ROOT / "tests" / "mjcf" / "four_bar.xml")
    assert cli.main(["validate", xml, "--samples", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {c["algorithm"] for c in report["checks"]}
    assert report["passed"] and "forward_dynamics" in names and "constrained_fd q̈" in names


def test_compile_runs_groups_in_worker_processes_after_what_they_call(capsys):
    """``denoc-pin compile``: a group runs after the groups whose kernels it calls, each once; a group compiled for
    these sources is skipped; an unknown name is refused with the list of names."""
    from denoc_pin import kernel_cache
    from denoc_pin.tools import precompile

    order = precompile._needed(["batches", "closed_loop_simulation"])
    assert order.index("factorization") < order.index("forward_dynamics") < order.index("batches")
    assert order.index("closed_loops") < order.index("closed_loop_simulation") and len(order) == len(set(order))
    done = precompile.compile_kernels(["energy"], workers=1, progress=False, force=True)
    assert list(done) == ["energy"] and done["energy"] > 0
    assert "energy" in kernel_cache.compiled_groups()
    assert precompile.compile_kernels(["energy"], progress=False) == {}  # compiled already: nothing to do
    assert cli.main(["compile", "energy"]) == 0 and "already compiled" in capsys.readouterr().out
    assert cli.main(["compile", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown kernel group 'nope'; the groups are: factorization, inverse_dynamics, forward_dynamics" in err


def test_each_entry_is_compiled_by_the_group_it_names_and_says_what_compiles():
    """Every entry of the call protocol declares how it compiles, and the declaration holds: its group (and its rows'
    group) is a task of ``denoc-pin compile``, each of its kernels has its compile notice, an entry compiled for its
    caller's buffers has a first use in its group; running each group leaves every kernel of its entries compiled or
    loaded; an entry declared without a group is refused."""
    from numba import njit, types

    from denoc_pin.algorithms.protocol import ENTRIES, Entry
    from denoc_pin.kernel_cache import NOTICES
    from denoc_pin.tools import precompile

    named = {e.group for e in ENTRIES} | {e.rows_group for e in ENTRIES if e.rows is not None}
    assert named == set(precompile.TASKS), named ^ set(precompile.TASKS)
    assert set(precompile.FIRST_USES) <= named
    kernels = {"aba_entry", "rnea_rows", "cfd_derivatives_rows", "rk4_kernel", "contact_run", "integrate_fast"}
    assert kernels <= {k.__name__ for e in ENTRIES for k in e.kernels}
    for e in ENTRIES:
        for k in e.kernels:
            assert f"{k.py_func.__module__}.{k.py_func.__qualname__}" in NOTICES, k
        if e.kernel is not None and e.signature is None:
            assert e.group in precompile.FIRST_USES, e.name
    for name, task in precompile.TASKS.items():  # loads from the kernel cache the test run compiled first
        task.run()
        for e in ENTRIES:
            if e.group == name:
                assert all(k.signatures for k in e.kernels if k is not e.rows), (name, e.name)
            if e.rows_group == name:
                assert e.rows.signatures, (name, e.name)

    @njit
    def kernel(mi, mf, ws):
        return 0

    with pytest.raises(ValueError, match="entry kernel: declare its group and what it computes"):
        Entry(kernel, types.int64(types.int64[:], types.float64[:], types.float64[:]))


def test_cache_shows_where_the_kernels_are_what_they_hold_and_clears(tmp_path, monkeypatch, capsys):
    """``denoc-pin cache``: the folder, its size and cap, per toolchain the module folders (those of the installed
    sources counted), kernels and compiled signatures; ``--clear`` empties it."""
    from denoc_pin import kernel_cache

    monkeypatch.setenv("DENOC_PIN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("DENOC_PIN_CACHE_SIZE", "5e8")
    src = kernel_cache.sources()
    current = src.folder("denoc_pin.core.spatial")
    for tool, name in ((kernel_cache.toolchain(), current), ("numba-0.1_old", "core.spatial-" + "0" * 24)):
        folder = tmp_path / tool / name
        folder.mkdir(parents=True)
        (folder / "spatial.cross-10.py311.nbi").write_bytes(b"i" * 100_000)
        (folder / "spatial.cross-10.py311.1.nbc").write_bytes(b"c" * 900_000)
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"kernel cache: {tmp_path}" in out and "size: 2.0 MB of at most 500.0 MB" in out
    assert f"{kernel_cache.toolchain()}  (this one): 1 module folders (1 of the installed sources), 1 kernels, " in out
    assert "numba-0.1_old: 1 module folders (0 of the installed sources)" in out
    assert cli.main(["cache", "--clear"]) == 0 and "(2.0 MB)" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
    assert cli.main(["cache"]) == 0 and "empty" in capsys.readouterr().out


def test_compile_runs_a_group_whose_predecessors_were_compiled_before(monkeypatch):
    """After ``denoc-pin demo`` compiled its groups, ``denoc-pin compile`` of a group that follows them runs it (the
    groups it follows count as done; a scheduler that waited for them to run again would wait forever)."""
    import threading

    from denoc_pin.tools import precompile

    assert precompile.TASKS["udut"].after == ("factorization",)
    monkeypatch.setattr(precompile, "compiled_groups", lambda: {"factorization", "forward_dynamics"})
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(precompile.compile_kernels(["udut"], progress=False)),
                              daemon=True)  # fmt: skip
    worker.start()
    worker.join(300)
    assert not worker.is_alive(), "compile_kernels did not return"
    assert list(result) == ["udut"]
