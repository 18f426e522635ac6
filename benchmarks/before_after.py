"""Every entry's time per call in two versions of the package, paired: this checkout against another (``--before``,
a folder holding a ``denoc_pin`` package, e.g. ``git archive REV denoc_pin | tar -x -C DIR``).

    python benchmarks/before_after.py --before DIR [--rounds 5] [--contacts] [--json FILE]

Each round runs the two versions in fresh processes one after the other (alternating which goes first), each timing
every call below as the fastest of 7 repeats of a loop of calls (the least disturbed by the machine's other work);
the table gives each call's median and quartiles over the rounds and the ratio of the medians after / before.
``--contacts``: the contact steps instead (``benchmarks/contact_cost.py``'s scenes), a step a Python call, the
compiled run, the stepwise run (a τ callback) and a batch.  Both versions load their kernels
from the kernel cache: compile each first (``denoc-pin compile``, or one round).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

PER_CALL = r"""
def per_call(fn, seconds=SECONDS):
    fn()
    n, t = 1, 0.0
    while t < seconds:
        n *= 2
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return min(times)

"""

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import denoc_pin as dp
from denoc_pin.core.shapes import Collision, Ground, Sphere
assert dp.__file__.startswith(sys.argv[1]), dp.__file__
from denoc_pin.loaders.robots import example_robot_urdf

out = {}
rng = np.random.default_rng(0)
for name, root in (("panda", None), ("solo12", "free-flyer")):
    m = dp.load_urdf(example_robot_urdf(name), root_joint=root)
    d = m.create_data()
    q, v, a = dp.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    tau = dp.inverse_dynamics(m, d, q, v, a)
    out[f"{name} ID"] = per_call(lambda: dp.inverse_dynamics(m, d, q, v, a))
    out[f"{name} FD"] = per_call(lambda: dp.forward_dynamics(m, d, q, v, tau))
    out[f"{name} GIM"] = per_call(lambda: dp.gim(m, d, q))
    out[f"{name} ID derivatives"] = per_call(lambda: dp.inverse_dynamics_derivatives(m, d, q, v, a))
    out[f"{name} FD derivatives"] = per_call(lambda: dp.forward_dynamics_derivatives(m, d, q, v, tau))
    f = len(m.frames) - 1
    out[f"{name} frame placement"] = per_call(lambda: dp.frame_placement(m, d, q, f))
    out[f"{name} frame Jacobian"] = per_call(lambda: dp.frame_jacobian(m, d, q, f))
    out[f"{name} energy"] = per_call(lambda: dp.energy(m, d, q, v))
    out[f"{name} integrate"] = per_call(lambda: dp.integrate(m, q, v, 0.01))
    q1 = dp.integrate(m, q, v, 0.3)
    out[f"{name} difference"] = per_call(lambda: dp.difference(m, q, q1))
    out[f"{name} neutral"] = per_call(lambda: dp.neutral(m))
    out[f"{name} normalize"] = per_call(lambda: dp.normalize(m, q1))
    out[f"{name} centre of mass"] = per_call(lambda: dp.center_of_mass(m, d, q))
    out[f"{name} centroidal map"] = per_call(lambda: dp.centroidal_map(m, d, q))
    out[f"{name} frame velocity"] = per_call(lambda: dp.frame_velocity(m, d, q, v, f))
    if name == "panda":
        B = 1000
        Q = np.array([dp.random_configuration(m, rng) for _ in range(B)])
        V, A = rng.standard_normal((B, m.nv)), rng.standard_normal((B, m.nv))
        T = dp.inverse_dynamics(m, d, Q, V, A)
        for label, fn in (("ID", lambda: dp.inverse_dynamics(m, d, Q, V, A)),
                          ("FD", lambda: dp.forward_dynamics(m, d, Q, V, T)),
                          ("FD derivatives", lambda: dp.forward_dynamics_derivatives(m, d, Q, V, T)),
                          ("frame Jacobian", lambda: dp.frame_jacobian(m, d, Q, f))):
            out[f"panda batch of {B}, {label}, per state"] = per_call(fn, 0.2) / B
        out["panda RK4, per step"] = per_call(
            lambda: dp.simulate(m, q, v, 0.1, dt=1e-3, progress=False), 0.2) / 100
model = dp.models.spatial_four_bar()
q = dp.assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])
d = model.create_data()
z, one = np.zeros(model.nv), np.ones(model.nv)
out["four-bar CFD"] = per_call(lambda: dp.constrained_forward_dynamics(model, d, q, z, one))
out["four-bar CFD derivatives"] = per_call(lambda: dp.constrained_forward_dynamics_derivatives(model, d, q, z, one))
Q, Z, O = np.tile(q, (1000, 1)), np.zeros((1000, model.nv)), np.ones((1000, model.nv))
out["four-bar batch of 1000, CFD, per state"] = per_call(
    lambda: dp.constrained_forward_dynamics(model, d, Q, Z, O), 0.2) / 1000
c = dp.models.chain(6)
ball = Collision("ball", c.link_names[-1], c.njoints - 1, Sphere(0.05), np.eye(3), np.zeros(3))
c = dp.Model(**(c.fields() | {"collisions": (ball,)}))
out["chain(6) on the ground, contact run, per step"] = per_call(
    lambda: dp.simulate(c, np.zeros(6), np.zeros(6), 0.2, dt=1e-3, ground=Ground(height=-0.5), progress=False),
    0.2) / 200
print(json.dumps(out))
"""

CONTACTS = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
import denoc_pin as dp
assert dp.__file__.startswith(sys.argv[1]), dp.__file__
from denoc_pin.contact import ContactStepper
from contact_cost import boxes, solo12
out = {}
cube = boxes(1)
q = dp.neutral(cube)
q[2] = 0.1 - 1e-4
zero, ground = np.zeros(6), dp.Ground(friction=0.4)
stepper = ContactStepper(cube, ground, dp.ContactSettings(), 1e-3)
out["cube: ContactStepper.step, a step"] = per_call(lambda: stepper.step(q, zero, zero))
out["cube: the compiled run, a step"] = per_call(
    lambda: dp.simulate(cube, q, zero, 0.2, 1e-3, ground=ground, record_every=100, progress=False)) / 200
push = lambda t, q, v: np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
out["cube: the stepwise run (tau callback), a step"] = per_call(
    lambda: dp.simulate(cube, q, zero, 0.05, 1e-3, tau=push, ground=ground, record_every=10, progress=False)) / 50
Q0 = np.tile(q, (16, 1))
out["cube: simulate_batch of 16, a run's step"] = per_call(
    lambda: dp.simulate_batch(cube, Q0, t_final=0.05, dt=1e-3, ground=ground, record_every=10)) / (16 * 50)
m, q0, pd = solo12()
v0 = np.zeros(m.nv)
out["solo12 standing: the compiled run, a step"] = per_call(
    lambda: dp.simulate(m, q0, v0, 0.2, 1e-3, tau=pd, ground=dp.Ground(friction=0.9), record_every=100,
                        progress=False)) / 200
print(json.dumps(out))
"""


def run(root: Path, contacts: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    script, args = (CONTACTS, [str(root), str(HERE / "benchmarks")]) if contacts else (CHILD, [str(root)])
    head, _, body = script.partition("\nout = {}\n")  # the imports, then the shared timer, then the calls
    script = head + "\nSECONDS = " + ("0.1" if contacts else "0.05") + "\n" + PER_CALL + "\nout = {}\n" + body
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                          check=False)  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"the run in {root} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--contacts", action="store_true", help="the contact steps (benchmarks/contact_cost.py)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    before, after = args.before.resolve(), HERE
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for i in range(args.rounds):
        order = (("before", before), ("after", after)) if i % 2 == 0 else (("after", after), ("before", before))
        for label, root in order:
            runs[label].append(run(root, args.contacts))
            print(f"round {i + 1}: {label} done", file=sys.stderr)

    def quartiles(label: str, key: str) -> tuple[float, float, float]:
        q1, q2, q3 = statistics.quantiles([r[key] for r in runs[label]], n=4, method="inclusive")
        return q1, q2, q3

    def cell(q) -> str:
        return f"{q[1] * 1e6:.2f} µs ({q[0] * 1e6:.2f}–{q[2] * 1e6:.2f})"

    print("| call | before: median (quartiles) | after: median (quartiles) | after / before |\n|---|---|---|---|")
    for key in runs["after"][0]:
        b, a = quartiles("before", key), quartiles("after", key)
        print(f"| {key} | {cell(b)} | {cell(a)} | {a[1] / b[1]:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
