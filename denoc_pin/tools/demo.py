"""The seed papers' examples, each checked against Pinocchio: the engine of ``denoc-pin demo`` and of
the scripts in ``examples/``.  Every function writes its figure (PNG) into ``out`` and returns its numbers.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..algorithms import parallel_scheme
from ..algorithms.dynamics_api import gim, udut
from ..algorithms.explicit import world_poses
from ..loaders.builder import ModelBuilder
from ..loaders.edits import attach, lock_joints, transfer_state, with_passive, without_loop
from ..loaders.models import bundled, chain, rod_inertia, rope
from ..loaders.models import isobe_multibranch as isobe_multibranch_model
from ..loaders.pinocchio_bridge import to_pinocchio
from ..loops import assemble, complete_motion, constrained_forward_dynamics, constrained_inverse_dynamics, loop_residual
from ..simulation.simulate import inverse_dynamics_trajectory, simulate
from .plots import plot
from .viewer import Viewer

__all__ = [
    "eq15",
    "four_bar",
    "gripper_fall",
    "gripper_inverse_dynamics",
    "huge_chains",
    "isobe_configurations",
    "isobe_five_bar",
    "isobe_lagrange",
    "isobe_multibranch",
    "isobe_structure_varying",
    "line_plot",
    "pinocchio_rk4",
    "rope_fall",
    "rrr_parallel",
    "run",
    "schiehlen_closed",
    "schiehlen_open",
    "slider_crank",
]

# Table 2 of Shah, Saha & Dutt: initial and final angles of the gripper joints 1¹, 1², 2², 1³ (degrees).
GRIPPER_TABLE_2 = np.array([[0.0, 60.0], [0.0, 80.0], [0.0, 80.0], [90.0, 120.0]])


def eq15(t: np.ndarray, theta0: np.ndarray, thetaT: np.ndarray, T: float):
    """θ(t) = θ(0) + (θ(T) − θ(0))/T · [t − T/(2π) sin(2π t/T)] (eq. 15) and its first two derivatives."""
    t = np.asarray(t, dtype=float)[:, None]
    d = (thetaT - theta0) / T
    w = 2.0 * np.pi / T
    theta = theta0 + d * (t - np.sin(w * t) / w)
    return theta, d * (1.0 - np.cos(w * t)), d * w * np.sin(w * t)


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def line_plot(path: Path, x, curves: dict, xlabel: str, ylabel: str, title: str) -> str:
    """One figure of labelled curves against x, written to ``path``."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, y in curves.items():
        ax.plot(x, y, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def trajectory_plot(path: Path, traj, model, what: str, title: str, joints=None) -> str:
    """``dp.plot``'s figure of ``traj`` (``what``, ``joints``) with the paper's title, written to ``path``: the
    demo's trajectory figures are the ones a user draws."""
    fig = plot(traj, model, what, joints)
    fig.axes[0].set_title(title)
    fig.savefig(path, dpi=110)
    return str(path)


def pinocchio_rk4(pin_model, q, v, tau, dt: float, nsteps: int):
    """The RK4 step of ``denoc_pin.simulate`` driven by ``pinocchio.aba``, ``pinocchio.integrate`` and
    ``pinocchio.dIntegrate``: the reference the simulations are compared with.  The stage velocities are
    carried back to q's tangent space, K_i = J_r(δ_i)⁻¹ v_i with J_r = dIntegrate(q, δ_i) w.r.t. δ_i
    (RKMK, see ``simulate.py``).  Returns the final (q, v)."""
    import pinocchio as pin

    pd = pin_model.createData()
    curved = {"JointModelFreeFlyer", "JointModelSpherical", "JointModelPlanar"}
    flat = not any(j.shortname() in curved for j in pin_model.joints)

    def back(x, u):  # J_r(x)⁻¹ u; the identity on commutative joints (no cost for the timing comparison)
        return u if flat else np.linalg.solve(pin.dIntegrate(pin_model, q, x, pin.ArgumentPosition.ARG1), u)

    for _ in range(nsteps):
        a1 = pin.aba(pin_model, pd, q, v, tau).copy()
        v2, x2 = v + 0.5 * dt * a1, 0.5 * dt * v
        a2 = pin.aba(pin_model, pd, pin.integrate(pin_model, q, x2), v2, tau).copy()
        K2 = back(x2, v2)
        v3, x3 = v + 0.5 * dt * a2, 0.5 * dt * K2
        a3 = pin.aba(pin_model, pd, pin.integrate(pin_model, q, x3), v3, tau).copy()
        K3 = back(x3, v3)
        v4, x4 = v + dt * a3, dt * K3
        a4 = pin.aba(pin_model, pd, pin.integrate(pin_model, q, x4), v4, tau).copy()
        K4 = back(x4, v4)
        q = pin.integrate(pin_model, q, dt * (v + 2 * K2 + 2 * K3 + K4) / 6)
        v = v + dt * (a1 + 2 * a2 + 2 * a3 + a4) / 6
    return q, v


def gripper_inverse_dynamics(out: Path, samples: int = 1001, T: float = 1.0) -> dict:
    """Fig. 5: joint torques of the gripper along eq. (15) with the angles of Table 2, against pinocchio.rnea."""
    import pinocchio as pin

    model = bundled("gripper")
    t = np.linspace(0.0, T, samples)
    q, v, a = eq15(t, np.deg2rad(GRIPPER_TABLE_2[:, 0]), np.deg2rad(GRIPPER_TABLE_2[:, 1]), T)
    inverse_dynamics_trajectory(model, t[:2], q[:2], v[:2], a[:2])  # compiled before timing
    t0 = time.perf_counter()
    tau = inverse_dynamics_trajectory(model, t, q, v, a)
    wall = time.perf_counter() - t0
    pm = to_pinocchio(model)
    pd = pm.createData()
    ref = np.array([pin.rnea(pm, pd, qi, vi, ai) for qi, vi, ai in zip(q, v, a, strict=True)])
    err = float(np.abs(tau - ref).max() / np.abs(ref).max())
    curves = {label: tau[:, k] for k, label in enumerate(["τ 1¹", "τ 1²", "τ 2²", "τ 1³"])}
    path = line_plot(
        Path(out) / "gripper_torques.png", t, curves, "time [s]", "joint torque [N m]",
        "Gripper inverse dynamics (Shah, Saha & Dutt, Fig. 5)",
    )  # fmt: skip
    return {"figure": path, "samples": samples, "wall_s": wall, "max_rel_error_vs_rnea": err,
            "peak_torque_Nm": float(np.abs(tau).max())}  # fmt: skip


def gripper_fall(out: Path, t_final: float = 1.0, dt: float = 1e-3) -> dict:
    """Fig. 6: the gripper falls under gravity from θ₁₁ = −60°, the other joints 0, at rest (RK4, dt = 1 ms)."""
    model = bundled("gripper")
    q0 = np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    simulate(model, q0, np.zeros(4), dt, dt=dt, progress=False)  # compiled before timing
    t0 = time.perf_counter()
    traj = simulate(model, q0, np.zeros(4), t_final, dt=dt, progress=False)
    wall = time.perf_counter() - t0
    E = traj.energy["total"]
    path = trajectory_plot(Path(out) / "gripper_fall.png", traj, model, "q",
                           "Gripper falling under gravity (Shah, Saha & Dutt, Fig. 6)")  # fmt: skip
    return {"figure": path, "steps": len(traj.t) - 1, "wall_s": wall,
            "energy_drift_rel": float(np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max())}  # fmt: skip


def rope_fall(
    out: Path, t_final: float = 1.75, dt: float = 1e-3, compare_pinocchio: bool = True, html: bool = True
) -> dict:
    """Fig. 7: the 100-DOF rope (50 elements on universal joints) released horizontally from its fixed end,
    free fall for 1.75 s; the same RK4 loop driven by pinocchio.aba for the wall-time comparison.  With
    ``html``, the motion as a self-contained MeshCat page (``rope_fall.html``)."""
    import pinocchio as pin

    model = rope()
    q0 = np.zeros(model.nq)
    q0[1] = np.pi / 2  # first joint's second axis (y): the whole rope straight along −x
    simulate(model, q0, np.zeros(model.nv), dt, dt=dt, progress=False)  # compiled before timing
    t0 = time.perf_counter()
    traj = simulate(model, q0, np.zeros(model.nv), t_final, dt=dt, progress=False)
    wall = time.perf_counter() - t0
    result = {"steps": len(traj.t) - 1, "wall_s": wall, "paper_wall_s": 3.44}
    E = traj.energy["total"]
    result["energy_drift_rel"] = float(np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max())
    if compare_pinocchio:
        pm = to_pinocchio(model)
        z = np.zeros(model.nv)
        t0 = time.perf_counter()
        q, _ = pinocchio_rk4(pm, q0.copy(), z, z, dt, len(traj.t) - 1)
        result["pinocchio_loop_wall_s"] = time.perf_counter() - t0
        result["final_state_rel_diff"] = float(
            np.abs(pin.difference(pm, q, traj.q[-1])).max() / np.abs(traj.q[-1]).max()
        )
    # configurations of the rope (Fig. 7): element end points in the x-z plane every 0.25 s
    plt = _figure()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    every = max(1, int(round(0.25 / dt)))
    for i in range(0, len(traj.t), every):
        pts = _rope_points(model, traj.q[i])
        ax.plot(pts[:, 0], pts[:, 2], "-", lw=1.2, label=f"{traj.t[i]:.2f} s")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title("Rope free fall (Shah, Saha & Dutt, Fig. 7)")
    ax.legend(fontsize=7)
    for key in ("kinetic", "potential", "total"):
        ax2.plot(traj.t, traj.energy[key], label=key)
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("energy [J]")
    ax2.set_title("Energy balance")
    ax2.legend()
    fig.tight_layout()
    path = Path(out) / "rope_fall.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    result["figure"] = str(path)
    if html:
        result["viewer"] = str(Viewer(model).save_html(Path(out) / "rope_fall.html", traj=traj))
    return result


def _rope_points(model, q) -> np.ndarray:
    """Base-frame positions of the joints and of the free end (forward kinematics, one pass)."""

    R, o, _, _ = world_poses(model, q)
    tip = o[-1] + R[-1] @ (2.0 * model.coms[-1])
    return np.vstack([o[1:], tip])


def schiehlen_open(out: Path, t_final: float = 2.0, dt: float = 1e-3) -> dict:
    """Schiehlen's two-body robot, open loop (eq. 21–22): the GIM against eq. (21), and D Uᵀ from the
    UDUᵀ factors against the triangular form (22) that reverse Gaussian elimination gives; then the
    robot swinging under gravity from α = 30°."""

    model = bundled("two_link")
    data = model.create_data()
    R, L, m1, m2 = 0.5, 0.4, 2.0, 1.0  # the values documented in urdf/two_link.urdf
    I1 = m1 * (3 * 0.01**2 + R**2) / 12 + m1 * (R / 2) ** 2  # body 1 about the ground pin
    I2 = m2 * (3 * 0.01**2 + (2 * L) ** 2) / 12  # body 2 about its centre of mass C2
    eq21 = np.array([[I1 + m2 * R**2 + I2, I2], [I2, I2]])
    eq22 = np.array([[I1 + m2 * R**2, 0.0], [I2, I2]])
    err21 = err22 = 0.0
    for q in np.random.default_rng(0).uniform(-np.pi, np.pi, (20, 2)):
        U, D = udut(model, data, q)
        err21 = max(err21, float(np.abs(gim(model, data, q) - eq21).max() / np.abs(eq21).max()))
        err22 = max(err22, float(np.abs(D @ U.T - eq22).max() / np.abs(eq22).max()))
    traj = simulate(model, np.deg2rad([30.0, 0.0]), np.zeros(2), t_final, dt=dt, progress=False)
    path = trajectory_plot(Path(out) / "schiehlen_open.png", traj, model, "q",
                           "Schiehlen's two-body robot, open loop, under gravity")  # fmt: skip
    E = traj.energy["total"]
    return {"figure": path, "eq21_max_rel_error": err21, "eq22_max_rel_error": err22,
            "energy_drift_rel": float(np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max())}  # fmt: skip


def huge_chains(out: Path, sizes=(1000, 10000, 100000), dt: float = 1e-3) -> dict:
    """Agarwal et al.: planar and spatial chains released from the horizontal.  Wall time per
    simulated second and energy drift (RK4, dt = 1 ms; short horizons, longer for smaller n)."""

    rows = []
    shapes = {}
    for planar in (True, False):
        for n in sizes:
            model = chain(n, planar=planar)
            t_final = max(10 * dt, min(0.2, 2e4 * dt / n * 10))  # 0.2 s up to 1,000 DOF, 0.02 s at 10,000
            simulate(model, np.zeros(n), np.zeros(n), dt, dt=dt, progress=False)  # compiled before timing
            t0 = time.perf_counter()
            traj = simulate(
                model, np.zeros(n), np.zeros(n), t_final, dt=dt, progress=False, record_every=int(round(t_final / dt))
            )
            wall = time.perf_counter() - t0
            E = traj.energy["total"]
            drift = float(np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max())
            rows.append({"n": n, "planar": planar, "t_final": t_final, "wall_s": wall, "wall_per_sim_s": wall / t_final,
                         "energy_drift_rel": drift})  # fmt: skip
            if n == min(sizes):
                shapes[planar] = (model, traj.q[-1], t_final)
    plt = _figure()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for planar, (model, q, tf) in shapes.items():
        pts = _rope_points(model, q)
        ax.plot(pts[:, 0], pts[:, 2], label=f"{'planar' if planar else 'spatial'}, {model.nv} DOF, t = {tf:.2f} s")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title("Chains released from the horizontal")
    ax.legend(fontsize=8)
    for planar in (True, False):
        sel = [r for r in rows if r["planar"] == planar]
        ax2.loglog(
            [r["n"] for r in sel], [r["wall_per_sim_s"] for r in sel], "o-", label="planar" if planar else "spatial"
        )
    ax2.set_xlabel("DOF")
    ax2.set_ylabel("wall time per simulated second [s]")
    ax2.set_title("RK4, dt = 1 ms")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend()
    fig.tight_layout()
    path = Path(out) / "huge_chains.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"figure": str(path), "runs": rows}


# ---------------------------------------------------------------------------------------
# Closed loops (loops.py): Schiehlen's closed two-body robot, mechanisms, a parallel robot, Isobe's loop.
# ---------------------------------------------------------------------------------------


def _driven(model, actuated, q_of_t, t, q_guess, motors=None):
    """A closed-loop motion in which the 1-DOF joints ``actuated`` follow q_of_t(t) -> (q, q̇, q̈)
    (each (len(t), n)): positions by assemble (the others follow), rates by complete_motion; then the
    torques of ``motors`` (default: the ``actuated`` joints) and the cut-joint reactions by closed-loop
    inverse dynamics."""

    data = model.create_data()
    qa, va, aa = q_of_t(t)
    iq = [int(model.idx_q[model.joint_id(n)]) for n in actuated]
    Q, V, A, T, L = [], [], [], [], []
    q = np.asarray(q_guess, dtype=float).copy()
    for i in range(len(t)):
        q[iq] = qa[i]
        q = assemble(model, q, fixed=actuated)
        v, a = complete_motion(model, q, actuated, va[i], aa[i], data)
        tau, lam = constrained_inverse_dynamics(model, data, q, v, a, actuated if motors is None else motors)
        Q.append(q.copy()), V.append(v), A.append(a), T.append(tau), L.append(lam)
    return tuple(np.array(x) for x in (Q, V, A, T, L))


def _round_trip(model, Q, V, A, T, every: int = 10) -> float:
    """Worst error of closed-loop FD(τ) against the prescribed accelerations, relative to the largest
    acceleration of the motion (a single sample's may be near zero)."""

    data = model.create_data()
    err = 0.0
    for q, v, a, tau in zip(Q[::every], V[::every], A[::every], T[::every], strict=True):
        a_fd, _ = constrained_forward_dynamics(model, data, q, v, tau)
        err = max(err, float(np.abs(a_fd - a).max()))
    return err / float(np.abs(A).max())


def schiehlen_closed(out: Path, t_final: float = 2.0, dt: float = 1e-3) -> dict:
    """Schiehlen's two-body robot closed by a pin in a slot (section 5, eq. 18–25): released from rest
    under gravity; along the motion the closing reaction F and α̈ are compared with the closed form of
    eq. (20)/(24)–(25) in absolute angles α, β (see urdf/two_link_closed.urdf)."""

    model = bundled("two_link_closed")
    q0 = assemble(model, np.array([1.0, 2.0]), fixed=["alpha"])
    t0 = time.perf_counter()
    traj = simulate(model, q0, np.zeros(2), t_final, dt=dt, progress=False)
    wall = time.perf_counter() - t0
    # The closed form imposes J q̈ + J̇ q̇ = 0 exactly: compare without the Baumgarte terms of the run.

    data = model.create_data()
    runs = [constrained_forward_dynamics(model, data, q, v, np.zeros(2)) for q, v in zip(traj.q, traj.v, strict=True)]
    acc, lam = np.array([r[0] for r in runs]), np.array([r[1] for r in runs])
    R, L, m1, m2, g = 0.5, 0.4, 2.0, 1.0, 9.81
    Ia, I2 = m1 * 0.25**2 + 0.04171666667 + m2 * R**2, 0.05335833333
    al, be = traj.q[:, 0], traj.q[:, 0] + traj.q[:, 1]
    ad, bd = traj.v[:, 0], traj.v[:, 0] + traj.v[:, 1]
    Q = (m1 * R / 2 + m2 * R) * g * np.cos(al)
    G1, G2 = -R * np.sin(al), -L * np.sin(be)
    gamma = R * np.cos(al) * ad**2 + L * np.cos(be) * bd**2
    F = (gamma - G1 * Q / Ia) / (G1**2 / Ia + G2**2 / I2)  # eq. (20): N_c F = Q_cᵀ {M⁻¹ q − ...}
    alpha_dd = (Q + G1 * F) / Ia  # first row of eq. (24)
    err_F = float(np.abs(lam[:, 0] - F).max() / np.abs(F).max())
    err_a = float(np.abs(acc[:, 0] - alpha_dd).max() / np.abs(alpha_dd).max())
    residual = float(np.abs(R * np.cos(al) + L * np.cos(be)).max())
    path = line_plot(
        Path(out) / "schiehlen_closed.png", traj.t,
        {"closing reaction F, denoc_pin λ [N]": traj.lam[:, 0], "F by eq. (20)/(25) [N]": F,
         "α [rad]": al},
        "time [s]", "", "Schiehlen's two-body robot, closed by a pin in a slot",
    )  # fmt: skip
    return {"figure": path, "steps": len(traj.t) - 1, "wall_s": wall, "F_max_rel_error": err_F,
            "alpha_dd_max_rel_error": err_a, "closing_condition_max": residual}  # fmt: skip


def four_bar(out: Path, t_final: float = 5.0, dt: float = 1e-3) -> dict:
    """The four-bar released under gravity: loop residual and energy balance along 5 s (Baumgarte)."""

    model = bundled("four_bar")
    q0 = assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    t0 = time.perf_counter()
    traj = simulate(model, q0, np.zeros(3), t_final, dt=dt, progress=False)
    wall = time.perf_counter() - t0
    E = traj.energy["total"]
    residual = max(float(np.abs(loop_residual(model, q)).max()) for q in traj.q[::10])
    crank, rocker = model.names[1], model.names[3]
    path = trajectory_plot(Path(out) / "four_bar.png", traj, model, "q", "Four-bar released under gravity",
                           joints=[crank, rocker])  # fmt: skip
    return {"figure": path, "steps": len(traj.t) - 1, "wall_s": wall, "loop_residual_max": residual,
            "energy_drift_rel": float(np.abs(E - E[0]).max() / np.abs(E[0]))}  # fmt: skip


def _sway(amplitude, offset, T: float):
    """q = offset + amplitude sin(2π t / T), per joint, and its derivatives."""
    amplitude, offset = np.asarray(amplitude, float), np.asarray(offset, float)
    w = 2 * np.pi / T

    def f(t):
        t = np.asarray(t, float)[:, None]
        return offset + amplitude * np.sin(w * t), amplitude * w * np.cos(w * t), -amplitude * w * w * np.sin(w * t)

    return f


def slider_crank(out: Path, samples: int = 401) -> dict:
    """The crank turned at 2π rad/s for one revolution: the torque it needs, the guide's reactions."""
    model = bundled("slider_crank")
    t = np.linspace(0.0, 1.0, samples)
    w = 2 * np.pi

    def crank(t):
        t = np.asarray(t, float)[:, None]
        return 0.3 + w * t, np.full_like(t, w), np.zeros_like(t)

    Q, V, A, T, L = _driven(model, ["crank_joint"], crank, t, [0.3, -0.4, 0.1])
    path = line_plot(
        Path(out) / "slider_crank.png", t, {"crank torque [N·m]": T[:, 0], "guide normal force [N]": L[:, 4]},
        "time [s]", "", "Slider-crank, crank at 1 rev/s: closed-loop inverse dynamics",
    )  # fmt: skip
    return {"figure": path, "samples": samples, "fd_of_id_max_rel_error": _round_trip(model, Q, V, A, T),
            "passive_torque_max": float(np.abs(T[:, 1:]).max()),
            "peak_crank_torque_Nm": float(np.abs(T[:, 0]).max())}  # fmt: skip


def _motor_sway(out: Path, urdf: str, motors: list, amplitude: list, T: float, samples: int, title: str) -> dict:
    """``motors`` sway by ``amplitude`` sin(2π t / T); the rest of the closed mechanism follows. The motor torques
    by closed-loop inverse dynamics, plotted, and checked by closed-loop forward dynamics."""
    model = bundled(urdf)
    t = np.linspace(0.0, T, samples)
    Q, V, A, Tq, _ = _driven(model, motors, _sway(amplitude, np.zeros(len(motors)), T), t, np.zeros(model.nq))
    cols = [int(model.idx_v[model.joint_id(n)]) for n in motors]
    path = line_plot(
        Path(out) / f"{urdf}.png", t, {f"{n} [N·m]": Tq[:, c] for n, c in zip(motors, cols, strict=True)},
        "time [s]", "torque", title,
    )  # fmt: skip
    passive = np.setdiff1d(np.arange(model.nv), cols)
    return {"figure": path, "samples": samples, "fd_of_id_max_rel_error": _round_trip(model, Q, V, A, Tq),
            "passive_torque_max": float(np.abs(Tq[:, passive]).max())}  # fmt: skip


def rrr_parallel(out: Path, samples: int = 201, T: float = 2.0) -> dict:
    """The 3-RRR planar parallel robot: its three base motors sway (2 s), the platform follows."""
    motors = ["leg1_base", "leg2_base", "leg3_base"]
    return _motor_sway(out, "rrr_3", motors, [0.15, 0.1, -0.1], T, samples, "3-RRR parallel robot: motor torques")


def isobe_five_bar(out: Path, samples: int = 201, T: float = 2.0) -> dict:
    """Isobe & Yagi's closed-loop link system (section III): a 2-s swaying motion of the two motor
    joints; the motor torques (their Fig. 7, closed-loop configuration)."""
    title = "Isobe & Yagi's closed loop: motor torques of a 2-s sway"
    return _motor_sway(out, "isobe_five_bar", ["joint1", "joint5"], [0.3, 0.2], T, samples, title)


# ---------------------------------------------------------------------------------------
# Isobe & Yagi (section II.C): a multibranch system, four routes to its torques.
# ---------------------------------------------------------------------------------------


def isobe_lagrange(q, v, a, length: float = 0.4, mass: float = 0.215, tip_mass: float = 0.5) -> np.ndarray:
    """τ of ``models.isobe_multibranch`` by Lagrange's equations, derived by hand (rods about z: m l²/12).

    With l the link length and, per branch j = 2, 3 (pinned at link 1's tip P, angle φ_j = θ1 + θj):
    its mass m_j, first moment about P s_j, and moment of inertia about P c_j (s_2 = m l/2 + M l,
    c_2 = m l²/3 + M l², s_3 = m l/2, c_3 = m l²/3), the kinetic energy is
        T = ½ (m l²/3 + (m_2 + m_3) l²) θ̇1² + Σ_j [ l s_j cos θj θ̇1 φ̇j + ½ c_j φ̇j² ]
    and d/dt ∂T/∂θ̇ − ∂T/∂θ = τ gives, with b_j = l s_j:
        τ1 = M11 θ̈1 + Σ_j M1j θ̈j − Σ_j b_j sin θj θ̇j (2 θ̇1 + θ̇j)
        τj = M1j θ̈1 + c_j θ̈j + b_j sin θj θ̇1²
    M11 = m l²/3 + (m_2 + m_3) l² + Σ_j (2 b_j cos θj + c_j),  M1j = b_j cos θj + c_j.
    q, v, a: (N, 3) → τ (N, 3).
    """
    l, m, M = length, mass, tip_mass
    m_j = np.array([m + M, m])
    b = l * np.array([m * l / 2 + M * l, m * l / 2])
    c = np.array([m * l**2 / 3 + M * l**2, m * l**2 / 3])
    th, w, dw = np.asarray(q)[:, 1:], np.asarray(v)[:, 1:], np.asarray(a)[:, 1:]
    w1, dw1 = np.asarray(v)[:, :1], np.asarray(a)[:, :1]
    M1j = b * np.cos(th) + c
    M11 = m * l**2 / 3 + m_j.sum() * l**2 + (2 * b * np.cos(th) + c).sum(axis=1, keepdims=True)
    tau1 = (
        M11 * dw1
        + (M1j * dw).sum(axis=1, keepdims=True)
        - (b * np.sin(th) * w * (2 * w1 + w)).sum(axis=1, keepdims=True)
    )
    tauj = M1j * dw1 + c * dw + b * np.sin(th) * w1**2
    return np.hstack([tau1, tauj])


def isobe_multibranch(out: Path, samples: int = 201, T: float = 1.0) -> dict:
    """Isobe & Yagi's numerical example (section II.C, their Fig. 4): every joint turns 0.5π rad in 1 s in the
    horizontal plane (joint 3 the other way), rest to rest along eq. (15) of Shah et al.  The torques by
    DeNOC's Table 1, by the parallel scheme τ = L T P, by ``pinocchio.rnea`` and by the Lagrangian closed form."""
    import pinocchio as pin

    model = isobe_multibranch_model()
    t = np.linspace(0.0, T, samples)
    q, v, a = eq15(t, np.zeros(3), np.pi / 2 * np.array([1.0, 1.0, -1.0]), T)
    t0 = time.perf_counter()
    tau = inverse_dynamics_trajectory(model, t, q, v, a)
    wall = time.perf_counter() - t0
    lagrange = isobe_lagrange(q, v, a)
    parallel = np.array([parallel_scheme.inverse_dynamics(model, *x) for x in zip(q, v, a, strict=True)])
    pm = to_pinocchio(model)
    pd = pm.createData()
    rnea = np.array([pin.rnea(pm, pd, *x) for x in zip(q, v, a, strict=True)])
    scale = np.abs(lagrange).max()
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k in range(3):
        (line,) = ax.plot(t, lagrange[:, k], label=f"joint {k + 1}, Lagrange")
        ax.plot(t[::8], tau[::8, k], "o", ms=4, mfc="none", color=line.get_color(), label=f"joint {k + 1}, DeNOC")
        ax.plot(t[4::8], parallel[4::8, k], "x", ms=4, color=line.get_color(), label=f"joint {k + 1}, τ = LTP")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("torque [N·m]")
    ax.set_title("Isobe & Yagi's multibranch system: 0.5π rad in 1 s (their Fig. 4)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path = Path(out) / "isobe_multibranch.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"figure": str(path), "samples": samples, "wall_s": wall,
            "denoc_vs_lagrange_max_rel": float(np.abs(tau - lagrange).max() / scale),
            "parallel_vs_lagrange_max_rel": float(np.abs(parallel - lagrange).max() / scale),
            "rnea_vs_lagrange_max_rel": float(np.abs(rnea - lagrange).max() / scale),
            "peak_torques_Nm": np.abs(tau).max(axis=0).round(6).tolist()}  # fmt: skip


def isobe_configurations() -> dict:
    """Isobe & Yagi's structure-varying link system (section III, Figs. 5–7), by model edits of the five-bar
    ``urdf/isobe_five_bar.urdf`` (their 0.142 m / 0.102 kg members; the layout is ours, their figures are not
    in our text copy):

    - "A: 4-joint closed loop": joint4 locked, a four-bar (joints 1, 2, 5 and the cut joint 3) driven by joint1;
    - "B: 5-joint multibranch": the branch link (0.180 m, 0.130 kg, 0.1 kg at its tip) attached rigidly at link 2's
      tip, so link 2 supports links 3 and 5 (their Fig. 6(b)); driven by joint1 and joint5;
    - "C: passive joint moved": B with joint1 passive and joint2 driven instead: the actuator moves next to the
      branching link.

    Returns {label: (model, q at the start of the sway)}.
    """

    base = bundled("isobe_five_bar")
    q0 = assemble(base, np.zeros(base.nq))
    four = with_passive(lock_joints(base, ["joint4"], q0), ["joint2", "joint5"])
    branch = ModelBuilder("branch")
    branch.add_body(0, joint="revolute", axis=(0, 1, 0), name="joint_b", link="link5", mass=0.130,
                    com=(0.09, 0.0, 0.0), inertia=rod_inertia(0.130, 0.180))  # fmt: skip
    branch.add_body("link5", joint="fixed", placement=(np.eye(3), (0.18, 0.0, 0.0)), mass=0.1, link="branch_tip")
    with_branch = attach(base, "link2", branch.build(), placement=(np.eye(3), np.array([0.142, 0.0, 0.0])))
    q_branch = transfer_state(base, with_branch, q0, np.zeros(base.nv))[0]  # by joint name; joint_b at 0
    multibranch = with_passive(lock_joints(with_branch, ["joint_b"], q_branch), ["joint2", "joint4"])
    moved = with_passive(multibranch, ["joint1", "joint4"])
    return {
        "A: 4-joint closed loop": (four, q0[[0, 1, 2]]),
        "B: 5-joint multibranch": (multibranch, q0),
        "C: passive joint moved": (moved, q0),
    }


def isobe_structure_varying(out: Path, samples: int = 201, T: float = 2.0, t_fall: float = 1.5) -> dict:
    """The three configurations of ``isobe_configurations`` follow one 2-s sway (joint1 0.3 sin, joint5
    0.2 sin, in A joint1 only): the driven joints' torques by closed-loop inverse dynamics (their Fig. 7),
    checked by closed-loop forward dynamics, and the peaks.  Then a structure change during a motion:
    the five-bar falls under gravity, joint4 locks at t_fall/3 and the loop opens at 2 t_fall/3
    (``simulate(events=…)``), with the energy balance and the impact loss."""

    t = np.linspace(0.0, T, samples)
    sway = _sway([0.3, 0.2], [0.0, 0.0], T)
    result, curves = {"configurations": {}}, {}
    for label, (model, q0) in isobe_configurations().items():
        four_bar = label.startswith("A:")  # one DOF: joint1 alone drives it
        driven = ["joint1"] if four_bar else ["joint1", "joint5"]
        f = _sway([0.3], [0.0], T) if four_bar else sway
        actuated = [n for n in model.names[1:] if n not in model.passive]
        Q, V, A, Tq, _ = _driven(model, driven, f, t, q0, motors=actuated)
        cols = [int(model.idx_v[model.joint_id(n)]) for n in actuated]
        curves[label] = {n: Tq[:, c] for n, c in zip(actuated, cols, strict=True)}
        result["configurations"][label] = {
            "joints": list(model.names[1:]), "actuated": actuated, "passive": list(model.passive),
            "peak_torques_Nm": {n: float(np.abs(Tq[:, c]).max()) for n, c in zip(actuated, cols, strict=True)},
            "fd_of_id_max_rel_error": _round_trip(model, Q, V, A, Tq),
        }  # fmt: skip
    plt = _figure()
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    for ax, (label, c) in zip(axes[:3], curves.items(), strict=True):
        for name, y in c.items():
            ax.plot(t, y, label=name)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("time [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("motor torque [N·m]")
    # a structure change during a motion
    base = bundled("isobe_five_bar")
    q0 = assemble(base, np.array([0.4, 0.0, -0.3, 0.0]), fixed=["joint1", "joint5"])
    events = [
        (t_fall / 3, lambda m, q: lock_joints(m, ["joint4"], q)),
        (2 * t_fall / 3, lambda m, q: without_loop(m, "joint3")),
    ]
    # the locked four-bar whips round at up to 45 rad/s: RK4 needs a short step there (energy error ∝ dt⁴)
    traj = simulate(base, q0, np.zeros(base.nv), t_fall, dt=2.5e-4, events=events, progress=False, record_every=4)
    ax = axes[3]
    for k in range(1, base.njoints):
        ax.plot(traj.t, traj.q[:, base.idx_q[k]], label=base.names[k])
    E = traj.energy["total"]
    ax.plot(traj.t, 10 * (E - E[0]), "k--", label="10 × energy balance drift [J]")
    for e in traj.events:
        ax.axvline(e["t"], color="grey", lw=0.8)
    ax.set_title("fall: joint4 locks, then the loop opens", fontsize=10)
    ax.set_xlabel("time [s]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(out) / "isobe_structure_varying.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    result["figure"] = str(path)
    result["fall"] = {
        "events": [{"t": e["t"], "kinetic_lost_J": e["kinetic_lost"]} for e in traj.events],
        "energy_balance_drift_J": float(np.abs(E - E[0]).max()),
        "joint4_after_lock_max_rate": float(np.abs(traj.v[traj.t >= t_fall / 3, 3]).max()),
        "peak_kinetic_J": float(traj.energy["kinetic"].max()),
    }
    return result


def run(out="out", quick: bool = False) -> dict:
    """Examples 1–3 of the simulation issue; ``quick`` shortens them (for tests)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if quick:
        return {
            "gripper_inverse_dynamics": gripper_inverse_dynamics(out, samples=101),
            "gripper_fall": gripper_fall(out, t_final=0.2),
            "rope_fall": rope_fall(out, t_final=0.1, compare_pinocchio=True),
        }
    return {
        "gripper_inverse_dynamics": gripper_inverse_dynamics(out),
        "gripper_fall": gripper_fall(out),
        "rope_fall": rope_fall(out),
    }
