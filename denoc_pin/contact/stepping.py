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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..algorithms.api import forward_dynamics, gim_inverse
from ..algorithms.configuration import integrate
from ..algorithms.kinematics_api import forward_kinematics, joint_jacobians
from ..core.shapes import Ground, contact_frame, pack_collisions
from ..loops import loop_jacobian, loop_residual
from ..model import Model, ModelError
from .detection import PairDetector, ground_capacity, ground_contacts, pair_contacts
from .solvers import solve_admm, solve_pgs

__all__ = ["SOLVERS", "ContactSettings", "ContactStepper", "contact_jacobian"]

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


@njit(cache=True)
def contact_jacobian(Jall, support, bodies, pts, frames, J):
    """J (3 k, nv): per contact i, frame i's axes (t₁, t₂, n) applied to the velocity of point x_i on body
    ``bodies[i, 1]`` relative to body ``bodies[i, 0]``, column by column: ẋ = v_o + ω × x gives the column
    J_v − x × J_ω of each body's ``support`` (Jall: (6, nv) [linear; angular] world Jacobians about the world
    origin; body 0, the world, moves nothing)."""
    J[:] = 0.0
    for i in range(pts.shape[0]):
        x0, x1, x2 = pts[i, 0], pts[i, 1], pts[i, 2]
        for c in range(Jall.shape[1]):
            u0 = u1 = u2 = 0.0
            for s in range(2):
                b = bodies[i, s]
                if b == 0 or not support[b, c]:
                    continue
                sign = -1.0 if s == 0 else 1.0
                w0, w1, w2 = Jall[3, c], Jall[4, c], Jall[5, c]
                u0 += sign * (Jall[0, c] - (x1 * w2 - x2 * w1))
                u1 += sign * (Jall[1, c] - (x2 * w0 - x0 * w2))
                u2 += sign * (Jall[2, c] - (x0 * w1 - x1 * w0))
            for a in range(3):
                J[3 * i + a, c] = frames[i, 0, a] * u0 + frames[i, 1, a] * u1 + frames[i, 2, a] * u2


class ContactStepper:
    """The steps of one run: the model's packed collisions, the pairs that may touch, the warm starts."""

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
        self.rows, self.verts = pack_collisions(model.collisions)
        cap = ground_capacity(self.rows) if ground is not None else 0
        self.X, self.D = np.empty((max(cap, 1), 3)), np.empty(max(cap, 1))
        self.C, self.F = np.empty(max(cap, 1), dtype=np.int64), np.empty(max(cap, 1), dtype=np.int64)
        self.pairs = PairDetector(model, settings.margin)
        self.pairs = self.pairs if self.pairs.pairs else None
        if ground is not None:
            self.frame = ground.frame
            self.n = np.ascontiguousarray(self.frame[:, 2])
            self.t1, self.t2 = np.ascontiguousarray(self.frame[:, 0]), np.ascontiguousarray(self.frame[:, 1])
        # support[k]: the columns of v that move body k (its joint and its ancestors')
        nv, support = model.nv, np.zeros((model.njoints, model.nv), dtype=bool)
        for k in range(1, model.njoints):
            support[k] = support[model.parents[k]]
            support[k, model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = True
        self.support = support
        self.nv = nv
        self.warm: dict = {}
        self.warm_loops = np.zeros(model.n_constraints)

    def contacts(self, q):
        """The contacts at q: (bodies (k, 2), points (k, 3), frames (k, 3, 3) with columns t₁, t₂, n, depths (k,),
        μ (k,), keys, restitution (k,)).  body 0 is the ground (the world)."""
        model, data = self.model, self.data
        forward_kinematics(model, data, q)
        bodies, pts, frames, depth, mu, keys, rest = [], [], [], [], [], [], []
        if self.ground is not None:
            g = self.ground
            k = ground_contacts(self.rows, self.verts, data.oR, data.op, self.n, self.t1, self.t2, g.height,
                                self.settings.margin, self.X, self.D, self.C, self.F)  # fmt: skip
            for i in range(k):
                c = int(self.C[i])
                bodies.append((0, model.collisions[c].body))
                pts.append(self.X[i].copy())
                frames.append(self.frame)
                depth.append(self.D[i])
                mu.append(g.friction)
                keys.append(("ground", c, int(self.F[i])))
                rest.append(g.restitution)
        if self.pairs is not None:
            for i, j, x, n, d, f in pair_contacts(self.pairs, model, data.oR, data.op):
                a, b = model.collisions[i], model.collisions[j]
                bodies.append((a.body, b.body))
                pts.append(x)
                frames.append(contact_frame(n))
                depth.append(d)
                mu.append(max(a.friction, b.friction))
                keys.append(("pair", i, j, f))
                rest.append(0.0)
        k = len(pts)
        return (np.array(bodies, dtype=np.int64).reshape(k, 2), np.array(pts).reshape(k, 3),
                np.array(frames).reshape(k, 3, 3), np.array(depth), np.array(mu), keys, np.array(rest))  # fmt: skip

    def jacobian(self, q, bodies, pts, frames) -> np.ndarray:
        """(3 k, nv): per contact, the frame's (t₁, t₂, n) applied to the velocity of the point on the second body
        relative to the first: J_x = J_v − [x]× J_ω on each body's support (joint_jacobians, world, about the
        origin)."""
        Jall = joint_jacobians(self.model, self.data, q)
        J = np.empty((3 * len(pts), self.nv))
        contact_jacobian(np.ascontiguousarray(Jall), self.support, bodies, np.ascontiguousarray(pts, dtype=float),
                         np.ascontiguousarray(frames, dtype=float), J)  # fmt: skip
        return J

    def problem(self, q, v, tau) -> dict:
        """The step's problem from (q, v) under τ (module docstring): "G", "g", "mu", "nc" (contacts; their rows come
        first), "J", "Y" = M⁻¹ Jᵀ, "v_free", and the contacts' "points", "frames", "depths", "keys", "bodies"."""
        model, data, dt, st = self.model, self.data, self.dt, self.settings
        a_free = forward_dynamics(model, data, q, v, tau)
        v_free = v + dt * a_free
        bodies, pts, frames, depth, mu, keys, rest = self.contacts(q)
        nc = len(pts)
        J = self.jacobian(q, bodies, pts, frames) if nc else np.zeros((0, self.nv))
        nl = model.n_constraints
        if nl:
            J = np.vstack([J, loop_jacobian(model, q, data)])
        m = len(J)
        out = {"nc": nc, "J": J, "v_free": v_free, "mu": np.ascontiguousarray(mu, dtype=float), "points": pts,
               "frames": frames, "depths": depth, "keys": keys, "bodies": bodies}  # fmt: skip
        if m == 0:
            return out | {"G": np.zeros((0, 0)), "g": np.zeros(0), "Y": np.zeros((self.nv, 0))}
        Y = gim_inverse(model, data, q) @ J.T
        G = J @ Y
        g = J @ v_free
        vn_before = J[2 : 3 * nc : 3] @ v  # the normal approach velocities v_n⁻ at the start of the step
        R = np.zeros(m)
        beta = st.stabilization
        for i in range(nc):
            d = depth[i]
            if st.compliance is None:
                low = -(max(d, 0.0) + beta * min(d, 0.0)) / dt
                vb = vn_before[i]
                if rest[i] > 0 and vb < -st.restitution_threshold and d + dt * vb < 0:
                    # an impact within the step, seen from the gap d ≥ 0 the point is still at: it leaves with the
                    # speed the rebound from the surface has at that height, v⁺² = e² v_imp² + 2 a_n d, where
                    # v_imp² = v_n⁻² − 2 a_n d is the speed it reaches the surface with under the free acceleration a_n
                    an = (g[3 * i + 2] - vb) / dt
                    gap = max(d, 0.0)
                    up = rest[i] ** 2 * (vb * vb - 2.0 * an * gap) + 2.0 * an * gap
                    low = max(low, np.sqrt(max(up, 0.0)))
                g[3 * i + 2] -= low
            else:
                kk, cc = st.compliance
                g[3 * i + 2] += kk * d / (kk * dt + cc)
                R[3 * i + 2] = 1.0 / (dt * (kk * dt + cc))
        if nl:
            g[3 * nc :] += loop_residual(model, q, data) / dt
        G[np.diag_indices(m)] += R
        return out | {"G": np.ascontiguousarray(G), "g": np.ascontiguousarray(g), "Y": Y}

    def step(self, q, v, tau) -> tuple[np.ndarray, np.ndarray, dict]:
        """(q⁺, v⁺, record) of one step from (q, v) under τ (module docstring)."""
        model, dt, st = self.model, self.dt, self.settings
        P = self.problem(q, v, tau)
        nc, keys, G, g, mu = P["nc"], P["keys"], P["G"], P["g"], P["mu"]
        nl = model.n_constraints
        m = len(g)
        record = {k: P[k] for k in ("points", "frames", "depths", "keys", "bodies")}
        record |= {"impulses": np.zeros((nc, 3)), "iterations": 0, "residual": 0.0, "primal": 0.0, "dual": 0.0,
                   "complementarity": 0.0, "converged": True, "loop_impulses": np.zeros(nl)}  # fmt: skip
        if m == 0:
            return integrate(model, q, P["v_free"], dt), P["v_free"], record
        lam = np.zeros(m)
        if st.warm_start:
            for i, key in enumerate(keys):
                if key in self.warm:
                    lam[3 * i : 3 * i + 3] = self.warm[key]
            lam[3 * nc :] = self.warm_loops
        sigma, stats = np.empty(m), np.zeros(5)
        if st.solver == "pgs":
            ok = solve_pgs(G, g, mu, nc, lam, st.tol, st.max_iter, sigma, stats)
        else:
            ok = solve_admm(G, g, mu, nc, lam, st.tol, st.max_iter, 0.0, 1e-6, sigma, stats)  # η on the scaled G
        v_next = P["v_free"] + P["Y"] @ lam
        q_next = integrate(model, q, v_next, dt)
        imp = lam[: 3 * nc].reshape(nc, 3)
        self.warm = {key: imp[i].copy() for i, key in enumerate(keys)}
        self.warm_loops = lam[3 * nc :].copy()
        record.update(impulses=imp.copy(), iterations=int(stats[0]), residual=float(stats[1]), primal=float(stats[2]),
                      dual=float(stats[3]), complementarity=float(stats[4]), converged=bool(ok),
                      loop_impulses=lam[3 * nc :].copy())  # fmt: skip
        return q_next, v_next, record
