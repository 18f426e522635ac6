"""``simulate`` with contacts: the steps of ``contact.pipeline`` at a fixed dt, and what each recorded step's contacts
were (``Trajectory.contacts``).

The run is one compiled loop (``contact.pipeline.contact_run``) when nothing in it needs Python: τ None, constant or a
``JointPD``, and no shape pair left to coal (the compiled narrow phase answers every pair in the step, unless
``ContactStepper(compiled_pairs=False)``).  Otherwise each
step is one compiled call (``ContactStepper``), with the callback ``tau(t, q, v)`` and coal's pairs in Python between
them."""

from __future__ import annotations

import os
import time

import numpy as np

from ..algorithms.energy import energy
from ..algorithms.protocol import in_pieces
from ..algorithms.tree_entries import aba_entry
from ..contact import ContactSettings, ContactStepper
from ..contact.pipeline import contact_run, record_rest
from ..contact.stepping import INFO
from ..core.records import ContactRecords, JointLaw, RunOutput, contact_records, run_output
from ..kernel_cache import prepare
from ..model import Model, vector
from ..model.status import NOT_FINITE, raise_for_status
from .control import JointPD, run_inputs
from .rk4 import rk4_kernel

__all__ = ["simulate_batch", "simulate_contacts"]

_FIGURES = ("iterations", "residual", "primal", "dual", "complementarity", "converged")


def simulate_contacts(model: Model, q0, v0, nsteps: int, dt: float, tau, ground, contact, stride: int, progress):
    """(t, Q, V, A, T, KE, PE, W, contacts): the run's rows, every ``stride``-th step recorded (row 0: the start).

    A recorded row's contacts are those of the step that leaves its state: "points" (k, 3) world, "normals" (k, 3),
    "impulses" (k, 3) in the contact frame (t₁, t₂, n), "forces" (k, 3) world (the impulse over dt, on the second
    body), "depths" (k,), "collisions" (the names of the shapes touching, "ground" for the plane), "loop_impulses",
    and the solve's "iterations", "residual", "primal", "dual", "complementarity", "converged"."""
    settings = ContactSettings() if contact is None else contact
    if isinstance(tau, JointPD) and tau.model is not model:
        raise ValueError(f"tau is a JointPD of model {tau.model.name!r}, not of the model simulated ({model.name!r})")
    stepper = _take_stepper(model, ground, settings, dt)
    try:
        if stepper.pairs is None and (isinstance(tau, JointPD) or not callable(tau)):
            return _compiled(model, stepper, q0, v0, nsteps, dt, tau, stride, progress)
        return _stepwise(model, stepper, q0, v0, nsteps, dt, tau, stride, progress)
    finally:
        object.__setattr__(model, LAST_STEPPER, ((ground, settings, float(dt)), stepper))


LAST_STEPPER = "_last_stepper"
"""The model's attribute that keeps its last finished run's stepper and that run's scene (ground, settings, dt): the
next run of the same scene takes it back (its warm starts reset) instead of packing the collisions and sizing the work
areas again (a few ms, as much as hundreds of steps of a small robot).  One a model (a sweep over grounds keeps no
pile of them), gone with the model (the cycle model → stepper → model is the collector's), not pickled; a run takes
it out while it runs, so that two threads never share one."""


def _take_stepper(model: Model, ground, settings: ContactSettings, dt: float) -> ContactStepper:
    """The model's last run's stepper if it was of this scene (reset), or a new one."""
    key, stepper = model.__dict__.pop(LAST_STEPPER, (None, None))
    if stepper is None or key != (ground, settings, float(dt)):
        return ContactStepper(model, ground, settings, dt)
    stepper.reset()
    return stepper


def _law(model: Model, tau) -> JointLaw:
    if isinstance(tau, JointPD):
        return tau.law()
    zero = np.zeros(model.nv)
    return JointLaw(zero, zero, np.zeros(model.nq), zero, np.array(tau, dtype=float), False)


RECORD_SLOTS = 1 << 16
"""Contacts a compiled chunk records at most (rows × the ground's capacity): the chunk's buffers, about 7 MB, are
emptied into ``Trajectory.contacts`` (which keeps the contacts found, not the capacity) after each chunk."""


def _buffers(model: Model, stepper: ContactStepper, nrec: int, stride: int) -> tuple[ContactRecords, int]:
    """The contact records of one compiled chunk and the steps a chunk runs: whole strides, at most
    ``RECORD_SLOTS`` recorded contacts."""
    cap = len(stepper.scene.contacts.depth)
    per_chunk = max(1, min(nrec - 1, RECORD_SLOTS // cap))  # recorded steps a chunk
    return contact_records(per_chunk + 1, cap), per_chunk * stride


def _outputs(model: Model, nrec: int) -> RunOutput:
    """``contact_run``'s out, nrec rows (Λ zero for a tree, which has none)."""
    out = run_output(nrec, model.nq, model.nv, model.n_constraints)
    out.LAM[:] = 0.0
    return out


def _chunks(model: Model, s: ContactStepper, law, q0, v0, nsteps: int, dt: float, stride: int, out, rec, info,
            chunk: int, take) -> int:  # fmt: skip
    """``contact_run`` from (q0, v0) over nsteps, ``chunk`` steps a call, into ``out``; after each call
    ``take(rows, row, n)``: the chunk's records hold rows 0..rows-1 (the last row is the next chunk's first: its
    contacts are those of the step that leaves it), ``row`` is where the chunk's first row is in ``out``, n its
    steps.  Returns 0, or the status of the step that failed with info[0] that step."""
    q, v, work, done, row = q0, v0, 0.0, 0, 0
    while done < nsteps:
        n = min(chunk, nsteps - done)
        rows = n // stride + 1
        o = RunOutput(*(x[row : row + rows] for x in out))
        r = ContactRecords(*(x[:rows] for x in rec))
        status = contact_run(model.mi, model.mf, s.data.ws, s.cb, s.lw, s.scene, done, q, v, law, dt, n, stride, o,
                             r, info)  # fmt: skip
        if status:
            info[0] += done
            return status
        out.W[row : row + rows] += work
        q, v, work = out.Q[row + rows - 1].copy(), out.V[row + rows - 1].copy(), out.W[row + rows - 1]
        take(rows, row, n)
        done += n
        row += rows - 1
    return 0


def _nothing(*_) -> None:
    pass


def _compiled(model: Model, stepper: ContactStepper, q0, v0, nsteps: int, dt: float, tau, stride: int, progress):
    """``contact_run`` in chunks of whole strides (``_chunks``), so that a progress bar can move between compiled
    calls and the contact records of a chunk stay within ``RECORD_SLOTS``."""
    nrec = nsteps // stride + 1
    out = _outputs(model, nrec)
    rec, chunk = _buffers(model, stepper, nrec, stride)
    law, info, s = _law(model, tau), np.zeros(3), stepper
    bar = None
    if progress or progress is None:
        trial = _outputs(model, 2)
        _chunks(model, s, law, q0, v0, 1, dt, 1, trial, rec, info, 1, _nothing)  # compiles or loads the kernel
        t1 = time.perf_counter()
        _chunks(model, s, law, q0, v0, 1, dt, 1, trial, rec, info, 1, _nothing)  # one step timed
        per_step = time.perf_counter() - t1
        if progress or nsteps * per_step > 2.0:
            from tqdm import tqdm

            bar = tqdm(total=nsteps, unit="step", desc="simulate")
            chunk = min(chunk, max(stride, (nsteps // 100) // stride * stride))
        s.reset()  # the trial steps' warm starts are not the run's
    names = [c.name for c in model.collisions]
    contacts: list = []
    last = [0]

    def take(rows, row, n):
        contacts.extend(_row(rec, i, names, out.LAM[row + i]) for i in range(rows - 1))
        last[0] = rows - 1
        if bar is not None:
            bar.update(n)

    info[:] = 0.0
    status = _chunks(model, s, law, q0, v0, nsteps, dt, stride, out, rec, info, chunk, take)
    if bar is not None:
        bar.close()
    if status:
        _raise(model, status, int(info[0]), dt, info)
    contacts.append(_row(rec, last[0], names, out.LAM[nrec - 1]))  # the last row: no step leaves it
    t = np.arange(nrec) * stride * dt
    return (t, *out[:7], contacts)


def _raise(model: Model, status: int, step: int, dt: float, info) -> None:
    """The error of a compiled run that stopped at ``step`` with ``status`` (``_chunks``)."""
    if status == NOT_FINITE:
        where = int(info[2])
        raise ValueError(f"the state became non-finite at step {step} (t = {step * dt:.6g} s); the largest |v| before "
                         f"it was {info[1]:.3g} (v[{where}]); reduce dt (now {dt:g}) or check the contact "
                         "settings")  # fmt: skip
    raise_for_status(model, status, None, None, None, "tau")


def _row(rec: ContactRecords, i: int, names, lam) -> dict:
    """Row i of a run's records as the dict of ``Trajectory.contacts`` (the compiled and the stepwise runs')."""
    k = int(rec.count[i])
    keys = rec.keys[i, :k]
    pairs = [("ground", names[b]) if a < 0 else (names[a], names[b]) for a, b, _ in keys]
    figures = {f: float(rec.info[i, INFO[f]]) for f in _FIGURES}
    figures["iterations"], figures["converged"] = int(figures["iterations"]), bool(figures["converged"])
    return {"points": rec.points[i, :k].copy(), "normals": rec.normals[i, :k].copy(),
            "impulses": rec.impulses[i, :k].copy(), "forces": rec.forces[i, :k].copy(),
            "depths": rec.depths[i, :k].copy(), "collisions": pairs,
            "loop_impulses": np.array(lam)} | figures  # fmt: skip


def _stepwise(model: Model, stepper: ContactStepper, q0, v0, nsteps: int, dt: float, tau, stride: int, progress):
    """One compiled step a call, with the callback τ(t, q, v) and coal's pairs in Python between them; each recorded
    step's contacts through ``record_step``, as the compiled run records them."""
    data = model.create_data()
    nrec = nsteps // stride + 1
    out = _outputs(model, nrec)
    Q, V, A, T, KE, PE, W = out.Q, out.V, out.A, out.T, out.KE, out.PE, out.W
    contacts = []
    bar = None
    if progress or (progress is None and nsteps > 20000):
        from tqdm import tqdm

        bar = tqdm(total=nsteps, unit="step", desc="simulate")
    q, v, work, row = q0.copy(), v0.copy(), 0.0, 0
    names = [c.name for c in model.collisions]
    rec = contact_records(1, len(stepper.scene.contacts.depth))  # a recorded step's contacts, emptied by _row
    for i in range(nsteps + 1):
        t = i * dt
        tau_i = vector(tau(t, q.copy(), v.copy()), model.nv, "tau(t, q, v)") if callable(tau) else tau
        last = i == nsteps
        if last:
            q1, v1 = q, v
        else:
            q1, v1, _ = stepper.step(q, v, tau_i)
            if not (np.isfinite(q1).all() and np.isfinite(v1).all()):
                raise ValueError(f"the state became non-finite at step {i + 1} (t = {(i + 1) * dt:.6g} s); reduce dt "
                                 f"(now {dt:g}) or check the contact settings")  # fmt: skip
        if i % stride == 0:
            Q[row], V[row], T[row], W[row] = q, v, tau_i, work
            A[row] = (v1 - v) / dt if not last else (A[row - 1] if row else 0.0)
            KE[row], PE[row] = energy(model, data, q, v)
            if len(rec.points[0]) < len(stepper.scene.contacts.depth):  # the scene grew: shape pairs
                rec = contact_records(1, len(stepper.scene.contacts.depth))
            if last:
                record_rest(0, rec)
                lam = np.zeros(model.n_constraints)
            else:
                stepper.record(0, rec)
                lam = stepper.scene.warm.loops.copy()
            contacts.append(_row(rec, 0, names, lam))
            row += 1
        if not last:
            work += dt * float(tau_i @ v1)
        q, v = q1, v1
        if bar is not None and not last:
            bar.update(1)
    if bar is not None:
        bar.close()
    t = np.arange(nrec) * stride * dt
    return t, Q, V, A, T, KE, PE, W, contacts


def simulate_batch(model: Model, q0s, v0s=None, t_final: float = 1.0, dt: float = 1e-3, tau=None, ground=None,
                   contact=None, record_every: int = 1, threads: int | None = None) -> dict:  # fmt: skip
    """Many runs of one contact scene at once, from the states q0s (B, nq) and v0s (B, nv; default zeros), on all
    cores: each run is ``dp.simulate(model, q0s[b], v0s[b], t_final, dt, tau=tau, ground=ground, contact=contact,
    record_every=record_every)``'s compiled loop, with its own warm starts, the runs shared among threads (the
    compiled loop releases the GIL).  Without ground and contact: ``dp.simulate``'s compiled RK4 loop for each run
    (a tree under None or a constant τ).

    tau: None, a constant (nv,) or a ``dp.JointPD`` of the model (a callable is not taken: the runs do not return to
    Python); shape pairs left to coal are not taken either (the compiled narrow phase's are).  threads: how many
    threads (default one per core).
    Returns a dict: "t" (T,), "q" (B, T, nq), "v" (B, T, nv), "solved" (B,) the share of each run's recorded steps
    whose contact solve converged, and "errors" {b: message} for the runs that failed (their rows from the failure
    on are NaN)."""
    q0s, v0s, tau = run_inputs(model, q0s, v0s, tau, "simulate_batch")
    B = len(q0s)
    if not (np.isfinite(dt) and dt > 0 and np.isfinite(t_final) and t_final >= dt):
        raise ValueError(f"t_final and dt must be positive numbers with t_final >= dt, got {t_final} and {dt}")
    stride = int(record_every)
    if stride < 1:
        raise ValueError(f"record_every must be >= 1, got {record_every}")
    nthreads = max(1, min(B, (os.cpu_count() or 1) if threads is None else int(threads)))
    if ground is None and contact is None:
        return _rk4_batch(model, q0s, v0s, int(round(t_final / dt)), dt, tau, stride, nthreads)
    settings = ContactSettings() if contact is None else contact
    steppers = [ContactStepper(model, ground, settings, dt) for _ in range(nthreads)]  # private workspaces
    if steppers[0].pairs is not None:
        raise ValueError(f"model {model.name!r} has shape pairs that may touch which coal answers in Python: "
                         "simulate_batch runs the ground's contacts only; use dp.simulate per run")  # fmt: skip
    nsteps = int(round(t_final / dt))
    T = nsteps // stride + 1
    Q, V = np.full((B, T, model.nq), np.nan), np.full((B, T, model.nv), np.nan)
    solved, errors = np.zeros(B), {}
    law = _law(model, np.zeros(model.nv) if tau is None else tau)

    def runs(worker: int) -> None:
        s = steppers[worker]
        rec, chunk = _buffers(model, s, T, stride)
        scratch = _outputs(model, T)  # A, T, KE, PE, W, Λ: written row by row each run, not returned
        for b in range(worker * B // nthreads, (worker + 1) * B // nthreads):
            s.reset()  # a run's own warm starts
            out, info, ok = scratch._replace(Q=Q[b], V=V[b]), np.zeros(3), [0.0]

            def take(rows, row, n, ok=ok):  # the steps whose solve converged
                ok[0] += rec.info[: rows - 1, INFO["converged"]].sum()

            status = _chunks(model, s, law, q0s[b], v0s[b], nsteps, dt, stride, out, rec, info, chunk, take)
            solved[b] = ok[0] / max(T - 1, 1)
            if status:
                try:
                    _raise(model, status, int(info[0]), dt, info)
                except ValueError as e:
                    errors[b] = str(e)  # the rows after the failing step were never written: NaN

    in_pieces(runs, nthreads)  # the runs on the call protocol's threads
    return {"t": np.arange(T) * stride * dt, "q": Q, "v": V, "solved": solved, "errors": dict(sorted(errors.items()))}


def _rk4_batch(model: Model, q0s, v0s, nsteps: int, dt: float, tau, stride: int, nthreads: int) -> dict:
    """``simulate_batch`` without contacts: ``rk4_kernel`` for each run (``dp.simulate``'s compiled RK4 loop, the
    same numbers), the runs shared among threads (``protocol.in_pieces``; the loop releases the GIL), a workspace a
    thread.  A tree under None or a constant τ: the closed loops' and a ``JointPD``'s runs are ``dp.simulate``'s."""
    if model.n_constraints:
        raise ValueError(f"model {model.name!r} has closed loops: simulate_batch runs trees without contacts; use "
                         "dp.simulate per run")  # fmt: skip
    if isinstance(tau, JointPD):
        raise ValueError("simulate_batch without contacts takes tau None or a constant (nv,) array; a dp.JointPD "
                         "runs with a ground (or dp.simulate per run)")  # fmt: skip
    tau = np.zeros(model.nv) if tau is None else tau
    B, T, nv = len(q0s), nsteps // stride + 1, model.nv
    Q, V = np.full((B, T, model.nq), np.nan), np.full((B, T, nv), np.nan)
    errors: dict = {}
    prepare(aba_entry)  # before rk4_kernel compiles (simulate._simulate_compiled does the same)

    def runs(worker: int) -> None:
        ws = model.create_data().ws
        s = run_output(T, model.nq, nv, 0)  # A, KE, PE, W, Λ: written row by row each run, not returned
        for b in range(worker * B // nthreads, (worker + 1) * B // nthreads):
            info = np.zeros(3)
            status = rk4_kernel(model.mi, model.mf, ws, None, None, 0.0, 0.0, q0s[b], v0s[b], tau, dt, nsteps,
                                stride, Q[b], V[b], s.A, s.KE, s.PE, s.W, s.LAM, info)  # fmt: skip
            if status:
                try:
                    _raise(model, status, int(info[0]), dt, info)
                except ValueError as e:
                    errors[b] = str(e)  # the rows after the failing step were never written: NaN

    in_pieces(runs, nthreads)
    return {
        "t": np.arange(T) * stride * dt,
        "q": Q,
        "v": V,
        "solved": np.ones(B),
        "errors": dict(sorted(errors.items())),
    }
