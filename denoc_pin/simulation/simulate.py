"""Simulation: fixed-step RK4 on the configuration space, driven by the O(n) forward dynamics.

The step is the one the seed papers use (fixed-step Runge-Kutta, 4th order).  Velocities are
integrated in the tangent space and configurations with ``integrate``, so free-flyer and
spherical quaternions stay unit:

    a_i = FD(q ⊕ δ_i, v_i, τ),  K_i = J_r(δ_i)⁻¹ v_i,
    δ_1 = 0,  δ_{i+1} = c_i dt K_i,  v_{i+1} = v + c_i dt a_i   (c = ½, ½, 1)
    q' = q ⊕ dt (K_1 + 2 K_2 + 2 K_3 + K_4) / 6,   v' = v + dt (a_1 + 2 a_2 + 2 a_3 + a_4) / 6

The K_i are the stage velocities carried back to the tangent space at q (Munthe-Kaas' RKMK): on
a free-flyer, spherical or planar joint, composing q ⊕ c dt v_i with the v_i of other points
instead would lose two orders (the step would be second order on SE(3), measured).  On every
other joint K_i = v_i and this is the classical RK4.

With ``tau`` None or constant, the loop runs inside compiled code (no Python call per step), for a
closed-loop model too (its stages are ``loops.loop_entries.cfd_entry``); a callable ``tau(t, q, v)`` (a
controller) is called once per stage from Python.

The adaptive methods (``rk45``, ``dop853``: the embedded Dormand–Prince pairs of scipy's ``RK45`` and
``DOP853``, with error control and dense output) run compiled with the dynamics for ``tau`` None or
constant (``dormand_prince.dp_kernel``), and as scipy's solvers for a callable ``tau``, step for step
the same method.  Both integrate in a chart about a base point q_c: y = (δ, v, w) with
q = q_c ⊕ δ, and

    δ̇ = J_r(δ)⁻¹ v,   v̇ = FD(q, v, τ),   ẇ = τ·v   (w: the work done by τ)

where J_r is the right Jacobian of the joint's Lie group (SO(3) for a spherical joint, SE(3) for a
free-flyer, SE(2) for a planar joint; the identity for the others, whose charts are global);
``configuration.dexp_inv`` applies J_r⁻¹.  The
chart moves to the current point whenever a rotation in δ exceeds ``RECHART_ANGLE``, so the error
control acts on a smooth, well-conditioned state and the method keeps its order on the group.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..algorithms.configuration import dexp_inv, integrate
from ..algorithms.dynamics_api import forward_dynamics, inverse_dynamics
from ..algorithms.energy import energy
from ..algorithms.tree_entries import aba_entry
from ..core.joints import JOINTS
from ..kernel_cache import prepare
from ..loaders.edits import transfer_state
from ..loops import constrained_forward_dynamics, loop_jacobian, loop_residual
from ..loops.loop_entries import cfd_entry
from ..loops.types import baumgarte_gains
from ..model import Data, Model, configuration, vector
from ..model.status import NOT_FINITE, SINGULAR, TOO_SMALL_STEP
from .contact_simulation import simulate_contacts
from .dormand_prince import dp_kernel, tableau
from .rk4 import rk4_kernel, rk4_stage

__all__ = ["METHODS", "Trajectory", "inverse_dynamics_trajectory", "simulate", "to_original"]

METHODS = ("rk4", "rk45", "dop853")
"""Fixed-step RK4 (the papers' choice), and the adaptive Dormand–Prince pairs 5(4) and 8(5,3) (scipy's RK45, DOP853)."""

CONTACT_METHODS = ("semi-implicit",)
"""The contact step's scheme (``contact.stepping``): semi-implicit Euler at a fixed dt, the impulses solved per step."""

# ---------------------------------------------------------------------------------------
# Trajectories.
# ---------------------------------------------------------------------------------------


@dataclass
class Trajectory:
    """A simulated motion, one row per recorded instant.

    t: (N,) s; q: (N, nq); v, a, tau: (N, nv) in Pinocchio's layout.
    energy: dict of (N,) arrays "kinetic", "potential", "work" (done by tau since t[0]) and
    "total" = kinetic + potential − work, constant for a conservative system.
    lam: (N, n_constraints) the cut joints' reactions λ (``constrained_forward_dynamics``) for a
    model with loops, else None.
    stats: for the adaptive methods, the accepted steps and the forward-dynamics calls (rejected steps
    show as calls); not saved by ``save``.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    energy: dict
    model_name: str = ""
    lam: np.ndarray | None = None  # (N, n_constraints) cut-joint reactions, for models with loops
    stats: dict | None = None  # adaptive methods: "steps" accepted, "fd_calls" (not saved)
    events: list | None = None  # simulate(events=…): dicts "t", "model", "kinetic_lost" (not saved)
    contacts: list | None = None  # simulate(ground=…): per row, the step's contacts (contact_run; not saved)
    ground: object = None  # simulate(ground=…): the dp.Ground it ran on (the viewer draws it; not saved)

    def save(self, path) -> None:
        """Write a .npz file (``np.savez``)."""
        np.savez(
            path, t=self.t, q=self.q, v=self.v, a=self.a, tau=self.tau, model_name=self.model_name,
            **{f"energy_{k}": e for k, e in self.energy.items()}, **({} if self.lam is None else {"lam": self.lam}),
        )  # fmt: skip

    @classmethod
    def load(cls, path) -> Trajectory:
        with np.load(path, allow_pickle=False) as f:  # a .npz names no code to run (docs/input-policy.md)
            energy = {k[len("energy_") :]: f[k] for k in f.files if k.startswith("energy_")}
            lam = f["lam"] if "lam" in f.files else None
            return cls(f["t"], f["q"], f["v"], f["a"], f["tau"], energy, str(f["model_name"]), lam)

    def to_csv(self, path) -> None:
        """One row per instant: t, q_0…, v_0…, a_0…, tau_0…, then the energies."""
        nq, nv = self.q.shape[1], self.v.shape[1]
        keys = list(self.energy)
        header = (
            ["t"] + [f"q{i}" for i in range(nq)] + [f"v{i}" for i in range(nv)] + [f"a{i}" for i in range(nv)]
            + [f"tau{i}" for i in range(nv)] + keys
        )  # fmt: skip
        with Path(path).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            cols = np.column_stack([self.t, self.q, self.v, self.a, self.tau] + [self.energy[k] for k in keys])
            w.writerows(cols.tolist())


def _energies(kinetic, potential, work, impact_loss=None) -> dict:
    if impact_loss is None:
        return {"kinetic": kinetic, "potential": potential, "work": work, "total": kinetic + potential - work}
    return {"kinetic": kinetic, "potential": potential, "work": work, "impact_loss": impact_loss,
            "total": kinetic + potential - work + impact_loss}  # fmt: skip


def _simulate_events(model: Model, q0, v0, nsteps: int, dt: float, events, options: dict) -> Trajectory:
    """``simulate`` with timed model edits: one run per segment, the state carried across each edit."""
    try:
        timed = sorted((float(t), edit) for t, edit in events)
    except (TypeError, ValueError):
        raise ValueError("events must be a list of (t, edit) pairs with edit(model, q) -> Model") from None
    cuts = []
    for t, edit in timed:
        n = int(round(t / dt))
        if not callable(edit) or not 0 < n < nsteps:
            raise ValueError(
                f"event at t = {t}: needs 0 < t < t_final = {nsteps * dt} and a callable edit(model, q) -> Model"
            )
        cuts.append((n, edit))
    if len({n for n, _ in cuts}) != len(cuts):
        raise ValueError("two events fall on the same step; give them distinct times (or one combined edit)")
    parts, log = [], []
    current, q, v, start, work, lost = model, q0, v0, 0, 0.0, 0.0
    for n, edit in [*cuts, (nsteps, None)]:
        seg = simulate(current, q, v, (n - start) * dt, dt, **options)
        parts.append((current, start, seg, work, lost))
        work += seg.energy["work"][-1]
        if edit is None:
            break
        q_end = seg.q[-1]
        new = edit(current, q_end)
        if not isinstance(new, Model):
            raise ValueError(f"the edit at t = {n * dt} returned {type(new).__name__}, not a denoc_pin.Model")
        extra = [name for name in new.names[1:] if name not in model.names]
        if extra:
            raise ValueError(
                f"the edit at t = {n * dt} adds joints {extra}: the trajectory keeps the original model's layout, "
                "so events may lock joints, open or close loops, change the passive set, or attach rigid payloads"
            )
        q, v, loss = transfer_state(current, new, q_end, seg.v[-1])
        lost += loss
        log.append({"t": n * dt, "model": new, "kinetic_lost": loss})
        current, start = new, n
    return _join(model, parts, log, dt)


def to_original(model: Model, part: Model, Q, held) -> tuple[np.ndarray, list]:
    """Rows of q in ``part``'s layout written into ``model``'s, the missing joints at ``held``; and the
    (part columns, model columns) of the velocities."""
    out = np.tile(held, (len(Q), 1))
    cols = ([], [])
    for j in range(1, part.njoints):
        k = model.joint_id(part.names[j])
        out[:, model.idx_q[k] : model.idx_q[k] + model.nqs[k]] = Q[:, part.idx_q[j] : part.idx_q[j] + part.nqs[j]]
        cols[0].extend(range(int(part.idx_v[j]), int(part.idx_v[j] + part.nvs[j])))
        cols[1].extend(range(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k])))
    return out, cols


def _join(model: Model, parts, log, dt: float) -> Trajectory:
    """One trajectory in ``model``'s layout from the segments; each segment's last sample gives way to the
    next one's first (the state after the event)."""
    rows = {key: [] for key in ("t", "q", "v", "a", "tau", "kinetic", "potential", "work", "impact")}
    held = parts[0][2].q[0].copy()
    for i, (part, start, seg, work0, lost) in enumerate(parts):
        keep = slice(None) if i == len(parts) - 1 else slice(0, -1)
        Q, (pc, mc) = to_original(model, part, seg.q[keep], held)
        held = to_original(model, part, seg.q[-1:], held)[0][0]
        n = len(Q)
        V, A, T = (np.zeros((n, model.nv)) for _ in range(3))
        V[:, mc], A[:, mc], T[:, mc] = seg.v[keep][:, pc], seg.a[keep][:, pc], seg.tau[keep][:, pc]
        rows["t"].append(start * dt + seg.t[keep])
        rows["q"].append(Q), rows["v"].append(V), rows["a"].append(A), rows["tau"].append(T)
        rows["kinetic"].append(seg.energy["kinetic"][keep]), rows["potential"].append(seg.energy["potential"][keep])
        rows["work"].append(work0 + seg.energy["work"][keep]), rows["impact"].append(np.full(n, lost))
    cat = {key: np.concatenate(val) for key, val in rows.items()}
    energy = _energies(cat["kinetic"], cat["potential"], cat["work"], cat["impact"])
    return Trajectory(cat["t"], cat["q"], cat["v"], cat["a"], cat["tau"], energy, model.name, events=log)


def simulate(
    model: Model,
    q0,
    v0,
    t_final: float,
    dt: float = 1e-3,
    method: str | None = None,
    tau=None,
    progress: bool | None = None,
    record_every: int = 1,
    baumgarte=(50.0, 50.0),
    rtol: float = 1e-8,
    atol: float = 1e-10,
    events=None,
    ground=None,
    contact=None,
) -> Trajectory:
    """Simulate from (q0, v0) for ``t_final`` seconds.

    method: "rk4" (the default without contacts) takes fixed steps ``dt``; "rk45" and "dop853" choose their own
    steps to meet ``rtol``/``atol`` (on q's chart coordinates, v and the work) and record the state every ``dt``
    (dense output), so that every method returns the same time grid.  ``Trajectory.stats`` counts the
    steps and the forward-dynamics calls.
    tau: None (unactuated), a constant (nv,) array, or a callable ``tau(t, q, v) -> (nv,)``.
    progress: a tqdm bar; None shows it for runs expected to take more than about 2 s.
    record_every: keep every k-th step (for huge models or long runs).
    baumgarte: (kp, kd) for a model with loops (``constrained_forward_dynamics``): the loop error
    obeys r̈ + 2 kd ṙ + kp² r = 0, a critically damped decay at kp = kd.  (q0, v0) must close the
    loops (``dp.assemble``; v0 with J v0 = 0) to 1e-6.
    events: timed structure changes ``[(t, edit), …]`` (Isobe & Yagi's structure-varying systems), each
    ``edit(model, q) -> Model`` (e.g. ``lambda m, q: dp.lock_joints(m, ["joint4"], q)``, ``dp.without_loop(m, …)``,
    ``dp.with_loop(m, …)``).  At t (rounded to a step) the state is carried to the edited model by
    ``edits.transfer_state`` (an inelastic impact that conserves generalized momentum) and the run
    goes on.  The trajectory stays in this model's layout: a locked joint holds its value with zero
    rate.  ``energy["impact_loss"]`` accumulates the kinetic energy the impacts take, and ``total``
    includes it; ``Trajectory.events`` lists each event's time, model and loss.
    ground, contact: a ``dp.Ground`` and ``dp.ContactSettings`` (either turns contacts on; ``docs/contacts.md``):
    the model's collisions touch the ground and each other, with Coulomb friction, solved with the loops at each
    step of a semi-implicit Euler scheme at the fixed ``dt`` (``method`` "semi-implicit", the default and only
    one there: any other is refused).
    ``Trajectory.contacts`` lists, per recorded row, the contacts of the step that leaves it.
    """
    contacts = ground is not None or contact is not None
    if contacts and method not in (None, *CONTACT_METHODS):
        raise ValueError(f"with contacts (ground= or contact=) the step is semi-implicit Euler at a fixed dt: method "
                         f"must be one of {', '.join(CONTACT_METHODS)} (the default); got {method!r}")  # fmt: skip
    method = (CONTACT_METHODS[0] if contacts else METHODS[0]) if method is None else method
    if not contacts and method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (and {', '.join(CONTACT_METHODS)} with a "
                         f"ground= or contact=); got {method!r}")  # fmt: skip
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(tol) and tol > 0):
            raise ValueError(f"{name} must be a positive number, got {tol}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a positive number, got {dt}")
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final must be a positive number, got {t_final}")
    if int(record_every) < 1:
        raise ValueError(f"record_every must be at least 1, got {record_every}")
    nsteps = int(round(t_final / dt))
    if nsteps < 1:
        raise ValueError(f"t_final = {t_final} is shorter than one step dt = {dt}")
    q0 = np.ascontiguousarray(configuration(model, q0, "q0"))
    v0 = np.ascontiguousarray(vector(v0, model.nv, "v0"))
    if contacts:
        if events:
            raise ValueError("with contacts the step is semi-implicit Euler at a fixed dt: give no events")
        if model.n_constraints:
            _check_closed(model, q0, v0, baumgarte, 1)
        tau_c = tau if callable(tau) else (np.zeros(model.nv) if tau is None else vector(tau, model.nv, "tau"))
        t, Q, V, A, T, KE, PE, W, rows = simulate_contacts(model, q0, v0, nsteps, dt, tau_c, ground, contact,
                                                           int(record_every), progress)  # fmt: skip
        return Trajectory(t, Q, V, A, T, _energies(KE, PE, W), model.name, contacts=rows, ground=ground)
    if events:
        options = {"method": method, "tau": tau, "progress": progress, "record_every": record_every,
                   "baumgarte": baumgarte, "rtol": rtol, "atol": atol}  # fmt: skip
        return _simulate_events(model, q0, v0, nsteps, dt, events, options)
    stride = int(record_every)
    nrec = nsteps // stride + 1
    data = model.create_data()
    Q, V, A = np.empty((nrec, model.nq)), np.empty((nrec, model.nv)), np.empty((nrec, model.nv))
    KE, PE, W = np.empty(nrec), np.empty(nrec), np.empty(nrec)
    lam = _check_closed(model, q0, v0, baumgarte, nrec) if model.n_constraints else None
    if method != "rk4" and not callable(tau):
        tau_c = np.zeros(model.nv) if tau is None else np.ascontiguousarray(vector(tau, model.nv, "tau"))
        t = np.arange(nrec) * stride * dt
        stats = _simulate_dormand_prince(model, data, q0, v0, tau_c, t, method, rtol, atol, Q, V, A, KE, PE, W,
                                         progress, lam, baumgarte)  # fmt: skip
        T = np.broadcast_to(tau_c, (nrec, model.nv)).copy()
        return Trajectory(t, Q, V, A, T, _energies(KE, PE, W), model.name, lam, stats)
    if method != "rk4":
        t = np.arange(nrec) * stride * dt
        T, stats = _simulate_adaptive(model, data, q0, v0, tau, t, method, rtol, atol, Q, V, A, KE, PE, W,
                                      progress, lam, baumgarte)  # fmt: skip
        return Trajectory(t, Q, V, A, T, _energies(KE, PE, W), model.name, lam, stats)
    if callable(tau):
        T = _simulate_python(model, data, q0, v0, tau, dt, nsteps, stride, Q, V, A, KE, PE, W, progress, lam,
                             baumgarte)  # fmt: skip
    else:
        tau_c = np.zeros(model.nv) if tau is None else np.ascontiguousarray(vector(tau, model.nv, "tau"))
        _simulate_compiled(model, data, q0, v0, tau_c, dt, nsteps, stride, Q, V, A, KE, PE, W, progress, lam,
                           baumgarte)  # fmt: skip
        T = np.broadcast_to(tau_c, (nrec, model.nv)).copy()
    t = np.arange(nrec) * stride * dt
    return Trajectory(t, Q, V, A, T, _energies(KE, PE, W), model.name, lam)


def _progress_bar(progress, nsteps: int, seconds_per_step: float):
    if progress is False or (progress is None and nsteps * seconds_per_step < 2.0):
        return None
    from tqdm import tqdm

    return tqdm(total=nsteps, unit="step", desc="simulate")


def _joint_of_v(model: Model, i: int) -> str:
    """The name of the joint whose velocity holds v[i]."""
    return model.names[int(np.searchsorted(model.idx_v, i, side="right")) - 1]


def _blew_up(model: Model, step: int, dt: float, vmax: float, where: int) -> ValueError:
    """The error of a state that became non-finite at ``step``; vmax = max |v| before it, at v[where]."""
    return ValueError(
        f"the state became non-finite (NaN or inf) at step {step} (t = {step * dt:.6g} s); the largest |v| "
        f"before it was {vmax:.3g} (v[{where}], joint {_joint_of_v(model, where)!r}); reduce dt (now {dt:g})"
    )


def _blew_up_near(model: Model, t: float, vmax: float, where: int) -> ValueError:
    """The adaptive methods' error of a state that became non-finite near t; vmax = max |v| met, at v[where]."""
    return ValueError(
        f"the state became non-finite (NaN or inf) near t = {t:.6g} s; the largest |v| before it was {vmax:.3g} "
        f"(v[{where}], joint {_joint_of_v(model, where)!r}); tighten rtol/atol"
    )


def _raise(model: Model, status: int, step: int, dt: float, info) -> None:
    if status == NOT_FINITE:
        raise _blew_up(model, int(info[0]) + step, dt, info[1], int(info[2]))
    raise ValueError(
        f"the GIM became singular at step {int(info[0]) + step} at joint {model.names[status - SINGULAR]!r}"
    )


def _simulate_compiled(model, data, q0, v0, tau, dt, nsteps, stride, Q, V, A, KE, PE, W, progress, lam=None,
                       baumgarte=(0.0, 0.0)) -> None:  # fmt: skip
    """``rk4_kernel`` in chunks of whole strides, so that a progress bar can move between compiled calls; with
    ``lam`` (n_rec, n_constraints), the closed-loop forward dynamics under Baumgarte's gains."""
    kp, kd = baumgarte_gains(baumgarte)
    if lam is None:  # a tree: no constraint buffer nor loop workspace, and a kernel compiled without them
        lam, cb, lw = np.empty((len(Q), 0)), None, None
    else:
        cb, lw = model.constraint_buffer, data.lw
    buffers = (model.mi, model.mf, data.ws, cb, lw, kp, kd)
    prepare(aba_entry if lw is None else cfd_entry)  # before rk4_kernel compiles
    one = np.empty((1, model.nq)), np.empty((1, model.nv)), np.empty((1, model.nv)), *np.empty((3, 1))
    info = np.zeros(3)
    rk4_kernel(*buffers, q0, v0, tau, dt, 0, 1, *one, np.empty((1, lam.shape[1])), info)  # loads the kernel
    t0 = time.perf_counter()
    rk4_kernel(*buffers, q0, v0, tau, dt, 0, 1, *one, np.empty((1, lam.shape[1])), info)  # one step, timed
    per_step = 4.0 * (time.perf_counter() - t0)  # ×4: a margin for the timer's noise on a step of microseconds
    bar = _progress_bar(progress, nsteps, per_step)
    chunk = nsteps if bar is None else max(stride, (nsteps // 100) // stride * stride)
    q, v, work, done, row = q0, v0, 0.0, 0, 0
    while done < nsteps:
        n = min(chunk, nsteps - done)
        rows = n // stride + 1
        sl = slice(row, row + rows)
        Wc = np.empty(rows)
        status = rk4_kernel(*buffers, q, v, tau, dt, n, stride, Q[sl], V[sl], A[sl], KE[sl], PE[sl], Wc, lam[sl],
                            info)  # fmt: skip
        if status:
            _raise(model, status, done, dt, info)
        W[sl] = Wc + work
        q, v, work = Q[row + rows - 1].copy(), V[row + rows - 1].copy(), W[row + rows - 1]
        done += n
        row += rows - 1
        if bar is not None:
            bar.update(n)
    if bar is not None:
        bar.close()


def _check_closed(model: Model, q0, v0, baumgarte, nrec: int) -> np.ndarray:
    """Refuse initial states that do not close the loops; the array for the recorded λ."""
    baumgarte_gains(baumgarte)
    r = np.abs(loop_residual(model, q0)).max()
    if r > 1e-6:
        raise ValueError(f"q0 does not close the loops (residual {r:.3g} > 1e-6); use q0 = dp.assemble(model, q0)")
    J = loop_jacobian(model, q0)
    jv = np.abs(J @ v0).max()
    if jv > 1e-6 * (1.0 + np.abs(v0).max()):
        raise ValueError(
            f"v0 violates the loops' velocity constraints (|J v0| = {jv:.3g}); project it, e.g. "
            "v0 - np.linalg.pinv(J) @ (J @ v0) with J = dp.loop_jacobian(model, q0)"
        )
    return np.empty((nrec, model.n_constraints))


def _stage_functions(model: Model, data: Data, tau_fn, loops: bool, baumgarte):
    """(accel(q, v, τ), torque(t, q, v), last) for the Python-driven integrators: accel is the forward
    dynamics (closed-loop with Baumgarte when ``loops``; its λ left in last["lam"]), torque the checked
    callback; last["calls"] counts the forward dynamics."""
    last = {"lam": None, "calls": 0}

    def accel(q, v, tau):
        last["calls"] += 1
        if not loops:
            return forward_dynamics(model, data, q, v, tau)
        a, last["lam"] = constrained_forward_dynamics(model, data, q, v, tau, baumgarte=baumgarte)
        return a

    def torque(t, q, v):
        return vector(tau_fn(t, q, v), model.nv, "tau(t, q, v)")

    return accel, torque, last


def _simulate_python(
    model, data, q0, v0, tau_fn, dt, nsteps, stride, Q, V, A, KE, PE, W, progress, lam=None, baumgarte=None
) -> np.ndarray:
    """The RK4 steps of ``rk4_stage`` with a torque callback, one Python call per stage; with ``lam`` (loops),
    each stage is the closed-loop forward dynamics."""
    accel, torque, last = _stage_functions(model, data, tau_fn, lam is not None, baumgarte)
    kinds, idx_q, idx_v, nvs = model.kinds, model.idx_q, model.idx_v, model.nvs
    T = np.empty((len(Q), model.nv))
    bar = _progress_bar(progress, nsteps, 2e-4)
    q, v, work, row = q0.copy(), v0.copy(), 0.0, 0
    qs = np.empty(model.nq)
    vs, x, K, Ks, As = (np.empty(model.nv) for _ in range(5))
    vmax = np.zeros(2)  # the largest |v| so far and its index, for the error of a blow-up
    for i in range(nsteps + 1):
        t = i * dt
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise _blew_up(model, i, dt, vmax[0], int(vmax[1]))
        iv = int(np.argmax(np.abs(v)))
        if abs(v[iv]) > vmax[0]:
            vmax[:] = abs(v[iv]), iv
        tau1 = torque(t, q, v)
        a1 = accel(q, v, tau1)
        if i % stride == 0:
            Q[row], V[row], A[row], T[row], W[row] = q, v, a1, tau1, work
            if lam is not None:
                lam[row] = last["lam"]
            KE[row], PE[row] = energy(model, data, q, v)
            row += 1
        if i == nsteps:
            break
        x[:] = 0.0
        vs[:] = v
        P = rk4_stage(1, kinds, idx_q, idx_v, nvs, dt, q, v, a1, tau1, x, qs, vs, K, Ks, As, 0.0)
        for stage, c in ((2, 0.5), (3, 0.5), (4, 1.0)):
            if not (np.isfinite(qs).all() and np.isfinite(vs).all()):
                raise _blew_up(model, i + 1, dt, vmax[0], int(vmax[1]))  # step i + 1 cannot be formed
            tau_s = torque(t + c * dt, qs.copy(), vs.copy())
            P = rk4_stage(stage, kinds, idx_q, idx_v, nvs, dt, q, v, accel(qs, vs, tau_s), tau_s, x, qs, vs, K, Ks,
                          As, P)  # fmt: skip
        q, v = qs.copy(), vs.copy()
        work += dt * P / 6.0
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return T


# ---------------------------------------------------------------------------------------
# Adaptive methods: scipy's Dormand–Prince pairs on a chart of the configuration space.
# ---------------------------------------------------------------------------------------

RECHART_ANGLE = 0.5
"""rad: the chart of a spherical, free-flyer or planar joint moves once δ turns it by this much."""


def _rotation_slices(model: Model) -> list[slice]:
    """The rotation part of v of each joint whose group is not commutative (spherical, free-flyer,
    planar): where the chart's δ must stay small."""
    out = []
    for k in range(1, model.njoints):
        rot = JOINTS[int(model.kinds[k])].rotation
        if rot is not None:
            iv = int(model.idx_v[k])
            out.append(slice(iv + rot[0], iv + rot[1]))
    return out


def _simulate_adaptive(
    model, data, q0, v0, tau_fn, t_out, method, rtol, atol, Q, V, A, KE, PE, W, progress, lam, baumgarte
) -> tuple[np.ndarray, dict]:
    """scipy's RK45/DOP853 on y = (δ, v, w) about a chart point (module docstring), recorded at t_out."""
    from scipy.integrate import DOP853, RK45

    nv = model.nv
    rotations = _rotation_slices(model)
    accel, torque, last = _stage_functions(model, data, tau_fn, lam is not None, baumgarte)

    def state(chart, y):
        return integrate(model, chart, y[:nv]), y[nv : 2 * nv]

    peak = [0.0, 0]  # the largest |v| evaluated so far and its index, for the error of a blow-up

    def rhs(chart):
        def f(t, y):
            if not np.isfinite(y).all():
                raise _blew_up_near(model, t, peak[0], peak[1])
            iv = int(np.argmax(np.abs(y[nv : 2 * nv])))
            if abs(y[nv + iv]) > peak[0]:
                peak[:] = abs(y[nv + iv]), iv
            q, v = state(chart, y)
            tau = torque(t, q, v)
            return np.concatenate([dexp_inv(model, y[:nv], v), accel(q, v, tau), [tau @ v]])

        return f

    Solver = {"rk45": RK45, "dop853": DOP853}[method]
    T = np.empty((len(t_out), nv))
    chart, y, t0, t_end = q0.copy(), np.concatenate([np.zeros(nv), v0, [0.0]]), float(t_out[0]), float(t_out[-1])
    solver = Solver(rhs(chart), t0, y, t_end, rtol=rtol, atol=atol)
    steps = 0
    bar = _progress_bar(progress, len(t_out), 1e-3)

    def record(i, t, y):
        q, v = state(chart, y)
        tau = torque(t, q, v)
        Q[i], V[i], T[i], W[i] = q, v, tau, y[-1]
        A[i] = accel(q, v, tau)
        if lam is not None:
            lam[i] = last["lam"]
        KE[i], PE[i] = energy(model, data, q, v)

    record(0, t0, y)
    row = 1
    while row < len(t_out):
        before = solver.t
        message = solver.step()
        if solver.status == "failed":
            raise ValueError(f"{method} failed near t = {before:.6g}: {message}")
        steps += 1
        dense = solver.dense_output()
        while row < len(t_out) and t_out[row] <= solver.t + 1e-12 * max(1.0, abs(t_end)):
            record(row, t_out[row], dense(min(t_out[row], solver.t)))
            row += 1
            if bar is not None:
                bar.update(1)
        y = solver.y
        if rotations and row < len(t_out) and max(np.linalg.norm(y[r]) for r in rotations) > RECHART_ANGLE:
            chart = integrate(model, chart, y[:nv])
            y = np.concatenate([np.zeros(nv), y[nv:]])
            h = min(solver.step_size, t_end - solver.t)  # scipy refuses a first step past the end
            solver = Solver(rhs(chart), solver.t, y, t_end, rtol=rtol, atol=atol, first_step=h)
    if bar is not None:
        bar.close()
    return T, {"steps": steps, "fd_calls": last["calls"]}


def _simulate_dormand_prince(
    model, data, q0, v0, tau, t_out, method, rtol, atol, Q, V, A, KE, PE, W, progress, lam, baumgarte
) -> dict:
    """``dormand_prince.dp_kernel``: the adaptive method compiled with the dynamics, for a constant τ; in pieces of
    about a hundredth of the run when a progress bar shows."""
    nv, n = model.nv, 2 * model.nv + 1
    tab = tableau(method)
    kp, kd = baumgarte_gains(baumgarte)
    loops = lam is not None
    cb, lw = (model.constraint_buffer, data.lw) if loops else (None, None)
    prepare(cfd_entry if loops else aba_entry)  # before dp_kernel compiles
    rot = np.array([[r.start, r.stop] for r in _rotation_slices(model)], dtype=np.int64).reshape(-1, 2)
    chart, y, f = q0.copy(), np.concatenate([np.zeros(nv), v0, [0.0]]), np.empty(n)
    st, K, work = np.zeros(11), np.empty((len(tab.C), n)), np.empty((15, n))
    LAM = lam if loops else np.empty((len(t_out), 0))
    bar = _progress_bar(progress, len(t_out), 1e-3)
    piece = len(t_out) if bar is None else max(1, len(t_out) // 100)
    row = 0
    while row < len(t_out):
        end = min(len(t_out), row + piece)
        status = dp_kernel(tab.dop, tab.n_stages, tab.exponent, tab.order, tab.A, tab.B, tab.C, tab.E, tab.E3, tab.P,
                           model.mi, model.mf, data.ws, cb, lw, kp, kd, tau, rot, RECHART_ANGLE, float(rtol),
                           float(atol), t_out, end, chart, y, f, st, K, work, Q, V, A, KE, PE, W, LAM)  # fmt: skip
        if status == TOO_SMALL_STEP:
            raise ValueError(f"{method} failed near t = {st[0]:.6g}: the required step size is below 10 ulp of t")
        if status == NOT_FINITE:
            raise _blew_up_near(model, st[0], st[5], int(st[6]))
        if status >= SINGULAR:
            raise ValueError(
                f"the GIM became singular near t = {st[0]:.6g} s at joint {model.names[status - SINGULAR]!r}"
            )
        if status:
            raise RuntimeError(f"{method}: the compiled integrator returned status {status} near t = {st[0]:.6g} s")
        if bar is not None:
            bar.update(end - row)
        row = end
    if bar is not None:
        bar.close()
    return {"steps": int(st[3]), "fd_calls": int(st[4])}


def inverse_dynamics_trajectory(model: Model, t, q, v, a) -> np.ndarray:
    """Joint torques along a trajectory: q (N, nq), v and a (N, nv) → τ (N, nv), batched on all cores."""
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1 or q.ndim != 2 or q.shape[0] != t.shape[0]:
        raise ValueError(f"t must be (N,) and q (N, nq) with the same N, got {t.shape} and {q.shape}")
    return inverse_dynamics(model, model.create_data(), q, v, a)
