"""The gripper of Shah, Saha & Dutt (Fig. 4): joint torques along the paper's eq. (15) trajectory (Fig. 5), by the
DeNOC inverse dynamics (Table 1), checked against Pinocchio's RNEA.

    python examples/gripper_inverse_dynamics.py [OUT_DIR]

Prints the torques' peak and their largest error against ``pinocchio.rnea``; writes gripper_torques.png.  The last
line is the same numbers as JSON.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

import denoc_pin as dp  # noqa: E402

URDF = dp.models.bundled_file("gripper")  # or the path of your own robot file
# Table 2: initial and final angles of the joints 1¹, 1², 2², 1³ (degrees), reached in T = 1 s.
START, END, T = np.deg2rad([0.0, 0.0, 0.0, 90.0]), np.deg2rad([60.0, 80.0, 80.0, 120.0]), 1.0


def eq15(t):
    """θ(t) = θ(0) + (θ(T) − θ(0))/T · [t − T/(2π) sin(2π t/T)] (eq. 15), and θ̇, θ̈."""
    t = t[:, None]
    d, w = (END - START) / T, 2.0 * np.pi / T
    return START + d * (t - np.sin(w * t) / w), d * (1.0 - np.cos(w * t)), d * w * np.sin(w * t)


def main(out: Path) -> dict:
    model = dp.load_urdf(URDF)  # the same joint order and q/v layout as pinocchio.buildModelFromUrdf
    print(model)  # the module tree of Fig. 4
    t = np.linspace(0.0, T, 1001)
    q, v, a = eq15(t)
    tau = dp.inverse_dynamics(model, model.create_data(), q, v, a)  # a batch (1001, 4): all states on all cores

    pm = pin.buildModelFromUrdf(str(URDF))
    pd = pm.createData()
    reference = np.array([pin.rnea(pm, pd, *state) for state in zip(q, v, a, strict=True)])
    error = np.abs(tau - reference).max() / np.abs(reference).max()
    print(f"peak torque {np.abs(tau).max():.3f} N·m; largest error against pinocchio.rnea {error:.1e} (relative)")

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, label in enumerate(["τ 1¹", "τ 1²", "τ 2²", "τ 1³"]):
        ax.plot(t, tau[:, k], label=label)
    ax.set(xlabel="time [s]", ylabel="joint torque [N m]", title="Gripper inverse dynamics (Fig. 5)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "gripper_torques.png", dpi=110)
    print(f"figure: {out / 'gripper_torques.png'}")
    return {"figure": str(out / "gripper_torques.png"), "samples": len(t), "max_rel_error_vs_rnea": float(error),
            "peak_torque_Nm": float(np.abs(tau).max())}  # fmt: skip


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
