"""The public algorithms, in Pinocchio's argument order and array layouts: ``f(model, data, q, v, …)``.

Each function tries the fast path first (``protocol``: ready arrays straight to a compiled entry of
``tree_entries``), written out here rather than behind a helper, which would cost a Python call per call.
"""

from __future__ import annotations

import numpy as np

from ..model import Data, Model, ModelError, check_data, configuration, vector
from ..model.mimic import MimicModel
from ..model.status import NOT_READY, raise_for_status
from .composite import ancestor_blocks
from .forward import udut_solve
from .protocol import kernel_array, ready, refused, restamp
from .tree_entries import ABA, CRBA, RNEA, factor, run_states

rnea_fast, aba_fast, crba_fast = RNEA.fast, ABA.fast, CRBA.fast  # the fast entries, as module globals

__all__ = ["DENSE_LIMIT", "forward_dynamics", "gim", "gim_inverse", "inverse_dynamics", "nonlinear_effects", "udut"]

DENSE_LIMIT = 5_000
"""Largest nv for which dense nv x nv results (GIM, GIM⁻¹, U, D) are formed (5,000² doubles: 200 MB).
Beyond it the O(n) recursions are the tool: the GIM's condition number grows like n⁴ on chains."""


def check_dense_size(model: Model, what: str) -> None:
    if model.nv > DENSE_LIMIT:
        raise ModelError(
            f"{what}: model {model.name!r} has nv = {model.nv}; dense nv x nv matrices are formed only up to "
            f"nv = {DENSE_LIMIT} ({model.nv}² doubles would take {model.nv**2 * 8 / 1e9:.1f} GB). "
            "Use forward_dynamics / inverse_dynamics, which are O(n) in time and memory."
        )


def inverse_dynamics(model: Model, data: Data, q, v, a, fext=None) -> np.ndarray:
    """Joint torques τ(q, q̇, q̈) by the recursive DeNOC algorithm (Table 1); ``pinocchio.rnea``.

    q: (nq,), v: (nv,), a: (nv,) in Pinocchio's layout, or a batch (B, nq), (B, nv), (B, nv)
    computed on all cores.  fext: None, an (njoints, 6) array of [linear, angular] forces in each
    joint frame, or a list of ``pinocchio.Force`` (the same for the whole batch).
    Returns τ as a new (nv,) array (also left in ``data.tau``), or (B, nv) for a batch.
    """
    if fext is None:
        try:
            status = rnea_fast(model.mb, data.ws, q, v, a)
        except (TypeError, AttributeError) as refusal:
            status = refused(refusal, model, data, q, v, a)
        if status == 0:
            return data.tau.copy()
    if type(model) is MimicModel:  # τ = Gᵀ τ_tree(E(q), G q̇, G q̈)
        return inverse_dynamics(model.tree, data, model.expand_q(q), model.expand_v(v), model.expand_v(a, "a"),
                                fext) @ model.G  # fmt: skip
    return run_states(False, model, data, q, v, a, fext)


def nonlinear_effects(model: Model, data: Data, q, v) -> np.ndarray:
    """h(q, q̇) = C(q, q̇) q̇ + gravity term: inverse dynamics with q̈ = 0; ``pinocchio.nonLinearEffects``.

    Also for a batch (B, nq), (B, nv).
    """
    if type(model) is MimicModel:
        return nonlinear_effects(model.tree, data, model.expand_q(q), model.expand_v(v)) @ model.G
    a = data.zeros_v if np.ndim(q) == 1 and isinstance(data, Data) else np.zeros(np.shape(v))
    return run_states(False, model, data, q, v, a, None)


def forward_dynamics(model: Model, data: Data, q, v, tau, fext=None, constraint_jacobian=None,
                     constraint_drift=None):  # fmt: skip
    """Joint accelerations q̈ = GIM⁻¹ φ, φ = τ − C q̇ − gravity (A.1), in O(n); ``pinocchio.aba``.

    φ comes from inverse dynamics with q̈ = 0 (note 1 of Table 3); then the UDUᵀ recursions.
    One state q (nq,), v, tau (nv,), or a batch (B, nq), (B, nv), (B, nv) computed on all cores.
    Returns q̈ as a new (nv,) array (also left in ``data.ddq``), or (B, nv).

    With ``constraint_jacobian`` J (m, nv) and ``constraint_drift`` γ (m,) (one state): the dynamics under the
    user's constraints J q̈ + γ = 0, GIM q̈ = φ + Jᵀ λ, as ``pinocchio.forwardDynamics(model, data, q, v, tau, J, γ)``;
    returns (q̈, λ) (Pinocchio's ``data.ddq``, ``data.lambda_c``).  Solved as Schiehlen's eq. 20 on the tree's factors:
    q̈₀ by the recursions, Y = GIM⁻¹ Jᵀ by the same UDUᵀ factors (O(n m)), (J Y) λ = −γ − J q̈₀, λ of minimum norm
    where J's rows are dependent.
    """
    if constraint_jacobian is not None or constraint_drift is not None:
        return _forward_dynamics_under(model, data, q, v, tau, fext, constraint_jacobian, constraint_drift)
    if fext is None:
        try:
            status = aba_fast(model.mb, data.ws, q, v, tau)
        except (TypeError, AttributeError) as refusal:
            status = refused(refusal, model, data, q, v, tau)
        if status == 0:
            return data.ddq.copy()
    if type(model) is MimicModel:
        return _mimic_forward_dynamics(model, data, q, v, tau, fext)
    return run_states(True, model, data, q, v, tau, fext)


def _forward_dynamics_under(model: Model, data: Data, q, v, tau, fext, J, gamma) -> tuple[np.ndarray, np.ndarray]:
    """``forward_dynamics`` under the constraints J q̈ + γ = 0 (its docstring)."""
    if J is None or gamma is None:
        raise ValueError("forward_dynamics: constraint_jacobian and constraint_drift go together (J q̈ + γ = 0)")
    if np.ndim(q) == 2 and np.shape(q)[1] != 1:
        raise ValueError("forward_dynamics under constraints takes one state: q (nq,), not a batch")
    J = np.asarray(J, dtype=np.float64)
    m = J.shape[0] if J.ndim == 2 else -1
    if J.ndim != 2 or J.shape[1] != model.nv or not np.isfinite(J).all():
        raise ValueError(f"constraint_jacobian must be a finite (m, {model.nv}) array, got shape {J.shape}")
    gamma = vector(gamma, m, "constraint_drift")
    if type(model) is MimicModel:  # the user's rows on the kept coordinates, below the mimic rows C q̈_tree = 0
        tree, nc = model.tree, len(model.coupling_rows)
        Jt = np.zeros((m, tree.nv))
        Jt[:, model.kept_v] = J
        rows, drift = np.vstack([model.coupling_rows, Jt]), np.r_[np.zeros(nc), gamma]
        q, v, tau = model.expand_q(q), model.expand_v(v), _on_kept(model, tau)
        a, lam = _forward_dynamics_under(tree, data, q, v, tau, fext, rows, drift)
        return model.reduce_v(a), lam[nc:]
    # φ = τ − h(q, q̇) (note 1 of Table 3), then one factorization solves U D Uᵀ [q̈₀ Y] = [φ Jᵀ].
    phi = vector(tau, model.nv, "tau") - inverse_dynamics(model, data, q, v, np.zeros(model.nv), fext)
    factor(model, data, kernel_array(configuration(model, q)))
    X = np.empty((model.nv, m + 1))
    nj = model.njoints
    solve(model, data, np.column_stack([phi, J.T]), np.empty((nj, m + 1, 6)), np.empty((nj, m + 1, 6)), X)
    a0, Y = X[:, 0], X[:, 1:]
    lam = np.linalg.lstsq(J @ Y, -gamma - J @ a0, rcond=1e-12)[0]
    a = a0 + Y @ lam
    data.ddq[:] = a
    return a, lam


def _on_kept(model: MimicModel, tau) -> np.ndarray:
    """A reduced τ as the tree's generalized forces, zero on the mimic coordinates (Gᵀ of it is τ)."""
    tau = model.check_reduced(tau, model.nv, "tau")
    out = np.zeros(tau.shape[:-1] + (model.tree.nv,))
    out[..., model.kept_v] = tau
    return out


def _mimic_forward_dynamics(model: MimicModel, data: Data, q, v, tau, fext) -> np.ndarray:
    """q̈ of a reduced mimic model: the tree's dynamics under the mimic rows C q̈_tree = 0 (γ = 0: the rows are
    constant), q̈_tree = G q̈, by the tree's UDUᵀ factors (Schiehlen, eq. 20); GᵀCᵀ = 0 keeps τ = Gᵀ τ_tree."""
    Q, V, T = model.expand_q(q), model.expand_v(v), _on_kept(model, tau)
    C, gamma = model.coupling_rows, np.zeros(len(model.coupling_rows))
    if Q.ndim == 1:
        return model.reduce_v(_forward_dynamics_under(model.tree, data, Q, V, T, fext, C, gamma)[0])
    if not (len(Q) == len(V) == len(T)):
        raise ValueError(f"a batch needs as many rows in q, v and tau, got {len(Q)}, {len(V)}, {len(T)}")
    rows = [_forward_dynamics_under(model.tree, data, *x, fext, C, gamma)[0] for x in zip(Q, V, T, strict=True)]
    return model.reduce_v(np.array(rows).reshape(len(Q), model.tree.nv))


def gim(model: Model, data: Data, q) -> np.ndarray:
    """The full symmetric generalized inertia matrix I(q) (eq. 13, 16–17); ``pinocchio.crba``.

    O(n·depth) work; refused above ``DENSE_LIMIT`` DOF.  Returns a new (nv, nv) array
    (also left in ``data.gim``).
    """
    try:  # the fast path, once data.gim exists
        out = data.gim_ws
        status = NOT_READY if out is None else crba_fast(model.mb, data.ws, q, out)
    except (TypeError, AttributeError) as refusal:
        status = refused(refusal, model, data, q)
    if status == 0:
        return out.copy()
    if type(model) is MimicModel:  # Gᵀ I G
        return model.G.T @ gim(model.tree, data, model.expand_q(q)) @ model.G
    if getattr(data, "model", None) is not model:
        check_data(model, data)
    restamp(model, data)
    check_dense_size(model, "gim")
    if not ready(q, model.nq):
        q = kernel_array(configuration(model, q))
    out = data.gim
    CRBA.prepare()  # with the fast entry: the next call takes the fast path, and the first compiles once
    raise_for_status(model, CRBA.kernel(model.mi, model.mf, data.ws, q, out), q, None, None, "")
    return out.copy()


def udut(model: Model, data: Data, q) -> tuple[np.ndarray, np.ndarray]:
    """GIM = U D Uᵀ by block reverse Gaussian elimination (eq. 18; A.3–A.4).

    U: (nv, nv) unit upper-triangular, U_{k,j} = p_kᵀ A_{j,k}ᵀ Ψ_j for k an ancestor of j.
    D: (nv, nv) block diagonal with the z_k x z_k blocks Î_k (diagonal for 1-DOF joints).
    """
    check_data(model, data)
    check_dense_size(model, "udut")
    q = np.ascontiguousarray(configuration(model, q))
    factor(model, data, q)
    data.U[:] = 0.0
    data.D[:] = 0.0
    for k in range(1, model.njoints):
        iv, z = model.idx_v[k], model.nvs[k]
        data.U[iv : iv + z, iv : iv + z] = np.eye(z)
        data.D[iv : iv + z, iv : iv + z] = data.I_hat[k, :z, :z]
    ancestor_blocks(model.parents, model.idx_v, model.nvs, data.E, data.r, data.S, data.Psi, data.U)
    return data.U.copy(), data.D.copy()


def solve(model: Model, data: Data, phi: np.ndarray, eta: np.ndarray, mu: np.ndarray, out: np.ndarray) -> np.ndarray:
    """U D Uᵀ X = φ for the factors in data (m right-hand sides; Table 3)."""
    udut_solve(
        model.parents, model.module_ptr, model.module_bodies, model.idx_v, model.nvs,
        data.E, data.r, data.S, data.Psi, data.I_hat_inv, phi, eta, mu, out, np.empty(6),
    )  # fmt: skip
    return out


def gim_inverse(model: Model, data: Data, q) -> np.ndarray:
    """GIM⁻¹ from the UDUᵀ factors: the recursions of Table 3 applied to the identity; ``pinocchio.computeMinverse``.

    O(n²) work and memory (the result is dense); refused above ``DENSE_LIMIT`` DOF.
    """
    if type(model) is MimicModel:  # (Gᵀ I G)⁻¹, dense: the mimic couples columns across the tree
        return np.linalg.inv(gim(model, data, q))
    check_data(model, data)
    check_dense_size(model, "gim_inverse")
    q = np.ascontiguousarray(configuration(model, q))
    factor(model, data, q)
    nv, nj = model.nv, model.njoints
    # Columns in chunks keep the η/μ workspaces (njoints x chunk x 6) small for large nv.
    chunk = min(nv, 256)
    eye = np.eye(nv)
    for c0 in range(0, nv, chunk):
        c1 = min(nv, c0 + chunk)
        m = c1 - c0
        out = np.empty((nv, m))
        solve(model, data, np.ascontiguousarray(eye[:, c0:c1]), np.empty((nj, m, 6)), np.empty((nj, m, 6)), out)
        data.gim_inv[:, c0:c1] = out
    # The recursions give GIM⁻¹ to rounding; symmetrise like Pinocchio's full matrix.
    data.gim_inv[:] = 0.5 * (data.gim_inv + data.gim_inv.T)
    return data.gim_inv.copy()
