"""The gripper of Shah, Saha & Dutt falling under gravity (Fig. 6): RK4 at dt = 1 ms with the DeNOC forward dynamics
(UDUᵀ, Table 3), from θ₁₁ = −60°, the other joints at 0, at rest.

    python examples/gripper_fall.py [OUT_DIR]

Prints the energy balance (kinetic + potential is constant: no joint friction, no torque); writes gripper_fall.png.
The last line is the numbers as JSON.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import denoc_pin as dp  # noqa: E402

URDF = dp.models.bundled_file("gripper")  # or the path of your own robot file


def main(out: Path) -> dict:
    model = dp.load_urdf(URDF)
    q0 = np.deg2rad([-60.0, 0.0, 0.0, 0.0])
    traj = dp.simulate(model, q0, np.zeros(model.nv), t_final=1.0, dt=1e-3)  # RK4; traj.q (1001, 4), traj.energy
    E, kinetic = traj.energy["total"], traj.energy["kinetic"]
    drift = np.abs(E - E[0]).max() / np.abs(kinetic).max()
    print(f"{len(traj.t) - 1} RK4 steps; largest change of the total energy: {drift:.1e} of the peak kinetic energy")
    print("final angles [deg]:", np.round(np.rad2deg(traj.q[-1]), 2))

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, label in enumerate(["θ 1¹", "θ 1²", "θ 2²", "θ 1³"]):
        ax.plot(traj.t, np.rad2deg(traj.q[:, k]), label=label)
    ax.set(xlabel="time [s]", ylabel="joint angle [deg]", title="Gripper falling under gravity (Fig. 6)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "gripper_fall.png", dpi=110)
    return {"figure": str(out / "gripper_fall.png"), "steps": len(traj.t) - 1, "energy_drift_rel": float(drift)}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
