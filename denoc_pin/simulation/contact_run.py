"""``simulate`` with contacts: the steps of ``contact.stepping`` at a fixed dt, a torque callback for feedback
control, and what each step's contacts were (``Trajectory.contacts``)."""

from __future__ import annotations

import numpy as np

from ..algorithms.energy import energy
from ..contact import ContactSettings, ContactStepper
from ..model import Model, vector

__all__ = ["simulate_contacts"]


def simulate_contacts(model: Model, q0, v0, nsteps: int, dt: float, tau, ground, contact, stride: int, progress):
    """(t, Q, V, A, T, KE, PE, W, contacts): the run's rows, every ``stride``-th step recorded (row 0: the start).

    A recorded row's contacts are those of the step that leaves its state: "points" (k, 3) world, "normals" (k, 3),
    "impulses" (k, 3) in the contact frame (t₁, t₂, n), "forces" (k, 3) world (the impulse over dt, on the second
    body), "depths" (k,), "collisions" (the names of the shapes touching, "ground" for the plane), and the solve's
    "iterations", "residual", "primal", "dual", "complementarity", "converged"."""
    settings = ContactSettings() if contact is None else contact
    stepper = ContactStepper(model, ground, settings, dt)
    data = model.create_data()
    nrec = nsteps // stride + 1
    Q, V, A, T = (
        np.empty((nrec, model.nq)),
        np.empty((nrec, model.nv)),
        np.empty((nrec, model.nv)),
        np.empty((nrec, model.nv)),
    )
    KE, PE, W = np.empty(nrec), np.empty(nrec), np.empty(nrec)
    contacts = []
    bar = None
    if progress or (progress is None and nsteps > 20000):
        from tqdm import tqdm

        bar = tqdm(total=nsteps, unit="step", desc="simulate")
    q, v, work, row = q0.copy(), v0.copy(), 0.0, 0
    names = [c.name for c in model.collisions]
    for i in range(nsteps + 1):
        t = i * dt
        if callable(tau):
            tau_i = vector(tau(t, q.copy(), v.copy()), model.nv, "tau(t, q, v)")
        else:
            tau_i = tau
        if i == nsteps:
            rec = None
            q1, v1 = q, v
        else:
            q1, v1, rec = stepper.step(q, v, tau_i)
            if not (np.isfinite(q1).all() and np.isfinite(v1).all()):
                raise ValueError(f"the state became non-finite at step {i + 1} (t = {(i + 1) * dt:.6g} s); reduce dt "
                                 f"(now {dt:g}) or check the contact settings")  # fmt: skip
        if i % stride == 0:
            Q[row], V[row], T[row], W[row] = q, v, tau_i, work
            A[row] = (v1 - v) / dt if rec is not None else (A[row - 1] if row else 0.0)
            KE[row], PE[row] = energy(model, data, q, v)
            contacts.append(_summary(rec, names, dt))
            row += 1
        if rec is not None:
            work += dt * float(tau_i @ v1)
        q, v = q1, v1
        if bar is not None and rec is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    t = np.arange(nrec) * stride * dt
    return t, Q, V, A, T, KE, PE, W, contacts


def _summary(rec, names, dt) -> dict:
    if rec is None:
        return {"points": np.zeros((0, 3)), "normals": np.zeros((0, 3)), "impulses": np.zeros((0, 3)),
                "forces": np.zeros((0, 3)), "depths": np.zeros(0), "collisions": [], "iterations": 0,
                "residual": 0.0, "primal": 0.0, "dual": 0.0, "complementarity": 0.0, "converged": True}  # fmt: skip
    frames, imp = rec["frames"], rec["impulses"]
    forces = np.einsum("kij,kj->ki", frames, imp) / dt if len(imp) else np.zeros((0, 3))
    pairs = [("ground", names[k[1]]) if k[0] == "ground" else (names[k[1]], names[k[2]]) for k in rec["keys"]]
    return {"points": rec["points"], "normals": frames[:, :, 2] if len(frames) else np.zeros((0, 3)),
            "impulses": imp, "forces": forces, "depths": rec["depths"], "collisions": pairs,
            "iterations": rec["iterations"], "residual": rec["residual"], "primal": rec["primal"], "dual": rec["dual"],
            "complementarity": rec["complementarity"], "converged": rec["converged"],
            "loop_impulses": rec["loop_impulses"]}  # fmt: skip
