"""The 100-DOF rope of Shah, Saha & Dutt (Fig. 7): 50 elements on universal joints, released horizontally from its
fixed end, falling for 1.75 s (RK4, dt = 1 ms), against the same RK4 loop driven by ``pinocchio.aba``.

    python examples/rope_fall.py [OUT_DIR]

Prints the wall times, how far the two final states are apart and the energy balance; writes rope_fall.png (the
rope every 0.25 s, and its energies).  The last line is the numbers as JSON.
"""

import json
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

import denoc_pin as dp  # noqa: E402

DT, STEPS = 1e-3, 1750


def pinocchio_rk4(pm, q, v, dt: float, steps: int):
    """Classical RK4 on pinocchio.aba, τ = 0 (universal joints: q is a vector space, so q + dt v is exact)."""
    pd, tau = pm.createData(), np.zeros(pm.nv)
    for _ in range(steps):
        a1 = pin.aba(pm, pd, q, v, tau).copy()
        a2 = pin.aba(pm, pd, q + 0.5 * dt * v, v + 0.5 * dt * a1, tau).copy()
        a3 = pin.aba(pm, pd, q + 0.5 * dt * (v + 0.5 * dt * a1), v + 0.5 * dt * a2, tau).copy()
        a4 = pin.aba(pm, pd, q + dt * (v + 0.5 * dt * a2), v + dt * a3, tau).copy()
        q = q + dt * (v + dt * (a1 + a2 + a3) / 6)
        v = v + dt * (a1 + 2 * a2 + 2 * a3 + a4) / 6
    return q, v


def rope_points(model, data, q) -> np.ndarray:
    """The joints' positions and the free end, world frame."""
    dp.forward_kinematics(model, data, q)
    tip = data.op[-1] + data.oR[-1] @ (2.0 * model.coms[-1])  # each element's centre of mass is at its middle
    return np.vstack([data.op[1:], tip])


def main(out: Path) -> dict:
    model = dp.models.rope()  # 50 elements of 0.2 m, each a universal joint: nq = nv = 100
    q0 = np.zeros(model.nq)
    q0[1] = np.pi / 2  # the first joint's second axis: the whole rope straight along −x
    dp.simulate(model, q0, np.zeros(model.nv), DT, dt=DT)  # the first call compiles: keep it out of the timing
    t0 = time.perf_counter()
    traj = dp.simulate(model, q0, np.zeros(model.nv), STEPS * DT, dt=DT)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    q_pin, _ = pinocchio_rk4(dp.to_pinocchio(model), q0, np.zeros(model.nv), DT, STEPS)
    theirs = time.perf_counter() - t0
    diff = np.abs(q_pin - traj.q[-1]).max() / np.abs(traj.q[-1]).max()
    E = traj.energy["total"]
    drift = np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max()
    print(f"{STEPS} RK4 steps: denoc_pin {ours:.3f} s, the same loop on pinocchio.aba {theirs:.3f} s")
    print(f"final states agree to {diff:.1e} (relative); energy drift {drift:.1e} of the peak kinetic energy")

    data = model.create_data()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i in range(0, len(traj.t), 250):
        pts = rope_points(model, data, traj.q[i])
        ax.plot(pts[:, 0], pts[:, 2], lw=1.2, label=f"{traj.t[i]:.2f} s")
    ax.set(aspect="equal", xlabel="x [m]", ylabel="z [m]", title="Rope free fall (Fig. 7)")
    ax.legend(fontsize=7)
    for key in ("kinetic", "potential", "total"):
        ax2.plot(traj.t, traj.energy[key], label=key)
    ax2.set(xlabel="time [s]", ylabel="energy [J]", title="Energy balance")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out / "rope_fall.png", dpi=110)
    return {"figure": str(out / "rope_fall.png"), "steps": len(traj.t) - 1, "wall_s": ours,
            "pinocchio_loop_wall_s": theirs, "final_state_rel_diff": float(diff),
            "energy_drift_rel": float(drift)}  # fmt: skip


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
