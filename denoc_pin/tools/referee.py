"""A high-precision referee for derivatives: the closed-loop (and tree) forward dynamics evaluated in mpmath at 50
digits or more, so that central differences of it are exact to far below float64's rounding.

It shares no recursion with the package: the configuration q ⊕ δ is built as Pinocchio's ``integrate`` builds it
(each joint's transform at q, times exp(S δ) of its group on the right; a universal joint as its two revolute
factors), from the float64 transforms at q; velocities and accelerations are sums over the joints' world screws
ξ_j (V_b = Σ ξ_j q̇_j, A_b = Σ ξ_j q̈_j + (V_host × ξ_j) q̇_j); the GIM is Σ_b J_bᵀ M_b J_b; the bias forces are the
Newton–Euler wrenches mapped by the screws; the loops are the constraint rows of ``denoc_pin.loops``' conventions
(module docstring there, ``core.cuts``); the KKT system is solved by mpmath's LU.  Redundant constraints are solved
on a given basis B of J's range (the dynamics' own, so that both differentiate the same system).

Cost: pure Python, about 10⁴ mpmath operations per evaluation for ten bodies: a referee for tests on small
models and for single directions on larger ones (Cassie), not for speed.
"""

from __future__ import annotations

import mpmath
import numpy as np

from ..algorithms.kinematics_api import forward_kinematics
from ..core.joints import UNIVERSAL
from ..loops import loop_residual
from ..model import Model, configuration, vector

__all__ = ["Referee"]


def _mp(x):
    return [mpmath.mpf(float(v)) for v in np.ravel(x)]


def _m3(R):
    return [[mpmath.mpf(float(R[i, j])) for j in range(3)] for i in range(3)]


def _mm(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def _mv(A, x):
    return [A[i][0] * x[0] + A[i][1] * x[1] + A[i][2] * x[2] for i in range(3)]


def _mtv(A, x):
    return [A[0][i] * x[0] + A[1][i] * x[1] + A[2][i] * x[2] for i in range(3)]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _add(a, b):
    return [x + y for x, y in zip(a, b, strict=True)]


def _sub(a, b):
    return [x - y for x, y in zip(a, b, strict=True)]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _scale(a, s):
    return [x * s for x in a]


def _exp(w, u):
    """exp of the twist [w; u] (body frame): (R, p) of SE(3)."""
    th = mpmath.sqrt(_dot(w, w))
    W = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
    W2 = _mm(W, W)
    if th == 0:
        a, b, c = mpmath.mpf(1), mpmath.mpf(1) / 2, mpmath.mpf(1) / 6
    else:
        a, b, c = mpmath.sin(th) / th, (1 - mpmath.cos(th)) / th**2, (th - mpmath.sin(th)) / th**3
    eye = [[mpmath.mpf(int(i == j)) for j in range(3)] for i in range(3)]
    R = [[eye[i][j] + a * W[i][j] + b * W2[i][j] for j in range(3)] for i in range(3)]
    V = [[eye[i][j] + b * W[i][j] + c * W2[i][j] for j in range(3)] for i in range(3)]
    return R, _mv(V, u)


def _orthonormal(R):
    """The rotation nearest a float64 rotation matrix (Gram–Schmidt on its rows, in mpmath)."""
    r0 = R[0]
    r0 = _scale(r0, 1 / mpmath.sqrt(_dot(r0, r0)))
    r1 = _sub(R[1], _scale(r0, _dot(r0, R[1])))
    r1 = _scale(r1, 1 / mpmath.sqrt(_dot(r1, r1)))
    return [r0, r1, _cross(r0, r1)]


class _Factor:
    """One exp factor of a joint: its transform at q in its parent factor's frame (R, p), its screws (body frame)
    and their columns of v; ``body``: the body it ends, or -1 (a universal's intermediate frame)."""

    def __init__(self, parent, R, p, screws, cols, body):
        self.parent, self.R, self.p, self.screws, self.cols, self.body = parent, R, p, screws, cols, body


class Referee:
    """The dynamics of ``model`` about the configuration q, in mpmath at ``digits`` digits: ``forward(δq, v, τ)``
    gives (q̈, λ) at q ⊕ δq; ``derivatives`` their central differences along given directions.  ``basis``: the
    (m, r) basis B of J's range the reactions are solved on (None: all rows, λ = x)."""

    def __init__(self, model: Model, q, digits: int = 50, basis=None, baumgarte=(0.0, 0.0)):
        self.model, self.digits = model, digits
        q = np.asarray(configuration(model, q), dtype=float)
        data = model.create_data()
        forward_kinematics(model, data, q)
        with mpmath.workdps(digits + 20):
            self._build(model, data, q)
            self.kp, self.kd = (mpmath.mpf(float(x)) for x in baumgarte)
            self.g = _mp(model.gravity)
            self.B = None if basis is None else [_mp(row) for row in np.asarray(basis, dtype=float)]
        self.res0 = None  # the couplings' residuals at q (float64), read from loop_residual
        if model.coupled:
            self.res0 = loop_residual(model, q)

    def _build(self, model: Model, data, q) -> None:
        self.factors: list[_Factor] = []
        last = {0: -1}
        for k in range(1, model.njoints):
            R = _orthonormal(_m3(data.E[k].T))
            p = _mp(data.r[k])
            nvk, iv = int(model.nvs[k]), int(model.idx_v[k])
            S = [_mp(data.S[k, :, d]) for d in range(nvk)]
            parent = last[int(model.parents[k])]
            if model.kinds[k] == UNIVERSAL:  # X = X₁ X₂ with X₂ = exp([e₂; 0] q₂): two revolute factors
                R2, _ = _exp(_scale(S[1][:3], mpmath.mpf(float(q[model.idx_q[k] + 1]))), [0, 0, 0])
                R1 = _mm(R, [[R2[j][i] for j in range(3)] for i in range(3)])  # X X₂⁻¹ (p₂ = 0)
                e1 = _mv(R2, S[0][:3])  # the first axis in the intermediate frame
                self.factors.append(_Factor(parent, R1, p, [e1 + [0, 0, 0]], [iv], -1))
                self.factors.append(_Factor(len(self.factors) - 1, R2, [0, 0, 0], [S[1]], [iv + 1], k))
            else:
                self.factors.append(_Factor(parent, R, p, S, list(range(iv, iv + nvk)), k))
            last[k] = len(self.factors) - 1
        self.body_factor = last
        m = model
        self.mass = {k: mpmath.mpf(float(m.masses[k])) for k in range(1, m.njoints)}
        self.com = {k: _mp(m.coms[k]) for k in range(1, m.njoints)}
        self.Io = {k: _m3(m.inertias_origin[k]) for k in range(1, m.njoints)}

    # -- kinematics ---------------------------------------------------------------------------------------------
    def _poses(self, dq):
        """World (R, o) of every factor at q ⊕ dq."""
        out = []
        for f in self.factors:
            w, u = [0, 0, 0], [0, 0, 0]
            for s, c in zip(f.screws, f.cols, strict=True):
                w = _add(w, _scale(s[:3], dq[c]))
                u = _add(u, _scale(s[3:], dq[c]))
            Re, pe = _exp(w, u)
            R, p = _mm(f.R, Re), _add(f.p, _mv(f.R, pe))
            if f.parent >= 0:
                Rb, ob = out[f.parent]
                R, p = _mm(Rb, R), _add(ob, _mv(Rb, p))
            out.append((R, p))
        return out

    def _screws(self, poses):
        """World screws ξ_j = [R s_ω; R s_v + o × R s_ω] of every column, by factor."""
        out = []
        for f, (R, o) in zip(self.factors, poses, strict=True):
            cols = []
            for s in f.screws:
                w = _mv(R, s[:3])
                cols.append(w + _add(_mv(R, s[3:]), _cross(o, w)))
            out.append(cols)
        return out

    def _motion(self, screws, v, a, gravity: bool):
        """World twist V and spatial acceleration A of every factor's frame (A of the base: [0; −g] with
        ``gravity``)."""
        V, A = [], []
        for fi, f in enumerate(self.factors):
            if f.parent >= 0:
                Vf, Af = list(V[f.parent]), list(A[f.parent])
            else:
                Vf = [mpmath.mpf(0)] * 6
                Af = [mpmath.mpf(0)] * 3 + ([-x for x in self.g] if gravity else [mpmath.mpf(0)] * 3)
            for xi, c in zip(screws[fi], f.cols, strict=True):
                Vf = [x + y * v[c] for x, y in zip(Vf, xi, strict=True)]
            for xi, c in zip(screws[fi], f.cols, strict=True):  # the host frame moves with Vf: ξ̇ = Vf × ξ
                d = _motion_cross(Vf, xi)
                Af = [x + y * a[c] + z * v[c] for x, y, z in zip(Af, xi, d, strict=True)]
            V.append(Vf)
            A.append(Af)
        return V, A

    def _ancestors(self, fi):
        out = []
        while fi >= 0:
            out.append(fi)
            fi = self.factors[fi].parent
        return out

    # -- dynamics -----------------------------------------------------------------------------------------------
    def _wrench(self, k, R, o, V, A):
        """World Newton–Euler wrench M A + V ×* M V of body k (M its spatial inertia, moved to the world)."""
        vb, ab = _to_body(R, o, V), _to_body(R, o, A)
        Mv, Ma = self._inertia_times(k, vb), self._inertia_times(k, ab)
        f = _add(Ma, _force_cross(vb, Mv))
        n, fl = _mv(R, f[:3]), _mv(R, f[3:])
        return _add(n, _cross(o, fl)) + fl

    def _inertia_times(self, k, x):
        m, c, Io = self.mass[k], self.com[k], self.Io[k]
        w, u = x[:3], x[3:]
        n = _add(_mv(Io, w), _scale(_cross(c, u), m))
        f = _sub(_scale(u, m), _scale(_cross(c, w), m))
        return n + f

    def _dynamics(self, poses, screws, v):
        """(GIM, h): Σ_b J_bᵀ M_b J_b and the generalized bias forces (Coriolis, centrifugal, gravity)."""
        nv = self.model.nv
        M = mpmath.matrix(nv, nv)
        h = [mpmath.mpf(0)] * nv
        zero = [mpmath.mpf(0)] * nv
        V, A = self._motion(screws, v, zero, True)
        for k, fi in self.body_factor.items():
            if k == 0:
                continue
            R, o = poses[fi]
            cols = [(c, xi) for f in self._ancestors(fi) for xi, c in zip(screws[f], self.factors[f].cols, strict=True)]
            F = self._wrench(k, R, o, V[fi], A[fi])
            body = [(c, _to_body(R, o, xi)) for c, xi in cols]
            Mx = [(c, self._inertia_times(k, x)) for c, x in body]
            Fb = _to_body_force(R, o, F)
            for ci, xi in body:
                h[ci] += sum(p * q for p, q in zip(xi, Fb, strict=True))
                for cj, mj in Mx:
                    M[ci, cj] += sum(p * q for p, q in zip(xi, mj, strict=True))
        return M, h

    # -- loops --------------------------------------------------------------------------------------------------
    def _cut_rows(self, poses, screws, v, a, V, A, dq):
        """(J, Δ̇ rows at (q̇, q̈), r) of every cut and coupling, in ``model.loops`` order then couplings'."""
        model = self.model
        Jrows, acc, res = [], [], []
        for cut in model.cuts:
            ends = []
            for body, Rl, pl in ((cut.body1, cut.R1, cut.p1), (cut.body2, cut.R2, cut.p2)):
                fi = self.body_factor[int(body)]
                if fi < 0:
                    R = [[mpmath.mpf(int(i == j)) for j in range(3)] for i in range(3)]
                    o, Vb = [mpmath.mpf(0)] * 3, [mpmath.mpf(0)] * 6
                    Ab = [mpmath.mpf(0)] * 3 + [-x for x in self.g]
                    anc = []
                else:
                    (R, o), Vb, Ab, anc = poses[fi], V[fi], A[fi], self._ancestors(fi)
                Rc, pc = _mm(R, _m3(Rl)), _add(o, _mv(R, _mp(pl)))
                om, al = Vb[:3], Ab[:3]
                pd = _add(Vb[3:], _cross(om, pc))
                pdd = _add(_add(Ab[3:], _cross(al, pc)), _cross(om, pd))
                cols = {c: xi for f in anc for xi, c in zip(screws[f], self.factors[f].cols, strict=True)}
                ends.append((Rc, pc, om, pd, al, pdd, cols))
            (Rc1, pc1, om1, pd1, al1, pdd1, cols1), (Rc2, pc2, om2, pd2, al2, pdd2, cols2) = ends
            kind = cut.loop.type
            sel = [_mp(row) for row in cut.rows]
            ax, ax2 = _mp(cut.axis), _mp(cut.axis2)
            B1, B2 = _mp(cut.b1), _mp(cut.b2)
            R12 = _mm([[Rc1[j][i] for j in range(3)] for i in range(3)], Rc2)
            u2 = _mv(R12, ax2)
            n = _cross(u2, ax)
            if kind == "universal":
                sel[0] = n + [0, 0, 0]
            # J: Δ for each unit q̇_j
            row0 = len(Jrows)
            Jrows += [[mpmath.mpf(0)] * model.nv for _ in sel]
            for c in range(model.nv):
                d = []
                for cols, pc in ((cols1, pc1), (cols2, pc2)):
                    xi = cols.get(c)
                    if xi is None:
                        d.append(([0, 0, 0], [0, 0, 0]))
                    else:
                        d.append((xi[:3], _add(xi[3:], _cross(xi[:3], pc))))
                da = _mtv(Rc1, _sub(d[1][0], d[0][0]))
                dl = _mtv(Rc1, _sub(d[1][1], d[0][1]))
                for i, s in enumerate(sel):
                    Jrows[row0 + i][c] = _dot(s[:3], da) + _dot(s[3:], dl)
            w1 = _mtv(Rc1, om1)
            d_om, d_v = _mtv(Rc1, _sub(om2, om1)), _mtv(Rc1, _sub(pd2, pd1))
            dd_a = _sub(_mtv(Rc1, _sub(al2, al1)), _cross(w1, d_om))
            dd_l = _sub(_mtv(Rc1, _sub(pdd2, pdd1)), _cross(w1, d_v))
            acc += [_dot(s[:3], dd_a) + _dot(s[3:], dd_l) for s in sel]
            if kind == "universal":  # ṅ · Δω, ṅ = (Δω × u₂) × axis
                acc[row0] += _dot(_cross(_cross(d_om, u2), ax), d_om)
            e = _mtv(Rc1, _sub(pc2, pc1))
            if kind in ("fixed", "prismatic"):
                res += _log3(R12)
            elif kind == "revolute":
                u = _mv(R12, ax)
                res += [-_dot(B2, u), _dot(B1, u)]
            elif kind == "universal":
                res.append(_dot(ax, u2))
            res += [_dot(B1, e), _dot(B2, e)] if kind in ("prismatic", "point_on_line") else e
        for c in model.coupled:
            row = [mpmath.mpf(0)] * model.nv
            k, ref = int(model.idx_v[c.body]), int(model.idx_v[c.reference])
            row[k] += 1
            row[ref] -= mpmath.mpf(float(c.multiplier))
            Jrows.append(row)
            acc.append(sum(x * y for x, y in zip(row, a, strict=True)))
            r0 = mpmath.mpf(float(self.res0[len(res)]))
            res.append(r0 + sum(x * y for x, y in zip(row, dq, strict=True)))
        return Jrows, acc, res

    # -- the forward dynamics -----------------------------------------------------------------------------------
    def forward(self, dq, v, tau):
        """(q̈, λ) at q ⊕ dq, velocities v, torques τ (sequences of numbers or mpf), as mpmath lists."""
        model = self.model
        nv = model.nv
        with mpmath.workdps(self.digits):
            dq, v, tau = ([mpmath.mpf(x) if not isinstance(x, mpmath.mpf) else x for x in y] for y in (dq, v, tau))
            poses = self._poses(dq)
            screws = self._screws(poses)
            M, h = self._dynamics(poses, screws, v)
            if not model.n_constraints:
                x = mpmath.lu_solve(M, mpmath.matrix([t - b for t, b in zip(tau, h, strict=True)]))
                return [x[i] for i in range(nv)], []
            zero = [mpmath.mpf(0)] * nv
            V, A = self._motion(screws, v, zero, True)
            J, bias, r = self._cut_rows(poses, screws, v, zero, V, A, dq)
            m = len(J)
            gamma = [-(bias[i] + 2 * self.kd * sum(x * y for x, y in zip(J[i], v, strict=True)) + self.kp**2 * r[i])
                     for i in range(m)]  # fmt: skip
            B = self.B if self.B is not None else [[mpmath.mpf(int(i == j)) for j in range(m)] for i in range(m)]
            nr = len(B[0])
            JB = [[sum(B[i][j] * J[i][c] for i in range(m)) for c in range(nv)] for j in range(nr)]  # Bᵀ J
            K = mpmath.matrix(nv + nr, nv + nr)
            rhs = mpmath.matrix(nv + nr, 1)
            for i in range(nv):
                for j in range(nv):
                    K[i, j] = M[i, j]
                rhs[i] = tau[i] - h[i]
            for j in range(nr):
                for c in range(nv):
                    K[c, nv + j] = -JB[j][c]
                    K[nv + j, c] = JB[j][c]
                rhs[nv + j] = sum(B[i][j] * gamma[i] for i in range(m))
            x = mpmath.lu_solve(K, rhs)
            acc = [x[i] for i in range(nv)]
            lam = [sum(B[i][j] * x[nv + j] for j in range(nr)) for i in range(m)]
            return acc, lam

    def derivatives(self, v, tau, directions, h: float = 1e-20):
        """Central differences (δq̈, δλ) along each direction (dq, dv, dτ) (float arrays, nv each): (q̈(+h) − q̈(−h)) /
        2h and likewise λ, in float64; the truncation error is O(h²) and the rounding O(10⁻ᵈⁱᵍⁱᵗˢ / h)."""
        nv = self.model.nv
        v, tau = vector(v, nv, "v"), vector(tau, nv, "tau")
        out = []
        with mpmath.workdps(self.digits):
            hh = mpmath.mpf(h)
            for dq, dv, dt in directions:
                vals = []
                for s in (hh, -hh):
                    vs = [float(x) + s * float(y) for x, y in zip(v, dv, strict=True)]
                    ts = [float(x) + s * float(y) for x, y in zip(tau, dt, strict=True)]
                    vals.append(self.forward([s * float(x) for x in dq], vs, ts))
                da = np.array([float((p - m) / (2 * hh)) for p, m in zip(vals[0][0], vals[1][0], strict=True)])
                dl = np.array([float((p - m) / (2 * hh)) for p, m in zip(vals[0][1], vals[1][1], strict=True)])
                out.append((da, dl))
        return out


def _motion_cross(a, b):
    w, v = a[:3], a[3:]
    return _cross(w, b[:3]) + _add(_cross(w, b[3:]), _cross(v, b[:3]))


def _force_cross(a, f):
    w, v = a[:3], a[3:]
    return _add(_cross(w, f[:3]), _cross(v, f[3:])) + _cross(w, f[3:])


def _to_body(R, o, x):
    """A world motion [ω; v] (at the world origin) in the body frame at its origin o: [Rᵀ ω; Rᵀ (v + ω × o)]."""
    w = x[:3]
    return _mtv(R, w) + _mtv(R, _add(x[3:], _cross(w, o)))


def _to_body_force(R, o, F):
    """A world wrench [n; f] (moment about the world origin) in the body frame about o: [Rᵀ (n − o × f); Rᵀ f]."""
    return _mtv(R, _sub(F[:3], _cross(o, F[3:]))) + _mtv(R, F[3:])


def _log3(R):
    """The rotation vector of R (mpmath): θ/(2 sin θ) (R − Rᵀ)∨, θ not near π."""
    c = (R[0][0] + R[1][1] + R[2][2] - 1) / 2
    w = [R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]]
    s = mpmath.sqrt(_dot(w, w)) / 2
    th = mpmath.atan2(s, c)
    f = mpmath.mpf(1) / 2 if s == 0 else th / (2 * s)
    return _scale(w, f)
