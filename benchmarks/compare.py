"""denoc_pin side by side with Pinocchio and MuJoCo, in one run: per-call medians, batches, huge chains, memory,
accuracy.

    python benchmarks/compare.py            # the table (about 3 minutes on 2 cores)
    python benchmarks/compare.py --json     # the same numbers for machines
    python benchmarks/compare.py --quick    # smaller repeats, chains up to 10,000

Writes ``benchmarks/scaling.png`` (time per call against DOF, both libraries) when matplotlib is
installed.  Pinocchio is measured only where it can build its data: its ``createData`` grows as about nv³ on a chain
(docs/performance.md prints it: gigabytes at 500 DOF), so chains stop at 200 DOF for it.
Peak memory is measured in a fresh subprocess per case (VmHWM, the peak resident set of the whole process).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf, robots_dir
from denoc_pin.tools.validate import pinocchio_loop_constraints

HERE = Path(__file__).resolve().parent
PIN_MAX_CHAIN = 200


def seconds_per_call(fn, calls: int) -> float:
    """Seconds per call over one batch of ``calls`` calls."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def batch_size(fn, seconds: float, max_calls: int = 20000) -> int:
    """How many calls of fn, timed once, take about ``seconds`` (at least 1, at most max_calls)."""
    return max(1, min(max_calls, int(seconds / max(seconds_per_call(fn, 1), 1e-7))))


def median_time(fn, min_time: float = 0.2, max_calls: int = 20000) -> float:
    """Median seconds per call over batches of calls, about ``min_time`` of measurement."""
    fn()
    per_batch = batch_size(fn, 0.02, max_calls)
    samples = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(samples) < 5:
        samples.append(seconds_per_call(fn, per_batch))
    return float(np.median(samples))


def paired_times(ours, theirs, min_time: float = 0.2, max_calls: int = 20000) -> tuple[float, float, float]:
    """(ours, theirs, ratio): median seconds per call of each, measured in alternating batches,
    and the median of the per-round ratios.  The load of a shared machine drifts within a second;
    alternating rounds meet the same load, so the ratio is steadier than one of two separate medians."""
    sizes = []
    for fn in (ours, theirs):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.05:  # warm-up: caches, branch predictors, the clock's frequency
            fn()
        sizes.append(batch_size(fn, 0.01, max_calls))
    a, b = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(a) < 7:
        for fn, n, out in ((ours, sizes[0], a), (theirs, sizes[1], b)):
            out.append(seconds_per_call(fn, n))
    return float(np.median(a)), float(np.median(b)), float(np.median(np.array(a) / np.array(b)))


def linear_scaling(sizes: list[int], rounds: int = 9) -> dict:
    """Time per call per DOF of ID and FD on spatial chains of the given sizes, measured in rounds
    that visit every size in turn (the medians over rounds): a drift of the machine's load then
    touches all sizes alike instead of whichever was being measured.  spread = max/min − 1."""
    cases = []
    for n in sizes:
        model = dp.models.chain(n)
        data = model.create_data()
        q, v, a = state(model)
        tau = dp.inverse_dynamics(model, data, q, v, a)
        for label, fn in (
            ("ID", lambda m=model, d=data, q=q, v=v, a=a: dp.inverse_dynamics(m, d, q, v, a)),
            ("FD", lambda m=model, d=data, q=q, v=v, t=tau: dp.forward_dynamics(m, d, q, v, t)),
        ):
            fn()
            cases.append((n, label, fn, batch_size(fn, 0.01, max_calls=10**9), []))
    for _ in range(rounds):
        for n, _label, fn, calls, times in cases:
            times.append(seconds_per_call(fn, calls) / n)
    out: dict = {"n": sizes}
    for label in ("ID", "FD"):
        per_dof = [float(np.median(times)) for n, lab, fn, calls, times in cases if lab == label]
        out[label + "_per_dof"] = per_dof
        out[label + "_spread"] = max(per_dof) / min(per_dof) - 1.0
    return out


def robot_models(name: str, free_flyer: bool = False):
    import pinocchio as pin

    path = str(example_robot_urdf(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dp.load_urdf(path, root_joint="free-flyer" if free_flyer else None)
    pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if free_flyer else pin.buildModelFromUrdf(path)
    return model, pin_model


def state(model, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = dp.random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    return q, v, a


def per_call(name: str, model, pin_model, quick: bool) -> dict:
    import pinocchio as pin

    data = model.create_data()
    q, v, a = state(model)
    tau = dp.inverse_dynamics(model, data, q, v, a)
    t = 0.05 if quick else 0.6
    row = {"case": name, "nv": model.nv}
    ours = {
        "ID": lambda: dp.inverse_dynamics(model, data, q, v, a),
        "FD": lambda: dp.forward_dynamics(model, data, q, v, tau),
    }
    if model.nv <= dp.DENSE_LIMIT:
        ours["GIM"] = lambda: dp.gim(model, data, q)
    if pin_model is None:
        for k, fn in ours.items():
            row[k] = median_time(fn, t)
        return row
    pdata = pin_model.createData()
    theirs = {
        "rnea": lambda: pin.rnea(pin_model, pdata, q, v, a),
        "aba": lambda: pin.aba(pin_model, pdata, q, v, tau),
        "crba": lambda: pin.crba(pin_model, pdata, q),
    }
    for k, p in (("ID", "rnea"), ("FD", "aba"), ("GIM", "crba")):
        row[k], row[p], row[k + "_ratio"] = paired_times(ours[k], theirs[p], t)
    return row


def batch(model, pin_model, B: int) -> dict:
    """B states in one call each, on all cores: against Pinocchio's own parallel batch (``rneaInParallel``,
    ``abaInParallel`` over a ``ModelPool``, as many threads as numba's, column-major (n, B) arrays preallocated), and
    against a Python loop over ``pin.rnea``/``pin.aba``, which is how most Python users call it."""
    import numba
    import pinocchio as pin

    data, pdata = model.create_data(), pin_model.createData()
    rng = np.random.default_rng(1)
    Q = np.stack([dp.random_configuration(model, rng) for _ in range(B)])
    V, A = rng.uniform(-1, 1, (2, B, model.nv))
    dp.inverse_dynamics(model, data, Q[:2], V[:2], A[:2])
    dp.forward_dynamics(model, data, Q[:2], V[:2], A[:2])
    threads = numba.get_num_threads()
    pool = pin.ModelPool(pin_model, threads)
    Qt, Vt, At = (np.asfortranarray(X.T) for X in (Q, V, A))
    res = np.asfortranarray(np.empty((model.nv, B)))
    out = {"B": B, "threads": threads}
    for label, ours, parallel, theirs in [
        ("ID", lambda: dp.inverse_dynamics(model, data, Q, V, A),
         lambda: pin.rneaInParallel(threads, pool, Qt, Vt, At, res),
         lambda q, v, a: pin.rnea(pin_model, pdata, q, v, a)),
        ("FD", lambda: dp.forward_dynamics(model, data, Q, V, A),
         lambda: pin.abaInParallel(threads, pool, Qt, Vt, At, res),
         lambda q, v, a: pin.aba(pin_model, pdata, q, v, a)),
    ]:  # fmt: skip

        def loop(theirs=theirs):
            for i in range(B):
                theirs(Q[i], V[i], A[i])

        out[label] = alternating_runs(ours, loop, B)
        out[label + "_parallel"] = alternating_runs(ours, parallel, B)
    return out


def alternating_runs(ours, loop, B: int) -> dict:
    """States per second of a batch call and of the peer's (``loop``: a Python loop over Pinocchio, or its own
    parallel call), and the speedup: the median of 5 runs each, alternating (one run of a few milliseconds is at the
    mercy of the machine)."""
    t_ours, t_loop = [], []
    for _ in range(5):
        for fn, times in ((ours, t_ours), (loop, t_loop)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    t_ours, t_loop = float(np.median(t_ours)), float(np.median(t_loop))
    return {"denoc_pin_per_s": B / t_ours, "pinocchio_loop_per_s": B / t_loop, "speedup": t_loop / t_ours}


def derivative_row(name: str, model, pm, t: float) -> dict:
    """Our inverse and forward derivatives against computeRNEADerivatives and computeABADerivatives, paired."""
    import pinocchio as pin

    data, pd = model.create_data(), pm.createData()
    q, v, a = state(model)
    tau = dp.inverse_dynamics(model, data, q, v, a)
    row = {"case": name, "nv": model.nv}
    row["ID_d"], row["rnea_d"], row["ID_d_ratio"] = paired_times(
        lambda: dp.inverse_dynamics_derivatives(model, data, q, v, a),
        lambda: pin.computeRNEADerivatives(pm, pd, q, v, a), t)  # fmt: skip
    row["FD_d"], row["aba_d"], row["FD_d_ratio"] = paired_times(
        lambda: dp.forward_dynamics_derivatives(model, data, q, v, tau),
        lambda: pin.computeABADerivatives(pm, pd, q, v, tau), t)  # fmt: skip
    return row


def derivative_scaling(n: int, with_pinocchio: bool) -> dict:
    """Median time per call of both derivatives on an n-link spatial chain (and Pinocchio's)."""
    import pinocchio as pin

    model = dp.models.chain(n)
    data = model.create_data()
    x = state(model)
    entry = {
        "n": n,
        "ID_d": median_time(lambda: dp.inverse_dynamics_derivatives(model, data, *x), 0.05),
        "FD_d": median_time(lambda: dp.forward_dynamics_derivatives(model, data, *x), 0.05),
    }
    if with_pinocchio:
        pm = dp.to_pinocchio(model)
        pd = pm.createData()
        entry["rnea_d"] = median_time(lambda: pin.computeRNEADerivatives(pm, pd, *x), 0.05)
        entry["aba_d"] = median_time(lambda: pin.computeABADerivatives(pm, pd, *x), 0.05)
    return entry


def constrained_derivative_row(name: str, model, q, t: float) -> dict:
    """Our closed-loop derivatives (with q̈ and λ) against constraintDynamics + computeConstraintDynamicsDerivatives
    on the same spherical cuts (CONTACT_3D, in Pinocchio's own containers), paired; and against our own
    constrained_forward_dynamics."""
    import pinocchio as pin

    from denoc_pin.tools.validate import pinocchio_loop_constraints

    pm = dp.to_pinocchio(model)
    pd, cms, cds = pinocchio_loop_constraints(model, pm)
    prox = pin.ProximalSettings(1e-12, 1e-12, 20)
    data = model.create_data()
    rng = np.random.default_rng(0)
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    v -= np.linalg.pinv(J) @ (J @ v)
    tau = rng.uniform(-1, 1, model.nv)

    def theirs():
        pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox)
        pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, prox)

    row = {"case": name, "nv": model.nv, "m": model.n_constraints}
    row["CFD_d"], row["pin_d"], row["ratio"] = paired_times(
        lambda: dp.constrained_forward_dynamics_derivatives(model, data, q, v, tau), theirs, t)  # fmt: skip
    row["CFD"] = median_time(lambda: dp.constrained_forward_dynamics(model, data, q, v, tau), t)
    return row


STEP_DT = 1e-3


def step_row(name: str, model, t: float) -> dict:
    """RK4 step derivatives against the same Jacobians by forward differences of the step (3 nv + 1 steps)."""
    data = model.create_data()
    q, v, tau = state(model)
    nv, h = model.nv, 1e-7

    def differences():
        q1, v1 = dp.step(model, data, q, v, tau, STEP_DT)
        for i in range(3 * nv):
            e = np.zeros(3 * nv)
            e[i] = h
            qa, va = dp.step(model, data, dp.integrate(model, q, e[:nv]), v + e[nv : 2 * nv], tau + e[2 * nv :],
                             STEP_DT)  # fmt: skip
            dp.difference(model, q1, qa)

    a, b, r = paired_times(lambda: dp.step_derivatives(model, data, q, v, tau, STEP_DT), differences, t, max_calls=200)
    return {"case": name, "nv": nv, "step_derivatives": a, "differences": b, "ratio": r}


def contact_step_scenes() -> list:
    """(case, model, ground, pd, q, v, twin keywords): solo12 standing on its four feet (examples/legged_standing.py,
    settled 0.5 s under joint PD at 1 ms) and Cassie standing with its four loops solved with the contacts
    (examples/cassie_standing.py, settled 0.3 s; its twin's loops are ``connect`` equalities at the file's solref)."""
    import runpy

    legged = runpy.run_path(str(HERE.parent / "examples" / "legged_standing.py"), run_name="legged_standing")
    model, q0, pd, ground = legged["scene"]("solo12")
    run = dp.simulate(model, q0, np.zeros(model.nv), 0.5, 1e-3, tau=pd, ground=ground, progress=False)
    scenes = [("solo12 standing", model, ground, pd, run.q[-1], run.v[-1], {})]
    model, q0, pd, ground = cassie_stance()
    run = dp.simulate(model, q0, np.zeros(model.nv), 0.3, 1e-3, tau=pd, ground=ground, progress=False)
    scenes.append(("Cassie standing (4 loops)", model, ground, pd, run.q[-1], run.v[-1],
                   {"equality_timeconst": 0.005}))  # fmt: skip
    return scenes


def contact_step_row(quick: bool) -> list:
    """The contact step with its Jacobians (``ContactStepper.derivatives``) on each of ``contact_step_scenes``,
    against the same Jacobians by forward differences of our own step (3 nv + 1 steps) and against MuJoCo's
    ``mjd_transitionFD`` (forward differences) on the scene's twin, each pair in alternating rounds; the step alone
    beside them; and a batch of 1,000 states near the stance (``derivatives_batch``, all cores) per state."""
    import mujoco

    from denoc_pin.tools.mujoco_twin import MujocoTwin

    rows = []
    for case, model, ground, pd, q, v, twin_kw in contact_step_scenes():
        tau = pd(0.0, q, v)
        stepper = dp.ContactStepper(model, ground, dp.ContactSettings(), 1e-3)
        nv, h = model.nv, 1e-7

        def differences(stepper=stepper, q=q, v=v, tau=tau, model=model, nv=nv, h=h):
            q1, v1, _ = stepper.step(q, v, tau)
            for i in range(3 * nv):
                e = np.zeros(3 * nv)
                e[i] = h
                qa, va, _ = stepper.step(dp.integrate(model, q, e[:nv]), v + e[nv : 2 * nv], tau + e[2 * nv :])
                dp.difference(model, q1, qa)

        twin = MujocoTwin(model, ground, pd, dt=1e-3, **twin_kw)
        twin.set_state(q, v)
        m, d = twin.model, twin.data
        A, B = np.zeros((2 * m.nv + m.na, 2 * m.nv + m.na)), np.zeros((2 * m.nv + m.na, m.nu))

        def mujoco_fd(m=m, d=d, A=A, B=B):
            mujoco.mjd_transitionFD(m, d, 1e-6, False, A, B, None, None)

        t = 0.2 if quick else 1.0

        def ours(stepper=stepper, q=q, v=v, tau=tau):
            stepper.derivatives(q, v, tau)

        mine, fd, ratio_fd = paired_times(ours, differences, t, max_calls=2000)
        mine2, theirs, ratio_mj = paired_times(ours, mujoco_fd, t, max_calls=2000)
        modes = stepper.derivatives(q, v, tau).modes
        alone = median_time(lambda stepper=stepper, q=q, v=v, tau=tau: stepper.step(q, v, tau))
        rng = np.random.default_rng(2)
        n = 100 if quick else 1000
        Q = np.stack([dp.integrate(model, q, np.r_[0.0, 0.0, 0.0, rng.uniform(-0.01, 0.01, 3),
                                                   rng.uniform(-0.02, 0.02, nv - 6)]) for _ in range(n)])  # fmt: skip
        V, Taus = np.tile(v, (n, 1)), np.stack([pd(0.0, Q[b], v) for b in range(n)])
        stepper.derivatives_batch(Q[:4], V[:4], Taus[:4])  # the threads' steppers' first calls off the clock
        t0 = time.perf_counter()
        stepper.derivatives_batch(Q, V, Taus)
        batch = (time.perf_counter() - t0) / n
        rows.append({"case": case, "nv": nv, "contacts": len(modes), "step": alone, "ours": mine, "differences": fd,
                     "ratio_fd": ratio_fd, "ours_vs_mujoco": mine2, "mujoco_fd": theirs, "ratio_mujoco": ratio_mj,
                     "batch": batch, "batch_n": n})  # fmt: skip
    return rows


def derivatives(quick: bool = False) -> dict:
    """The dynamics' derivatives against Pinocchio's (computeRNEADerivatives, computeABADerivatives) per call and on
    chains of growing size, a batch against a Python loop over Pinocchio, and RK4 step derivatives against forward
    differences of the same step."""
    import pinocchio as pin

    t = 0.05 if quick else 0.4
    chain = dp.models.chain(100)
    rows = [derivative_row("panda", *robot_models("panda"), t),
            derivative_row("talos_reduced", *robot_models("talos_reduced"), t),
            derivative_row("solo12 (free-flyer)", *robot_models("solo12", free_flyer=True), t),
            derivative_row("chain 100", chain, dp.to_pinocchio(chain), t)]  # fmt: skip
    model, pm = robot_models("panda")
    data, pd = model.create_data(), pm.createData()
    B = 1000 if quick else 10000
    rng = np.random.default_rng(1)
    Q = dp.random_configuration(model, rng, n=B)
    V, A = rng.uniform(-1, 1, (2, B, model.nv))
    dp.inverse_dynamics_derivatives(model, data, Q[:2], V[:2], A[:2])
    dp.forward_dynamics_derivatives(model, data, Q[:2], V[:2], A[:2])
    out = {"per_call": rows, "batch": {"B": B}}
    for label, ours, theirs in [
        ("ID_d", lambda: dp.inverse_dynamics_derivatives(model, data, Q, V, A), pin.computeRNEADerivatives),
        ("FD_d", lambda: dp.forward_dynamics_derivatives(model, data, Q, V, A), pin.computeABADerivatives),
    ]:

        def loop(theirs=theirs):
            for i in range(B):
                theirs(pm, pd, Q[i], V[i], A[i])

        out["batch"][label] = alternating_runs(ours, loop, B)
    # Pinocchio as far as its Data fits: it takes 1.7 GB at 300 links, and grows as n³
    sizes = [10, 30, 100, 200, 300, 1000] + ([] if quick else [2000])
    out["scaling"] = [derivative_scaling(n, n <= PIN_MAX_CHAIN) for n in sizes]
    four_bar = dp.models.spatial_four_bar()
    cassie = load_cassie()
    out["constrained"] = [
        constrained_derivative_row(
            "spatial_four_bar", four_bar, dp.assemble(four_bar, np.r_[0.4, 0, 0.3, 0, 1, 0.8]), t
        ),
        constrained_derivative_row("cassie (free-flyer)", cassie, dp.assemble(cassie, dp.neutral(cassie)), t),
    ]
    out["step"] = [step_row("panda", robot_models("panda")[0], t), step_row("rope", dp.models.rope(), t)]
    out["contact_step"] = contact_step_row(quick)
    return out


def report_derivatives(r: dict) -> str:
    lines = ["Derivatives per call from Python (alternating rounds; ratio = denoc_pin / Pinocchio)",
             f"{'case':<22}{'nv':>5}{'ID derivs':>11}{'pinocchio':>11}{'ratio':>7}{'FD derivs':>11}{'pinocchio':>11}"
             f"{'ratio':>7}"]  # fmt: skip
    for row in r["per_call"]:
        lines.append(f"{row['case']:<22}{row['nv']:>5}{us(row['ID_d']):>11}{us(row['rnea_d']):>11}"
                     f"{row['ID_d_ratio']:>7.2f}{us(row['FD_d']):>11}{us(row['aba_d']):>11}"
                     f"{row['FD_d_ratio']:>7.2f}")  # fmt: skip
    b = r["batch"]
    lines.append(f"batch of {b['B']} panda states, all cores, against a Python loop over Pinocchio: "
                 f"ID derivs {b['ID_d']['speedup']:.1f}x, FD derivs {b['FD_d']['speedup']:.1f}x")  # fmt: skip
    lines.append(f"{'chain n':>8}{'ID derivs':>12}{'rnea derivs':>13}{'FD derivs':>12}{'aba derivs':>12}")
    for e in r["scaling"]:
        lines.append(f"{e['n']:>8}{us(e['ID_d']):>12}{us(e.get('rnea_d')):>13}{us(e['FD_d']):>12}"
                     f"{us(e.get('aba_d')):>12}")  # fmt: skip
    lines.append(f"{'closed loops':<22}{'nv':>5}{'m':>4}{'CFD derivs':>12}{'pinocchio':>11}{'ratio':>7}"
                 f"{'CFD alone':>11}")  # fmt: skip
    for c in r["constrained"]:
        lines.append(f"{c['case']:<22}{c['nv']:>5}{c['m']:>4}{us(c['CFD_d']):>12}{us(c['pin_d']):>11}"
                     f"{c['ratio']:>7.2f}{us(c['CFD']):>11}")  # fmt: skip
    for s in r["step"]:
        lines.append(f"RK4 step derivatives, {s['case']} (nv {s['nv']}): {us(s['step_derivatives'])} against "
                     f"{us(s['differences'])} for forward differences of the step ({s['ratio']:.3f}x)")  # fmt: skip
    lines.append(report_contact_step(r["contact_step"]))
    return "\n".join(lines)


def report_contact_step(rows: list) -> str:
    lines = [f"{'contact step + Jacobians':<28}{'nv':>4}{'nc':>4}{'ours':>10}{'step':>10}{'our FD':>10}{'ratio':>7}"
             f"{'ours':>10}{'mjd FD':>10}{'ratio':>7}{'batch/state':>13}"]  # fmt: skip
    for c in rows:
        lines.append(f"{c['case']:<28}{c['nv']:>4}{c['contacts']:>4}{us(c['ours']):>10}{us(c['step']):>10}"
                     f"{us(c['differences']):>10}{c['ratio_fd']:>7.3f}{us(c['ours_vs_mujoco']):>10}"
                     f"{us(c['mujoco_fd']):>10}{c['ratio_mujoco']:>7.3f}{us(c['batch']):>13}")  # fmt: skip
    return "\n".join(lines)


KINEMATICS_FRAME = {"panda": "panda_hand_tcp", "talos_reduced": "gripper_left_joint", "solo12": "FL_FOOT"}


def kinematics(name: str, model, pin_model, quick: bool) -> dict:
    """Per call: a frame's Jacobian and placement in each reference, one kinematics pass each (frame_jacobian, then
    update_frame_placement, which reads the placements it left; Pinocchio: computeFrameJacobian, then
    updateFramePlacement, the same), the centroidal map and the centre of mass."""
    import pinocchio as pin

    data, pdata = model.create_data(), pin_model.createData()
    q, v, _ = state(model)
    f = model.frame_id(KINEMATICS_FRAME[name])
    t = 0.05 if quick else 0.6
    row = {"case": name, "nv": model.nv, "frame": KINEMATICS_FRAME[name]}
    for ref, pref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):

        def ours(ref=ref):
            dp.frame_jacobian(model, data, q, f, ref)
            dp.update_frame_placement(model, data, f)

        def theirs(pref=pref):
            pin.computeFrameJacobian(pin_model, pdata, q, f, pref)
            pin.updateFramePlacement(pin_model, pdata, f)

        row[ref] = paired_times(ours, theirs, t)
    row["centroidal_map"] = paired_times(
        lambda: dp.centroidal_map(model, data, q), lambda: pin.computeCentroidalMap(pin_model, pdata, q), t
    )
    row["centroidal_map_dot"] = paired_times(
        lambda: dp.centroidal_map_time_variation(model, data, q, v), lambda: pin.dccrba(pin_model, pdata, q, v), t
    )
    row["com"] = paired_times(
        lambda: dp.center_of_mass(model, data, q), lambda: pin.centerOfMass(pin_model, pdata, q), t
    )
    return row


def kinematics_batch(model, pin_model, B: int) -> dict:
    """A frame's placement and world Jacobian for B states in one call each, against a Python loop over
    Pinocchio's computeFrameJacobian + updateFramePlacement (``alternating_runs``)."""
    import pinocchio as pin

    data, pdata = model.create_data(), pin_model.createData()
    rng = np.random.default_rng(2)
    Q = np.stack([dp.random_configuration(model, rng) for _ in range(B)])
    f = model.frame_id("panda_hand_tcp")

    def ours():
        dp.frame_placement(model, data, Q, f)
        dp.frame_jacobian(model, data, Q, f, "world")

    def loop():
        for i in range(B):
            pin.computeFrameJacobian(pin_model, pdata, Q[i], f, pin.WORLD)
            pin.updateFramePlacement(pin_model, pdata, f)

    ours()
    return {"B": B} | alternating_runs(ours, loop, B)


MEMORY_SNIPPET = """
import sys, time, numpy as np
lib, n = sys.argv[1], int(sys.argv[2])
import denoc_pin as dp
t0 = time.perf_counter()
model = dp.models.chain(n)
build = time.perf_counter() - t0
rng = np.random.default_rng(0)
q, v, a = rng.uniform(-np.pi, np.pi, (3, n))
if lib == "denoc_pin":
    data = model.create_data()
    tau = dp.inverse_dynamics(model, data, q, v, a)
    dp.forward_dynamics(model, data, q, v, tau)
else:
    import pinocchio as pin
    pm = dp.to_pinocchio(model); pd = pm.createData()
    pin.aba(pm, pd, q, v, pin.rnea(pm, pd, q, v, a))
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec from the (large) parent.
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]
print(int(hwm) / 1024, build)
"""


def peak_memory(lib: str, n: int) -> tuple[float, float]:
    res = subprocess.run(
        [sys.executable, "-c", MEMORY_SNIPPET, lib, str(n)], capture_output=True, text=True, check=True
    )
    mb, build = res.stdout.split()
    return float(mb), float(build)


DENSE_ACCURACY_MAX = 1000  # the dense comparison solves an n x n system per sample: O(n³)


def substitute(T: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """x with T x = b for a triangular T, by plain substitution (NumPy has no triangular solver)."""
    n = len(b)
    x = np.zeros(n)
    for i in range(n) if lower else range(n - 1, -1, -1):
        x[i] = (b[i] - T[i] @ x) / T[i, i]  # x is still zero where T[i] has entries not yet solved for
    return x


def dense_solutions(model, data, q, v, tau) -> dict:
    """q̈ from the dense GIM, the routes the huge-DOF paper compares reverse Gaussian elimination with:
    Gaussian elimination in the natural order (for an SPD matrix, Cholesky I = C Cᵀ, then forward and
    backward substitution; the paper's GE, A.9) and LU with partial pivoting (``np.linalg.solve``)."""
    M = dp.gim(model, data, q)
    phi = tau - dp.nonlinear_effects(model, data, q, v)
    C = np.linalg.cholesky(M)
    return {"dense_ge": substitute(C.T, substitute(C, phi, True), False), "dense_lu": np.linalg.solve(M, phi)}


def factor_conditioning(n: int) -> dict:
    """κ₂ of the GIM and of the factors of its two eliminations (the huge-DOF paper's Table 13) on a
    spatial chain at a random configuration: GE, I = L U with L unit lower and U = D Lᵀ, against RGE,
    I = U' L' with U' unit upper and L' = D U'ᵀ (``dp.udut``)."""
    model = dp.models.chain(n)
    data = model.create_data()
    q = np.random.default_rng(0).uniform(-np.pi, np.pi, n)
    M = dp.gim(model, data, q)
    C = np.linalg.cholesky(M)
    d = np.diag(C)
    U_rge, D = dp.udut(model, data, q)
    cond = np.linalg.cond
    return {
        "n": n,
        "gim": cond(M),
        "ge_L": cond(C / d),
        "ge_U": cond(d[:, None] * C.T),
        "rge_U": cond(U_rge),
        "rge_L": cond(D @ U_rge.T),
    }


def accuracy(n: int, with_pinocchio: bool, samples: int = 3) -> dict:
    """Forward error ‖FD(ID(a)) − a‖∞/‖a‖∞ and backward error ‖ID(FD(τ)) − τ‖∞/‖τ‖∞, worst sample;
    up to DENSE_ACCURACY_MAX also the forward errors of the dense routes (``dense_solutions``)."""
    import pinocchio as pin

    model = dp.models.chain(n)
    data = model.create_data()
    row = {"n": n, "forward": 0.0, "backward": 0.0}
    if n <= DENSE_ACCURACY_MAX:
        row["dense_ge"] = row["dense_lu"] = 0.0
    if with_pinocchio:
        pm = dp.to_pinocchio(model)
        pd = pm.createData()
        row["pin_forward"] = row["pin_backward"] = 0.0
    for s in range(samples):
        rng = np.random.default_rng(s)
        q, v, a = rng.uniform(-np.pi, np.pi, n), rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        tau = dp.inverse_dynamics(model, data, q, v, a)
        a2 = dp.forward_dynamics(model, data, q, v, tau)
        row["forward"] = max(row["forward"], np.abs(a2 - a).max() / np.abs(a).max())
        # The floor: τ itself is known only to a rounding error.  Moving each τ_i by one ε (relative,
        # random sign) moves q̈ by this much; no float64 solver given a float64 τ can promise less.
        nudged = tau * (1.0 + np.finfo(float).eps * rng.choice([-1.0, 1.0], n))
        a3 = dp.forward_dynamics(model, data, q, v, nudged)
        row["floor"] = max(row.get("floor", 0.0), np.abs(a3 - a2).max() / np.abs(a).max())
        back = dp.inverse_dynamics(model, data, q, v, a2)
        row["backward"] = max(row["backward"], np.abs(back - tau).max() / np.abs(tau).max())
        if n <= DENSE_ACCURACY_MAX:
            for key, sol in dense_solutions(model, data, q, v, tau).items():
                row[key] = max(row[key], np.abs(sol - a).max() / np.abs(a).max())
        if with_pinocchio:
            tp = pin.rnea(pm, pd, q, v, a)
            ap = pin.aba(pm, pd, q, v, tp)
            row["pin_forward"] = max(row["pin_forward"], np.abs(ap - a).max() / np.abs(a).max())
            bp = pin.rnea(pm, pd, q, v, ap)
            row["pin_backward"] = max(row["pin_backward"], np.abs(bp - tp).max() / np.abs(tp).max())
    return row


def cold_start() -> float:
    """Seconds for import + model + first ID and FD call in a fresh process (kernel cache warm)."""
    code = (
        "import time; t=time.perf_counter(); import numpy as np, denoc_pin as dp; m=dp.models.bundled('gripper');"
        "d=m.create_data(); z=np.zeros(4); dp.forward_dynamics(m,d,z,z,dp.inverse_dynamics(m,d,z,z,z));"
        "print(time.perf_counter()-t)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=HERE.parent, check=True, capture_output=True)  # warm the cache
    res = subprocess.run([sys.executable, "-c", code], cwd=HERE.parent, check=True, capture_output=True, text=True)
    return float(res.stdout)


def first_use() -> dict:
    """Seconds of a first use after an install: a copy of the package with an empty kernel cache, in a fresh process,
    timing the import, loading panda (its singularity check compiles forward dynamics' kernel) and a first FD call."""
    import shutil
    import tempfile

    code = (
        "import time; t=[time.perf_counter()]; import numpy as np, denoc_pin as dp; t.append(time.perf_counter());"
        "from denoc_pin.loaders.robots import example_robot_urdf; m=dp.load_urdf(example_robot_urdf('panda'));"
        "t.append(time.perf_counter()); d=m.create_data(); z=np.zeros(m.nv);"
        "dp.forward_dynamics(m,d,dp.neutral(m),z,z); t.append(time.perf_counter()); print(*np.diff(t))"
    )
    with tempfile.TemporaryDirectory() as tmp:
        no_cache = shutil.ignore_patterns("__pycache__")
        shutil.copytree(HERE.parent / "denoc_pin", Path(tmp) / "denoc_pin", ignore=no_cache)
        empty = Path(tmp) / "kernels"  # the kernel cache, empty: as on a machine that never ran these sources
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": tmp}
        env["DENOC_PIN_CACHE_DIR"] = str(empty)
        res = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, check=True, capture_output=True, text=True)
    imp, load, fd = map(float, res.stdout.split())
    return {"import_s": imp, "load_s": load, "fd_s": fd}


def small_calls(quick: bool = False) -> list[dict]:
    """integrate, difference, neutral and normalize per call, paired alternating rounds with Pinocchio's, on panda
    and solo12 (free-flyer: the quaternion's group)."""
    rows = []
    for name, ff in (("panda", False), ("solo12", True)):
        model, pm = robot_models(name, free_flyer=ff)
        rows += _small_call_rows(name, model, pm, quick)
    return rows


def _small_call_rows(name: str, model, pm, quick: bool) -> list[dict]:
    import pinocchio as pin

    q0, v, _ = state(model)
    q1 = dp.integrate(model, q0, v)
    calls = {
        "integrate": (lambda: dp.integrate(model, q0, v), lambda: pin.integrate(pm, q0, v)),
        "difference": (lambda: dp.difference(model, q0, q1), lambda: pin.difference(pm, q0, q1)),
        "neutral": (lambda: dp.neutral(model), lambda: pin.neutral(pm)),
        "normalize": (lambda: dp.normalize(model, q1), lambda: pin.normalize(pm, q1)),
    }
    rows = []
    for what, (ours, theirs) in calls.items():
        t_ours, t_pin, r = paired_times(ours, theirs, 0.1 if quick else 0.3)
        rows.append({"robot": name, "call": what, "ours": t_ours, "pinocchio": t_pin, "ratio": r})
    return rows


STARTUP = {  # what a short script does in a fresh process, each library its own way; printed: seconds after each step
    "denoc_pin": (
        "import time; t=[time.perf_counter()]; import numpy as np, denoc_pin as dp; t.append(time.perf_counter());"
        "m=dp.load_urdf({path!r}); d=m.create_data(); t.append(time.perf_counter()); {warm}"
        "q=dp.neutral(m); z=np.zeros(m.nv); dp.forward_dynamics(m,d,q,z,dp.inverse_dynamics(m,d,q,z,z));"
        "dp.frame_jacobian(m,d,q,'panda_hand'); dp.integrate(m,q,z); t.append(time.perf_counter());"
        "print(*np.diff(t))"
    ),
    "pinocchio": (
        "import time; t=[time.perf_counter()]; import numpy as np, pinocchio as pin; t.append(time.perf_counter());"
        "m=pin.buildModelFromUrdf({path!r}); d=m.createData(); t.append(time.perf_counter()); {warm}"
        "q=pin.neutral(m); z=np.zeros(m.nv); pin.aba(m,d,q,z,pin.rnea(m,d,q,z,z));"
        "pin.computeFrameJacobian(m,d,q,m.getFrameId('panda_hand')); pin.integrate(m,q,z);"
        "t.append(time.perf_counter()); print(*np.diff(t))"
    ),
}


def startup(rounds: int = 5) -> dict:
    """A fresh process's import, first model load (panda's URDF) and first calls (ID, FD, a frame Jacobian,
    integrate), for denoc_pin (kernel cache warm), denoc_pin after ``dp.warmup(model)`` (its own column; the calls
    after it), and Pinocchio: the medians of ``rounds`` alternating runs."""
    path = str(example_robot_urdf("panda"))
    scripts = {
        "denoc_pin": STARTUP["denoc_pin"].format(path=path, warm=""),
        "denoc_pin_warmup": STARTUP["denoc_pin"].format(path=path, warm="dp.warmup(m); t.append(time.perf_counter());"),
        "pinocchio": STARTUP["pinocchio"].format(path=path, warm=""),
    }
    subprocess.run(
        [sys.executable, "-c", scripts["denoc_pin_warmup"]], cwd=HERE.parent, check=True, capture_output=True
    )  # fmt: skip  (the kernel cache filled)
    runs: dict = {k: [] for k in scripts}
    for _ in range(rounds):
        for key, code in scripts.items():
            res = subprocess.run([sys.executable, "-c", code], cwd=HERE.parent, check=True, capture_output=True,
                                 text=True)  # fmt: skip
            runs[key].append([float(x) for x in res.stdout.split()])
    out = {}
    for key, rows in runs.items():
        cols = np.median(np.array(rows), axis=0)
        names = ["import_s", "load_s"] + (["warmup_s"] if key == "denoc_pin_warmup" else []) + ["first_calls_s"]
        out[key] = dict(zip(names, map(float, cols), strict=True))
    return out


def report_first_hour(r: dict) -> str:
    lines = ["| robot | call | denoc_pin | Pinocchio | ratio |", "|---|---|---:|---:|---:|"]
    for row in r["small_calls"]:
        lines.append(f"| {row['robot']} | `{row['call']}` | {us(row['ours'])} | {us(row['pinocchio'])} | "
                     f"{row['ratio']:.2f} |")  # fmt: skip
    s = r["startup"]
    lines += ["", "| fresh process (panda) | import | load | first calls | warmup |", "|---|---:|---:|---:|---:|"]
    for key, label in (
        ("pinocchio", "Pinocchio"),
        ("denoc_pin", "denoc_pin"),
        ("denoc_pin_warmup", "denoc_pin, `dp.warmup` first"),
    ):
        row = s[key]
        warm = f"{row['warmup_s'] * 1e3:.0f} ms" if "warmup_s" in row else "—"
        lines.append(f"| {label} | {row['import_s'] * 1e3:.0f} ms | {row['load_s'] * 1e3:.0f} ms | "
                     f"{row['first_calls_s'] * 1e3:.1f} ms | {warm} |")  # fmt: skip
    return "\n".join(lines)


def rope_fall(quick: bool = False) -> dict:
    """The paper's rope (100 DOF on universal joints, Fig. 7) released horizontal, 1.75 s of RK4 at dt = 1 ms:
    ``simulate`` against the same RK4 loop driven by ``pinocchio.aba`` from Python (``demo.pinocchio_rk4``), in
    alternating rounds."""
    from denoc_pin.tools.demo import pinocchio_rk4

    model = dp.models.rope()
    pm = dp.to_pinocchio(model)
    q0, z = dp.neutral(model), np.zeros(model.nv)
    q0[1] = np.pi / 2
    T = 0.5 if quick else 1.75
    n = round(T / 1e-3)
    ours, theirs, r = paired_times(
        lambda: dp.simulate(model, q0, z, T, dt=1e-3, progress=False),
        lambda: pinocchio_rk4(pm, q0.copy(), z, z, 1e-3, n),
        2.0 if quick else 5.0, 1,
    )  # fmt: skip
    return {"t_final": T, "simulate_s": ours, "pinocchio_loop_s": theirs, "ratio": r}


def dask_scaling(quick: bool = False) -> dict:
    """``dp.distributed`` on local clusters of 1 and 2 worker processes: a sweep of the paper's rope released
    horizontal (1.0 s of RK4 each), timed in alternating rounds on warm workers; a panda dataset against the
    in-process batch on one core; and two cold starts to a first result (fresh workers with the kernel cache
    filled, and with an empty one, as on a machine that never ran these sources)."""
    import tempfile

    import dask
    import numba

    from denoc_pin import distributed as dist
    from denoc_pin.tools.dask_sweeps import _dataset_chunk

    PRE_SPAWN = "distributed.nanny.pre-spawn-environ"

    rope = dp.models.rope()
    q0 = dp.neutral(rope)
    q0[1] = np.pi / 2
    runs = 40 if quick else 200
    Q0 = np.tile(q0, (runs, 1))
    panda, _ = robot_models("panda")
    out: dict = {"rope_runs": runs}
    clients = {k: dist.client(n_workers=k) for k in (1, 2)}
    try:
        times = {1: [], 2: []}
        for c in clients.values():  # warm: the workers' first run, the scheduler's first graph
            dist.simulate_many(rope, Q0[:2], None, 1.0, client=c, progress=False)
        for _ in range(2 if quick else 3):
            for k, c in clients.items():
                t0 = time.perf_counter()
                r = dist.simulate_many(rope, Q0, None, 1.0, client=c, progress=False)
                times[k].append(time.perf_counter() - t0)
        out["sweep_1_worker_s"], out["sweep_2_workers_s"] = (float(np.median(times[k])) for k in (1, 2))
        out["sweep_speedup"] = float(np.median(np.array(times[1]) / np.array(times[2])))
        out["run_s"] = float(np.median(r["wall"]))
        # The dataset against the in-process batch on one core
        B, n = (20_000, 200_000) if quick else (100_000, 1_000_000)
        rng = np.random.default_rng(0)
        Q = dp.random_configuration(panda, rng, n=B)
        V, T = rng.uniform(-1, 1, (B, panda.nv)), rng.uniform(-10, 10, (B, panda.nv))
        data = panda.create_data()
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            dp.forward_dynamics(panda, data, Q[:10], V[:10], T[:10])
            batch = [B / seconds_per_call(lambda: dp.forward_dynamics(panda, data, Q, V, T), 1) for _ in range(3)]
        finally:
            numba.set_num_threads(threads)
        out["batch_1_core_per_s"] = float(np.median(batch))
        with tempfile.TemporaryDirectory() as tmp:  # the same work as a dataset's chunk (draw, FD, write), in here
            dist.dataset(panda, B, 0, f"{tmp}/one.zarr", chunk=B, client=clients[1], progress=False)  # the store
            numba.set_num_threads(1)
            try:
                work = [
                    B / seconds_per_call(lambda: _dataset_chunk(panda, 0, 0, 0, B, f"{tmp}/one.zarr"), 1)
                    for _ in range(3)
                ]
            finally:
                numba.set_num_threads(threads)
        out["chunk_work_1_core_per_s"] = float(np.median(work))
        with tempfile.TemporaryDirectory() as tmp:
            rates = [dist.dataset(panda, n, i, f"{tmp}/d{i}.zarr", client=clients[2], progress=False)["rate"]
                     for i in range(3)]  # fmt: skip
        out["dataset_samples"], out["dataset_2_workers_per_s"] = n, float(np.median(rates))
        out["dataset_efficiency"] = out["dataset_2_workers_per_s"] / (2 * out["batch_1_core_per_s"])
    finally:
        for c in clients.values():
            c.close()
    for key, empty_cache in (("cold_start_cached_s", False), ("cold_start_no_cache_s", True)):
        # the kernel cache's folder is read at import: the variable goes into the worker processes as they start
        with (
            tempfile.TemporaryDirectory() as tmp,
            dask.config.set({f"{PRE_SPAWN}.DENOC_PIN_CACHE_DIR": tmp} if empty_cache else {}),
        ):
            t0 = time.perf_counter()
            with dist.client(n_workers=2) as c:
                dist.simulate_many(rope, Q0[:2], None, 0.01, client=c, progress=False)
                out[key] = time.perf_counter() - t0
    return out


def report_dask(r: dict) -> str:
    return "\n".join([
        "On Dask (local clusters of worker processes, one thread each; warm workers unless said):",
        f"- {r['rope_runs']} rope falls of 1.0 s ({r['run_s'] * 1e3:.0f} ms each on a worker): 1 worker "
        f"{r['sweep_1_worker_s']:.2f} s, 2 workers {r['sweep_2_workers_s']:.2f} s, speed-up {r['sweep_speedup']:.2f}",
        f"- dataset, panda, {r['dataset_samples']} samples on 2 workers: {r['dataset_2_workers_per_s']:.0f} /s against "
        f"{r['batch_1_core_per_s']:.0f} /s for the in-process batch on one core: {r['dataset_efficiency']:.2f} of 2x; "
        f"the same work as a chunk's (draw, FD, write) on one core here: {r['chunk_work_1_core_per_s']:.0f} /s, "
        f"{r['dataset_2_workers_per_s'] / (2 * r['chunk_work_1_core_per_s']):.2f} of 2x",
        f"- cold start to a first result, 2 workers: {r['cold_start_cached_s']:.1f} s with the kernel cache filled, "
        f"{r['cold_start_no_cache_s']:.1f} s with an empty cache (after an install)",
    ])  # fmt: skip


def adaptive(quick: bool = False) -> list[dict]:
    """The adaptive methods on the gripper falling from θ₁₁ = −60° for 1 s (rtol 1e-10, atol 1e-12) and the rope of
    40 links released horizontal for 0.25 s, compiled (τ None) against scipy driving the same right-hand side (a
    callable τ), in alternating rounds; the cost per FD call against fixed-step RK4 (dt = 1 ms) of the same run."""
    rope = dp.models.rope(40)
    q_rope = dp.neutral(rope)
    q_rope[0] = np.pi / 2
    cases = [
        ("gripper", dp.models.bundled("gripper"), np.deg2rad([-60.0, 0.0, 0.0, 0.0]), 1.0),
        ("rope, 40 links", rope, q_rope, 0.25),
    ]
    rows = []
    for name, model, q0, T in cases:
        v0, zero = np.zeros(model.nv), np.zeros(model.nv)

        def run(method, tau=None, m=model, q0=q0, v0=v0, T=T):
            return dp.simulate(m, q0, v0, T, dt=1e-3, method=method, tau=tau, rtol=1e-10, atol=1e-12, progress=False)

        rk4 = median_time(lambda run=run: run("rk4"), 0.5 if quick else 1.0, 50)
        rk4_calls = 4 * round(T / 1e-3) + round(T / 1e-3) + 1  # 4 a step, and the recorded states' q̈
        for method in ("rk45", "dop853"):
            fast, slow = run(method), run(method, lambda t, q, v, z=zero: z)
            ours, theirs, r = paired_times(lambda run=run, m=method: run(m),
                                           lambda run=run, m=method, z=zero: run(m, lambda t, q, v: z),
                                           0.5 if quick else 1.0, 50)  # fmt: skip
            rows.append({
                "case": name, "method": method, "steps": fast.stats["steps"], "fd_calls": fast.stats["fd_calls"],
                "scipy_fd_calls": slow.stats["fd_calls"], "compiled_s": ours, "scipy_s": theirs, "ratio": r,
                "per_fd": ours / fast.stats["fd_calls"], "rk4_per_fd": rk4 / rk4_calls, "rk4_s": rk4,
                "max_dq": float(np.abs(fast.q - slow.q).max()),
            })  # fmt: skip
    return rows


def load_cassie():
    """cassie_v2.sdf with a free-flyer (its warnings about the file's unused elements silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        return dp.load_sdf(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf", "free-flyer")


def closed_loops(quick: bool = False) -> dict:
    """Closed-loop forward dynamics, each timed in alternating rounds with its peer: a spatial four-bar with a
    ball-joint cut (Pinocchio: CONTACT_3D, constraintDynamics), the 3-RRR parallel robot (revolute cuts: no
    Pinocchio equivalent) and Cassie's legs from cassie_v2.sdf with a free-flyer (four ball cuts, redundant:
    Pinocchio's proximal iterations do not converge there, so its time is for its 10 iterations, not for an
    answer); against our tree forward dynamics of the same bodies too, and a batch per state.  Then the four-bar's
    10 s simulation at dt = 1 ms (RK4), closed against its spanning tree."""
    import pinocchio as pin

    cassie = load_cassie()
    rows = []
    four_bar = None
    for model, guess, fixed in [
        (dp.models.spatial_four_bar(), np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], ["crank"]),
        (dp.models.bundled("rrr_3"), np.zeros(7), []),
        (cassie, dp.neutral(cassie), []),
    ]:
        q = dp.assemble(model, guess, fixed=fixed)
        J = dp.loop_jacobian(model, q)
        v = np.linspace(-1, 1, model.nv)
        v = v - np.linalg.pinv(J) @ (J @ v)
        tau = np.zeros(model.nv)
        data = model.create_data()
        four_bar = four_bar or (model, q, v)
        row = {"case": model.name, "nv": model.nv, "constraints": model.n_constraints}

        def cfd(m=model, d=data, q=q, v=v, t=tau):
            return dp.constrained_forward_dynamics(m, d, q, v, t)

        row["CFD"], row["FD"], row["CFD/FD"] = paired_times(
            cfd, lambda m=model, d=data, q=q, v=v, t=tau: dp.forward_dynamics(m, d, q, v, t)
        )
        if all(c.loop.type == "spherical" for c in model.cuts):
            pm = dp.to_pinocchio(model)
            pd, cms, cds = pinocchio_loop_constraints(model, pm)
            args = (pm, pd, q, v, tau, cms, cds, pin.ProximalSettings(1e-12, 1e-12, 10))  # StdVec containers
            _, row["constraintDynamics"], row["CFD_ratio"] = paired_times(
                cfd, lambda args=args: pin.constraintDynamics(*args)
            )
        B = 1000 if quick else 10000
        Q, V, T = np.tile(q, (B, 1)), np.tile(v, (B, 1)), np.zeros((B, model.nv))
        batch = functools.partial(dp.constrained_forward_dynamics, model, data, Q, V, T)
        row["CFD_batch"] = median_time(batch, 0.5) / B
        rows.append(row)
    model, q, v = four_bar
    tree = dp.without_loop(model, model.loops[0].name)
    seconds = 1.0 if quick else 10.0
    closed_s, tree_s, r = paired_times(
        lambda: dp.simulate(model, q, v, seconds, dt=1e-3, progress=False),
        lambda: dp.simulate(tree, q, v, seconds, dt=1e-3, progress=False),
        min_time=1.0,
    )
    simulation = {"case": model.name, "seconds": seconds, "dt": 1e-3, "closed": closed_s, "tree": tree_s, "ratio": r}
    return {"per_call": rows, "simulation": simulation}


MUJOCO_MAX_DEPTH = 1023  # MuJoCo's compiler refuses a body tree deeper than this


def mujoco_twin(model):
    """The same bodies in MuJoCo, built with MjSpec: a hinge per revolute joint, two hinges in one body per universal
    joint (MuJoCo composes a body's joints in order, as R(e₁, θ₁) R(e₂, θ₂)), each body's inertia about its centre
    of mass; everything but the smooth dynamics disabled (no geoms, no constraints, no springs or dampers); RK4 at
    1 ms."""
    import mujoco

    from denoc_pin.core.joints import REVOLUTE, UNIVERSAL

    spec = mujoco.MjSpec()
    spec.option.gravity = model.gravity
    spec.option.timestep = 1e-3
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT)
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_DAMPER)
    bodies = [spec.worldbody]
    for k in range(1, model.njoints):
        R, p = model.placement_rotation[k], model.placement_translation[k]
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(R).ravel())
        m, c = model.masses[k], model.coms[k]
        I = model.inertias_origin[k] - m * (c @ c * np.eye(3) - np.outer(c, c))  # about the centre of mass
        full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        body = bodies[model.parents[k]].add_body(pos=p, quat=quat, mass=m, ipos=c, fullinertia=full)
        body.explicitinertial = True
        if model.kinds[k] == REVOLUTE:
            body.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=model.axes[k])
        elif model.kinds[k] == UNIVERSAL:
            body.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=model.axes[k])
            body.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=model.axes2[k])
        else:
            raise ValueError(f"mujoco_twin: joint kind {model.kinds[k]} is not needed here")
        bodies.append(body)
    return spec.compile()


def against_mujoco(quick: bool = False) -> dict:
    """denoc_pin against MuJoCo on the same bodies, on spatial chains and the rope (``mujoco_case``), and whether
    MuJoCo builds a chain deeper than its limit."""
    cases = [(f"chain {n}", dp.models.chain(n)) for n in (10, 100, 300, 1000)] + [("rope (Fig. 7)", dp.models.rope())]
    rows = [mujoco_case(name, model, quick) for name, model in cases]
    deep = f"a chain of {MUJOCO_MAX_DEPTH + 1} bodies: "
    try:
        mujoco_twin(dp.models.chain(MUJOCO_MAX_DEPTH + 1))
        deep += "built"
    except ValueError as e:
        deep += f"MuJoCo refuses it ({str(e).splitlines()[0]})"
    return {"rows": rows, "deep": deep}


def mujoco_case(name: str, model, quick: bool) -> dict:
    """One state's q̈ first (they must agree), then per forward-dynamics evaluation (``mj_forward`` against
    ``forward_dynamics``, from Python) and per RK4 step at 1 ms (MuJoCo's ``rollout`` in C against ``simulate``'s
    compiled loop), in alternating rounds."""
    import mujoco
    from mujoco import rollout

    m = mujoco_twin(model)
    d = mujoco.MjData(m)
    data = model.create_data()
    q, v, _ = state(model)
    tau = np.zeros(model.nv)
    d.qpos[:], d.qvel[:] = q, v
    mujoco.mj_forward(m, d)
    a = dp.forward_dynamics(model, data, q, v, tau)
    row = {"case": name, "nv": model.nv, "qacc_error": float(np.abs(a - d.qacc).max() / max(np.abs(a).max(), 1.0))}
    row["FD"], row["mj_forward"], row["FD_ratio"] = paired_times(
        lambda: dp.forward_dynamics(model, data, q, v, tau), lambda: mujoco.mj_forward(m, d)
    )
    steps = 200  # from the random state, a light 100-link chain blows up within a second at dt = 1 ms
    state0 = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    ours, theirs, row["step_ratio"] = paired_times(
        lambda: dp.simulate(model, q, v, steps * 1e-3, dt=1e-3, progress=False),
        lambda: rollout.rollout(m, d, state0, nstep=steps),
        min_time=0.5,
    )
    row["step"], row["mj_step"] = ours / steps, theirs / steps
    return row


def report_mujoco(r: dict) -> str:
    lines = ["Against MuJoCo on the same bodies (ratio = denoc_pin / MuJoCo, medians of alternating rounds):"]
    lines.append("| case | nv | q̈ agree to | FD | mj_forward | ratio | RK4 step | MuJoCo RK4 step | ratio |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for c in r["rows"]:
        lines.append(
            f"| {c['case']} | {c['nv']} | {c['qacc_error']:.1e} | {us(c['FD'])} | {us(c['mj_forward'])} | "
            f"{c['FD_ratio']:.2g} | {us(c['step'])} | {us(c['mj_step'])} | {c['step_ratio']:.2g} |"
        )
    lines.append(f"MuJoCo's depth limit: {r['deep']}.")
    return "\n".join(lines)


def contact_scenes(quick: bool = False) -> dict:
    """solo12 and go2 dropped from 5 cm under joint PD (``examples/legged_standing.py``) beside their MuJoCo twins
    (``denoc_pin.tools.mujoco_twin``): the settled base heights and vertical forces of one drop each, then the time
    per step of the first second (the landing and settling) and of standing, each engine in its fastest form (our
    compiled run against MuJoCo's ``rollout`` in C), in alternating rounds."""
    import runpy

    from denoc_pin.tools.mujoco_twin import MujocoTwin, side_by_side

    example = runpy.run_path(str(HERE.parent / "examples" / "legged_standing.py"), run_name="legged_standing")
    rows = []
    for name in ("solo12", "go2"):
        model, q0, pd, ground = example["scene"](name)
        weight = model.masses.sum() * -model.gravity[2]
        r = side_by_side(model, q0, pd, ground, 3.0)
        row = {"robot": name, "nv": model.nv, "z": float(r["denoc_pin"]["z"][-1]),
               "z_mujoco": float(r["mujoco"]["z"][-1]),
               "sink_mujoco": r["mujoco"]["penetration"], "fz": float(r["denoc_pin"]["fz"][-1] / weight),
               "fz_mujoco": float(r["mujoco"]["fz"][-1] / weight)}  # fmt: skip
        twin = MujocoTwin(model, ground, pd)
        v0 = np.zeros(model.nv)
        settled = dp.simulate(model, q0, v0, 1.0, 1e-3, tau=pd, ground=ground, progress=False, record_every=1000)
        for phase, (q, v) in (("landing", (q0, v0)), ("standing", (settled.q[-1], settled.v[-1]))):
            row[phase], row[f"{phase}_mujoco"], row[f"{phase}_ratio"] = step_times(model, q, v, pd, ground, twin,
                                                                                   quick)  # fmt: skip
        rows.append(row)
    return {"rows": rows, "cassie": cassie_scene(quick), "batch": contact_batch(example, quick),
            "sweep": contact_sweep(example, quick)}  # fmt: skip


def pair_scenes(quick: bool = False) -> dict:
    """Contact between bodies: (1) per pair, the compiled narrow phase (a closed form, GJK alone, GJK and EPA, and a
    4-point patch) in a compiled loop; (2) per step, scenes with shape pairs against their MuJoCo twins
    (``tools.mujoco_twin``) at the same dt, our compiled run against MuJoCo's ``rollout``, alternating rounds:
    MuJoCo Menagerie's go2 and a1 (their own go2.xml and a1.xml, 23 and 37 collision primitives) standing under
    joint PD at 2 ms, five boxes stacked, the paper's gripper holding a box in the air (examples/gripper_grasp.py)
    and talos with self-collision, its arms limp against its body (examples/talos_self_collision.py), at 1 ms."""
    import runpy
    import warnings

    from numba import njit
    from scipy.spatial.transform import Rotation

    from denoc_pin.contact.patch import PAIR_WORK, pair_patch
    from denoc_pin.core.shapes import BOX, CYLINDER, SPHERE
    from denoc_pin.tools.mujoco_twin import MujocoTwin

    @njit(cache=False)
    def loop(c1, par1, R1, p1, c2, par2, R2, p2, margin, n, w, pts, dep, F, axis):
        none = np.zeros((0, 3))
        k = 0
        for _ in range(n):
            axis[:] = 0.0  # no warm start: every call from the centres' direction
            k += pair_patch(c1, par1, R1, p1, none, c2, par2, R2, p2, none, 1.0, margin, w, pts, dep, F, axis)
        return k

    work, pts, dep, F, axis = np.zeros(PAIR_WORK), np.zeros((4, 3)), np.zeros(4), np.zeros((3, 3)), np.zeros(3)
    eye, tilt = np.eye(3), Rotation.from_rotvec([0.1, 0.2, 0.25]).as_matrix()
    h = np.array([0.1, 0.1, 0.1])
    cases = [
        ("sphere–box (closed form), touching", SPHERE, np.array([0.05, 0, 0]), eye, [0, 0, 0.1499]),
        ("box–box apart (GJK, out beyond the margin)", BOX, h, tilt, [0.05, 0.02, 0.35]),
        ("box–box resting face on face (EPA, 4-point patch)", BOX, h, eye, [0.03, 0.02, 0.1999]),
        ("cylinder–box tilted, overlapping (GJK, EPA)", CYLINDER, np.array([0.05, 0.1, 0]), tilt, [0, 0, 0.19]),
    ]
    per_pair = []
    n = 20_000 if quick else 100_000
    for name, code, par, R, p in cases:
        args = (BOX, h, eye, np.zeros(3), code, par, R, np.array(p, float), 1e-3)
        loop(*args, 10, work, pts, dep, F, axis)
        t0 = time.perf_counter()
        points = loop(*args, n, work, pts, dep, F, axis) // n
        per_pair.append({"pair": name, "us": (time.perf_counter() - t0) / n * 1e6, "points": int(points)})
    scenes = []
    menagerie = HERE.parent / "tests" / "data" / "menagerie"
    quadrupeds = []
    for name, path in (("go2", "unitree_go2/go2.xml"), ("a1", "unitree_a1/a1.xml")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dp.ModelWarning)
            robot = dp.load_mjcf(menagerie / path)
        q = dp.neutral(robot)
        q[:7], q[7:] = [0, 0, 0.27, 0, 0, 0, 1], [0, 0.9, -1.8] * 4  # both files' "home" keyframe
        quadrupeds.append((f"{name} (Menagerie {path.split('/')[1]})", robot, q, dp.JointPD(robot, 50.0, 1.0, q),
                           2e-3, 0.5, menagerie / path))  # fmt: skip
    b = dp.ModelBuilder("5-box stack")
    for k in range(5):
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * 0.04 / 12, link=f"box{k}")
        b.add_collision(f"box{k}", dp.Box((0.2, 0.2, 0.2)), friction=0.8)
    stack = b.build()
    qs = dp.neutral(stack)
    qs[2::7] = 0.1 + 0.2 * np.arange(5)
    grasp = runpy.run_path(str(HERE.parent / "examples" / "gripper_grasp.py"), run_name="gripper_grasp")
    gripper, g0 = grasp["scene"]()
    close, lift = grasp["laws"](gripper, g0)
    talos = runpy.run_path(str(HERE.parent / "examples" / "talos_self_collision.py"), run_name="talos_self_collision")
    humanoid, h0, hold = talos["scene"]()
    steps = 250 if quick else 500
    scenes_in = quadrupeds + [("5-box stack", stack, qs, None, 1e-3, 0.6, None),
                              ("gripper holding a box (lifted)", gripper, g0, close, 1e-3, 0.8, None),
                              ("talos, self-collision, arms limp", humanoid, h0, hold, 1e-3, 0.8, None)]  # fmt: skip
    for name, model, q0, pd, dt, mu, path in scenes_in:
        ground = dp.Ground(friction=mu)
        settled = dp.simulate(model, q0, np.zeros(model.nv), 0.5, dt, tau=pd, ground=ground, progress=False,
                              record_every=int(round(0.5 / dt)))  # fmt: skip
        q1, v1 = settled.q[-1], settled.v[-1]
        if model is gripper:  # the grasp closed: lift, and time the box held in the air
            pd = lift
            held = dp.simulate(model, q1, v1, 1.0, dt, tau=pd, ground=ground, progress=False, record_every=1000)
            q1, v1 = held.q[-1], held.v[-1]
        step = dp.simulate(model, q1, v1, dt, dt, tau=pd, ground=ground, progress=False)  # the timed state's contacts
        twin = MujocoTwin(model, ground, pd, dt=dt)
        ours, theirs, ratio = step_times(model, q1, v1, pd, ground, twin, quick, dt=dt, steps=steps)
        scenes.append({"scene": name, "nv": model.nv, "contacts": len(step.contacts[0]["depths"]),
                       "ours_us": ours * 1e6, "mujoco_us": theirs * 1e6, "ratio": ratio})  # fmt: skip
        if path is not None:
            ours, theirs, ratio = file_step_times(path, model, q1, v1, pd, ground, dt, steps, quick)
            scenes[-1].update(file_ours_us=ours * 1e6, file_mujoco_us=theirs * 1e6, file_ratio=ratio)
    return {"per_pair": per_pair, "scenes": scenes}


def file_step_times(path, model, q, v, pd, ground, dt: float, steps: int, quick: bool) -> tuple:
    """(ours, MuJoCo's, ratio) per step, MuJoCo running the robot's own MJCF file: its options (cone, impratio), its
    geoms' contype, conaffinity, condim and friction, its armature and damping; what it lacks is added as our run
    has it: a floor plane of the ground's μ, the timestep dt, and each of its motors turned into a PD servo of our
    gains to our q_ref (its visual meshes and images, not kept here, are
    tetrahedra and a checker).  Both from the same settled state,
    alternating rounds."""
    import mujoco
    from mujoco import rollout

    spec = mujoco.MjSpec.from_file(str(path))
    for mesh in spec.meshes:  # the visual meshes are not kept in tests/data: a tetrahedron each (they never touch)
        if mesh.file and not (Path(spec.modelfiledir) / spec.meshdir / mesh.file).is_file():
            mesh.file, mesh.uservert, mesh.scale = "", [0, 0, 0, 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01], [1, 1, 1]
    for tex in spec.textures:  # nor the images: a built-in checker
        if tex.file and not (Path(spec.modelfiledir) / spec.texturedir / tex.file).is_file():
            tex.file, tex.builtin, tex.width, tex.height = "", mujoco.mjtBuiltin.mjBUILTIN_CHECKER, 8, 8
    spec.option.timestep = dt
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=[ground.friction, 0.005, 1e-4])
    for a in spec.actuators:
        k = model.names.index(a.target)
        kp, kd = float(pd.kp[model.idx_v[k]]), float(pd.kd[model.idx_v[k]])
        a.gaintype, a.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
        a.gainprm = [kp] + [0] * 9
        a.biasprm = [0, -kp, -kd] + [0] * 7
        a.ctrllimited = 0
    m = spec.compile()
    d = mujoco.MjData(m)
    twin_q = np.zeros(m.nq)  # our q → MuJoCo's qpos: the free flyer's quaternion (x, y, z, w) → (w, x, y, z)
    twin_q[:7] = np.r_[q[:3], q[6], q[3:6]]
    twin_q[7:] = q[7:]
    d.qpos[:] = twin_q
    d.qvel[:] = v  # go2's and a1's free joint: MuJoCo's linear velocity is the world's, ours the body's
    R = np.empty(9)
    mujoco.mju_quat2Mat(R, twin_q[3:7])
    d.qvel[:3] = R.reshape(3, 3) @ v[:3]
    d.ctrl[:] = [pd.q_ref[model.idx_q[model.names.index(a.target)]] for a in spec.actuators]
    mujoco.mj_forward(m, d)
    state0 = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    control = np.tile(d.ctrl, (steps, 1))
    states, _ = rollout.rollout(m, d, state0, control, nstep=steps)
    z = states[0, -1, 1 + 2]  # the state's time, then qpos: the base's height after the timed steps
    if abs(z - q[2]) > 0.03:
        raise RuntimeError(f"{path.name} does not stand in MuJoCo under these servos: base {q[2]:.3f} → {z:.3f} m")
    ours, theirs, ratio = paired_times(
        functools.partial(
            dp.simulate, model, q, v, steps * dt, dt, tau=pd, ground=ground, progress=False, record_every=steps
        ),  # fmt: skip
        functools.partial(rollout.rollout, m, d, state0, control, nstep=steps),
        min_time=1.0 if quick else 3.0,
    )
    return ours / steps, theirs / steps, ratio


def report_pairs(r: dict) -> str:
    lines = ["Compiled narrow phase, per pair (a compiled loop):", "| pair | µs | points |", "|---|---|---|"]
    lines += [f"| {c['pair']} | {c['us']:.2f} | {c['points']} |" for c in r["per_pair"]]
    lines += ["", "Per step against the MuJoCo twin, same dt (ratio = ours / MuJoCo's rollout, alternating rounds):",
              "| scene | nv | contacts | denoc_pin µs | MuJoCo µs | ratio |", "|---|---|---|---|---|---|"]  # fmt: skip
    lines += [f"| {c['scene']} | {c['nv']} | {c['contacts']} | {c['ours_us']:.1f} | {c['mujoco_us']:.1f} | "
              f"{c['ratio']:.2f} |" for c in r["scenes"]]  # fmt: skip
    lines += ["", "Per step against MuJoCo running the robot's own file (its options and geoms; a floor, dt and PD "
              "servos added):", "| scene | denoc_pin µs | MuJoCo µs | ratio |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {c['scene']} | {c['file_ours_us']:.1f} | {c['file_mujoco_us']:.1f} | {c['file_ratio']:.2f} |"
              for c in r["scenes"] if "file_ratio" in c]  # fmt: skip
    return "\n".join(lines)


def step_times(model, q, v, pd, ground, twin, quick: bool, dt: float = 1e-3, steps: int | None = None) -> tuple:
    """(ours, MuJoCo's, ratio): time per step of a run from (q, v), our compiled run against MuJoCo's ``rollout`` of
    the twin, in alternating rounds."""
    import mujoco
    from mujoco import rollout

    steps = steps or (500 if quick else 1000)
    twin.set_state(q, v)
    state0 = np.empty(mujoco.mj_stateSize(twin.model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(twin.model, twin.data, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    control = np.tile(twin.data.ctrl, (steps, 1))
    ours, theirs, ratio = paired_times(
        functools.partial(
            dp.simulate, model, q, v, steps * dt, dt, tau=pd, ground=ground, progress=False, record_every=steps
        ),  # fmt: skip
        functools.partial(rollout.rollout, twin.model, twin.data, state0, control, nstep=steps),
        min_time=1.0 if quick else 3.0,
    )
    return ours / steps, theirs / steps, ratio


def cassie_stance() -> tuple:
    """(model, q0, pd, ground): Cassie from the Menagerie's cassie.xml set on its feet by
    ``examples/cassie_standing.py`` (its loops closed, its stance's PD with the static torques as feed-forward), on a
    ground of μ = 0.9."""
    import runpy

    cassie = runpy.run_path(str(HERE.parent / "examples" / "cassie_standing.py"), run_name="cassie_standing")
    path = HERE.parent / "tests" / "data" / "menagerie" / "agility_cassie" / "cassie.xml"
    model = cassie["load"](path)
    q0, tau_ff = cassie["stance"](model, path)
    return model, q0, cassie["controller"](model, q0, tau_ff, path), dp.Ground(friction=0.9)


def cassie_scene(quick: bool) -> dict:
    """Cassie standing (``examples/cassie_standing.py``: the Menagerie's cassie.xml, its four loops closed exactly
    with the contacts) beside its MuJoCo twin, whose loops are ``connect`` equalities at the file's solref 0.005 s:
    base height, the largest loop residual and the feet's force after 2 s in each, and the time per step."""
    from denoc_pin.tools.mujoco_twin import MujocoTwin, side_by_side

    model, q0, pd, ground = cassie_stance()
    weight = model.masses.sum() * -model.gravity[2]
    r = side_by_side(model, q0, pd, ground, 2.0, equality_timeconst=0.005)
    row = {"robot": "cassie", "nv": model.nv, "z0": float(q0[2])}
    for engine, suffix in (("denoc_pin", ""), ("mujoco", "_mujoco")):
        row["z" + suffix], row["loop" + suffix] = float(r[engine]["z"][-1]), r[engine]["loop"]
        row["fz" + suffix] = float(r[engine]["fz"][-1] / weight)
    twin = MujocoTwin(model, ground, pd, equality_timeconst=0.005)
    row["standing"], row["standing_mujoco"], row["standing_ratio"] = step_times(model, q0, np.zeros(model.nv), pd,
                                                                                ground, twin, quick)  # fmt: skip
    return row


def contact_sweep(example: dict, quick: bool) -> dict:
    """N solo12 drops of 1 s on Dask (``dp.distributed.simulate_many``), each with its own ground friction, ground
    height and payload on the base, on a local cluster of one worker and of two: wall time of the sweep and the
    speed-up, medians of alternating rounds (both clusters started, and 8 runs swept on each, before the clock
    starts: a fresh worker's first runs load kernels and build their first edited models)."""
    dist = dp.distributed
    model, q0, pd, ground = example["scene"]("solo12")
    n = 40 if quick else 200
    rng = np.random.default_rng(1)
    heights = rng.uniform(-0.05, 0.05, n)
    q0s = np.stack([q0] * n)
    q0s[:, 2] += heights
    edits = [{"friction": float(mu), "ground_height": float(h), "payload": {"link": "base_link", "mass": float(p)}}
             for mu, h, p in zip(rng.uniform(0.5, 1.0, n), heights, rng.uniform(0.0, 0.5, n), strict=True)]  # fmt: skip
    clients = {workers: dist.client(n_workers=workers) for workers in (1, 2)}
    walls: dict = {1: [], 2: []}
    try:
        for c in clients.values():  # every worker's first runs (kernels loaded, first edited models) off the clock
            dist.simulate_many(model, q0s[:8], None, 1.0, tau=pd, ground=ground, edits=edits[:8], client=c,
                               progress=False, record_every=1000)  # fmt: skip
        for _ in range(1 if quick else 3):  # alternating rounds: each pair of sweeps under the same conditions
            for workers, c in clients.items():
                t0 = time.perf_counter()
                out = dist.simulate_many(model, q0s, None, 1.0, tau=pd, ground=ground, edits=edits, client=c,
                                         progress=False, record_every=1000)  # fmt: skip
                walls[workers].append(time.perf_counter() - t0)
    finally:
        for c in clients.values():
            c.close()
    one, two = np.array(walls[1]), np.array(walls[2])
    return {"runs": n, "errors": len(out["errors"]), "one_worker_s": float(np.median(one)),
            "two_workers_s": float(np.median(two)), "speedup": float(np.median(one / two)),
            "rounds": len(one)}  # fmt: skip


def contact_batch(example: dict, quick: bool) -> dict:
    """B solo12 states standing on its feet (the settled stance, its joints and height perturbed: every step has
    contacts to solve), 100 steps each: ``dp.simulate_batch`` on all cores against MuJoCo's batch ``rollout`` on as
    many threads and against a Python loop of ``mj_step``, time per state and step, in alternating rounds."""
    import mujoco
    from mujoco import rollout

    from denoc_pin.tools.mujoco_twin import MujocoTwin

    model, q0, pd, ground = example["scene"]("solo12")
    stance = dp.simulate(model, q0, np.zeros(model.nv), 1.0, 1e-3, tau=pd, ground=ground, progress=False,
                         record_every=1000).q[-1]  # fmt: skip
    B, steps = (200 if quick else 1000), 100
    rng = np.random.default_rng(0)
    q0s = np.stack([stance] * B)
    q0s[:, 2] += rng.uniform(0.0, 2e-3, B)
    q0s[:, 7:] += rng.normal(0.0, 0.02, (B, 12))
    twin = MujocoTwin(model, ground, pd)
    size = mujoco.mj_stateSize(twin.model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    states = np.empty((B, size))
    for b in range(B):
        twin.set_state(q0s[b], np.zeros(model.nv))
        mujoco.mj_getState(twin.model, twin.data, states[b], mujoco.mjtState.mjSTATE_FULLPHYSICS)
    control = np.tile(twin.data.ctrl, (1, steps, 1))
    threads = os.cpu_count()
    datas = [mujoco.MjData(twin.model) for _ in range(threads)]

    def ours():
        dp.simulate_batch(model, q0s, None, steps * 1e-3, 1e-3, tau=pd, ground=ground, record_every=steps)

    def theirs():
        rollout.rollout(twin.model, datas, states, control, nstep=steps)

    def loop():
        m, d = twin.model, twin.data
        for b in range(B):
            mujoco.mj_setState(m, d, states[b], mujoco.mjtState.mjSTATE_FULLPHYSICS)
            for _ in range(steps):
                mujoco.mj_step(m, d)

    n = B * steps
    a, b_, ratio = paired_times(ours, theirs, min_time=2.0 if quick else 10.0)
    _, c, loop_ratio = paired_times(ours, loop, min_time=2.0 if quick else 10.0)
    return {"B": B, "steps": steps, "threads": threads, "ours": a / n, "rollout": b_ / n, "ratio": ratio,
            "python_loop": c / n, "loop_ratio": loop_ratio}  # fmt: skip


def report_contacts(r: dict) -> str:
    lines = ["Standing beside MuJoCo (dt 1 ms, μ 0.9, joint PD; time per step, ratio = denoc_pin / MuJoCo):"]
    lines.append("| robot | base z | MuJoCo z | MuJoCo sinks | Σf_z / m g | MuJoCo Σf_z / m g | landing step | MuJoCo "
                 "| ratio | standing step | MuJoCo | ratio |")  # fmt: skip
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in r["rows"]:
        lines.append(
            f"| {c['robot']} | {c['z']:.5f} m | {c['z_mujoco']:.5f} m | {1e3 * c['sink_mujoco']:.2f} mm | "
            f"{c['fz']:.6f} | {c['fz_mujoco']:.6f} | {us(c['landing'])} | {us(c['landing_mujoco'])} | "
            f"{c['landing_ratio']:.2f} | {us(c['standing'])} | {us(c['standing_mujoco'])} | {c['standing_ratio']:.2f} |"
        )
    c = r["cassie"]
    lines.append(
        f"Cassie ({c['nv']} DOF, 4 loops) set on its feet at base z {c['z0']:.5f} m, after 2 s: ours {c['z']:.5f} m, "
        f"loop residual <= {c['loop']:.1e}, Σf_z / m g {c['fz']:.6f}; MuJoCo (connect equalities, solref 0.005 s) "
        f"{c['z_mujoco']:.5f} m, loops open to {1e3 * c['loop_mujoco']:.2f} mm, Σf_z / m g {c['fz_mujoco']:.3f}; "
        f"per step {us(c['standing'])} against {us(c['standing_mujoco'])} (ratio {c['standing_ratio']:.2f})."
    )
    b = r["batch"]
    lines.append(
        f"A batch of {b['B']} solo12 drops, {b['steps']} steps each, on {b['threads']} threads, per state and "
        f"step: dp.simulate_batch {us(b['ours'])}, MuJoCo's rollout {us(b['rollout'])} (ratio "
        f"{b['ratio']:.2f}), a Python loop of mj_step {us(b['python_loop'])} (ratio {b['loop_ratio']:.2f})."
    )
    s = r["sweep"]
    lines.append(
        f"A Dask sweep of {s['runs']} solo12 drops of 1 s (friction, ground height and payload edited per run; "
        f"{s['errors']} errors): one worker {s['one_worker_s']:.1f} s, two workers {s['two_workers_s']:.1f} s "
        f"(speed-up {s['speedup']:.2f}, median of {s['rounds']} alternating rounds)."
    )
    return "\n".join(lines)


def us(x) -> str:
    if x is None:
        return "—"
    return f"{x * 1e6:.1f} µs" if x < 1e-3 else f"{x * 1e3:.2f} ms"


def paired(row: dict, ours: str, theirs: str) -> str:
    """The paired ratio (median of alternating rounds) where measured, else the ratio of the medians."""
    r = row.get(ours + "_ratio")
    return f"{r:.2f}" if r is not None else ratio(row.get(ours), row.get(theirs))


def ratio(a, b) -> str:
    return "—" if a is None or b is None else f"{a / b:.2f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--kinematics", action="store_true", help="only the kinematics tables")
    p.add_argument("--loops", action="store_true", help="only the closed-loop table")
    p.add_argument("--mujoco", action="store_true", help="only the table against MuJoCo")
    p.add_argument("--contacts", action="store_true", help="only the legged robots standing beside MuJoCo")
    p.add_argument("--pairs", action="store_true", help="only contact between bodies: pairs, and scenes beside MuJoCo")
    p.add_argument("--adaptive", action="store_true", help="only the adaptive integrators' table")
    p.add_argument("--dask", action="store_true", help="only the Dask sweep, dataset and cold starts")
    p.add_argument("--derivatives", action="store_true", help="only the derivatives' tables")
    p.add_argument("--contact-derivatives", action="store_true", help="only the contact step's Jacobians")
    p.add_argument("--first-hour", action="store_true", help="only the small calls and a fresh process's first calls")
    args = p.parse_args(argv)
    import pinocchio as pin

    if args.first_hour:
        r = {"small_calls": small_calls(args.quick), "startup": startup(3 if args.quick else 7)}
        print(json.dumps(r, indent=2) if args.json else report_first_hour(r))
        return 0

    if args.contact_derivatives:
        r = {"contact_step": contact_step_row(args.quick)}
        print(json.dumps(r, indent=2) if args.json else report_contact_step(r["contact_step"]))
        return 0

    if args.derivatives:
        r = derivatives(args.quick)
        if not args.no_plot:
            r["plot"] = plot_derivatives(r["scaling"])
        print(json.dumps(r, indent=2) if args.json else report_derivatives(r))
        return 0

    if args.dask:
        r = dask_scaling(args.quick)
        print(json.dumps(r, indent=2) if args.json else report_dask(r))
        return 0
    if args.pairs:
        r = pair_scenes(args.quick)
        print(json.dumps(r, indent=2) if args.json else report_pairs(r))
        return 0
    if args.contacts:
        r = contact_scenes(args.quick)
        print(json.dumps(r, indent=2) if args.json else report_contacts(r))
        return 0
    if args.mujoco:
        r = against_mujoco(args.quick)
        print(json.dumps(r, indent=2) if args.json else report_mujoco(r))
        return 0
    if args.adaptive:
        rows = adaptive(args.quick)
        print(json.dumps(rows, indent=2) if args.json else report_adaptive(rows))
        print(json.dumps(rope_fall(args.quick), indent=2))
        return 0
    if args.loops:
        rows = closed_loops(args.quick)
        print(json.dumps(rows, indent=2) if args.json else report_loops(rows))
        return 0

    results: dict = {
        "machine": f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "pinocchio": pin.__version__,
        "denoc_pin": dp.__version__,
    }
    results["kinematics"] = []
    for name, ff in (("panda", False), ("talos_reduced", False), ("solo12", True)):
        model, pm = robot_models(name, free_flyer=ff)
        results["kinematics"].append(kinematics(name, model, pm, args.quick))
    model, pm = robot_models("panda")
    results["kinematics_batch"] = kinematics_batch(model, pm, 2000 if args.quick else 10000)
    if args.kinematics:
        print(json.dumps(results, indent=2) if args.json else report_kinematics(results))
        return 0
    chains = [100, 1000, 10000] if args.quick else [100, 1000, 10000, 100000]
    rows = []
    for name in ["panda", "talos_reduced", "ur5", "kinova"]:  # ur5 and kinova: small arms, where fixed costs weigh
        model, pm = robot_models(name)
        rows.append(per_call(name, model, pm, args.quick))
    # A floating base too (not among the targets): the 6-DOF root takes the multi-DOF paths of the recursions.
    model, pm = robot_models("solo12", free_flyer=True)
    rows.append(per_call("solo12 (free-flyer)", model, pm, args.quick))
    for n in chains:
        model = dp.models.chain(n)
        rows.append(per_call(f"chain {n}", model, dp.to_pinocchio(model) if n <= PIN_MAX_CHAIN else None, args.quick))
    results["per_call"] = rows
    model, pm = robot_models("panda")
    results["batch_panda"] = batch(model, pm, 2000 if args.quick else 10000)
    results["memory"] = []
    for n in chains:
        mb, build = peak_memory("denoc_pin", n)
        entry = {"n": n, "denoc_pin_MB": mb, "build_s": build}
        if n <= PIN_MAX_CHAIN:
            entry["pinocchio_MB"] = peak_memory("pinocchio", n)[0]
        results["memory"].append(entry)
    acc_sizes = [100, 200, 1000, 10000] + ([] if args.quick else [100000])
    results["accuracy"] = [accuracy(n, n <= PIN_MAX_CHAIN) for n in acc_sizes]
    results["conditioning"] = [factor_conditioning(n) for n in (10, 100, 1000)]
    results["linear"] = linear_scaling([1000, 10000] + ([] if args.quick else [100000]))
    results["closed_loops"] = closed_loops(args.quick)
    results["adaptive"] = adaptive(args.quick)
    results["rope_fall"] = rope_fall(args.quick)
    results["mujoco"] = against_mujoco(args.quick)
    results["dask"] = dask_scaling(args.quick)
    results["cold_start_s"] = cold_start()
    results["first_use"] = first_use()
    scaling = [10, 30, 100, 200, 1000, 3000, 10000] + ([] if args.quick else [30000, 100000])
    results["scaling"] = []
    for n in scaling:
        model = dp.models.chain(n)
        data = model.create_data()
        q, v, a = state(model)
        entry = {
            "n": n,
            "ID": median_time(lambda m=model, d=data, q=q, v=v, a=a: dp.inverse_dynamics(m, d, q, v, a), 0.05),
        }
        entry["FD"] = median_time(lambda m=model, d=data, q=q, v=v, a=a: dp.forward_dynamics(m, d, q, v, a), 0.05)
        if n <= PIN_MAX_CHAIN:
            pm = dp.to_pinocchio(model)
            pd = pm.createData()
            entry["rnea"] = median_time(lambda pm=pm, pd=pd, q=q, v=v, a=a: pin.rnea(pm, pd, q, v, a), 0.05)
            entry["aba"] = median_time(lambda pm=pm, pd=pd, q=q, v=v, a=a: pin.aba(pm, pd, q, v, a), 0.05)
        results["scaling"].append(entry)
    if not args.no_plot:
        results["plot"] = plot(results["scaling"], results["mujoco"]["rows"])
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(report(results))
    return 0


def plot(scaling, mujoco_rows=()) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for key, style, label in [
        ("ID", "o-", "denoc_pin inverse_dynamics"),
        ("FD", "s-", "denoc_pin forward_dynamics"),
        ("rnea", "o--", "pinocchio rnea"),
        ("aba", "s--", "pinocchio aba"),
    ]:
        pts = [(e["n"], e[key] / e["n"]) for e in scaling if key in e]
        if pts:
            x, y = zip(*pts, strict=True)
            ax.loglog(x, np.array(y) * 1e6, style, label=label)
    pts = [(r["nv"], r["mj_forward"] / r["nv"]) for r in mujoco_rows if r["case"].startswith("chain")]
    if pts:
        x, y = zip(*pts, strict=True)
        ax.loglog(x, np.array(y) * 1e6, "^:", label="mujoco mj_forward (stops at 1,023 bodies)")
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    ax.yaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 30, 100]))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("DOF of the spatial chain")
    ax.set_ylabel("time per call per DOF [µs]")
    ax.set_title("Time per DOF: flat = linear scaling")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    out = HERE / "scaling.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return str(out)


def plot_derivatives(scaling) -> str | None:
    """benchmarks/derivatives.png: the derivatives' time per call on spatial chains, beside Pinocchio's."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for key, style, label in [
        ("ID_d", "o-", "denoc_pin inverse_dynamics_derivatives"),
        ("FD_d", "s-", "denoc_pin forward_dynamics_derivatives"),
        ("rnea_d", "o--", "pinocchio computeRNEADerivatives"),
        ("aba_d", "s--", "pinocchio computeABADerivatives"),
    ]:
        pts = [(e["n"], e[key]) for e in scaling if key in e]
        if pts:
            x, y = zip(*pts, strict=True)
            ax.loglog(x, np.array(y) * 1e6, style, label=label)
    n = np.array([e["n"] for e in scaling], dtype=float)
    guide = 0.5 * (n / n[0]) ** 2 * scaling[0]["ID_d"] * 1e6
    ax.loglog(n, guide, ":", color="gray", label="∝ n² (a chain's depth is n)")
    ax.set_xlabel("DOF of the spatial chain")
    ax.set_ylabel("time per call [µs]")
    ax.set_title("Derivatives of the dynamics: O(n·d), d = n on a chain")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    out = HERE / "derivatives.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return str(out)


def report_kinematics(r: dict) -> str:
    lines = [f"denoc_pin {r['denoc_pin']} vs Pinocchio {r['pinocchio']} — {r['machine']}", ""]
    lines.append(
        "Kinematics per call from Python (ratio = denoc_pin / Pinocchio, median over alternating rounds): a frame's "
        "Jacobian + placement, one kinematics pass (frame_jacobian + update_frame_placement against "
        "computeFrameJacobian + updateFramePlacement) in each reference, the centroidal map (computeCentroidalMap), "
        "its time variation (dccrba) and the centre of mass (centerOfMass):"
    )
    lines.append("| case | nv | frame | local | world | local_world_aligned | A_G | dA_G | com |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for k in r["kinematics"]:
        cells = " | ".join(
            f"{us(k[c][0])} / {us(k[c][1])} = {k[c][2]:.2f}"
            for c in ("local", "world", "local_world_aligned", "centroidal_map", "centroidal_map_dot", "com")
        )
        lines.append(f"| {k['case']} | {k['nv']} | {k['frame']} | {cells} |")
    b = r["kinematics_batch"]
    lines.append(
        f"\nBatch of {b['B']} panda states, placement + world Jacobian of panda_hand_tcp: "
        f"{b['denoc_pin_per_s']:,.0f} states/s vs a Python loop over Pinocchio {b['pinocchio_loop_per_s']:,.0f} "
        f"states/s ({b['speedup']:.2f}x)"
    )
    return "\n".join(lines)


def report_adaptive(rows: list[dict]) -> str:
    lines = [
        "Adaptive integrators, compiled (τ constant) against scipy driving the same right-hand side (a callable τ); "
        "per FD call against RK4 at dt = 1 ms:",
        "| case | method | steps | FD calls (scipy's) | compiled | scipy | ratio | per FD call | RK4's | ratio |",
    ]
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for e in rows:
        lines.append(
            f"| {e['case']} | {e['method']} | {e['steps']:,} | {e['fd_calls']:,} ({e['scipy_fd_calls']:,}) | "
            f"{e['compiled_s'] * 1e3:.1f} ms | {e['scipy_s'] * 1e3:.1f} ms | {e['ratio']:.3f} | {us(e['per_fd'])} | "
            f"{us(e['rk4_per_fd'])} | {e['per_fd'] / e['rk4_per_fd']:.2f} |"
        )
    return "\n".join(lines)


def report_loops(r: dict) -> str:
    lines = ["Closed loops, per call from Python (ratios: medians of alternating rounds):"]
    lines.append(
        "| mechanism | nv | constraints | constrained_forward_dynamics | tree FD | ratio | constraintDynamics | ratio "
        "| batch, per state |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for c in r.get("per_call", []):
        g = c.get
        pin_ratio = "—" if g("CFD_ratio") is None else f"{g('CFD_ratio'):.2f}"
        lines.append(
            f"| {c['case']} | {c['nv']} | {c['constraints']} | {us(g('CFD'))} | {us(g('FD'))} | {g('CFD/FD'):.2f} | "
            f"{us(g('constraintDynamics'))} | {pin_ratio} | {us(g('CFD_batch'))} |"
        )
    s = r.get("simulation")
    if s:
        lines += ["", f"Simulation of the {s['case']}, {s['seconds']:g} s at dt = {s['dt']:g} s (RK4): closed "
                  f"{s['closed']:.3f} s, its spanning tree {s['tree']:.3f} s, ratio {s['ratio']:.2f}"]  # fmt: skip
    return "\n".join(lines)


def report(r: dict) -> str:
    lines = [report_kinematics(r), "", f"denoc_pin {r['denoc_pin']} vs Pinocchio {r['pinocchio']}", ""]
    lines.append(
        "Per call from Python, medians; ratio = denoc_pin / Pinocchio (≤ 1 is faster), the median over "
        "alternating rounds of the two:"
    )
    lines.append("| case | nv | ID | rnea | ratio | FD | aba | ratio | GIM | crba | ratio |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in r["per_call"]:
        g = row.get
        lines.append(
            f"| {row['case']} | {row['nv']} | {us(g('ID'))} | {us(g('rnea'))} | {paired(row, 'ID', 'rnea')} | "
            f"{us(g('FD'))} | {us(g('aba'))} | {paired(row, 'FD', 'aba')} | {us(g('GIM'))} | {us(g('crba'))} | "
            f"{paired(row, 'GIM', 'crba')} |"
        )
    b = r["batch_panda"]
    lines += ["", f"Batch of {b['B']} panda states ({b['threads']} threads), states per second (speed-up = denoc_pin's "
              "rate over the peer's):", "| | denoc_pin | rnea/abaInParallel (ModelPool) | speed-up | Python loop over "
              "rnea/aba | speed-up |", "|---|---|---|---|---|---|"]  # fmt: skip
    for k in ("ID", "FD"):
        e, par = b[k], b[k + "_parallel"]
        lines.append(
            f"| {k} | {par['denoc_pin_per_s']:,.0f} | {par['pinocchio_loop_per_s']:,.0f} | {par['speedup']:.2f} | "
            f"{e['pinocchio_loop_per_s']:,.0f} | {e['speedup']:.2f} |"
        )
    lines += ["", report_loops(r.get("closed_loops", {}))]
    if r.get("adaptive"):
        lines += ["", report_adaptive(r["adaptive"])]
    if r.get("rope_fall"):
        f = r["rope_fall"]
        lines += ["", f"Rope fall (100 DOF, {f['t_final']} s of RK4 at 1 ms): simulate {f['simulate_s']:.3f} s, "]
        lines[-1] += f"the same loop driven by pinocchio.aba {f['pinocchio_loop_s']:.3f} s, ratio {f['ratio']:.2f}"
    if r.get("mujoco"):
        lines += ["", report_mujoco(r["mujoco"])]
    if r.get("dask"):
        lines += ["", report_dask(r["dask"])]
    lines += ["", "Huge chains (fresh process each): build time and peak resident memory of the whole process"]
    lines.append("| n | build | denoc_pin peak RSS | pinocchio peak RSS |")
    lines.append("|---|---|---|---|")
    for m in r["memory"]:
        pin_mb = f"{m['pinocchio_MB']:.0f} MB" if "pinocchio_MB" in m else "—"
        lines.append(f"| {m['n']:,} | {m['build_s']:.2f} s | {m['denoc_pin_MB']:.0f} MB | {pin_mb} |")
    lines += ["", "Accuracy on spatial chains, random |q| ≤ π, |v|, |a| ≤ 1, worst of 3 states:"]
    lines.append(
        "| n | FD(ID(a)) forward error | floor: q̈ moved by τ(1 ± ε) | ID(FD(τ)) backward error "
        "| pinocchio forward | pinocchio backward | dense GE (Cholesky) forward | dense LU forward |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    for a in r["accuracy"]:
        keys = ("pin_forward", "pin_backward", "floor", "dense_ge", "dense_lu")
        cell = {k: (f"{a[k]:.1e}" if k in a else "—") for k in keys}
        lines.append(
            f"| {a['n']:,} | {a['forward']:.1e} | {cell['floor']} | {a['backward']:.1e} | {cell['pin_forward']} "
            f"| {cell['pin_backward']} | {cell['dense_ge']} | {cell['dense_lu']} |"
        )
    if "conditioning" in r:
        lines += ["", "κ₂ of the GIM and of the factors of GE (I = L U) and RGE (I = U' L'), one random state:"]
        lines.append("| n | κ(GIM) | GE: κ(L) | GE: κ(U) | RGE: κ(U') | RGE: κ(L') |")
        lines.append("|---|---|---|---|---|---|")
        for c in r["conditioning"]:
            cells = " | ".join(f"{c[k]:.1e}" for k in ("gim", "ge_L", "ge_U", "rge_U", "rge_L"))
            lines.append(f"| {c['n']:,} | {cells} |")
    if "linear" in r:
        lin = r["linear"]
        lines += ["", "Linear scaling, time per call per DOF, all sizes measured in alternating rounds:"]
        lines.append("| | " + " | ".join(f"n = {n:,}" for n in lin["n"]) + " | spread (max/min − 1) |")
        lines.append("|---" * (len(lin["n"]) + 2) + "|")
        for label in ("ID", "FD"):
            cells = " | ".join(f"{x * 1e9:.0f} ns" for x in lin[label + "_per_dof"])
            lines.append(f"| {label} | {cells} | {lin[label + '_spread']:.0%} |")
    lines += ["", "Scaling, time per call per DOF (spatial chain):"]
    lines.append("| n | ID / DOF | FD / DOF | rnea / DOF | aba / DOF |")
    lines.append("|---|---|---|---|---|")
    for e in r["scaling"]:
        per = {k: (f"{e[k] / e['n'] * 1e9:.0f} ns" if k in e else "—") for k in ("ID", "FD", "rnea", "aba")}
        lines.append(f"| {e['n']:,} | {per['ID']} | {per['FD']} | {per['rnea']} | {per['aba']} |")
    lines += ["", f"Cold start (fresh process, warm kernel cache, import to first FD): {r['cold_start_s']:.2f} s"]
    f = r["first_use"]
    lines.append(
        f"First use after an install (empty kernel cache): import {f['import_s']:.1f} s, loading panda "
        f"{f['load_s']:.1f} s, first FD {f['fd_s']:.1f} s"
    )
    if r.get("plot"):
        lines.append(f"Plot: {r['plot']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
