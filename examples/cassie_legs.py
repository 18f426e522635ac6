"""Cassie's legs from their SDF (example-robot-data): the reaction forces in the four rods' ball joints along a
slow squat, the pelvis held.

The hip pitch and knee motors follow a squat (hip 0.4·s, knee −0.8·s rad, s from 0 to 1), the other motors hold
zero; ``dp.assemble`` closes the legs at each step with the motors held; ``dp.constrained_inverse_dynamics`` with
the ten motors and the two knee springs actuated (the springs' torque holds them) gives the motor torques and the
rods' reactions λ, quasi-statically (q̇ = q̈ = 0); along the legs' redundant constraint direction λ is the
minimum-norm split.  Writes ``cassie_legs.png`` and prints the peak forces; the last line is the numbers as JSON.

    python examples/cassie_legs.py [OUT_DIR]
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.loaders.robots import robots_dir

SIDES = ("left", "right")
MOTORS = [f"{s}-{j}-op" for s in SIDES for j in ("roll", "yaw", "pitch", "knee", "foot")]
SPRINGS = [f"{s}-knee-shin-joint" for s in SIDES]
RODS = {"left-pitch-rod-joint": "left achilles rod", "left-plantar-foot-joint": "left plantar rod",
        "right-pitch-rod-joint": "right achilles rod", "right-plantar-foot-joint": "right plantar rod"}  # fmt: skip


def main(out: Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # CAD inertias of the file
        model = dp.load_sdf(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf")
    data = model.create_data()
    depth = np.linspace(0.0, 1.0, 21)
    rows = np.cumsum([0] + [lp.n_constraints for lp in model.loops])
    forces = {name: [] for name in RODS}
    torque_knee = []
    q = dp.neutral(model)
    zero = np.zeros(model.nv)
    for s in depth:
        for side in SIDES:  # both legs alike (the file mirrors their frames, so equal angles squat symmetrically)
            q[model.idx_q[model.joint_id(f"{side}-pitch-op")]] = 0.4 * s
            q[model.idx_q[model.joint_id(f"{side}-knee-op")]] = -0.8 * s
        q = dp.assemble(model, q, fixed=MOTORS)
        tau, lam = dp.constrained_inverse_dynamics(model, data, q, zero, zero, actuated=MOTORS + SPRINGS)
        for i, lp in enumerate(model.loops):
            forces[lp.name].append(float(np.linalg.norm(lam[rows[i] : rows[i + 1]])))
        torque_knee.append(float(tau[model.idx_v[model.joint_id("left-knee-op")]]))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name, label in RODS.items():
        ax1.plot(depth, forces[name], label=label)
    ax1.set_xlabel("squat depth s")
    ax1.set_ylabel("|λ| in the ball joint [N]")
    ax1.set_title("Cassie's rods along a squat (pelvis held)")
    ax1.legend()
    ax2.plot(depth, torque_knee)
    ax2.set_xlabel("squat depth s")
    ax2.set_ylabel("left knee motor torque [N·m]")
    ax2.set_title("holding the legs against gravity")
    fig.tight_layout()
    path = out / "cassie_legs.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    peaks = {RODS[n]: max(f) for n, f in forces.items()}
    for rod, force in peaks.items():
        print(f"{rod:<20} peak force {force:8.1f} N")
    return {
        "figure": str(path),
        "peak_rod_force_N": peaks,
        "closed_to": float(np.abs(dp.loop_residual(model, q)).max()),
    }


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
