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

The step is compiled (``kernel.contact_step``); ``ContactStepper`` runs it a call at a time, with the shape pairs
coal finds in Python between calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.kinematics_api import forward_kinematics
from ..core.shapes import CAPSULE, COL, MESH, SPHERE, Ground, contact_frame, pack_collisions
from ..model import Model, ModelError
from ..model.status import raise_for_status
from .detection import PairDetector, ground_capacity, pair_contacts
from .kernel import GROUND, INFO, SETTINGS, contact_problem, contact_step

__all__ = ["SOLVERS", "ContactSettings", "ContactStepper", "contact_buffers", "ground_numbers", "settings_numbers"]

SOLVERS = ("admm", "pgs")


@dataclass(frozen=True)
class ContactSettings:
    """How the contact problem of each step is solved (``docs/contacts.md``).

    solver: "admm" or "pgs"; tol: the largest primal, dual and complementarity residual accepted (m/s); max_iter: the
    iteration cap; compliance: None (rigid) or (stiffness N/m, damping N s/m) per contact; margin: contacts are
    looked for up to this distance (m) before the shapes touch; stabilization: β, the fraction of a penetration
    corrected in one step; restitution_threshold: the normal approach speed (m/s) below which an impact is
    inelastic; warm_start: start each solve from the last step's impulses of the same contacts."""

    solver: str = "admm"
    tol: float = 1e-8
    max_iter: int = 1000
    compliance: tuple | None = None
    margin: float = 1e-3
    stabilization: float = 0.2
    restitution_threshold: float = 0.05
    warm_start: bool = True

    def __post_init__(self):
        if self.solver not in SOLVERS:
            raise ValueError(f"ContactSettings solver must be one of {', '.join(SOLVERS)}; got {self.solver!r}")
        for what, x in (("tol", self.tol), ("margin", self.margin), ("restitution_threshold",
                                                                         self.restitution_threshold)):  # fmt: skip
            if not (isinstance(x, (int, float)) and np.isfinite(x) and x > 0):
                raise ValueError(f"ContactSettings {what} must be a positive number, got {x!r}")
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
    """The steps of one run (``kernel.contact_step``): the model's packed collisions, the pairs that may touch (coal,
    in Python), the warm starts, and the buffers of the compiled step."""

    def __init__(self, model: Model, ground: Ground | None, settings: ContactSettings, dt: float):
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
        rows, verts, chunks = pack_collisions(model.collisions)
        self.capacity = ground_capacity(rows) if ground is not None else 0
        cap = max(self.capacity, 1)
        self.det = (np.empty((cap, 3)), np.empty(cap), np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64))
        pairs = PairDetector(model, settings.margin)
        self.pairs = pairs if pairs.pairs else None
        # support[k]: the columns of v that move body k (its joint and its ancestors')
        support = np.zeros((model.njoints, model.nv), dtype=bool)
        for k in range(1, model.njoints):
            support[k] = support[model.parents[k]]
            support[k, model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = True
        # a ground feature's warm start: row woff[c] + feature of the table (a mesh: one a hull vertex)
        features = np.array([_features(r) for r in rows], dtype=np.int64)
        woff = np.concatenate([[0], np.cumsum(features)[:-1]]).astype(np.int64)
        self.geo = (rows, verts, support, woff, chunks)
        self.warm = (np.zeros((max(int(features.sum()), 1), 3)), np.full(max(int(features.sum()), 1), -10,
                     dtype=np.int64), np.zeros(model.n_constraints))  # fmt: skip
        self.warm_pairs: dict = {}
        self.now = 0
        self.gp, self.sp = ground_numbers(ground), settings_numbers(settings)
        self.cb, self.lw = (model.constraint_buffer, self.data.lw) if model.n_constraints else (None, None)
        self.cts = contact_buffers(cap)

    def _pairs(self) -> tuple:
        """The shape pairs' contacts at the kinematics in self.data, as ``kernel.contact_problem`` takes them."""
        model, data = self.model, self.data
        found = [] if self.pairs is None else pair_contacts(self.pairs, model, data.oR, data.op)
        k = len(found)
        pb, pk = np.empty((k, 2), dtype=np.int64), np.empty((k, 3), dtype=np.int64)
        px, pf, pd, pmu, p0 = np.empty((k, 3)), np.empty((k, 3, 3)), np.empty(k), np.empty(k), np.zeros((k, 3))
        for r, (i, j, x, n, d, f) in enumerate(found):
            a, b = model.collisions[i], model.collisions[j]
            pb[r], pk[r], px[r], pf[r], pd[r] = (a.body, b.body), (i, j, f), x, contact_frame(n), d
            pmu[r] = max(a.friction, b.friction)
            p0[r] = self.warm_pairs.get((i, j, f), 0.0)
        if len(self.cts[0]) < self.capacity + k:
            self.cts = contact_buffers(self.capacity + k)
        return pb, pk, px, pf, pd, pmu, p0

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
        model, data = self.model, self.data
        buffers = (model.mi, model.mf, data.ws, self.cb, self.lw, self.geo, self.gp, self.sp, pairs)
        status, nc, J, G, g, vf = contact_problem(*buffers, q, v, tau, self.dt, self.det, self.cts)
        raise_for_status(model, status, q, v, tau, "tau")
        bodies, pts, frames, depth, mu, rest, keys, _, _ = self.cts
        return {"nc": nc, "J": J, "G": G, "g": g, "v_free": vf, "mu": mu[:nc].copy(),
                "points": pts[:nc].copy(), "frames": frames[:nc].copy(), "depths": depth[:nc].copy(),
                "keys": _keys(keys[:nc]), "bodies": bodies[:nc].copy(), "restitution": rest[:nc].copy()}  # fmt: skip

    def step(self, q, v, tau) -> tuple[np.ndarray, np.ndarray, dict]:
        """(q⁺, v⁺, record) of one step from (q, v) under τ (module docstring)."""
        model, data = self.model, self.data
        q, v, tau = (np.ascontiguousarray(x, dtype=float) for x in (q, v, tau))
        if self.pairs is not None:
            forward_kinematics(model, data, q)
        pairs = self._pairs()
        q1, v1 = np.empty(model.nq), np.empty(model.nv)
        self.now += 1
        status = contact_step(model.mi, model.mf, data.ws, self.cb, self.lw, self.geo, self.gp, self.sp, pairs,
                              self.warm, self.now, q, v, tau, self.dt, q1, v1, self.det, self.cts)  # fmt: skip
        raise_for_status(model, status, q, v, tau, "tau")
        bodies, pts, frames, depth, _, _, keys, imp, info = self.cts
        nc = int(info[INFO["contacts"]])
        self.warm_pairs = {tuple(int(x) for x in keys[i]): imp[i].copy() for i in range(nc) if keys[i, 0] >= 0}
        stats = {k: float(info[INFO[k]]) for k in ("residual", "primal", "dual", "complementarity")}
        record = {"points": pts[:nc].copy(), "frames": frames[:nc].copy(), "depths": depth[:nc].copy(),
                  "keys": _keys(keys[:nc]), "bodies": bodies[:nc].copy(), "impulses": imp[:nc].copy(),
                  "iterations": int(info[INFO["iterations"]]), "converged": bool(info[INFO["converged"]]),
                  "loop_impulses": self.warm[2].copy()} | stats  # fmt: skip
        return q1, v1, record


def _features(row) -> int:
    """How many features (corners, rim points, end caps, hull vertices) a packed collision has for warm starts."""
    code = int(row[COL["code"]])
    return int(row[COL["vcount"]]) if code == MESH else {SPHERE: 1, CAPSULE: 2}.get(code, 8)


def _keys(keys) -> list:
    """The compiled keys (−1, collision, feature) and (i, j, feature) as ("ground", c, f) and ("pair", i, j, f)."""
    return [("ground", int(k[1]), int(k[2])) if k[0] < 0 else ("pair", int(k[0]), int(k[1]), int(k[2])) for k in keys]


def contact_buffers(cap: int) -> tuple:
    """One step's contacts as ``kernel.contact_problem`` fills them, for up to cap contacts: bodies, points, frames,
    depths, μ, e, keys, impulses, and the step's ``INFO``."""
    return (np.empty((cap, 2), dtype=np.int64), np.empty((cap, 3)), np.empty((cap, 3, 3)), np.empty(cap),
            np.empty(cap), np.empty(cap), np.empty((cap, 3), dtype=np.int64), np.empty((cap, 3)),
            np.zeros(INFO["width"]))  # fmt: skip


def ground_numbers(ground: Ground | None) -> np.ndarray:
    """The ground as ``kernel.GROUND`` lays it out (all zero: no ground)."""
    gp = np.zeros(GROUND["width"])
    if ground is not None:
        F = ground.frame
        gp[GROUND["on"]], gp[GROUND["height"]] = 1.0, ground.height
        for name, col in (("t1", 0), ("t2", 1), ("n", 2)):
            gp[GROUND[name] : GROUND[name] + 3] = F[:, col]
        gp[GROUND["friction"]], gp[GROUND["restitution"]] = ground.friction, ground.restitution
    return gp


def settings_numbers(st: ContactSettings) -> np.ndarray:
    """The settings as ``kernel.SETTINGS`` lays them out."""
    sp = np.zeros(SETTINGS["width"])
    values = {"solver": float(SOLVERS.index(st.solver)), "tol": st.tol, "max_iter": st.max_iter, "margin": st.margin,
              "beta": st.stabilization, "threshold": st.restitution_threshold, "warm": float(st.warm_start),
              "compliant": float(st.compliance is not None)}  # fmt: skip
    if st.compliance is not None:
        values["k"], values["c"] = (float(x) for x in np.asarray(st.compliance, dtype=float).reshape(2))
    for name, x in values.items():
        sp[SETTINGS[name]] = x
    return sp
