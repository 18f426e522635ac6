"""Simulation: RK4 against the same loop driven by Pinocchio, its order on Lie groups, the adaptive methods,
energy balance, I/O, bad arguments."""

import re

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf
from denoc_pin.tools.demo import pinocchio_rk4


@pytest.fixture(scope="module")
def gripper():
    return dp.load_urdf(URDF_DIR / "gripper.urdf")


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
    q_pin, v_pin = pinocchio_rk4(dp.to_pinocchio(gripper), q0, np.zeros(4), np.zeros(4), 1e-3, 300)
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


def test_the_progress_bar_shows_only_on_long_runs(gripper, capsys):
    """progress=None: no bar for a run expected to take less than about 2 s (the kernel's loading is not timed as a
    step), a bar for a longer one (forced here by a step estimate the default leaves alone: progress=True)."""
    for method in ("rk4", "rk45", "dop853"):
        dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.005, dt=1e-3, method=method)
        dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.5, dt=1e-3, method=method)
        assert "simulate" not in capsys.readouterr().err, method
    dp.simulate(gripper, np.zeros(4), np.zeros(4), 0.005, dt=1e-3, progress=True)
    assert "simulate: 100%" in capsys.readouterr().err


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
    pm = dp.to_pinocchio(gripper)
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
        (
            {"method": "euler"},
            "method must be one of rk4, rk45, dop853 \\(and semi-implicit with a ground= or contact=\\); got 'euler'",
        ),
        ({"method": "rk45", "rtol": 0.0}, "rtol must be a positive number"),
        ({"method": "dop853", "atol": np.nan}, "atol must be a positive number"),
        ({"record_every": 0}, "record_every must be at least 1"),
        ({"t_final": 1e-4}, "shorter than one step"),
    ],
)
def test_bad_arguments(gripper, kwargs, pattern):
    args = {"q0": np.zeros(4), "v0": np.zeros(4), "t_final": 0.01, "dt": 1e-3, "progress": False} | kwargs
    with pytest.raises(ValueError, match=pattern):
        dp.simulate(gripper, **args)


@pytest.fixture(scope="module")
def curved():
    """A free-flyer, a spherical, a planar and a revolute joint: every non-commutative group."""
    b = dp.ModelBuilder("curved")
    inertia = np.diag([0.02, 0.03, 0.04])
    b.add_body(0, joint="free-flyer", mass=1.0, com=[0.1, 0, 0], inertia=inertia, name="ff")
    b.add_body("ff", joint="spherical", placement=(np.eye(3), [0.2, 0, 0]), mass=0.7, com=[0.1, 0.02, 0],
               inertia=inertia, name="sp")  # fmt: skip
    b.add_body("sp", joint="planar", placement=(np.eye(3), [0.2, 0, 0]), mass=0.5, com=[0.1, 0, 0.03],
               inertia=inertia, name="pl")  # fmt: skip
    b.add_body("pl", joint="revolute", axis=[0, 1, 0], placement=(np.eye(3), [0.2, 0, 0]), mass=0.3,
               com=[0.1, 0, 0], inertia=inertia, name="rv")  # fmt: skip
    return b.build()


@pytest.mark.parametrize("size", [0.1, 0.5, 1.0])
def test_dexp_inv_inverts_pinocchios_dintegrate(curved, size):
    """J_r(x)⁻¹ against Pinocchio's J_r(x) = dIntegrate(q, x) w.r.t. x.  (Below |x| ~ 1e-2 Pinocchio's
    free-flyer Jacobian switches to a truncated Taylor branch, good to ~1e-11 only.)"""
    from denoc_pin.algorithms.configuration import dexp_inv

    pm = dp.to_pinocchio(curved)
    rng = np.random.default_rng(int(size * 10))
    for _ in range(5):
        q = dp.random_configuration(curved, rng)
        x = rng.standard_normal(curved.nv)
        x *= size / np.abs(x).max()
        u = rng.standard_normal(curved.nv)
        J = pin.dIntegrate(pm, q, x, pin.ArgumentPosition.ARG1)
        np.testing.assert_allclose(dexp_inv(curved, x, J @ u), u, atol=1e-13)


def test_rk4_is_fourth_order_on_lie_groups(curved):
    """Halving dt divides the error by ~16 on SE(3), SO(3) and SE(2) too (stages by RKMK).  The reference
    is dop853 at rtol 1e-12; composing the stages without J_r⁻¹ gave a ratio of 4 here."""
    rng = np.random.default_rng(2)
    q0, v0 = dp.random_configuration(curved, rng), rng.uniform(-2, 2, curved.nv)
    ref = dp.simulate(curved, q0, v0, 0.4, dt=4e-3, method="dop853", rtol=1e-12, atol=1e-13, progress=False)
    err = []
    for dt in (4e-3, 2e-3, 1e-3):
        q = dp.simulate(curved, q0, v0, 0.4, dt=dt, progress=False).q[-1]
        err.append(np.abs(dp.difference(curved, ref.q[-1], q)).max())
    assert err[0] > 1e-9  # the error is measurable, not rounding
    assert err[0] / err[1] > 13 and err[1] / err[2] > 13, err


@pytest.mark.parametrize("method", ["rk45", "dop853"])
def test_adaptive_methods_agree_with_fixed_step_rk4(gripper, curved, method):
    q0 = np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    rk4 = dp.simulate(gripper, q0, np.zeros(4), 1.0, dt=1e-4, progress=False, record_every=10)
    ada = dp.simulate(gripper, q0, np.zeros(4), 1.0, dt=1e-3, method=method, rtol=1e-10, atol=1e-12,
                      progress=False)  # fmt: skip
    np.testing.assert_allclose(ada.t, rk4.t, atol=1e-12)
    assert_close(ada.q, rk4.q, rtol=1e-6, what=f"{method} q")
    assert ada.stats["steps"] > 10 and ada.stats["fd_calls"] > ada.stats["steps"]
    # a floating base with large rotations: the chart moves (RECHART_ANGLE) many times
    rng = np.random.default_rng(3)
    q0, v0 = dp.random_configuration(curved, rng), rng.uniform(-4, 4, curved.nv)
    rk4 = dp.simulate(curved, q0, v0, 1.0, dt=2.5e-4, progress=False, record_every=4)
    ada = dp.simulate(curved, q0, v0, 1.0, dt=1e-3, method=method, rtol=1e-11, atol=1e-12, progress=False)
    assert max(np.abs(dp.difference(curved, a, b)).max() for a, b in zip(ada.q, rk4.q, strict=True)) < 1e-7
    np.testing.assert_allclose(np.linalg.norm(ada.q[:, 3:7], axis=1), 1.0, atol=1e-14)


@pytest.mark.parametrize("method", ["rk45", "dop853"])
def test_adaptive_energy_balance_with_a_controller(gripper, method):
    """The work integral rides along as a state: kinetic + potential − work stays at its start."""

    def pd(t, q, v):
        return 0.3 * (np.deg2rad([20.0, 10.0, 10.0, 95.0]) - q) - 0.05 * v

    traj = dp.simulate(gripper, np.deg2rad([-60.0, 0, 0, 90]), np.zeros(4), 1.0, dt=1e-3, method=method, tau=pd,
                       rtol=1e-11, atol=1e-12, progress=False)  # fmt: skip
    E = traj.energy["total"]
    assert np.abs(traj.energy["work"]).max() > 1e-3
    assert np.abs(E - E[0]).max() <= 1e-7 * np.abs(traj.energy["kinetic"]).max()
    np.testing.assert_allclose(traj.tau[10], pd(traj.t[10], traj.q[10], traj.v[10]), atol=1e-15)


def test_adaptive_closed_loop_matches_rk4():
    from denoc_pin.loops import loop_residual

    model = dp.load_urdf(URDF_DIR / "four_bar.urdf")
    q0 = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    rk4 = dp.simulate(model, q0, np.zeros(3), 0.5, dt=2.5e-4, progress=False, record_every=4)
    ada = dp.simulate(model, q0, np.zeros(3), 0.5, dt=1e-3, method="dop853", rtol=1e-10, atol=1e-12, progress=False)
    assert_close(ada.q, rk4.q, rtol=1e-7, what="four-bar q")
    assert_close(ada.lam, rk4.lam, rtol=1e-6, what="λ")
    assert max(np.abs(loop_residual(model, q)).max() for q in ada.q) < 1e-8


@pytest.mark.parametrize("tau", [None, lambda t, q, v: np.zeros(3)], ids=["compiled", "callback"])
def test_a_blow_up_names_its_step_time_and_the_largest_speed_before_it(tau):
    # A free body spinning near its unstable middle axis: RK4 at dt = 0.3 s gains energy until it overflows.
    b = dp.ModelBuilder("spin", gravity=(0.0, 0.0, 0.0))
    b.add_body(0, "spherical", mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    m = b.build()
    q0, v0, dt = np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.1, 10.0, 0.1]), 0.3
    with pytest.raises(ValueError, match=r"non-finite \(NaN or inf\) at step (\d+) \(t = ([\d.]+) s\)") as e:
        dp.simulate(m, q0, v0, 100.0, dt=dt, tau=tau, progress=False)
    step = int(re.search(r"at step (\d+)", str(e.value)).group(1))
    assert 10 < step < 100 and f"t = {step * dt:.6g} s" in str(e.value)
    # The run up to the step before it is finite, and its largest |v| is the one reported.
    traj = dp.simulate(m, q0, v0, (step - 1) * dt, dt=dt, tau=tau, progress=False)
    assert np.isfinite(traj.v).all()
    i = np.unravel_index(np.argmax(np.abs(traj.v)), traj.v.shape)[1]
    assert f"the largest |v| before it was {np.abs(traj.v).max():.3g} (v[{i}], joint 'joint_1')" in str(e.value)


@pytest.mark.parametrize("method", ["rk45", "dop853"])
def test_compiled_adaptive_methods_take_scipys_steps(gripper, curved, method):
    """With τ None or constant the Dormand–Prince pairs run compiled (``dormand_prince.dp_kernel``); with a callable
    τ, scipy's RK45/DOP853 drive the same right-hand side.  Same tableaux, norms and step control: the same accepted
    steps, and the same states up to rounding, on a tree with τ, on a floating base whose chart moves many times,
    and on a closed loop; the run cut in pieces for a progress bar gives the same bits.  (Over a second the gripper
    amplifies rounding: moving q0 by 1e-15 moves the scipy path's own q by 2e-8, so it is compared over 0.3 s.  The
    planar four-bar's redundant rows, solved on J's range, amplify it too: DOP853's two paths differ by 5e-11 in q and
    1.3e-8 in λ, each 4–5e-11 in q and 0.9–1.3e-8 in λ from a run at rtol 1e-13, so λ is compared at 3e-8.)"""
    from denoc_pin.loops import loop_residual

    four_bar = dp.load_urdf(URDF_DIR / "four_bar.urdf")
    rng = np.random.default_rng(4)
    cases = [
        (gripper, np.deg2rad([-60.0, 0.0, 0.0, 90.0]), np.zeros(4), np.array([0.1, 0.0, -0.05, 0.02]), 0.3, 1e-10),
        (curved, dp.random_configuration(curved, rng), rng.uniform(-4, 4, curved.nv), None, 1.0, 1e-10),
        (four_bar, dp.assemble(four_bar, [0.3, 1.0, 1.2], fixed=["crank_joint"]), np.zeros(3), None, 0.5, 1e-8),
    ]
    for model, q0, v0, tau, T, rtol in cases:
        opts = {"dt": 1e-2, "method": method, "rtol": 1e-9, "atol": 1e-11}
        fast = dp.simulate(model, q0, v0, T, tau=tau, progress=False, **opts)
        tau_c = np.zeros(model.nv) if tau is None else tau
        slow = dp.simulate(model, q0, v0, T, tau=lambda t, q, v, tau_c=tau_c: tau_c, progress=False, **opts)
        assert fast.stats["steps"] == slow.stats["steps"] > 10, (model.name, fast.stats, slow.stats)
        # DOP853's dense output costs 3 more calls a step, here only for a step that holds a recorded instant
        assert fast.stats["fd_calls"] <= slow.stats["fd_calls"]
        for x, y in (
            (fast.q, slow.q),
            (fast.v, slow.v),
            (fast.a, slow.a),
            (fast.energy["total"], slow.energy["total"]),
        ):
            assert_close(x, y, rtol=rtol, what=f"{model.name} {method}")
        if model.n_constraints:
            assert_close(fast.lam, slow.lam, rtol=3 * rtol, what="λ")
            assert max(np.abs(loop_residual(model, q)).max() for q in fast.q) < 1e-7
        pieces = dp.simulate(model, q0, v0, T, tau=tau, progress=True, **opts)  # in hundredths, with a bar
        assert np.array_equal(pieces.q, fast.q) and pieces.stats == fast.stats


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's, in the scipy path: the point
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("method", ["rk45", "dop853"])
def test_an_adaptive_blow_up_names_the_largest_speed_before_it(method):
    """A torque of 1e308 on a 1 kg·m² joint: the first stages overflow.  Compiled (constant τ) and through scipy
    (a callable τ), the error says so and names the largest |v| met and its joint."""
    b = dp.ModelBuilder("spin", gravity=(0.0, 0.0, 0.0))
    b.add_body(0, "revolute", mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    m = b.build()
    said = r"non-finite \(NaN or inf\) near t = .*the largest \|v\| before it was 3\.33e\+301 \(v\[0\], joint 'joint_1'"
    for tau in (np.array([1e308]), lambda t, q, v: np.array([1e308])):
        with pytest.raises(ValueError, match=said + r"\); tighten rtol/atol"):
            dp.simulate(m, np.zeros(1), np.zeros(1), 1.0, method=method, tau=tau, progress=False)
