"""dp.distributed on real local Dask clusters of worker processes: nothing is mocked.  Each result is checked
against the same computation in this process (bit for bit: the same kernels on the same machine), and the
edits and the dataset against independent routes (a payload built as a body, Pinocchio's rnea)."""

from __future__ import annotations

import os
import runpy
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, URDF_DIR

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf as robot_urdf

zarr = pytest.importorskip("zarr")  # the [dask] extra, part of the test extra
dist = dp.distributed


@pytest.fixture(scope="module")
def cluster():
    c = dist.client(n_workers=2)
    yield c
    c.close()


def test_a_local_cluster_listens_on_loopback_only(cluster):
    """Every socket the cluster's processes listen on, read from the system: the scheduler, the dashboard, the nannies
    (in this process) and the workers (its children), all on 127.0.0.1 (the dashboard was on every interface)."""
    import psutil

    me = psutil.Process()
    sockets = [(c.laddr.ip, c.laddr.port) for p in [me, *me.children(recursive=True)]
               for c in p.net_connections("inet") if c.status == "LISTEN"]  # fmt: skip
    ports = {port for _, port in sockets}
    expected = [cluster.scheduler.address, cluster.dashboard_link.split("/")[2], *cluster.scheduler_info()["workers"]]
    assert all(int(a.rsplit(":", 1)[1]) in ports for a in expected), (expected, sockets)
    assert {address for address, _ in sockets} == {"127.0.0.1"}, sockets
    with pytest.raises(ValueError, match="host"):
        dist.client("tcp://127.0.0.1:1", host="0.0.0.0")


def arm(payload=None, scale=1.0) -> dp.Model:
    """A 3-DOF arm; payload (mass, offset) as a body of its own on a fixed joint; scale: l3's mass and inertia."""
    b = dp.ModelBuilder("arm")
    I3 = np.eye(3)
    b.add_body(0, "revolute", (0, 0, 1), mass=2.0, com=(0.1, 0, 0), inertia=np.diag([0.01, 0.02, 0.03]),
               name="j1", link="l1")  # fmt: skip
    b.add_body("l1", "revolute", (0, 1, 0), placement=(I3, (0.3, 0, 0)), mass=1.5, com=(0.15, 0.01, 0),
               inertia=np.diag([0.01, 0.015, 0.02]), name="j2", link="l2", lower=-2.0, upper=2.0)  # fmt: skip
    b.add_body("l2", "revolute", (1, 0, 0), placement=(I3, (0.3, 0, 0)), mass=0.8 * scale, com=(0.1, 0, 0.02),
               inertia=scale * np.array([[0.01, 0.001, 0], [0.001, 0.02, 0], [0, 0, 0.01]]), name="j3", link="l3",
               velocity=3.0, effort=20.0)  # fmt: skip
    if payload is not None:
        mass, offset = payload
        b.add_body("l3", "fixed", placement=(I3, offset), mass=mass, inertia=np.zeros((3, 3)), name="grip",
                   link="payload")  # fmt: skip
    return b.build()


def test_edits_match_independent_models():
    """A payload as a point mass by the parallel-axis theorem = the same mass as a body on a fixed joint; a scaled
    link = the link built with the scaled mass and inertia: GIM and FD at random states."""
    rng = np.random.default_rng(0)
    offset = (0.05, -0.02, 0.03)
    cases = [
        ({"payload": {"link": "l3", "mass": 0.7, "offset": offset}}, arm(payload=(0.7, offset))),
        ({"mass_scale": {"l3": 2.5}}, arm(scale=2.5)),
        ({"mass_scale": {"l3": 2.5}, "payload": [{"link": "l3", "mass": 0.7, "offset": offset}]},
         arm(payload=(0.7, offset), scale=2.5)),
    ]  # fmt: skip
    for spec, reference in cases:
        edited = dist.apply_edits(arm(), spec, None)
        de, dr = edited.create_data(), reference.create_data()
        for _ in range(5):
            q, v, tau = dp.random_configuration(edited, rng), rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
            M, Mr = dp.gim(edited, de, q), dp.gim(reference, dr, q)
            assert np.abs(M - Mr).max() <= 1e-12 * np.abs(Mr).max()
            a, ar = dp.forward_dynamics(edited, de, q, v, tau), dp.forward_dynamics(reference, dr, q, v, tau)
            assert np.abs(a - ar).max() <= 1e-10 * np.abs(ar).max()


def test_bad_edit_specs_are_refused_before_any_task():
    m = arm()
    with pytest.raises(ValueError, match="keys among payload, lock, mass_scale"):
        dist.simulate_many(m, np.zeros((1, 3)), None, 0.01, edits={"paylod": {}})
    with pytest.raises(dp.ModelError, match="no link or joint 'l9'.*l1, l2, l3"):
        dist.simulate_many(m, np.zeros((1, 3)), None, 0.01, edits={"payload": {"link": "l9", "mass": 1.0}})
    with pytest.raises(dp.ModelError, match="j1, j2, j3"):
        dist.simulate_many(m, np.zeros((1, 3)), None, 0.01, edits=[{"lock": ["j7"]}])
    with pytest.raises(ValueError, match="mass_scale"):
        dist.simulate_many(m, np.zeros((1, 3)), None, 0.01, edits={"mass_scale": {"l2": -1.0}})
    with pytest.raises(ValueError, match="one spec for all runs or a list of N = 2"):
        dist.simulate_many(m, np.zeros((2, 3)), None, 0.01, edits=[None])
    with pytest.raises(ValueError, match="v0s must be"):
        dist.simulate_many(m, np.zeros((2, 3)), np.zeros((3, 3)), 0.01)


def test_sweep_equals_single_process_runs(cluster, tmp_path):
    m = dp.models.rope(8)
    rng = np.random.default_rng(1)
    n = 5
    q0s, v0s = dp.random_configuration(m, rng, n=n), rng.uniform(-1, 1, (n, m.nv))
    out = tmp_path / "runs.zarr"
    r = dist.simulate_many(m, q0s, v0s, 0.3, dt=2e-3, client=cluster, out=out, progress=False)
    g = zarr.open_group(str(out), mode="r")
    T = 151
    assert g["q"].shape == (n, T, m.nq) and g["v"].shape == (n, T, m.nv) and g["q"].chunks == (1, T, m.nq)
    assert r["errors"] == {} and r["wall"].shape == (n,) and (r["wall"] > 0).all()
    for i in range(n):
        tr = dp.simulate(m, q0s[i], v0s[i], 0.3, dt=2e-3, progress=False)
        np.testing.assert_array_equal(g["t"][:], tr.t)
        np.testing.assert_array_equal(g["q"][i], tr.q)
        np.testing.assert_array_equal(g["v"][i], tr.v)
        np.testing.assert_array_equal(r["q"][i], tr.q[-1])
        E = tr.energy["total"]
        assert r["drift"][i] == np.abs(E - E[0]).max() / np.abs(tr.energy["kinetic"]).max()
    assert 0 < r["drift"].max() < 1e-2  # RK4 at 2 ms on a rope thrown at up to 1 rad/s


def test_sweep_edits_and_adaptive_method(cluster, tmp_path):
    """Per-run edits, dop853 and record_every: each run as dp.simulate gives it on the edited model; a locked
    joint holds its q0 value at rest, in the original layout."""
    m = arm()
    rng = np.random.default_rng(2)
    q0s, v0s = dp.random_configuration(m, rng, n=3), rng.uniform(-1, 1, (3, 3))
    v0s[1, 1] = 0.0  # the locked joint starts at rest
    specs = [{"payload": {"link": "l3", "mass": 0.5}}, {"lock": ["j2"]}, None]
    tau = np.array([0.3, -0.2, 0.1])
    r = dist.simulate_many(m, q0s, v0s, 0.2, dt=1e-3, method="dop853", tau=tau, edits=specs, client=cluster,
                           out=tmp_path / "e.zarr", record_every=10, progress=False, rtol=1e-10)  # fmt: skip
    g = zarr.open_group(str(tmp_path / "e.zarr"), mode="r")
    assert g["q"].shape == (3, 21, 3)
    payload = dist.apply_edits(m, specs[0], q0s[0])
    tr = dp.simulate(payload, q0s[0], v0s[0], 0.2, 1e-3, "dop853", tau, record_every=10, rtol=1e-10, progress=False)
    np.testing.assert_array_equal(g["q"][0], tr.q)
    locked = dp.lock_joints(m, ["j2"], q0s[1])
    tr = dp.simulate(locked, q0s[1][[0, 2]], v0s[1][[0, 2]], 0.2, 1e-3, "dop853", tau[[0, 2]], record_every=10,
                     rtol=1e-10, progress=False)  # fmt: skip
    np.testing.assert_array_equal(g["q"][1][:, [0, 2]], tr.q)
    np.testing.assert_array_equal(g["q"][1][:, 1], np.full(21, q0s[1][1]))
    np.testing.assert_array_equal(g["v"][1][:, 1], np.zeros(21))
    tr = dp.simulate(m, q0s[2], v0s[2], 0.2, 1e-3, "dop853", tau, record_every=10, rtol=1e-10, progress=False)
    np.testing.assert_array_equal(g["v"][2], tr.v)
    assert r["errors"] == {}


def test_a_run_that_blows_up_is_reported_and_the_others_finish(cluster):
    m = arm()
    q0s = np.zeros((2, 3))
    r = dist.simulate_many(m, q0s, [[0, 0, 0], [0, 0, 1e200]], 0.05, client=cluster, progress=False)
    assert list(r["errors"]) == [1] and "ValueError" in r["errors"][1]
    assert np.isfinite(r["q"][0]).all() and np.isnan(r["q"][1]).all()


def test_dataset_is_the_same_on_one_and_two_workers(cluster, tmp_path):
    m = arm()
    one = dist.client(n_workers=1)
    try:
        r1 = dist.dataset(m, 2500, 3, tmp_path / "one.zarr", chunk=1000, client=one, progress=False)
    finally:
        one.close()
    r2 = dist.dataset(m, 2500, 3, tmp_path / "two.zarr", chunk=1000, client=cluster, progress=False)
    assert r1["chunks"] == r2["chunks"] == 3 and r1["samples"] == 2500
    g1, g2 = (
        zarr.open_group(str(tmp_path / "one.zarr"), mode="r"),
        zarr.open_group(str(tmp_path / "two.zarr"), mode="r"),
    )
    for name in ("q", "v", "tau", "ddq"):
        assert g2[name].chunks == (1000, 3)
        np.testing.assert_array_equal(g1[name][:], g2[name][:])
    q, v, tau, ddq = (g2[k][:] for k in ("q", "v", "tau", "ddq"))
    assert np.isfinite(ddq).all()
    assert len(np.unique(np.hstack([q, v, tau]), axis=0)) == 2500  # every row distinct
    assert (np.abs(q[:, 1]) <= 2.0).all() and (np.abs(q[:, 0]) <= np.pi).all()  # j2's limits; j1 has none
    assert (np.abs(v[:, 2]) <= 3.0).all() and (np.abs(tau[:, 2]) <= 20.0).all()  # j3's velocity and effort
    assert np.abs(v[:, 2]).max() > 2.5 and np.abs(tau[:, 0]).max() > 9.0  # the bounds are used, not narrower ones
    # Pinocchio as the referee: τ = rnea(q, v, q̈) on every 10th row
    pm = dp.to_pinocchio(m)
    pd = pm.createData()
    for i in range(0, 2500, 10):
        ref = pin.rnea(pm, pd, q[i], v[i], ddq[i])
        assert np.abs(ref - tau[i]).max() <= 1e-9 * max(1.0, np.abs(tau[i]).max())
    r3 = dist.dataset(m, 2500, 4, tmp_path / "other.zarr", chunk=1000, client=cluster, progress=False)
    assert r3["samples"] == 2500
    assert not np.array_equal(zarr.open_group(str(tmp_path / "other.zarr"), mode="r")["q"][:], q)  # another seed


def test_validate_many(cluster, tmp_path, capsys):
    (tmp_path / "robots").mkdir()
    for name in ("two_link.urdf", "spatial_tree.urdf"):
        src = URDF_DIR / name
        (tmp_path / "robots" / name).write_text(src.read_text())
    broken = tmp_path / "robots" / "broken.urdf"
    broken.write_text("<robot name='b'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint>")
    rows = dist.validate_many([tmp_path / "robots"], samples=3, client=cluster, progress=True)
    err = capsys.readouterr().err  # the progress bar over completed tasks
    assert "files: 100%" in err and "3/3" in err
    by_name = {Path(r["file"]).name: r for r in rows}
    assert sorted(by_name) == ["broken.urdf", "spatial_tree.urdf", "two_link.urdf"]
    assert by_name["broken.urdf"]["error"] and not by_name["broken.urdf"]["passed"]
    for name in ("two_link.urdf", "spatial_tree.urdf"):
        r = by_name[name]
        assert r["passed"] and r["error"] == "" and r["checks"] > 10 and r["rel"] <= 1e-9
    table = dist.format_rows(rows)
    assert "2 of 3 files passed" in table and "ERROR" in table


def test_a_killed_worker_reruns_its_runs_elsewhere(tmp_path):
    """Kill a worker process (SIGKILL) while a sweep runs: its runs are rerun elsewhere, and the store ends
    complete, each run equal to a single-process run."""
    m = dp.models.chain(60)
    # About 0.1 s a run.  Not longer: after about 5 s the falling chain whips fast enough for RK4 at 1 ms to lose
    # stability in some runs, and which ones depends on the last bit of rounding (a chaotic motion).
    n, t_final = 16, 3.0
    q0s = 0.05 * np.random.default_rng(3).standard_normal((n, m.nq))
    out = tmp_path / "kill.zarr"
    c = dist.client(n_workers=2)
    try:
        pids = c.run(os.getpid)
        result = {}

        def run() -> None:
            result.update(
                dist.simulate_many(m, q0s, None, t_final, client=c, out=out, record_every=100, progress=False)
            )

        sweep = threading.Thread(target=run)
        sweep.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the first run is in the store
            time.sleep(0.05)
            if out.exists():
                try:
                    done = (~np.isnan(zarr.open_group(str(out), mode="r")["q"][:, -1, 0])).sum()
                except (KeyError, FileNotFoundError, ValueError):
                    continue
                if done >= 1:
                    break
        assert done < n, "the sweep ended before a worker could be killed: make the runs longer"
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)
        sweep.join(timeout=300)
        assert not sweep.is_alive()
        assert victim not in c.run(os.getpid).values()  # the nanny started a new process
    finally:
        c.close()
    assert result["errors"] == {}
    g = zarr.open_group(str(out), mode="r")
    for i in range(n):
        tr = dp.simulate(m, q0s[i], np.zeros(m.nv), t_final, record_every=100, progress=False)
        np.testing.assert_array_equal(g["q"][i], tr.q)
        np.testing.assert_array_equal(result["v"][i], tr.v[-1])


def test_cli_on_a_scheduler(cluster, tmp_path, capsys):
    """denoc-pin sweep, dataset and validate (many files) on the running cluster's scheduler."""
    from denoc_pin.tools.cli import main

    address = cluster.scheduler.address
    urdf = str(URDF_DIR / "two_link.urdf")
    runs = tmp_path / "runs.zarr"
    assert main(["sweep", urdf, "--runs", "3", "--t", "0.1", "--out", str(runs), "--scheduler", address]) == 0
    g = zarr.open_group(str(runs), mode="r")
    assert g["q"].shape == (3, 101, 2) and np.isfinite(g["q"][:]).all()
    m = dp.load_urdf(urdf)
    q0s = dp.random_configuration(m, 0, n=3)  # the CLI's initial states: seed 0, at rest
    np.testing.assert_array_equal(g["q"][2], dp.simulate(m, q0s[2], np.zeros(2), 0.1, progress=False).q)
    data = tmp_path / "data.zarr"
    assert (
        main(["dataset", urdf, "--samples", "500", "--chunk", "200", "--out", str(data), "--scheduler", address]) == 0
    )
    assert zarr.open_group(str(data), mode="r")["ddq"].shape == (500, 2)
    assert main(["validate", urdf, str(URDF_DIR / "gripper.urdf"), "--samples", "2", "--scheduler", address]) == 0
    out = capsys.readouterr().out
    assert "3 runs of 0.1 s" in out and "500 samples" in out and "2 of 2 files passed every check" in out


def sliding_cube() -> dp.Model:
    b = dp.ModelBuilder("cube")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.04 / 6, link="cube")
    b.add_collision("cube", dp.Box((0.2, 0.2, 0.2)))
    return b.build()


def test_contact_scenes_sweep_friction_terrain_and_payload(cluster):
    """A cube launched at 1 m/s on ground of three frictions, a raised ground and a payload, run on the workers
    under a dp.JointPD (zero gains: the free-flyer takes none): each run is the same run in this process bit for
    bit, and each stops where v² / (2 μ g) says (the slide of the contact tests, within 1%)."""
    m = sliding_cube()
    q0 = dp.neutral(m)
    q0[2] = 0.1
    v0 = np.array([1.0, 0, 0, 0, 0, 0])
    ground = dp.Ground(friction=0.4)
    edits = [{"friction": 0.2}, {"friction": 0.4}, {"friction": 0.8}, {"ground_height": 0.5},
             {"payload": {"link": "cube", "mass": 1.0}}]  # fmt: skip
    q0s = np.stack([q0] * 5)
    q0s[3, 2] += 0.5  # resting on the raised ground
    pd = dp.JointPD(m, 10.0, 1.0, q0)
    out = dist.simulate_many(m, q0s, np.stack([v0] * 5), 1.0, 5e-4, tau=pd, edits=edits, client=cluster,
                             ground=ground)  # fmt: skip
    assert out["errors"] == {}
    for i, spec in enumerate(edits):
        here = dist.apply_edits(m, spec, q0s[i])
        tau = pd if here is m else dp.JointPD(here, 10.0, 1.0, q0)
        tr = dp.simulate(here, q0s[i], v0, 1.0, 5e-4, tau=tau, ground=dist.ground_for(ground, spec), progress=False)
        assert np.array_equal(out["q"][i], tr.q[-1])
    mu = [0.2, 0.4, 0.8, 0.4, 0.4]
    for i in range(5):
        assert abs(out["q"][i, 0] / (1.0 / (2 * mu[i] * 9.81)) - 1) < 0.01
    assert abs(out["q"][3, 2] - 0.6) < 1e-6  # on the ground at 0.5 m


def test_a_sweep_of_grasps_runs_each_as_simulate_does(cluster):
    """Contact between bodies on the workers: the paper's gripper (examples/gripper_grasp.py), its box grasped, lifts
    it under payloads of 0, 10 and 30 g on the box; each run is the same run in this process bit for bit, and every
    box rises with the fingers."""
    ex = runpy.run_path(str(ROOT / "examples" / "gripper_grasp.py"), run_name="gripper_grasp")
    model, q0 = ex["scene"]()
    close, lift = ex["laws"](model, q0)
    ground = dp.Ground(friction=0.8)
    held = dp.simulate(model, q0, np.zeros(model.nv), 0.5, 1e-3, tau=close, ground=ground, progress=False)
    edits = [{}, {"payload": {"link": "box", "mass": 0.01}}, {"payload": {"link": "box", "mass": 0.03}}]
    n = len(edits)
    out = dist.simulate_many(model, np.stack([held.q[-1]] * n), np.stack([held.v[-1]] * n), 0.5, 1e-3, tau=lift,
                             edits=edits, client=cluster, ground=ground)  # fmt: skip
    assert out["errors"] == {}
    for i, spec in enumerate(edits):
        here = dist.apply_edits(model, spec, held.q[-1])
        tau = lift if here is model else dp.JointPD(here, lift.kp, lift.kd, lift.q_ref, tau_ff=lift.tau_ff)
        tr = dp.simulate(here, held.q[-1], held.v[-1], 0.5, 1e-3, tau=tau, ground=ground, progress=False)
        assert np.array_equal(out["q"][i], tr.q[-1])
        assert out["q"][i, 7] - held.q[-1, 7] > 0.05  # the box rose with the slide


def test_contact_edits_are_refused_before_any_task():
    m = sliding_cube()
    q0 = dp.neutral(m)
    with pytest.raises(ValueError, match="friction of the ground, but the sweep has none"):
        dist.simulate_many(m, [q0], None, 0.01, edits={"friction": 0.5})
    with pytest.raises(ValueError, match="friction must be a finite number >= 0"):
        dist.simulate_many(m, [q0], None, 0.01, edits={"friction": -1.0}, ground=dp.Ground())
    with pytest.raises(ValueError, match="JointPD of model"):
        dist.simulate_many(m, [q0], None, 0.01, tau=dp.JointPD(arm(), 1.0, 0.1, np.zeros(3)), ground=dp.Ground())
    a = arm()
    with pytest.raises(ValueError, match=r"edits\[1\]: a JointPD cannot follow a lock edit"):
        dist.simulate_many(a, np.zeros((2, 3)), None, 0.01, tau=dp.JointPD(a, 1.0, 0.1, np.zeros(3)),
                           edits=[None, {"lock": ["j2"]}])  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Interrupted sweeps and datasets, resumed
# ---------------------------------------------------------------------------------------------------------------

SWEEP = ["sweep", "ur5", "--runs", "40", "--t", "4", "--dt", "1e-3", "--workers", "2", "--seed", "3"]
"""40 runs of about 0.1 s each, on 2 workers: a few seconds, long enough to interrupt midway."""


def _ctrl_c_heard() -> None:
    """In the child before it runs: SIGINT back to its default, which Python makes a KeyboardInterrupt.  A test run
    started in the background by a script inherits SIGINT ignored (as every background job of a non-interactive
    shell), and Python keeps an ignored SIGINT ignored: the sweep would then run to its end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(args: list[str]) -> subprocess.Popen:
    """``denoc-pin args`` in a process of its own, in a session of its own (its Ctrl-C reaches it and its workers)."""
    return subprocess.Popen([sys.executable, "-m", "denoc_pin.tools.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_ctrl_c_heard)  # fmt: skip


def interrupt(proc: subprocess.Popen, out: Path, how: str, at_least: int) -> tuple[int, str]:
    """Once ``out`` holds ``at_least`` complete tasks, SIGKILL the client process alone (its workers then exit: their
    pipe to it closes) or SIGINT its whole session, as Ctrl-C in a terminal does; wait until every process of it is
    gone.  The tasks complete then, and what the command wrote on stderr (its pipes closed)."""
    import psutil

    deadline = time.monotonic() + 300
    while dist.completed(out)[0] < at_least and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    done, total = dist.completed(out)
    assert proc.poll() is None and done < total, "the command ended before it could be interrupted: lengthen it"
    family = [proc.pid, *(p.pid for p in psutil.Process(proc.pid).children(recursive=True))]
    if how == "SIGKILL":
        os.kill(proc.pid, signal.SIGKILL)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=120)
    gone, alive = psutil.wait_procs([psutil.Process(p) for p in family if psutil.pid_exists(p)], timeout=60)
    assert not alive, f"processes left running: {alive}"
    _, err = proc.communicate(timeout=60)  # reads the pipes to their end, and closes them
    return dist.completed(out)[0], err


def chunk_times(out: Path, array: str, done: np.ndarray) -> dict:
    """{path: modification time} of the files of the complete tasks' chunks (a rewrite would change it)."""
    return {f: f.stat().st_mtime_ns for i in np.flatnonzero(done) for f in (out / array / "c" / str(i)).rglob("*")}


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_an_interrupted_sweep_resumes(tmp_path, how):
    """``denoc-pin sweep`` interrupted midway (SIGKILL of the client, or Ctrl-C); ``--resume`` computes the runs not
    complete, none of the others (their files untouched), and every run equals a single-process ``dp.simulate``."""
    out = tmp_path / "runs.zarr"
    proc = cli([*SWEEP, "--out", str(out)])
    before, err = interrupt(proc, out, how, at_least=6 if how == "SIGKILL" else 2)
    g = zarr.open_group(str(out), mode="r")
    done = g["done"][:].astype(bool)
    # A Ctrl-C closes the cluster gracefully: the tasks running then may finish, on a slow machine all of them.
    assert done.sum() == before and (6 <= before < 40 if how == "SIGKILL" else 2 <= before <= 40)
    if how == "SIGINT":  # the cluster closed, the store consistent, a line to resume
        assert proc.returncode == 130, err
        assert f"interrupted: {before} of 40 runs complete in {out}" in err and "--resume" in err
    times = chunk_times(out, "q", done)
    resumed = cli([*SWEEP, "--out", str(out), "--resume"])
    stdout, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, stderr
    assert f"resumed: {40 - before} runs computed, {before} were complete" in stdout
    assert chunk_times(out, "q", done) == times  # the runs complete before were not written again
    g = zarr.open_group(str(out), mode="r")
    assert g["done"][:].all()
    m = dp.load_urdf(robot_urdf("ur5"))
    q0s = dp.random_configuration(m, 3, n=40)  # the CLI's initial states: seed 3, at rest
    for i in range(40):
        tr = dp.simulate(m, q0s[i], np.zeros(m.nv), 4.0, dt=1e-3, progress=False)
        np.testing.assert_array_equal(g["q"][i], tr.q)
        np.testing.assert_array_equal(g["v"][i], tr.v)


def test_an_interrupted_dataset_resumes(cluster, tmp_path):
    """``denoc-pin dataset`` killed midway: ``--resume`` computes the chunks not complete, none of the others, and the
    arrays equal a dataset computed in one go."""
    # 40 chunks of about 0.1 s each on one worker (talos: nv = 32)
    args = ["dataset", "talos_full_v2", "--samples", "120000", "--chunk", "3000", "--workers", "1", "--seed", "5"]
    out = tmp_path / "data.zarr"
    before, _ = interrupt(cli([*args, "--out", str(out)]), out, "SIGKILL", at_least=3)
    done = zarr.open_group(str(out), mode="r")["done"][:].astype(bool)
    times = chunk_times(out, "ddq", done)
    resumed = cli([*args, "--out", str(out), "--resume"])
    stdout, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, stderr
    assert f"resumed: {40 - before} chunks computed, {before} were complete" in stdout
    assert chunk_times(out, "ddq", done) == times
    with pytest.warns(dp.ModelWarning, match="not found"):  # collision meshes the package lacks: not read here
        m = dp.load_urdf(robot_urdf("talos_full_v2"))
    once = tmp_path / "once.zarr"
    dist.dataset(m, 120000, 5, once, chunk=3000, client=cluster, progress=False)
    g, reference = zarr.open_group(str(out), mode="r"), zarr.open_group(str(once), mode="r")
    for name in ("q", "v", "tau", "ddq"):
        np.testing.assert_array_equal(g[name][:], reference[name][:])


def test_a_store_of_other_arguments_is_not_resumed(cluster, tmp_path):
    m = dp.models.rope(4)
    q0s = dp.random_configuration(m, 0, n=3)
    out = tmp_path / "runs.zarr"
    r = dist.simulate_many(m, q0s, None, 0.05, client=cluster, out=out, progress=False)
    assert list(r["computed"]) == [0, 1, 2]
    again = dist.simulate_many(m, q0s, None, 0.05, client=cluster, out=out, progress=False, resume=True)
    assert len(again["computed"]) == 0
    np.testing.assert_array_equal(again["q"], r["q"])
    np.testing.assert_array_equal(again["drift"], r["drift"])
    with pytest.raises(ValueError, match=r"other arguments.*t_final \(0\.05 there, 0\.1 here\)"):
        dist.simulate_many(m, q0s, None, 0.1, client=cluster, out=out, resume=True)
    with pytest.raises(ValueError, match=r"other arguments.*edits"):
        dist.simulate_many(
            m, q0s, None, 0.05, client=cluster, out=out, resume=True, edits={"mass_scale": {m.link_names[1]: 2.0}}
        )
    with pytest.raises(ValueError, match=r"other arguments.*model \('rope"):
        dist.simulate_many(dp.models.rope(4, mass=2.0), q0s, None, 0.05, client=cluster, out=out, resume=True)
    with pytest.raises(ValueError, match="cannot be resumed by dataset: it was written by simulate_many"):
        dist.dataset(m, 10, 0, out, client=cluster, resume=True)
    data = tmp_path / "data.zarr"
    dist.dataset(m, 100, 0, data, chunk=30, client=cluster)
    assert dist.dataset(m, 100, 0, data, chunk=30, client=cluster, resume=True)["computed"] == 0
    with pytest.raises(ValueError, match=r"seed \(0 there, 1 here\)"):
        dist.dataset(m, 100, 1, data, chunk=30, client=cluster, resume=True)
    with pytest.raises(ValueError, match="resume=True needs out"):
        dist.simulate_many(m, q0s, None, 0.05, client=cluster, resume=True)
