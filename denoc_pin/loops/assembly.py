"""Closing the loops: Newton projection onto r(q) = 0, and each loop's mobility."""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import integrate, normalize
from ..model import Model, configuration
from .dynamics import dof_of, min_norm_solve
from .kernel import LoopState, kinematics, loop_jacobian, loop_residual, need_loops
from .types import AssemblyError

__all__ = ["assemble", "loop_mobility"]


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


def assemble(model: Model, q_guess, fixed=(), tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
    """A configuration near ``q_guess`` that closes every loop: Newton projection onto r(q) = 0.

    Each step is the minimum-norm correction Δ = −J_free⁺ r (SVD, so redundant constraints are
    fine) over the joints not in ``fixed`` (e.g. the actuated crank angle to hold), with
    step halving when the residual would grow.  Returns q with ‖r‖∞ ≤ tol; raises
    :class:`AssemblyError` with the residual reached if the loops cannot be closed.
    """
    need_loops(model, "assemble")
    q = normalize(model, configuration(model, q_guess, "q_guess"))
    free = np.setdiff1d(np.arange(model.nv), dof_of(model, fixed, "fixed"))
    data = model.create_data()
    r = loop_residual(model, q, data)
    err = np.abs(r).max()
    for _ in range(max_iter):
        if err <= tol:
            return q
        J = LoopState(model, data, False).J[:, free]
        step, _ = min_norm_solve(J, -r, 1e-12)
        dv = np.zeros(model.nv)
        dv[free] = step
        for _ in range(40):
            q_new = integrate(model, q, dv)
            r_new = loop_residual(model, q_new, data)
            err_new = np.abs(r_new).max()
            if err_new < err:
                break
            dv *= 0.5
        else:
            break  # no step reduces the residual: a local minimum with r ≠ 0
        q, r, err = q_new, r_new, err_new
        kinematics(model, data, q)
    if err <= tol:
        return q
    raise AssemblyError(
        f"model {model.name!r}: cannot close the loops {[lp.name for lp in model.loops]} near q_guess "
        f"(fixed joints: {list(fixed)}): the residual stalls at {err:.3g} > tol = {tol:g} — the links may be too "
        "short to meet, or the fixed joints over-constrain the mechanism"
    )
