"""Schiehlen's two-body robot, open loop (Fig. 3): its generalized inertia matrix against the closed form of eq. (21),
the UDUᵀ factors against the triangular form of eq. (22) that reverse Gaussian elimination gives, then the robot
swinging under gravity from α = 30°.

    python examples/schiehlen_open.py [OUT_DIR]

Prints the largest errors against eq. (21) and (22) over 20 random configurations; writes schiehlen_open.png.  The
last line is the numbers as JSON.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import denoc_pin as dp  # noqa: E402

URDF = dp.models.bundled_file("two_link")  # or the path of your own robot file
R, L, M1, M2, RADIUS = 0.5, 0.4, 2.0, 1.0, 0.01  # the dimensions written in urdf/two_link.urdf
I1 = M1 * (3 * RADIUS**2 + R**2) / 12 + M1 * (R / 2) ** 2  # body 1 (a rod of length R) about the ground pin
I2 = M2 * (3 * RADIUS**2 + (2 * L) ** 2) / 12  # body 2 (a rod of length 2L) about its centre of mass, the pin
EQ21 = np.array([[I1 + M2 * R**2 + I2, I2], [I2, I2]])  # constant: body 2 is pinned at its centre of mass
EQ22 = np.array([[I1 + M2 * R**2, 0.0], [I2, I2]])  # D Uᵀ: the GIM after reverse Gaussian elimination


def main(out: Path) -> dict:
    model = dp.load_urdf(URDF)
    data = model.create_data()
    err21 = err22 = 0.0
    for q in np.random.default_rng(0).uniform(-np.pi, np.pi, (20, 2)):
        U, D = dp.udut(model, data, q)  # GIM = U D Uᵀ (eq. 18)
        err21 = max(err21, np.abs(dp.gim(model, data, q) - EQ21).max() / np.abs(EQ21).max())
        err22 = max(err22, np.abs(D @ U.T - EQ22).max() / np.abs(EQ22).max())
    print(f"GIM against eq. (21): {err21:.1e}; D Uᵀ against eq. (22): {err22:.1e} (largest relative errors)")

    traj = dp.simulate(model, np.deg2rad([30.0, 0.0]), np.zeros(2), t_final=2.0, dt=1e-3)
    E = traj.energy["total"]
    drift = np.abs(E - E[0]).max() / np.abs(traj.energy["kinetic"]).max()
    print(f"swinging for 2 s: energy drift {drift:.1e} of the peak kinetic energy")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(traj.t, np.rad2deg(traj.q[:, 0]), label="α")
    ax.plot(traj.t, np.rad2deg(traj.q[:, 1]), label="δ")
    ax.set(xlabel="time [s]", ylabel="angle [deg]", title="Schiehlen's two-body robot, open loop, under gravity")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "schiehlen_open.png", dpi=110)
    return {"figure": str(out / "schiehlen_open.png"), "eq21_max_rel_error": float(err21),
            "eq22_max_rel_error": float(err22), "energy_drift_rel": float(drift)}  # fmt: skip


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
