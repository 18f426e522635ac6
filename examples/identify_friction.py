"""System identification through contact: a cube's friction coefficient recovered from a recorded slide.

    python examples/identify_friction.py

A 1 kg, 10 cm cube at rest on the ground is pushed along x by 10 N for 0.3 s, then slides to a stop.  The recording:
its positions every 5 ms from ``dp.simulate`` with the true μ = 0.42, with 0.5 mm of measurement noise.  The
identification starts from μ = 0.7 and runs Gauss–Newton on the squared position error, the positions' sensitivity
to μ carried along the rollout by the contact step's Jacobians (``ContactStepper.derivatives``: S_{k+1} = A_k S_k +
∂(q⁺, v⁺)/∂μ, its ``friction`` columns summed over the cube's corners, which share the ground's μ).  Prints each
iteration's μ and the final error, then the numbers as one JSON line.
"""

import json

import numpy as np

import denoc_pin as dp

DT, STEPS = 5e-3, 160  # 0.8 s
MU_TRUE, MU_START = 0.42, 0.7
NOISE = 5e-4  # [m] on each recorded position


def cube() -> tuple[dp.Model, np.ndarray]:
    """The 1 kg, 10 cm cube resting on its face."""
    b = dp.ModelBuilder("cube")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * 0.01 / 12, link="cube")
    b.add_collision("cube", dp.Box((0.1, 0.1, 0.1)))
    model = b.build()
    q0 = dp.neutral(model)
    q0[2] = 0.05 - 1e-5
    return model, q0


def push(k: int) -> np.ndarray:
    """τ at step k: 10 N along x on the free flyer for the first 0.3 s."""
    tau = np.zeros(6)
    tau[0] = 10.0 if k * DT < 0.3 - 1e-12 else 0.0
    return tau


def record(model, q0, rng) -> np.ndarray:
    """The positions (STEPS + 1, 3) of a run with the true μ, with measurement noise."""
    run = dp.simulate(model, q0, np.zeros(6), STEPS * DT, DT, tau=lambda t, q, v: push(int(round(t / DT))),
                      ground=dp.Ground(friction=MU_TRUE), progress=False)  # fmt: skip
    return run.q[:, :3] + rng.normal(scale=NOISE, size=(STEPS + 1, 3))


def positions_and_sensitivity(model, q0, mu) -> tuple[np.ndarray, np.ndarray]:
    """The positions (STEPS + 1, 3) of a rollout with friction μ, and their derivatives with respect to μ."""
    stepper = dp.ContactStepper(model, dp.Ground(friction=mu), dp.ContactSettings(), DT)
    data = model.create_data()
    q, v, S = q0.copy(), np.zeros(6), np.zeros(12)  # S = ∂(q, v)/∂μ, q's part in its tangent space
    P, dP = [q[:3].copy()], [np.zeros(3)]
    for k in range(STEPS):
        r = stepper.derivatives(q, v, push(k), wrt=("q", "v"))
        S = r.A @ S + r.friction.sum(axis=1)
        q, v = r.q_next, r.v_next
        R = dp.frame_placement(model, data, q, "cube")[:3, :3]  # the free flyer's δq is in its body frame
        P.append(q[:3].copy())
        dP.append(R @ S[:3])
    return np.array(P), np.array(dP)


def identify(model, q0, measured, mu=MU_START, iterations=20) -> tuple[float, list]:
    """Gauss–Newton on ½ Σ |p_k(μ) − p̂_k|²: μ ← μ − Σ dpᵀ e / Σ dpᵀ dp, until the step is below 1e-7."""
    history = [mu]
    for _ in range(iterations):
        P, dP = positions_and_sensitivity(model, q0, mu)
        e = P - measured
        step = float(np.sum(dP * e) / np.sum(dP * dP))
        mu -= step
        history.append(mu)
        if abs(step) < 1e-7:
            break
    return mu, history


def main() -> dict:
    model, q0 = cube()
    measured = record(model, q0, np.random.default_rng(0))
    mu, history = identify(model, q0, measured)
    for i, m in enumerate(history):
        print(f"iteration {i}: μ = {m:.5f}")
    error = abs(mu - MU_TRUE) / MU_TRUE
    print(f"identified μ = {mu:.5f} (true {MU_TRUE}), relative error {error:.2e}, slide {measured[-1, 0]:.3f} m")
    return {"mu": mu, "mu_true": MU_TRUE, "relative_error": error, "iterations": len(history) - 1,
            "slide_m": float(measured[-1, 0])}  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(main()))
