"""The derivatives of the dynamics and of the configuration space, in Pinocchio's argument order and layouts.

Derivatives with respect to q are taken in the tangent space, through ``integrate`` (q ⊕ δq): every matrix is
nv x nv, as Pinocchio's ``computeRNEADerivatives``, ``computeABADerivatives``, ``dIntegrate`` and ``dDifference``.
The dynamics' derivatives try the fast path first (``protocol``), written out in each function's body.
"""

from __future__ import annotations

import numpy as np

from ..core.lie_groups import difference_derivatives_kernel, integrate_derivatives_kernel
from ..model import Data, Model, configuration, vector
from ..model.mimic import MimicModel
from ..model.status import NOT_READY, raise_for_status
from .derivatives import DERIVATIVES
from .dynamics_api import check_dense_size, forward_dynamics
from .protocol import refused, set_fext, states

derivatives_fast = DERIVATIVES.fast  # a module global: the fast path reads no attribute

__all__ = [
    "difference_derivatives",
    "forward_dynamics_derivatives",
    "integrate_derivatives",
    "inverse_dynamics_derivatives",
]


def inverse_dynamics_derivatives(model: Model, data: Data, q, v, a, fext=None):
    """(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈) of inverse dynamics τ(q, q̇, q̈) (Table 1); ``pinocchio.computeRNEADerivatives``.

    ∂τ/∂q is taken in the tangent space (q ⊕ δq); ∂τ/∂q̈ is the GIM.  Each is a new (nv, nv) array.  fext as in
    ``inverse_dynamics`` (constant in the joint frames, as Pinocchio's).  A batch q (B, nq), v, a (B, nv) gives
    three (B, nv, nv) arrays, computed on all cores.  O(n·d) for a tree of depth d (``docs/derivatives.md``).
    """
    if fext is None:
        status, outs = _fast(False, model, data, q, v, a)
        if status == 0:
            return outs
    return _checked(False, model, data, q, v, a, fext)


def _fast(forward: bool, model: Model, data: Data, q, v, x) -> tuple[int, tuple]:
    """The fast path, once ``data.derivatives()`` exists (the checked path's first call makes it): the kernel
    writes the three results straight into a new (3, nv, nv) block (it sets every entry), no copies; each result
    is one of its matrices."""
    try:
        if data.derivatives_ws is None:
            return NOT_READY, ()
        nv = model.nv
        out = np.empty((3, nv, nv))
        return derivatives_fast(model.mb, data.ws, q, v, x, forward, out), (out[0], out[1], out[2])
    except (TypeError, AttributeError) as refusal:
        return refused(refusal, model, data, q, v, x), ()


def forward_dynamics_derivatives(model: Model, data: Data, q, v, tau, fext=None):
    """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ) of forward dynamics q̈(q, q̇, τ) at one state; ``pinocchio.computeABADerivatives``.

    Since τ(q, q̇, q̈(q, q̇, τ)) = τ: ∂q̈/∂x = −GIM⁻¹ ∂τ/∂x at q̈, and ∂q̈/∂τ = GIM⁻¹: densely from the GIM of the
    same pass up to ``DENSE_PRODUCT`` DOF, by Table 3 on the columns above.  q̈ itself is left in ``data.ddq``.  Also
    for a batch, as ``inverse_dynamics_derivatives``.
    """
    if fext is None:
        status, outs = _fast(True, model, data, q, v, tau)
        if status == 0:
            return outs
    return _checked(True, model, data, q, v, tau, fext)


def _checked(forward: bool, model: Model, data: Data, q, v, x, fext):
    """The derivatives through the checked path: one state or a batch."""
    if type(model) is MimicModel:
        return _mimic(forward, model, data, q, v, x, fext)
    name = "forward_dynamics_derivatives" if forward else "inverse_dynamics_derivatives"
    entry = DERIVATIVES
    xname = "tau" if forward else "a"
    q, v, x, B = states(model, data, q, v, x, xname)
    check_dense_size(model, name)
    set_fext(model, data, fext)
    with_fext = not data.fext_is_zero
    outs = data.derivatives()
    nv = model.nv
    if B is None:
        entry.prepare()  # with the fast entry: the next call takes the fast path
        status = entry.kernel(model.mi, model.mf, data.ws, q, v, x, with_fext, forward, *outs)
        raise_for_status(model, status, q, v, x, xname)
        return outs[0].copy(), outs[1].copy(), outs[2].copy()
    out = np.empty((B, 3 * nv * nv))
    status, out = entry.run_batch(model, data, (with_fext, forward), q, v, x, out)
    raise_for_status(model, status, q, v, x, xname)
    out = out.reshape(B, 3, nv, nv)
    return out[:, 0], out[:, 1], out[:, 2]


def _mimic(forward: bool, model: MimicModel, data: Data, q, v, x, fext):
    """A reduced mimic model's: Gᵀ (∂τ_tree/∂·) G, since E(q ⊕ δq) = E(q) ⊕ G δq; forward ones from those at q̈."""
    G = model.G
    if forward:
        a = forward_dynamics(model, data, q, v, x, fext)
        dq, dv, M = _mimic(False, model, data, q, v, a, fext)
        Minv = np.linalg.inv(M)
        return -Minv @ dq, -Minv @ dv, Minv
    d = inverse_dynamics_derivatives(model.tree, data, model.expand_q(q), model.expand_v(v), model.expand_v(x, "a"),
                                     fext)  # fmt: skip
    return tuple(G.T @ m @ G for m in d)


def integrate_derivatives(model: Model, q, v) -> tuple[np.ndarray, np.ndarray]:
    """(∂(q ⊕ v)/∂q, ∂(q ⊕ v)/∂v) in the tangent spaces, block diagonal (nv, nv): Ad(exp v)⁻¹ and the right Jacobian
    J_r(v) of each joint's group, identities on ℝⁿ and SO(2); ``pinocchio.dIntegrate`` (ARG0, ARG1)."""
    configuration(model, q)  # checked: the derivatives do not depend on q, but a wrong q is a caller's error
    v = np.ascontiguousarray(vector(v, model.nv, "v"))
    dq, dv = np.empty((model.nv, model.nv)), np.empty((model.nv, model.nv))
    integrate_derivatives_kernel(model.kinds, model.idx_v, model.nvs, v, dq, dv)
    return dq, dv


def difference_derivatives(model: Model, q0, q1) -> tuple[np.ndarray, np.ndarray]:
    """(∂(q1 ⊖ q0)/∂q0, ∂(q1 ⊖ q0)/∂q1) in the tangent spaces, block diagonal (nv, nv): −J_r(v)⁻¹ Ad(exp v)⁻¹ and
    J_r(v)⁻¹ at v = q1 ⊖ q0; −1 and 1 on ℝⁿ and SO(2); ``pinocchio.dDifference`` (ARG0, ARG1).  A rotation of
    exactly π between q0 and q1 has two shortest paths, and there the derivative of either is returned."""
    q0 = np.ascontiguousarray(configuration(model, q0, "q0"))
    q1 = np.ascontiguousarray(configuration(model, q1, "q1"))
    d0, d1 = np.empty((model.nv, model.nv)), np.empty((model.nv, model.nv))
    difference_derivatives_kernel(model.kinds, model.idx_q, model.idx_v, model.nvs, q0, q1, d0, d1)
    return d0, d1
