"""Simulation: RK4 against the same loop driven by Pinocchio, energy balance, I/O, bad arguments."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, assert_close

import denoc_pin as dp
from denoc_pin.demo import pinocchio_rk4
from denoc_pin.robots import example_robot_urdf


@pytest.fixture(scope="module")
def gripper():
    return dp.load_urdf(ROOT / "urdf" / "gripper.urdf")


def test_energy_matches_pinocchio():
    path = str(example_robot_urdf("solo12"))
    model = dp.load_urdf(path, root_joint="free-flyer")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = dp.random_configuration(model, rng)
        v = rng.uniform(-1, 1, model.nv)
        kinetic, potential = dp.energy(model, data, q, v)
        assert_close(kinetic, pin.computeKineticEnergy(pm, pd, q, v), what="kinetic")
        assert_close(potential, pin.computePotentialEnergy(pm, pd, q), what="potential")


def test_gripper_fall_matches_the_same_rk4_on_pinocchio(gripper):
    """The paper's Fig. 6 set-up: θ11 = −60°, the rest 0, at rest, dt = 1 ms (0.3 s here)."""
    q0 = np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    traj = dp.simulate(gripper, q0, np.zeros(4), 0.3, dt=1e-3, progress=False)
    assert traj.q.shape == (301, 4) and traj.t[-1] == pytest.approx(0.3)
    q_pin, v_pin = pinocchio_rk4(gripper.to_pinocchio(), q0, np.zeros(4), np.zeros(4), 1e-3, 300)
    assert_close(traj.q[-1], q_pin, rtol=1e-9, what="q(0.3 s)")
    assert_close(traj.v[-1], v_pin, rtol=1e-9, what="v(0.3 s)")


def test_floating_base_keeps_unit_quaternions_and_matches_pinocchio():
    path = str(example_robot_urdf("solo12"))
    model = dp.load_urdf(path, root_joint="free-flyer")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    rng = np.random.default_rng(1)
    q0 = dp.random_configuration(model, rng)
    v0 = rng.uniform(-1, 1, model.nv)
    traj = dp.simulate(model, q0, v0, 0.05, dt=1e-3, progress=False)
    np.testing.assert_allclose(np.linalg.norm(traj.q[:, 3:7], axis=1), 1.0, atol=1e-14)
    q_pin, v_pin = pinocchio_rk4(pm, q0, v0, np.zeros(model.nv), 1e-3, 50)
    assert np.abs(pin.difference(pm, q_pin, traj.q[-1])).max() < 1e-9
    assert_close(traj.v[-1], v_pin, rtol=1e-9, what="v")


@pytest.mark.parametrize("which", ["gripper", "rope"])
def test_energy_is_conserved_without_actuation(gripper, which):
    """Unactuated, undamped 1 s RK4 runs at dt = 1e-4 (issue: rel 1e-6; measured ~1e-9)."""
    if which == "gripper":
        model, q0 = gripper, np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    else:
        model = dp.models.rope()
        q0 = np.zeros(model.nq)
        q0[1] = np.pi / 2  # the first element horizontal, the rope hanging from it
    traj = dp.simulate(model, q0, np.zeros(model.nv), 1.0, dt=1e-4, progress=False, record_every=10)
    E = traj.energy["total"]
    scale = np.abs(traj.energy["kinetic"]).max()
    assert scale > 1e-3  # it did move
    assert np.abs(E - E[0]).max() <= 1e-6 * scale


def test_work_of_a_constant_torque_enters_the_balance(gripper):
    """kinetic + potential − work stays constant up to RK4's O(dt⁴) error (measured: 3.6e-7 at
    dt = 1e-3, 2.0e-8 at 5e-4, 3.0e-11 at 1e-4, relative to the peak kinetic energy)."""
    tau = np.array([0.05, -0.01, 0.02, 0.01])
    drift = {}
    for dt in (1e-3, 5e-4, 1e-4):
        traj = dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.5, dt=dt, tau=tau, progress=False)
        E = traj.energy["total"]
        drift[dt] = np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max()
    assert np.abs(traj.energy["work"][-1]) > 0.1  # the torque did work
    assert drift[5e-4] < drift[1e-3] / 10  # fourth order: halving dt divides the error by ~16
    assert drift[1e-4] <= 1e-9
    np.testing.assert_array_equal(traj.tau, np.broadcast_to(tau, traj.tau.shape))


def test_callback_torque_equals_the_compiled_loop_for_a_constant(gripper):
    tau = np.array([0.02, 0.0, -0.01, 0.0])
    a = dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.1, dt=1e-3, tau=tau, progress=False)
    b = dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.1, dt=1e-3, tau=lambda t, q, v: tau, progress=False)
    assert_close(b.q, a.q, rtol=1e-12, what="q")
    assert_close(b.energy["total"], a.energy["total"], rtol=1e-12, what="energy")


def test_record_every_and_chunked_progress_give_the_same_states(gripper):
    q0 = np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    full = dp.simulate(gripper, q0, np.zeros(4), 0.2, dt=1e-3, progress=False)
    sparse = dp.simulate(gripper, q0, np.zeros(4), 0.2, dt=1e-3, progress=True, record_every=20)
    assert sparse.q.shape == (11, 4)
    np.testing.assert_allclose(sparse.t, full.t[::20], atol=1e-15)
    assert_close(sparse.q, full.q[::20], rtol=1e-13, what="q")
    assert_close(sparse.energy["total"], full.energy["total"][::20], rtol=1e-13, what="energy")


def test_trajectory_round_trips(gripper, tmp_path):
    traj = dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.05, dt=1e-3, progress=False)
    traj.save(tmp_path / "t.npz")
    back = dp.Trajectory.load(tmp_path / "t.npz")
    for field in ("t", "q", "v", "a", "tau"):
        np.testing.assert_array_equal(getattr(back, field), getattr(traj, field))
    assert set(back.energy) == {"kinetic", "potential", "work", "total"} and back.model_name == "gripper"
    traj.to_csv(tmp_path / "t.csv")
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert len(rows) == 52 and rows[0].startswith("t,q0,q1,q2,q3,v0")


def test_inverse_dynamics_trajectory_matches_rnea(gripper):
    traj = dp.simulate(gripper, np.deg2rad([-60.0, 0, 0, 0]), np.zeros(4), 0.05, dt=1e-3, progress=False)
    tau = dp.inverse_dynamics_trajectory(gripper, traj.t, traj.q, traj.v, traj.a)
    pm = gripper.to_pinocchio()
    pd = pm.createData()
    ref = np.array([pin.rnea(pm, pd, q, v, a) for q, v, a in zip(traj.q, traj.v, traj.a, strict=True)])
    assert_close(tau, ref, what="τ along the trajectory")
    assert np.abs(tau).max() < 1e-10  # free fall: the torques that reproduce it are zero


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"dt": -1e-3}, "dt must be a positive number"),
        ({"t_final": 0.0}, "t_final must be a positive number"),
        ({"q0": np.zeros(3)}, r"q0 must have shape \(4,\), got \(3,\)"),
        ({"v0": np.array([0, np.nan, 0, 0])}, "v0 has non-finite"),
        ({"method": "euler"}, r"method must be one of \('rk4',\)"),
        ({"record_every": 0}, "record_every must be at least 1"),
        ({"t_final": 1e-4}, "shorter than one step"),
    ],
)
def test_bad_arguments(gripper, kwargs, pattern):
    args = {"q0": np.zeros(4), "v0": np.zeros(4), "t_final": 0.01, "dt": 1e-3, "progress": False} | kwargs
    with pytest.raises(ValueError, match=pattern):
        dp.simulate(gripper, **args)
