"""Isobe & Yagi's multibranch link system (their section II.C, Fig. 4): every joint turns 0.5π rad in 1 s in the
horizontal plane (joint 3 the other way), rest to rest.  The joint torques four ways: DeNOC's Table 1, their parallel
scheme τ = L T P (the connectivity matrix), ``pinocchio.rnea``, and Lagrange's equations derived by hand.

    python examples/isobe_multibranch.py [OUT_DIR]

Prints how far each route is from the Lagrangian closed form; writes isobe_multibranch.png.  The last line is the
numbers as JSON.
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

LENGTH, MASS, TIP_MASS, T = 0.4, 0.215, 0.5, 1.0  # dp.models.isobe_multibranch()'s links and tip mass


def lagrange(q, v, a):
    """τ by Lagrange's equations.  Link 1 turns about the base; branches j = 2, 3 are pinned at its tip P, at
    φ_j = θ1 + θj, with first moments b_j/l about P and moments of inertia c_j about P (branch 2 carries the tip
    mass):  τ1 = M11 θ̈1 + Σ M1j θ̈j − Σ b_j sin θj θ̇j (2 θ̇1 + θ̇j),  τj = M1j θ̈1 + c_j θ̈j + b_j sin θj θ̇1²,
    M11 = m l²/3 + (m_2 + m_3) l² + Σ (2 b_j cos θj + c_j),  M1j = b_j cos θj + c_j."""
    l, m, M = LENGTH, MASS, TIP_MASS
    b = l * np.array([m * l / 2 + M * l, m * l / 2])
    c = np.array([m * l**2 / 3 + M * l**2, m * l**2 / 3])
    th, w, dw, w1, dw1 = q[:, 1:], v[:, 1:], a[:, 1:], v[:, :1], a[:, :1]
    M1j = b * np.cos(th) + c
    M11 = m * l**2 / 3 + (2 * m + M) * l**2 + (2 * b * np.cos(th) + c).sum(axis=1, keepdims=True)
    coriolis = (b * np.sin(th) * w * (2 * w1 + w)).sum(axis=1, keepdims=True)
    tau1 = M11 * dw1 + (M1j * dw).sum(axis=1, keepdims=True) - coriolis
    return np.hstack([tau1, M1j * dw1 + c * dw + b * np.sin(th) * w1**2])


def main(out: Path) -> dict:
    model = dp.models.isobe_multibranch()
    t = np.linspace(0.0, T, 201)
    end = np.pi / 2 * np.array([1.0, 1.0, -1.0])
    w = 2 * np.pi / T  # rest to rest along eq. (15) of Shah, Saha & Dutt
    q = end * (t[:, None] - np.sin(w * t[:, None]) / w) / T
    v, a = end * (1 - np.cos(w * t[:, None])) / T, end * w * np.sin(w * t[:, None]) / T

    tau = dp.inverse_dynamics(model, model.create_data(), q, v, a)  # Table 1, the whole trajectory in one call
    parallel = np.array([dp.parallel_scheme.inverse_dynamics(model, *s) for s in zip(q, v, a, strict=True)])
    pm = dp.to_pinocchio(model)
    pd = pm.createData()
    rnea = np.array([pin.rnea(pm, pd, *s) for s in zip(q, v, a, strict=True)])
    closed = lagrange(q, v, a)
    scale = np.abs(closed).max()
    errors = {f"{name}_vs_lagrange_max_rel": float(np.abs(x - closed).max() / scale)
              for name, x in (("denoc", tau), ("parallel", parallel), ("rnea", rnea))}  # fmt: skip
    print("connectivity matrix (row j, column k: joint j supports link k):")
    print(dp.connectivity_matrix(model))
    for name, error in errors.items():
        print(f"{name.split('_')[0]:>8}: {error:.1e} from the Lagrangian closed form")

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k in range(3):
        (line,) = ax.plot(t, closed[:, k], label=f"joint {k + 1}, Lagrange")
        ax.plot(t[::8], tau[::8, k], "o", ms=4, mfc="none", color=line.get_color(), label=f"joint {k + 1}, DeNOC")
        ax.plot(t[4::8], parallel[4::8, k], "x", ms=4, color=line.get_color(), label=f"joint {k + 1}, τ = LTP")
    ax.set(xlabel="time [s]", ylabel="torque [N·m]", title="Isobe & Yagi's multibranch system (their Fig. 4)")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(out / "isobe_multibranch.png", dpi=110)
    return {"figure": str(out / "isobe_multibranch.png"), **errors,
            "peak_torques_Nm": np.abs(tau).max(axis=0).round(6).tolist()}  # fmt: skip


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(main(out)))
