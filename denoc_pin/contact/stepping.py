"""One time step with contacts: the velocity-level problem on the Delassus matrix, solved with the loops' rows.

The step is semi-implicit Euler (Moreau–Jean's time stepping): with the free velocity v_f = v + dt M⁻¹(τ − b(q, v))
from the O(n) forward dynamics (Table 3),

    v⁺ = v_f + M⁻¹ Jᵀ λ,   q⁺ = q ⊕ dt v⁺,

where the impulses λ solve the NCP of ``solvers`` on G = J M⁻¹ Jᵀ and g = J v_f + b.  J stacks the contact rows (per
contact, the contact frame's t₁, t₂, n applied to the relative velocity of the two shapes at the point) and the closed
loops' and couplings' rows (``loop_jacobian``: Schiehlen's eq. 17–20, so the loops are solved in the same system
as the contacts).  The bias b holds what the velocity must make up:

- a contact at signed distance d: σ_n = v_n⁺ + (max(d, 0) + β min(d, 0)) / dt, so that a gap d > 0 closes in one
  step at most (no impulse before the shapes touch) and a penetration is corrected by the fraction β a step;
- with restitution e, an impact (v_n⁻ < −threshold, reaching the surface within the step) asks v_n⁺ ≥ e |v_imp|,
  corrected for the gap d the point is still at so that the rebound's energy is the one from the surface;
- a bilateral row: σ = J_r v⁺ + r(q) / dt, the loop's position error closed in one step;
- compliance (k, c): a normal row becomes the implicit spring–damper f_n = max(0, −k (d + dt v_n⁺) − c v_n⁺),
  σ_n = v_n⁺ + (k d + λ_n / dt) / (k dt + c): b_n = k d / (k dt + c) and R_nn = 1 / (dt (k dt + c)) on G's diagonal.

The step is compiled, as its stages (``pipeline.contact_step``); ``ContactStepper`` runs it a call at a time, with
the shape pairs coal finds in Python between calls.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..algorithms.kinematics_api import forward_kinematics
from ..algorithms.protocol import in_pieces
from ..core.records import (
    ContactGeometry,
    ContactScene,
    ShapePairs,
    WarmStarts,
    contact_jacobians,
    contact_set,
    contact_work,
    contact_work_arrays,
    shape_pairs,
    solver_work,
    solver_work_arrays,
)
from ..core.shapes import CAPSULE, COL, MESH, SPHERE, Ground, contact_frame, pack_collisions
from ..core.tables import GROUND_ROW, INFO_ROW, SETTINGS_ROW, columns
from ..model import Model, ModelError
from ..model.status import raise_for_status
from .derivatives import contact_step_derivatives, q_tables
from .detection import PairDetector, ground_capacity, most_vertices, pair_contacts, pair_friction
from .patch import PAIR_POINTS, PAIR_WORK
from .pipeline import contact_problem, contact_step, factor_pays, record_step

__all__ = ["SOLVERS", "ContactSettings", "ContactStepper", "ground_numbers", "settings_numbers"]

GROUND, SETTINGS, INFO = columns(GROUND_ROW), columns(SETTINGS_ROW), columns(INFO_ROW)

SOLVERS = ("admm", "pgs")


@dataclass(frozen=True)
class ContactSettings:
    """How the contact problem of each step is solved (``docs/contacts.md``).

    solver: "admm" or "pgs"; tol: the largest primal, dual and complementarity residual accepted (m/s); max_iter: the
    iteration cap; compliance: None (rigid) or (stiffness N/m, damping N s/m) per contact; margin: contacts are
    looked for up to this distance (m) before the shapes touch; stabilization: β, the fraction of a penetration
    corrected in one step; restitution_threshold: the normal approach speed (m/s) below which an impact is
    inelastic; warm_start: start each solve from the last step's impulses of the same contacts; pair_contacts: the
    most contact points shape pairs give in one step (None: 4 for each collision, at most 4 a pair that may touch;
    more in a step is an error that says to raise it): the step's buffers are sized for them."""

    solver: str = "admm"
    tol: float = 1e-8
    max_iter: int = 1000
    compliance: tuple | None = None
    margin: float = 1e-3
    stabilization: float = 0.2
    restitution_threshold: float = 0.05
    warm_start: bool = True
    pair_contacts: int | None = None

    def __post_init__(self):
        if self.solver not in SOLVERS:
            raise ValueError(f"ContactSettings solver must be one of {', '.join(SOLVERS)}; got {self.solver!r}")
        for what, x in (("tol", self.tol), ("margin", self.margin), ("restitution_threshold",
                                                                         self.restitution_threshold)):  # fmt: skip
            if not (isinstance(x, (int, float)) and np.isfinite(x) and x > 0):
                raise ValueError(f"ContactSettings {what} must be a positive number, got {x!r}")
        if self.pair_contacts is not None and not (isinstance(self.pair_contacts, (int, np.integer))
                                                   and self.pair_contacts >= 0):  # fmt: skip
            raise ValueError(f"ContactSettings pair_contacts must be None or an integer >= 0, got "
                             f"{self.pair_contacts!r}")  # fmt: skip
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"ContactSettings max_iter must be a positive integer, got {self.max_iter!r}")
        if not (isinstance(self.stabilization, (int, float)) and 0.0 <= self.stabilization <= 1.0):
            raise ValueError(f"ContactSettings stabilization must be in [0, 1], got {self.stabilization!r}")
        if self.compliance is not None:
            try:
                kc = np.asarray(self.compliance, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                kc = np.full(1, np.nan)
            if kc.shape != (2,) or not np.isfinite(kc).all() or (kc < 0).any() or kc.sum() == 0:
                raise ValueError("ContactSettings compliance is None or (stiffness, damping), both >= 0 and not both "
                                 f"0; got {self.compliance!r}")  # fmt: skip


class ContactStepper:
    """The steps of one run (``pipeline.contact_step``): the model's packed collisions, the pairs that may touch
    (coal, in Python), and the step's ``ContactScene`` (``scene``: warm starts, contacts and work areas)."""

    def __init__(self, model: Model, ground: Ground | None, settings: ContactSettings, dt: float,
                 compiled_pairs: bool = True):  # fmt: skip
        if not isinstance(model, Model):
            raise ModelError(f"contacts need a denoc_pin.Model, got {type(model).__name__}")
        if ground is not None and not isinstance(ground, Ground):
            raise ValueError(f"ground must be a dp.Ground, got {type(ground).__name__}")
        if not isinstance(settings, ContactSettings):
            raise ValueError(f"contact must be a dp.ContactSettings, got {type(settings).__name__}")
        if not model.collisions:
            raise ModelError(f"model {model.name!r} has no collision shapes; add them with ModelBuilder.add_collision "
                             "or load a file with <collision> elements")  # fmt: skip
        self.model, self.ground, self.settings, self.dt = model, ground, settings, float(dt)
        self.data = model.create_data()
        self._derivative_data = None
        self._q_tables = None  # contact.derivatives.q_tables, made at first use
        self._unit_masses: dict = {}  # a body's unit point mass model (``unit_mass``)
        self._jacobians = None  # the ContactJacobians record (``jacobians_record``)
        self._views = None  # (work, solver, their NumPy views): ``reset``'s, made again when the scene grows
        rows, verts, chunks = pack_collisions(model.collisions)
        pairs = PairDetector(model, settings.margin, compiled_pairs)  # compiled_pairs=False: every pair through coal
        self.pairs = pairs if pairs.pairs else None
        compiled = np.array(pairs.compiled, dtype=np.int64).reshape(-1, 2)
        # the pairs' points: settings.pair_contacts (by default PAIR_POINTS a collision, not more than the pairs can
        # give); a ground feature or a compiled pair's point a warm-start row
        most = PAIR_POINTS * min(len(compiled), len(rows)) if settings.pair_contacts is None else settings.pair_contacts
        self.capacity = (ground_capacity(rows) if ground is not None else 0) + min(most, PAIR_POINTS * len(compiled))
        # support[k]: the columns of v that move body k (its joint and its ancestors')
        support = np.zeros((model.njoints, model.nv), dtype=bool)
        for k in range(1, model.njoints):
            support[k] = support[model.parents[k]]
            support[k, model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = True
        # a ground feature's warm start: row woff[c] + feature of the table (a mesh: one a hull vertex)
        features = np.array([_features(r) for r in rows], dtype=np.int64)
        woff = np.concatenate([[0], np.cumsum(features)[:-1]]).astype(np.int64)
        nf = int(features.sum())
        pair_mu = pair_friction(model, compiled)
        rows_warm = max(nf + PAIR_POINTS * len(compiled), 1)
        self.most = most_vertices(rows)
        self.warm_pairs: dict = {}
        self.now = 0
        self.cb, self.lw = (model.constraint_buffer, self.data.lw) if model.n_constraints else (None, None)
        warm = WarmStarts(np.zeros((rows_warm, 3)), np.full(rows_warm, -10, dtype=np.int64),
                          np.zeros(model.n_constraints), np.zeros((len(compiled), 3)))  # fmt: skip
        pair_of = np.full((len(rows), len(rows)), -1, dtype=np.int64)
        pair_of[compiled[:, 0], compiled[:, 1]] = np.arange(len(compiled))
        geometry = ContactGeometry(rows, verts, chunks, support, woff, compiled, pair_mu.reshape(-1),
                                   nf + PAIR_POINTS * np.arange(len(compiled), dtype=np.int64), pair_of)  # fmt: skip
        self.scene = self._scene(geometry, ground_numbers(ground), settings_numbers(settings), warm, self.capacity)
        self._none = shape_pairs(0)  # the pairs of a step that has none
        self._kernels: dict = {}

    def _scene(self, geometry, gp, sp, warm, cap: int) -> ContactScene:
        """A scene for up to ``cap`` contacts (work areas sized for 3 cap + the loops' rows)."""
        cap = max(cap, 1)
        m = self.model
        mmax = 3 * cap + m.n_constraints
        nd = m.nv if factor_pays(m) else 0  # room for M's factor Lᵀ L where it pays (pipeline.free_velocity)
        work = contact_work(m.njoints, m.nv, mmax, cap, self.most, PAIR_WORK, len(geometry.rows), nd)
        contact_work_arrays(work).sweep_order[:] = np.arange(len(geometry.rows))  # a first order to sort
        return ContactScene(geometry, gp, sp, warm, contact_set(cap), work, solver_work(max(mmax, 1)))

    def _kernel(self, dispatcher, args):
        """``dispatcher``'s compiled kernel for these arguments' types, to be called without the dispatcher: its
        typing of a scene's ~40 arrays in named tuples would cost every step about 8 µs.  Found by the arguments'
        kinds (``_kinds``: dtype, dimension, layout, writability, tuple types), so that numba types them once a
        process, not once a run (about 0.8 ms); numba compiles or loads the kernel once."""
        kernel = self._kernels.get(dispatcher)
        if kernel is None:
            key = (dispatcher, _kinds(args))
            kernel = _KERNELS.get(key)
            if kernel is None:
                kernel = _KERNELS[key] = dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
            self._kernels[dispatcher] = kernel
        return kernel

    def record(self, row: int, rec) -> None:
        """The last step's contacts into row ``row`` of ``rec`` (``pipeline.record_step``, the compiled run's
        recorder)."""
        args = (self.scene.contacts, self.dt, row, rec)
        self._kernel(record_step, args)(*args)

    def reset(self) -> None:
        """Forget the warm starts, ADMM's last ρ and the broad phase's order (a new run from the same scene, step
        for step as a new stepper's)."""
        s = self.scene
        w = s.warm
        w.impulse[:], w.step[:], w.loops[:], w.axes[:] = 0.0, -10, 0.0, 0.0
        if self._views is None or self._views[0] is not s.work or self._views[1] is not s.solver:
            self._views = (s.work, s.solver, contact_work_arrays(s.work), solver_work_arrays(s.solver))
        self._views[2].sweep_order[:] = np.arange(len(s.geometry.rows))
        self._views[3].rho[:] = 0.0  # ADMM's first ρ: its default again
        self.warm_pairs = {}
        self.now = 0

    def _pairs(self) -> ShapePairs:
        """The shape pairs' contacts at the kinematics in self.data (a ``ShapePairs``); the scene grown to hold
        them."""
        model, data = self.model, self.data
        found = [] if self.pairs is None else pair_contacts(self.pairs, model, data.oR, data.op)
        if not found:
            return self._none
        out = shape_pairs(len(found))
        mu = pair_friction(model, [(i, j) for i, j, *_ in found])
        for r, (i, j, x, n, d, f) in enumerate(found):
            a, b = model.collisions[i], model.collisions[j]
            out.bodies[r], out.keys[r], out.points[r] = (a.body, b.body), (i, j, f), x
            out.frames[r], out.depth[r], out.mu[r] = contact_frame(n), d, mu[r]
            out.start[r] = self.warm_pairs.get((i, j, f), 0.0)
        s = self.scene
        if len(s.contacts.depth) < self.capacity + len(found):
            self.scene = self._scene(s.geometry, s.ground, s.settings, s.warm, self.capacity + len(found))
        return out

    def contacts(self, q):
        """The contacts at q: (bodies (k, 2), points (k, 3), frames (k, 3, 3) with columns t₁, t₂, n, depths (k,),
        μ (k,), keys, restitution (k,)).  body 0 is the ground (the world)."""
        P = self.problem(q, np.zeros(self.model.nv), np.zeros(self.model.nv))
        return P["bodies"], P["points"], P["frames"], P["depths"], P["mu"], P["keys"], P["restitution"]

    def problem(self, q, v, tau) -> dict:
        """The step's problem from (q, v) under τ (module docstring): "G", "g", "mu", "nc" (contacts; their rows come
        first), "J", "v_free", and the contacts' "points", "frames", "depths", "keys", "bodies",
        "restitution"."""
        q, v, tau = (np.ascontiguousarray(x, dtype=float) for x in (q, v, tau))
        forward_kinematics(self.model, self.data, q)
        pairs = self._pairs()
        model, data, s = self.model, self.data, self.scene
        args = (model.mi, model.mf, data.ws, self.cb, self.lw, s, pairs, q, v, tau, self.dt)
        status, nc, m = self._kernel(contact_problem, args)(*args)
        raise_for_status(model, status, q, v, tau, "tau")
        w, c, nv = contact_work_arrays(s.work), s.contacts, model.nv
        return {"nc": nc, "J": w.J[: m * nv].reshape(m, nv).copy(), "G": w.G[: m * m].reshape(m, m).copy(),
                "g": w.g[:m].copy(), "v_free": w.v_free.copy(), "mu": c.mu[:nc].copy(), "points": c.points[:nc].copy(),
                "frames": c.frames[:nc].copy(), "depths": c.depth[:nc].copy(), "keys": _keys(c.keys[:nc]),
                "bodies": c.bodies[:nc].copy(), "restitution": c.restitution[:nc].copy()}  # fmt: skip

    @property
    def derivative_data(self):
        """A second ``Data`` for the step's derivatives (``derivatives``), made at first use."""
        if self._derivative_data is None:
            self._derivative_data = self.model.create_data()
        return self._derivative_data

    def q_tables(self):
        """``contact.derivatives.q_tables`` of this stepper's model, made once."""
        if self._q_tables is None:
            self._q_tables = q_tables(self)
        return self._q_tables

    def derivatives(self, q, v, tau, wrt=("q", "v", "tau"), masses=()):
        """One step from (q, v) under τ and its Jacobians with respect to ``wrt`` and to the masses of the bodies
        named in ``masses`` (``contact.derivatives``: a ``ContactStepJacobians``)."""
        return contact_step_derivatives(self, q, v, tau, wrt, tuple(masses))

    def derivatives_batch(self, Q, V, Taus, wrt=("q", "v", "tau"), masses=(), threads: int | None = None) -> list:
        """``derivatives`` at each state (Q (B, nq), V and Taus (B, nv)), each from this stepper's scene as a new
        stepper would take it (no warm start carried between states), on all cores: the states shared among
        ``threads`` (default one per core) clones of this stepper on the call protocol's threads
        (``protocol.in_pieces``; the compiled step and its Jacobians release the GIL).  A list of
        ``ContactStepJacobians``, in order (this stepper is left reset); the first state that fails raises its
        error."""
        Q, V, Taus = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (Q, V, Taus))
        B = len(Q)
        if not (V.shape == (B, self.model.nv) and Taus.shape == (B, self.model.nv) and Q.shape[1] == self.model.nq):
            raise ValueError(f"derivatives_batch: Q (B, {self.model.nq}), V and Taus (B, {self.model.nv}) for one B; "
                             f"got {Q.shape}, {V.shape}, {Taus.shape}")  # fmt: skip
        n = max(1, min(B, (os.cpu_count() or 1) if threads is None else int(threads)))
        steppers = [self] + [ContactStepper(self.model, self.ground, self.settings, self.dt,
                                            compiled_pairs=self.pairs is None) for _ in range(n - 1)]  # fmt: skip
        out: list = [None] * B

        def piece(c: int) -> None:
            stepper = steppers[c]
            for b in range(c * B // n, (c + 1) * B // n):
                stepper.reset()
                out[b] = stepper.derivatives(Q[b], V[b], Taus[b], wrt, masses)

        in_pieces(piece, n)
        return out

    def jacobians_record(self):
        """The ``ContactJacobians`` the step's Jacobians are written into, sized for the scene's contacts and rows
        (made again when the scene grows)."""
        cap, nv = len(self.scene.contacts.depth), self.model.nv
        if self._jacobians is None or len(self._jacobians.modes) != cap:
            self._jacobians = contact_jacobians(nv, cap, 3 * cap + self.model.n_constraints)
        return self._jacobians

    def unit_mass(self, name: str):
        """(model, data): this stepper's model with a unit point mass at body ``name``'s centre of mass and nothing
        else (its inverse dynamics is ∂ID/∂m of that body's mass), made once a body."""
        if name not in self._unit_masses:
            model = self.model
            if name not in model.link_names:
                raise ModelError(f"contact step derivatives: no body {name!r} to take a mass derivative by; the bodies "
                                 f"are {', '.join(model.link_names[1:])}")  # fmt: skip
            k = model.link_names.index(name)
            masses = np.zeros(model.njoints)
            masses[k] = 1.0
            unit = Model(**(model.fields() | {"masses": masses, "inertias": np.zeros((model.njoints, 3, 3))}))
            self._unit_masses[name] = (unit, unit.create_data())
        return self._unit_masses[name]

    def advance(self, kernel, q, v, tau, extra=tuple):
        """One step from (q, v) under τ by ``kernel`` (``pipeline.contact_step``, or a kernel that runs it first
        with the arguments ``extra()`` gives after its own, asked once the scene is sized for the step's pairs;
        either returns a status): coal's pairs found before it, the step counted, their warm starts kept after.
        Returns (q⁺, v⁺)."""
        model, data = self.model, self.data
        q, v, tau = (np.ascontiguousarray(x, dtype=float) for x in (q, v, tau))
        if self.pairs is not None:
            forward_kinematics(model, data, q)
        pairs = self._pairs()
        q1, v1 = np.empty(model.nq), np.empty(model.nv)
        self.now += 1
        args = (model.mi, model.mf, data.ws, self.cb, self.lw, self.scene, pairs, self.now, q, v, tau, self.dt, q1,
                v1, *extra())  # fmt: skip
        status = self._kernel(kernel, args)(*args)
        raise_for_status(model, status, q, v, tau, "tau")
        if self.pairs is not None:  # coal's pairs' warm starts (the compiled pairs keep theirs in the scene)
            c = self.scene.contacts
            self.warm_pairs = {tuple(int(x) for x in c.keys[i]): c.impulse[i].copy()
                               for i in range(int(c.info[INFO["contacts"]])) if c.keys[i, 0] >= 0}  # fmt: skip
        return q1, v1

    def step(self, q, v, tau) -> tuple[np.ndarray, np.ndarray, dict]:
        """(q⁺, v⁺, record) of one step from (q, v) under τ (module docstring); the step's contacts stay in
        ``scene.contacts`` (``pipeline.record_step`` records them)."""
        q1, v1 = self.advance(contact_step, q, v, tau)
        c, s = self.scene.contacts, self.scene
        nc = int(c.info[INFO["contacts"]])
        stats = {k: float(c.info[INFO[k]]) for k in ("residual", "primal", "dual", "complementarity")}
        record = {"points": c.points[:nc].copy(), "frames": c.frames[:nc].copy(), "depths": c.depth[:nc].copy(),
                  "keys": _keys(c.keys[:nc]), "bodies": c.bodies[:nc].copy(), "impulses": c.impulse[:nc].copy(),
                  "iterations": int(c.info[INFO["iterations"]]), "converged": bool(c.info[INFO["converged"]]),
                  "loop_impulses": s.warm.loops.copy()} | stats  # fmt: skip
        return q1, v1, record


_KERNELS: dict = {}
"""The compiled kernels ``ContactStepper._kernel`` found, by dispatcher and the arguments' kinds."""


def _kinds(x):
    """What numba's type of ``x`` depends on, in a few microseconds: an array's dtype, dimension, layout and
    writability, a tuple's type and items, any other value's type."""
    if isinstance(x, np.ndarray):
        return x.dtype.char, x.ndim, x.flags.c_contiguous, x.flags.f_contiguous, x.flags.writeable
    if isinstance(x, tuple):
        return type(x), tuple(_kinds(e) for e in x)
    return type(x)


def _features(row) -> int:
    """How many features (corners, rim points, end caps, hull vertices) a packed collision has for warm starts."""
    code = int(row[COL["code"]])
    return int(row[COL["vcount"]]) if code == MESH else {SPHERE: 1, CAPSULE: 2}.get(code, 8)


def _keys(keys) -> list:
    """The compiled keys (−1, collision, feature) and (i, j, feature) as ("ground", c, f) and ("pair", i, j, f)."""
    return [("ground", int(k[1]), int(k[2])) if k[0] < 0 else ("pair", int(k[0]), int(k[1]), int(k[2])) for k in keys]


def ground_numbers(ground: Ground | None) -> np.ndarray:
    """The ground as ``core.tables.GROUND_ROW`` lays it out (all zero: no ground)."""
    gp = np.zeros(GROUND["width"])
    if ground is not None:
        F = ground.frame
        gp[GROUND["on"]], gp[GROUND["height"]] = 1.0, ground.height
        for name, col in (("t1", 0), ("t2", 1), ("n", 2)):
            gp[GROUND[name] : GROUND[name] + 3] = F[:, col]
        gp[GROUND["friction"]], gp[GROUND["restitution"]] = ground.friction, ground.restitution
    return gp


def settings_numbers(st: ContactSettings) -> np.ndarray:
    """The settings as ``core.tables.SETTINGS_ROW`` lays them out."""
    sp = np.zeros(SETTINGS["width"])
    values = {"solver": float(SOLVERS.index(st.solver)), "tol": st.tol, "max_iter": st.max_iter, "margin": st.margin,
              "beta": st.stabilization, "threshold": st.restitution_threshold, "warm": float(st.warm_start),
              "compliant": float(st.compliance is not None)}  # fmt: skip
    if st.compliance is not None:
        values["k"], values["c"] = (float(x) for x in np.asarray(st.compliance, dtype=float).reshape(2))
    for name, x in values.items():
        sp[SETTINGS[name]] = x
    return sp
