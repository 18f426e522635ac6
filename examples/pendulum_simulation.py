"""A pendulum of N links falling from rest, simulated twice with the same semi-implicit Euler steps: on denoc_pin's
forward dynamics and on Pinocchio's ``aba`` — a port of Pinocchio's pendulum simulation example.

The pendulum is built with ``dp.ModelBuilder`` and handed to Pinocchio by ``dp.to_pinocchio``, so both simulate the
same model.  The motion is chaotic: the two trajectories agree to rounding at first, then the rounding differences
grow exponentially (from 1e-15 to 1e-8 rad over 3 s here), which the printed gaps show.

    python examples/pendulum_simulation.py [N]
"""

import sys

import numpy as np
import pinocchio as pin

import denoc_pin as dp


def pendulum(n: int) -> dp.Model:
    b = dp.ModelBuilder(f"pendulum_{n}")
    parent = 0
    for i in range(n):
        placement = (np.eye(3), np.array([0.0, 0.0, -0.1 if i else 0.0]))  # each link 0.1 m below the last
        parent = b.add_body(parent, joint="revolute", axis=(0.0, 1.0, 0.0), placement=placement, mass=0.2,
                            com=(0.0, 0.0, -0.05), inertia=np.diag([1e-4, 1e-4, 1e-5]))  # fmt: skip
    return b.build()


def main(n: int = 10, t_final: float = 3.0, dt: float = 1e-3) -> dict:
    model = pendulum(n)
    pm = dp.to_pinocchio(model)
    data, pd = model.create_data(), pm.createData()
    q0 = np.full(model.nq, 0.3)  # bent into an arc, at rest
    q, v = q0.copy(), np.zeros(model.nv)
    qp, vp = q0.copy(), np.zeros(model.nv)
    tau = np.zeros(model.nv)
    steps = int(round(t_final / dt))
    gaps = []
    for k in range(steps):  # semi-implicit Euler: v ← v + q̈ dt, q ← q ⊕ v dt
        v = v + dp.forward_dynamics(model, data, q, v, tau) * dt
        q = dp.integrate(model, q, v * dt)
        vp = vp + pin.aba(pm, pd, qp, vp, tau) * dt
        qp = pin.integrate(pm, qp, vp * dt)
        if (k + 1) % (steps // 4) == 0:
            gaps.append(float(np.abs(q - qp).max()))
            print(f"t = {(k + 1) * dt:.2f} s: largest joint-angle gap {gaps[-1]:.1e} rad")
    return {"gaps": gaps, "steps": steps}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
