"""Closing the loops: Newton projection onto r(q) = 0 with a global strategy where it stalls, and each loop's
mobility."""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import difference, integrate, normalize
from ..model import Model, configuration
from .dynamics import dof_of
from .loop_kinematics import LoopState, independent_svd, kinematics, loop_jacobian, loop_residual, need_loops
from .types import AssemblyError

__all__ = ["ASSEMBLY_STARTS", "REDUNDANT_TOL", "assemble", "loop_mobility"]


def loop_mobility(model: Model, q) -> dict[str, int]:
    """Per cut joint, the mobility of its loop at q: the DOF of the tree joints on the path between
    its two links, less the rank of its constraints on them (0: the loop is rigid)."""
    J = loop_jacobian(model, q)
    rows = np.cumsum([0] + [lp.n_constraints for lp in model.loops])
    out = {}
    for i, cut in enumerate(model.cuts):
        a, b = {cut.body1}, {cut.body2}
        for s in (a, b):  # ancestors, each set including the body itself
            k = next(iter(s))
            while k:
                k = int(model.parents[k])
                s.add(k)
        path = sorted((a ^ b) - {0})
        cols = [c for k in path for c in range(int(model.idx_v[k]), int(model.idx_v[k] + model.nvs[k]))]
        block = J[rows[i] : rows[i + 1]][:, cols]
        rank = np.linalg.matrix_rank(block, tol=1e-9 * max(1.0, np.abs(block).max())) if block.size else 0
        out[model.loops[i].name] = len(cols) - int(rank)
    return out


ASSEMBLY_STARTS = 32
"""Seeded starts the global search tries after Newton and Levenberg–Marquardt stall from the guess."""


REDUNDANT_TOL = 1e-6
"""The residual a closed state may keep along redundant directions (below ``RANK_RTOL``) [m, rad]: what a file's
rounding leaves there, which no joint motion removes to first order — Cassie's legs 1e-11 to 5e-10, a parallelogram
neck whose sites are written to 8 decimals 1e-8 (Menagerie's ToddlerBot), a file written to 6 decimals up to 1e-6.
A larger residual there is a mechanism that does not close."""


def _closure_error(r: np.ndarray, U: np.ndarray) -> float:
    """How far r is from closed: its largest component along the independent directions (the columns of U),
    or, where the whole residual exceeds ``REDUNDANT_TOL``, the whole residual's largest entry."""
    whole = float(np.abs(r).max())
    return whole if whole > REDUNDANT_TOL else float(np.abs(U @ (U.T @ r)).max())


def _newton(model: Model, data, q, free, tol: float, max_iter: int) -> tuple[np.ndarray, float]:
    """Newton projection onto r(q) = 0 over the ``free`` DOF: the minimum-norm step −J⁺ r on the independent
    directions (SVD, singular values below ``RANK_RTOL`` × the largest dropped), halved while the closure error
    (``_closure_error``) would grow.  Returns (q, closure error) where it stops."""
    r = loop_residual(model, q, data)
    err = np.inf
    for _ in range(max_iter + 1):
        U, s, Vt = independent_svd(LoopState(model, data, False, q).J[:, free])
        err = _closure_error(r, U)
        if err <= tol:
            break
        dv = np.zeros(model.nv)
        dv[free] = -Vt.T @ ((U.T @ r) / s)
        for _ in range(40):
            q_new = integrate(model, q, dv)
            r_new = loop_residual(model, q_new, data)
            if _closure_error(r_new, U) < err:
                break
            dv *= 0.5
        else:
            break  # no step reduces the residual: a stationary point of ‖r‖ with r ≠ 0
        q, r = q_new, r_new
        kinematics(model, data, q)
    return q, err


def _levenberg_marquardt(model: Model, data, q, free) -> np.ndarray:
    """min ‖r(q ⊕ Δ)‖² over Δ on the ``free`` DOF by scipy's trust-region least squares, whose damping walks
    off the plateaus and singular Jacobians where Newton's step is useless (a four-bar folded flat)."""
    from scipy.optimize import least_squares

    def full(x):
        dv = np.zeros(model.nv)
        dv[free] = x
        return integrate(model, q, dv)

    def jac(x):
        # The loop Jacobian in the tangent space at q ⊕ Δ; exact for 1-DOF joints, where ⊕ adds.
        qx = full(x)
        kinematics(model, data, qx)
        return LoopState(model, data, False, qx).J[:, free]

    fit = least_squares(lambda x: loop_residual(model, full(x), data), np.zeros(len(free)), jac=jac, method="trf",
                        xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=200)  # fmt: skip
    return full(fit.x)


def _close(model: Model, data, q, free, tol: float, max_iter: int) -> tuple[np.ndarray, float]:
    """Newton from q; where it stalls, Levenberg–Marquardt, then Newton again to polish."""
    q, err = _newton(model, data, q, free, tol, max_iter)
    if err > tol:
        q, err = _newton(model, data, _levenberg_marquardt(model, data, q, free), free, tol, max_iter)
    return q, err


def assemble(model: Model, q_guess, fixed=(), tol: float = 1e-12, max_iter: int = 50, seed: int = 0) -> np.ndarray:
    """A configuration near ``q_guess`` that closes every loop, holding the joints in ``fixed`` (e.g. the
    actuated crank angle) where the guess puts them.

    Newton projection first (minimum-norm steps −J⁺ r, by SVD, with step halving).  Where it stalls (a
    mechanism folded flat, as at the neutral configuration, is a stationary point of ‖r‖),
    Levenberg–Marquardt (scipy's trust-region least squares) and Newton again; if that stalls too, a
    global search from ``ASSEMBLY_STARTS`` seeded starts about the guess (the free joints moved by random
    angles of growing spread; ``seed`` fixes them), each closed the same way, keeping the closed
    configuration nearest the guess of the first three found.  Returns q with ‖r‖∞ ≤ tol along the independent
    constraint directions; along redundant ones (J's singular values below ``RANK_RTOL`` × the largest: a loop
    stated twice, or up to a file's rounding as in Cassie's legs) the residual is only held below
    ``REDUNDANT_TOL``.  Raises :class:`AssemblyError` with the smallest error reached if no start closes the
    loops.
    """
    need_loops(model, "assemble")
    q_guess = normalize(model, configuration(model, q_guess, "q_guess"))
    free = np.setdiff1d(np.arange(model.nv), dof_of(model, fixed, "fixed"))
    data = model.create_data()
    kinematics(model, data, q_guess)
    q, err = _close(model, data, q_guess, free, tol, max_iter)
    if err <= tol:
        return q
    best, found = err, []
    rng = np.random.default_rng(seed)
    for i in range(ASSEMBLY_STARTS):
        dv = np.zeros(model.nv)
        dv[free] = rng.normal(scale=(0.3, 1.0, 3.0)[i % 3], size=len(free))
        start = integrate(model, q_guess, dv)
        kinematics(model, data, start)
        q, err = _close(model, data, start, free, tol, max_iter)
        best = min(best, err)
        if err <= tol:
            found.append(q)
            if len(found) == 3:
                break
    if found:
        return min(found, key=lambda q: np.linalg.norm(difference(model, q_guess, q)))
    raise AssemblyError(
        f"model {model.name!r}: cannot close the loops {[lp.name for lp in model.loops]} near q_guess "
        f"(fixed joints: {list(fixed)}): the residual stalls at {best:.3g} > tol = {tol:g} from the guess and "
        f"from {ASSEMBLY_STARTS} starts about it — the links may be too short to meet, or the fixed joints "
        "over-constrain the mechanism"
    )
