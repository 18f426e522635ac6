"""System identification through contact: a cube's friction coefficient from a recorded slide, and the payload on
solo12's base from a recorded landing.

    python examples/identification.py

A 1 kg, 10 cm cube at rest on the ground is pushed along x by 10 N for 0.3 s, then slides to a stop.  The recording:
its positions every 5 ms from ``dp.simulate`` with the true μ = 0.42, with 0.5 mm of measurement noise.  The
identification starts from μ = 0.7 and runs Gauss–Newton on the squared position error, the positions' sensitivity
to μ carried along the rollout by the contact step's Jacobians (``ContactStepper.derivatives``: S_{k+1} = A_k S_k +
∂(q⁺, v⁺)/∂μ, its ``friction`` columns summed over the cube's corners, which share the ground's μ).

solo12 (its URDF) carries a 0.4 kg payload at its base's centre of mass and lands from 3 cm under joint PD; the
recording: its configuration every 1 ms for 0.3 s, with 0.5 mm and 1 mrad of noise.  From the nominal base mass,
Gauss–Newton on the configuration error recovers the payload, the sensitivity carried through the closed loop of
the PD and the contacts: S_{k+1} = (A_k + B_k ∂τ/∂(q, v)) S_k + ∂(q⁺, v⁺)/∂m (the ``mass`` column of the base).

Prints each iteration's estimate and the final errors, then the numbers as one JSON line.
"""

import json

import numpy as np

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

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


PAYLOAD_TRUE = 0.4  # [kg] at solo12's base's centre of mass
LAND_DT, LAND_STEPS = 1e-3, 300


def solo12(payload: float) -> tuple[dp.Model, np.ndarray, dp.JointPD, dp.Ground]:
    """solo12 with ``payload`` kg added to its base (its centre of mass and rotational inertia held), 3 cm above the
    ground in its crouch, the PD that holds the crouch."""
    model = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    masses = model.masses.copy()
    masses[model.link_names.index("base_link")] += payload
    model = dp.Model(**(model.fields() | {"masses": masses}))
    q0 = dp.neutral(model)
    q0[7:] = [0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6]
    q0[2] = 0.265
    return model, q0, dp.JointPD(model, 100.0, 0.5, q0), dp.Ground(friction=0.9)


def landing(payload: float, rng=None) -> np.ndarray:
    """The configurations (LAND_STEPS + 1, nq) of a landing with ``payload``, with measurement noise if rng."""
    model, q0, pd, ground = solo12(payload)
    run = dp.simulate(model, q0, np.zeros(model.nv), LAND_STEPS * LAND_DT, LAND_DT, tau=pd, ground=ground,
                      progress=False)  # fmt: skip
    if rng is None:
        return run.q
    noisy = [dp.integrate(model, q, np.r_[rng.normal(scale=5e-4, size=3), rng.normal(scale=1e-3, size=model.nv - 3)])
             for q in run.q]  # fmt: skip
    return np.array(noisy)


def identify_payload(measured, payload=0.0, iterations=10) -> tuple[float, list]:
    """Gauss–Newton on ½ Σ |q_k(m) ⊖ q̂_k|² for the base's added mass m (module docstring)."""
    history = [payload]
    for _ in range(iterations):
        model, q0, pd, ground = solo12(payload)
        stepper = dp.ContactStepper(model, ground, dp.ContactSettings(), LAND_DT)
        nv = model.nv
        q, v, S = q0.copy(), np.zeros(nv), np.zeros(2 * nv)
        num = den = 0.0
        for k in range(LAND_STEPS):
            tau = pd(0.0, q, v)
            r = stepper.derivatives(q, v, tau, masses=["base_link"])
            A = r.A.copy()
            A[:, :nv] -= r.B @ np.diag(pd.kp)  # τ's own change: ∂τ/∂q = −K_p, ∂τ/∂v = −K_d (joint by joint)
            A[:, nv:] -= r.B @ np.diag(pd.kd)
            S = A @ S + r.mass[:, 0]
            q, v = r.q_next, r.v_next
            e = dp.difference(model, q, measured[k + 1])  # the measurement seen from the rollout, tangent at q
            num += S[:nv] @ e
            den += S[:nv] @ S[:nv]
        step = num / den
        payload += step
        history.append(payload)
        if abs(step) < 1e-6:
            break
    return payload, history


def main() -> dict:
    model, q0 = cube()
    measured = record(model, q0, np.random.default_rng(0))
    mu, history = identify(model, q0, measured)
    for i, m in enumerate(history):
        print(f"iteration {i}: μ = {m:.5f}")
    error = abs(mu - MU_TRUE) / MU_TRUE
    print(f"identified μ = {mu:.5f} (true {MU_TRUE}), relative error {error:.2e}, slide {measured[-1, 0]:.3f} m")
    out = {"mu": mu, "mu_true": MU_TRUE, "relative_error": error, "iterations": len(history) - 1,
           "slide_m": float(measured[-1, 0])}  # fmt: skip
    payload, history = identify_payload(landing(PAYLOAD_TRUE, np.random.default_rng(1)))
    for i, m in enumerate(history):
        print(f"iteration {i}: payload = {m:.5f} kg")
    error = abs(payload - PAYLOAD_TRUE) / PAYLOAD_TRUE
    print(f"identified payload = {payload:.5f} kg (true {PAYLOAD_TRUE}), relative error {error:.2e}")
    return out | {"payload": payload, "payload_true": PAYLOAD_TRUE, "payload_error": error,
                  "payload_iterations": len(history) - 1}  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(main()))
