"""``simulate`` with contacts: the steps of ``contact.kernel`` at a fixed dt, and what each recorded step's contacts
were (``Trajectory.contacts``).

The run is one compiled loop (``contact.kernel.contact_run``) when nothing in it needs Python: τ None, constant or a
``JointPD``, and no shape pairs (coal finds those).  Otherwise each step is one compiled call (``ContactStepper``),
with the callback ``tau(t, q, v)`` and the pairs' detection in Python between them."""

from __future__ import annotations

import time

import numpy as np

from ..algorithms.energy import energy
from ..contact import ContactSettings, ContactStepper
from ..contact.kernel import INFO, contact_batch, contact_run
from ..model import Model, configuration, vector
from ..model.status import NOT_FINITE, raise_for_status
from .control import JointPD

__all__ = ["simulate_batch", "simulate_contacts"]

_FIGURES = ("iterations", "residual", "primal", "dual", "complementarity", "converged")


def simulate_contacts(model: Model, q0, v0, nsteps: int, dt: float, tau, ground, contact, stride: int, progress):
    """(t, Q, V, A, T, KE, PE, W, contacts): the run's rows, every ``stride``-th step recorded (row 0: the start).

    A recorded row's contacts are those of the step that leaves its state: "points" (k, 3) world, "normals" (k, 3),
    "impulses" (k, 3) in the contact frame (t₁, t₂, n), "forces" (k, 3) world (the impulse over dt, on the second
    body), "depths" (k,), "collisions" (the names of the shapes touching, "ground" for the plane), "loop_impulses",
    and the solve's "iterations", "residual", "primal", "dual", "complementarity", "converged"."""
    settings = ContactSettings() if contact is None else contact
    stepper = ContactStepper(model, ground, settings, dt)
    if isinstance(tau, JointPD) and tau.model is not model:
        raise ValueError(f"tau is a JointPD of model {tau.model.name!r}, not of the model simulated ({model.name!r})")
    if stepper.pairs is None and (isinstance(tau, JointPD) or not callable(tau)):
        return _compiled(model, stepper, q0, v0, nsteps, dt, tau, stride, progress)
    return _stepwise(model, stepper, q0, v0, nsteps, dt, tau, stride, progress)


def _law(model: Model, tau) -> tuple:
    if isinstance(tau, JointPD):
        return tau.law()
    zero = np.zeros(model.nv)
    return zero, zero, np.zeros(model.nq), zero, np.array(tau, dtype=float), False


RECORD_SLOTS = 1 << 16
"""Contacts a compiled chunk records at most (rows × the ground's capacity): the chunk's buffers, about 7 MB, are
emptied into ``Trajectory.contacts`` (which keeps the contacts found, not the capacity) after each chunk."""


def _compiled(model: Model, stepper: ContactStepper, q0, v0, nsteps: int, dt: float, tau, stride: int, progress):
    """``contact_run`` in chunks of whole strides, so that a progress bar can move between compiled calls and the
    contact records of a chunk stay within ``RECORD_SLOTS``."""
    nrec = nsteps // stride + 1
    cap, nl = max(stepper.capacity, 1), model.n_constraints
    nq, nv = model.nq, model.nv
    out = (np.empty((nrec, nq)), np.empty((nrec, nv)), np.empty((nrec, nv)), np.empty((nrec, nv)), np.empty(nrec),
           np.empty(nrec), np.empty(nrec), np.zeros((nrec, nl)))  # fmt: skip
    law, info = _law(model, tau), np.zeros(3)
    data, s = stepper.data, stepper
    per_chunk = max(1, min(nrec - 1, RECORD_SLOTS // cap))  # recorded steps a chunk
    chunk = per_chunk * stride
    buf = per_chunk + 1
    rec = (np.zeros(buf, dtype=np.int64), np.empty((buf, cap, 3)), np.empty((buf, cap, 3)), np.empty((buf, cap, 3)),
           np.empty((buf, cap, 3)), np.empty((buf, cap)), np.empty((buf, cap, 3), dtype=np.int64),
           np.empty((buf, INFO["width"])))  # fmt: skip

    def run(q, v, n, now, rows):
        o = tuple(x[rows] for x in out)
        r = tuple(x[: rows.stop - rows.start] for x in rec)
        return contact_run(model.mi, model.mf, data.ws, s.cb, s.lw, s.geo, s.gp, s.sp, s.warm, now, q, v, law, dt, n,
                           stride, o, r, info)  # fmt: skip

    bar = None
    if progress or progress is None:
        run(q0, v0, 0, 0, slice(0, 1))  # compiles or loads the kernel, then one step timed
        t1 = time.perf_counter()
        run(q0, v0, 1, 0, slice(0, 2))
        per_step = time.perf_counter() - t1
        if progress or nsteps * per_step > 2.0:
            from tqdm import tqdm

            bar = tqdm(total=nsteps, unit="step", desc="simulate")
            chunk = min(chunk, max(stride, (nsteps // 100) // stride * stride))
        s.warm[1][:] = -10  # the trial step's warm starts are not the run's
        s.warm[2][:] = 0.0
    names = [c.name for c in model.collisions]
    contacts = []
    q, v, work, done, row = q0, v0, 0.0, 0, 0
    while done < nsteps:
        n = min(chunk, nsteps - done)
        rows = n // stride + 1
        status = run(q, v, n, done, slice(row, row + rows))
        if status:
            _raise(model, status, done, dt, info, q, v)
        out[6][row : row + rows] += work
        q, v, work = out[0][row + rows - 1].copy(), out[1][row + rows - 1].copy(), out[6][row + rows - 1]
        # the chunk's last row is the next chunk's first: its contacts are those of the step that leaves it
        contacts += [_row(rec, i, names, out[7][row + i]) for i in range(rows - 1)]
        done += n
        row += rows - 1
        if bar is not None:
            bar.update(n)
    contacts.append(_row(rec, rows - 1, names, out[7][row]))  # the last row: no step leaves it
    if bar is not None:
        bar.close()
    t = np.arange(nrec) * stride * dt
    return (t, *out[:7], contacts)


def _raise(model: Model, status: int, done: int, dt: float, info, q, v) -> None:
    step = done + int(info[0])
    if status == NOT_FINITE:
        where = int(info[2])
        raise ValueError(f"the state became non-finite at step {step} (t = {step * dt:.6g} s); the largest |v| before "
                         f"it was {info[1]:.3g} (v[{where}]); reduce dt (now {dt:g}) or check the contact "
                         "settings")  # fmt: skip
    raise_for_status(model, status, q, v, None, "tau")


def _row(rec, i: int, names, lam) -> dict:
    """Row i of the compiled run's records as the dict of ``Trajectory.contacts``."""
    RK, RP, RN, RI, RF, RD, RKEY, RINFO = rec
    k = int(RK[i])
    keys = RKEY[i, :k]
    pairs = [("ground", names[b]) if a < 0 else (names[a], names[b]) for a, b, _ in keys]
    figures = {f: float(RINFO[i, INFO[f]]) for f in _FIGURES}
    figures["iterations"], figures["converged"] = int(figures["iterations"]), bool(figures["converged"])
    return {"points": RP[i, :k].copy(), "normals": RN[i, :k].copy(), "impulses": RI[i, :k].copy(),
            "forces": RF[i, :k].copy(), "depths": RD[i, :k].copy(), "collisions": pairs,
            "loop_impulses": np.array(lam)} | figures  # fmt: skip


def _stepwise(model: Model, stepper: ContactStepper, q0, v0, nsteps: int, dt: float, tau, stride: int, progress):
    """One compiled step a call, with the callback τ(t, q, v) and coal's pairs in Python between them."""
    data = model.create_data()
    nrec = nsteps // stride + 1
    Q, V, A, T = (np.empty((nrec, model.nq)), np.empty((nrec, model.nv)), np.empty((nrec, model.nv)),
                  np.empty((nrec, model.nv)))  # fmt: skip
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
        tau_i = vector(tau(t, q.copy(), v.copy()), model.nv, "tau(t, q, v)") if callable(tau) else tau
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
            contacts.append(_summary(rec, names, dt, model.n_constraints))
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


def _summary(rec, names, dt, nl: int) -> dict:
    if rec is None:
        return {"points": np.zeros((0, 3)), "normals": np.zeros((0, 3)), "impulses": np.zeros((0, 3)),
                "forces": np.zeros((0, 3)), "depths": np.zeros(0), "collisions": [], "loop_impulses": np.zeros(nl),
                "iterations": 0, "residual": 0.0, "primal": 0.0, "dual": 0.0, "complementarity": 0.0,
                "converged": True}  # fmt: skip
    frames, imp = rec["frames"], rec["impulses"]
    forces = np.einsum("kij,kj->ki", frames, imp) / dt if len(imp) else np.zeros((0, 3))
    pairs = [("ground", names[k[1]]) if k[0] == "ground" else (names[k[1]], names[k[2]]) for k in rec["keys"]]
    return {"points": rec["points"], "normals": frames[:, :, 2] if len(frames) else np.zeros((0, 3)),
            "impulses": imp, "forces": forces, "depths": rec["depths"], "collisions": pairs,
            "loop_impulses": rec["loop_impulses"]} | {f: rec[f] for f in _FIGURES}  # fmt: skip


def simulate_batch(model: Model, q0s, v0s=None, t_final: float = 1.0, dt: float = 1e-3, tau=None, ground=None,
                   contact=None, record_every: int = 1, threads: int | None = None) -> dict:  # fmt: skip
    """Many runs of one contact scene at once, from the states q0s (B, nq) and v0s (B, nv; default zeros), on all
    cores: each run is ``dp.simulate(model, q0s[b], v0s[b], t_final, dt, tau=tau, ground=ground, contact=contact,
    record_every=record_every)``'s compiled loop, with its own warm starts, the runs shared among numba's threads.

    tau: None, a constant (nv,) or a ``dp.JointPD`` of the model (a callable is not taken: the runs do not return to
    Python); shape pairs (coal) are not taken either.  threads: how many of numba's threads (default all).
    Returns a dict: "t" (T,), "q" (B, T, nq), "v" (B, T, nv), "solved" (B,) the share of each run's recorded steps
    whose contact solve converged, and "errors" {b: message} for the runs that failed (their rows from the failure
    on are NaN)."""
    import numba

    q0s = np.atleast_2d(np.asarray(q0s, dtype=float))
    B = len(q0s)
    q0s = np.ascontiguousarray(np.stack([configuration(model, q, f"q0s[{i}]") for i, q in enumerate(q0s)]))
    v0s = np.zeros((B, model.nv)) if v0s is None else np.ascontiguousarray(np.atleast_2d(np.asarray(v0s, float)))
    if v0s.shape != (B, model.nv) or not np.isfinite(v0s).all():
        raise ValueError(f"v0s must be finite and (B, nv) = ({B}, {model.nv}) like q0s, got {v0s.shape}")
    if callable(tau) and not isinstance(tau, JointPD):
        raise ValueError("simulate_batch takes tau None, a constant (nv,) array or a dp.JointPD, not a callable")
    if isinstance(tau, JointPD) and tau.model is not model:
        raise ValueError(f"tau is a JointPD of model {tau.model.name!r}, not of the model simulated ({model.name!r})")
    if tau is not None and not isinstance(tau, JointPD):
        tau = vector(tau, model.nv, "tau")
    if not (np.isfinite(dt) and dt > 0 and np.isfinite(t_final) and t_final >= dt):
        raise ValueError(f"t_final and dt must be positive numbers with t_final >= dt, got {t_final} and {dt}")
    stride = int(record_every)
    if stride < 1:
        raise ValueError(f"record_every must be >= 1, got {record_every}")
    settings = ContactSettings() if contact is None else contact
    stepper = ContactStepper(model, ground, settings, dt)
    if stepper.pairs is not None:
        raise ValueError(f"model {model.name!r} has shape pairs that may touch (coal finds them in Python): "
                         "simulate_batch runs the ground's contacts only; use dp.simulate per run")  # fmt: skip
    nsteps = int(round(t_final / dt))
    T = nsteps // stride + 1
    Q, V = np.full((B, T, model.nq), np.nan), np.full((B, T, model.nv), np.nan)
    status, solved = np.zeros(B, dtype=np.int64), np.zeros(B)
    zero = np.zeros(model.nv)
    law = _law(model, zero if tau is None else tau)
    nthreads = numba.get_num_threads() if threads is None else int(threads)
    nchunks = max(1, min(B, nthreads))
    data = stepper.data
    contact_batch(nchunks, model.mi, model.mf, data.ws, stepper.cb, stepper.lw, stepper.geo, stepper.gp, stepper.sp,
                  len(stepper.warm[1]), max(stepper.capacity, 1), law, q0s, v0s, float(dt), nsteps, stride, Q, V,
                  status, solved)  # fmt: skip
    errors = {}
    for b in np.flatnonzero(status):
        errors[int(b)] = "the state became non-finite" if status[b] == NOT_FINITE else f"status {status[b]}"
    for b in errors:  # rows past the failure: NaN (the kernel stopped writing there)
        bad = ~np.isfinite(Q[b]).all(axis=1)
        first = int(np.argmax(bad)) if bad.any() else T
        Q[b, first:], V[b, first:] = np.nan, np.nan
    return {"t": np.arange(T) * stride * dt, "q": Q, "v": V, "solved": solved, "errors": errors}
