"""The contact step on its two routes, in one process (docs/performance.md#contact-steps):

    python benchmarks/contact_routes.py

the scene's step (the factor M = Lᵀ L where ``pipeline.factor_pays``) against Table 3's sweeps on the UDUᵀ factors
(the same scene whose work area has no room for the factor), on solo12, go2 and Cassie
standing and on chains of 12, 24 and 48 links with a ball at the tip, touching the ground or not.  Each: the compiled
step (``contact_step``) in a compiled loop, the best of 5 alternating rounds of 3,000.
"""

import runpy
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import denoc_pin as dp
from denoc_pin.contact import ContactStepper
from denoc_pin.contact import pipeline as P
from denoc_pin.core.layout import factor_cost
from denoc_pin.core.records import contact_work, contact_work_arrays
from denoc_pin.core.views import INFO_CONTACTS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare import cassie_stance  # noqa: E402


@njit
def steps(mi, mf, ws, cb, lw, scene, pairs, now, q, v, tau, dt, q1, v1, n):
    for _ in range(n):
        P.contact_step(mi, mf, ws, cb, lw, scene, pairs, now, q, v, tau, dt, q1, v1)


def without_factor(stepper):
    """The stepper's scene with a work area that has no room for M's factor (nd = 0): Table 3's route."""
    head = stepper.scene.work[:8].astype(int)
    work = contact_work(*head[:7], 0)
    contact_work_arrays(work).sweep_order[:] = contact_work_arrays(stepper.scene.work).sweep_order
    return stepper.scene._replace(work=work)


def both_routes(name, model, ground, q, v, tau, rounds=5, n=3000):
    stepper = ContactStepper(model, ground, dp.ContactSettings(), 1e-3)
    stepper.step(q, v, tau)
    pairs = stepper._pairs()
    q1, v1 = np.empty(model.nq), np.empty(model.nv)
    scenes = {"factored": stepper.scene, "sweeps": without_factor(stepper)}
    best = {}
    for _ in range(rounds):
        for label, scene in scenes.items():
            args = (model.mi, model.mf, stepper.data.ws, stepper.cb, stepper.lw, scene, pairs, stepper.now, q, v, tau,
                    stepper.dt, q1, v1)  # fmt: skip
            steps(*args, 10)
            t0 = time.perf_counter()
            steps(*args, n)
            best[label] = min(best.get(label, np.inf), (time.perf_counter() - t0) / n)
    rows = 3 * int(stepper.scene.contacts.info[INFO_CONTACTS]) + model.n_constraints
    factored = contact_work_arrays(stepper.scene.work).route[0] == 1.0
    a, b = best["factored"], best["sweeps"]
    print(f"| {name} | {model.nv} | {rows} | {factor_cost(model.dof_parent):,} | {'yes' if factored else 'no'} | "
          f"{a * 1e6:.1f} µs | {b * 1e6:.1f} µs | {a / b:.2f} |", flush=True)  # fmt: skip


def tip_ball_chain(n):
    chain = dp.models.chain(n)
    ball = dp.Collision("ball", chain.link_names[-1], chain.njoints - 1, dp.Sphere(0.05), np.eye(3), np.zeros(3))
    return dp.Model(**(chain.fields() | {"collisions": (ball,)}))


def main():
    print("| scene | nv | rows | Σ d² | factor | the scene's step | on Table 3's sweeps | ratio |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    legged = runpy.run_path(str(HERE.parent / "examples" / "legged_standing.py"), run_name="legged_standing")
    for name in ("solo12", "go2"):
        model, q0, pd, ground = legged["scene"](name)
        run = dp.simulate(model, q0, np.zeros(model.nv), 1.0, 1e-3, tau=pd, ground=ground, progress=False)
        q, v = run.q[-1], run.v[-1]
        both_routes(f"{name} standing", model, ground, q, v, pd(0.0, q, v))
    model, q0, pd, ground = cassie_stance()
    run = dp.simulate(model, q0, np.zeros(model.nv), 0.3, 1e-3, tau=pd, ground=ground, progress=False)
    q, v = run.q[-1], run.v[-1]
    both_routes("Cassie standing (its loops' 12 rows with the contacts')", model, ground, q, v, pd(0.0, q, v))
    for n in (12, 24, 48):  # the chain lies along x at q = 0: the ground 0.045 m down touches its tip's ball
        chain = tip_ball_chain(n)
        zero = np.zeros(n)
        both_routes(f"a chain of {n}, one contact at its tip", chain, dp.Ground(height=-0.045), zero, zero, zero)
    chain = tip_ball_chain(24)
    zero = np.zeros(24)
    both_routes("a chain of 24, no contact", chain, dp.Ground(height=-0.5), zero, zero, zero)


if __name__ == "__main__":
    main()
