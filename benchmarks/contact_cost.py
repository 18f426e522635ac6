"""The cost of a contact step and of a shape pair's detection (docs/performance.md#contact-steps).

    python benchmarks/contact_cost.py

A 0.2 m, 1 kg cube resting on its four corners: ``ContactStepper.step`` (one compiled step a Python call)
warm-started, the median of 7 rounds of 500 steps; the same cube and solo12 (example-robot-data, standing on its four
mesh feet under ``dp.JointPD``) in ``dp.simulate``'s compiled run, a step's share of a 2,000-step run (every 100th
recorded), the median of 7 runs; two boxes face to face: ``pair_contacts`` (coal's GJK/EPA and contact patch), as the
step; each pair of the compiled narrow phase in a compiled loop over random placements.
"""

import statistics
import time

import numpy as np
from numba import njit

import denoc_pin as dp
from denoc_pin.contact import ContactStepper
from denoc_pin.contact.detection import pair_contacts
from denoc_pin.core.shapes import BOX, CAPSULE, SPHERE


def boxes(n: int) -> dp.Model:
    b = dp.ModelBuilder(f"{n} boxes")
    for i in range(n):
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.04 / 6, link=f"box{i}")
        b.add_collision(f"box{i}", dp.Box((0.2, 0.2, 0.2)))
    return b.build()


def per_call(f, rounds: int = 7, n: int = 500) -> float:
    f()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def run_step(model, q0, tau, ground, n: int = 2000, rounds: int = 7) -> float:
    """A step's share of an n-step compiled run (``dp.simulate`` with contacts), the median of ``rounds`` runs."""
    v0 = np.zeros(model.nv)
    dp.simulate(model, q0, v0, 10 * 1e-3, 1e-3, tau=tau, ground=ground, progress=False)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        dp.simulate(model, q0, v0, n * 1e-3, 1e-3, tau=tau, ground=ground, record_every=100, progress=False)
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def solo12():
    """solo12 standing on its four mesh feet (at rest after 1 s under joint PD), and that PD."""
    from denoc_pin.loaders.robots import example_robot_urdf

    m = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    q0 = dp.neutral(m)
    q0[7:] = [0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6]
    q0[2] = 0.3
    pd = dp.JointPD(m, 20.0, 0.5, q0)
    tr = dp.simulate(m, q0, np.zeros(m.nv), 1.0, 1e-3, tau=pd, ground=dp.Ground(friction=0.9), progress=False)
    return m, tr.q[-1].copy(), pd


def main() -> None:
    cube = boxes(1)
    q = dp.neutral(cube)
    q[2] = 0.1
    stepper = ContactStepper(cube, dp.Ground(friction=0.4), dp.ContactSettings(), 1e-3)
    zero = np.zeros(6)
    print(f"contact step, cube on four corners: {per_call(lambda: stepper.step(q, zero, zero)) * 1e6:.1f} µs")
    print(f"compiled run, cube on four corners: {run_step(cube, q, None, dp.Ground(friction=0.4)) * 1e6:.1f} µs a step")
    m, qs, pd = solo12()
    t = run_step(m, qs, pd, dp.Ground(friction=0.9))
    print(f"compiled run, solo12 standing on four mesh feet (JointPD): {t * 1e6:.1f} µs a step")
    pair = boxes(2)
    q2 = dp.neutral(pair)
    q2[2], q2[9] = 0.1, 0.2999
    det = ContactStepper(pair, None, dp.ContactSettings(), 1e-3, compiled_pairs=False).pairs  # coal's pair
    data = pair.create_data()
    dp.forward_kinematics(pair, data, q2)
    t = per_call(lambda: pair_contacts(det, pair, data.oR, data.op))
    print(f"coal pair, two boxes face to face: {t * 1e6:.0f} µs")
    for name, codes in PAIRS.items():
        print(f"compiled pair, {name}: {compiled_pair(*codes) * 1e9:.0f} ns")
    ours, coal = ball_on_slab()
    print(
        f"ball resting on a slab on the ground, a step: the pair in the compiled run {ours * 1e6:.1f} µs, "
        f"coal's pair between Python steps {coal * 1e6:.1f} µs"
    )


def ball_on_slab(n: int = 500, rounds: int = 5) -> tuple[float, float]:
    """A 1 kg ball of 0.1 m resting on a 10 kg slab on the ground (``tests/test_narrow_phase.py``'s scene), a step of
    n: the compiled run with the sphere–box pair in the step, and ``ContactStepper(compiled_pairs=False)``'s steps
    with coal's pair between them; medians of paired alternating rounds."""
    b = dp.ModelBuilder("ball on slab")
    b.add_body(0, joint="free-flyer", mass=10.0, inertia=np.eye(3) * 10 * 1.04 / 12, link="slab")
    b.add_collision("slab", dp.Box((1.0, 1.0, 0.2)), friction=0.5)
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.004, link="ball")
    b.add_collision("ball", dp.Sphere(0.1), friction=0.5)
    m = b.build()
    q, z, ground = dp.neutral(m), np.zeros(m.nv), dp.Ground(friction=0.5)
    q[2], q[9] = 0.1, 0.3

    def compiled():
        dp.simulate(m, q, z, n * 1e-3, 1e-3, ground=ground, record_every=100, progress=False)

    def coal():
        s = ContactStepper(m, ground, dp.ContactSettings(), 1e-3, compiled_pairs=False)
        x, v = q.copy(), z.copy()
        for _ in range(n):
            x, v, _ = s.step(x, v, z)

    times: dict = {compiled: [], coal: []}
    for r in range(rounds + 1):
        for f in (compiled, coal) if r % 2 == 0 else (coal, compiled):
            t0 = time.perf_counter()
            f()
            if r:  # round 0 loads the kernels
                times[f].append((time.perf_counter() - t0) / n)
    return statistics.median(times[compiled]), statistics.median(times[coal])


PAIRS = {"sphere–sphere": (SPHERE, SPHERE), "sphere–capsule": (SPHERE, CAPSULE), "capsule–capsule": (CAPSULE, CAPSULE),
         "sphere–box": (SPHERE, BOX)}  # fmt: skip


def compiled_pair(code1: int, code2: int, n: int = 100_000) -> float:
    """A pair's test in the compiled narrow phase (``narrow_phase.pair_distance``), seconds: the best of 5 compiled
    loops over n random placements (about half overlapping).  Imported here: ``before_after --contacts`` imports this
    module beside versions of the package that have no narrow phase."""
    from scipy.spatial.transform import Rotation

    from denoc_pin.contact.narrow_phase import pair_distance

    @njit
    def _pairs_loop(c1, P1, R1, p1, c2, P2, R2, p2):
        s = 0.0
        for i in range(len(p1)):
            d, n, x1, x2 = pair_distance(c1, P1[i], R1[i], p1[i], c2, P2[i], R2[i], p2[i])
            s += d + n[0] + x1[1] + x2[2]
        return s

    rng = np.random.default_rng(0)
    R1, R2 = (Rotation.random(n, random_state=rng).as_matrix() for _ in range(2))
    p1, p2, P1, P2 = rng.uniform(-0.3, 0.3, (n, 3)), rng.uniform(-0.3, 0.3, (n, 3)), *rng.uniform(0.05, 0.25, (2, n, 3))
    _pairs_loop(code1, P1, R1, p1, code2, P2, R2, p2)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        _pairs_loop(code1, P1, R1, p1, code2, P2, R2, p2)
        times.append((time.perf_counter() - t0) / n)
    return min(times)


if __name__ == "__main__":
    main()
