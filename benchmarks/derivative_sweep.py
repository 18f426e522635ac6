"""Random contact steps with their Jacobians: never a NaN.

    python benchmarks/derivative_sweep.py [--steps 100000] [--seed 0]

Each step draws a scene — a ball, a cube, solo12 or a floating tree of every joint kind the q-derivatives take —
and a random state about its resting pose (positions, orientation, velocities), random torques and a random ground
(friction 0–1.2, a normal up to 30° off vertical), and asks ``ContactStepper.derivatives`` for the step's Jacobians
with respect to q, v and τ and the friction coefficients (with respect to v and τ alone where two of the tree's legs
touch: ∂/∂q of a pair's contacts is not given yet).  Prints the count of steps, contacts, each mode, the contacts at
a switch, the solves that did not converge, the steps differentiated by v and τ alone, the steps a model refused (a
state no step leaves, with why) and the Jacobians with an entry that is not finite (there must be none), then the
counts as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy.spatial.transform import Rotation

import denoc_pin as dp
from denoc_pin.contact.derivatives import MODES
from denoc_pin.loaders.robots import example_robot_urdf


def scenes() -> list[tuple[str, dp.Model, np.ndarray, float]]:
    """(name, model, resting q, torque scale)."""
    out = []
    for name, shape, z in (("ball", dp.Sphere(0.1), 0.1), ("cube", dp.Box((0.2, 0.2, 0.2)), 0.1)):
        b = dp.ModelBuilder(name)
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.005, link=name)
        b.add_collision(name, shape)
        m = b.build()
        q = dp.neutral(m)
        q[2] = z
        out.append((name, m, q, 5.0))
    solo = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    q = dp.neutral(solo)
    q[7:] = [0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6]
    q[2] = 0.235
    out.append(("solo12", solo, q, 1.0))
    tree = dp.models.every_joint_legs()
    q = dp.neutral(tree)
    q[2] = 0.24
    out.append(("tree", tree, q, 0.5))
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    cases = scenes()
    counts = {"steps": 0, "contacts": 0, **{m: 0 for m in MODES}, "one_sided": 0, "unconverged": 0, "v_tau_only": 0,
              "refused": 0, "not_finite": 0, "why": set()}  # fmt: skip
    t0 = time.perf_counter()
    for i in range(args.steps):
        name, model, rest, scale = cases[i % len(cases)]
        dq = np.r_[rng.normal(scale=[0.05, 0.05, 0.01]), rng.normal(scale=0.3, size=3),
                   rng.normal(scale=0.2, size=model.nv - 6)]  # fmt: skip
        q = dp.integrate(model, rest, dq)
        if name == "cube":
            q[3:7] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_quat()
        v = rng.normal(scale=0.5, size=model.nv)
        tau = rng.normal(scale=scale, size=model.nv)
        n = np.r_[rng.uniform(-0.5, 0.5, 2), 1.0]
        ground = dp.Ground(friction=float(rng.uniform(0.0, 1.2)), normal=n / np.linalg.norm(n))
        stepper = dp.ContactStepper(model, ground, dp.ContactSettings(), 1e-3)
        counts["steps"] += 1
        try:
            r = stepper.derivatives(q, v, tau)
        except dp.ModelError:  # ∂/∂q not given for this step (two of the tree's legs touch): ∂/∂v and ∂/∂τ
            counts["v_tau_only"] += 1
            r = stepper.derivatives(q, v, tau, wrt=("v", "tau"))
        except ValueError as e:  # a state no step leaves (the model says why): not a Jacobian
            counts["refused"] += 1
            counts["why"].add(f"{name}: {str(e)[:100]}")
            continue
        counts["not_finite"] += int(not (np.isfinite(r.A).all() and np.isfinite(r.B).all()
                                         and np.isfinite(r.friction).all()))  # fmt: skip
        counts["contacts"] += len(r.modes)
        for k in r.modes:
            counts[MODES[k]] += 1
        counts["one_sided"] += int(r.one_sided.sum())
        counts["unconverged"] += int(not r.converged)
    counts["seconds"] = time.perf_counter() - t0
    counts["why"] = sorted(counts["why"])
    print(", ".join(f"{k} {v:.0f}" if k == "seconds" else f"{k} {v}" for k, v in counts.items() if k != "why"))
    for why in counts["why"]:
        print(f"  refused: {why}")
    return counts


if __name__ == "__main__":
    print(json.dumps(main()))
