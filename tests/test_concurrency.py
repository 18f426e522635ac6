"""Concurrency: threads share a Model freely, each with its own Data.  (Processes sharing the kernel cache, one
compiling while the others wait: ``test_kernel_cache.py``.)"""

import threading

import numpy as np

import denoc_pin as dp


def test_threads_with_their_own_data_agree_bit_for_bit():
    m = dp.models.rope(40)  # one Model, shared; one Data per thread (as in Pinocchio)
    rng = np.random.default_rng(9)
    states = [(dp.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv))
              for _ in range(8)]  # fmt: skip
    serial = [(dp.inverse_dynamics(m, m.create_data(), q, v, x), dp.forward_dynamics(m, m.create_data(), q, v, x))
              for q, v, x in states]  # fmt: skip
    results: dict[int, list] = {}

    def work(i: int) -> None:
        d = m.create_data()
        out = []
        for _ in range(200):
            for q, v, x in states:
                out.append((dp.inverse_dynamics(m, d, q, v, x), dp.forward_dynamics(m, d, q, v, x)))
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in results.values():
        for k, (tau, ddq) in enumerate(out):
            ref_tau, ref_ddq = serial[k % len(states)]
            assert tau.tobytes() == ref_tau.tobytes() and ddq.tobytes() == ref_ddq.tobytes()
    assert len(results) == 4
