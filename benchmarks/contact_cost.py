"""The cost of a contact step and of a shape pair's detection (docs/performance.md#contact-steps).

    python benchmarks/contact_cost.py

A 0.2 m, 1 kg cube resting on its four corners: ``ContactStepper.step`` warm-started, the median of 7 rounds of 500
steps; two boxes face to face: ``pair_contacts`` (coal's GJK/EPA and contact patch), likewise.
"""

import statistics
import time

import numpy as np

import denoc_pin as dp
from denoc_pin.contact import ContactStepper
from denoc_pin.contact.detection import pair_contacts


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


def main() -> None:
    cube = boxes(1)
    q = dp.neutral(cube)
    q[2] = 0.1
    stepper = ContactStepper(cube, dp.Ground(friction=0.4), dp.ContactSettings(), 1e-3)
    zero = np.zeros(6)
    print(f"contact step, cube on four corners: {per_call(lambda: stepper.step(q, zero, zero)) * 1e6:.0f} µs")
    pair = boxes(2)
    q2 = dp.neutral(pair)
    q2[2], q2[9] = 0.1, 0.2999
    det = ContactStepper(pair, None, dp.ContactSettings(), 1e-3).pairs
    data = pair.create_data()
    dp.forward_kinematics(pair, data, q2)
    t = per_call(lambda: pair_contacts(det, pair, data.oR, data.op))
    print(f"coal pair, two boxes face to face: {t * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
