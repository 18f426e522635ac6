"""The preallocated :class:`Data` workspace of a :class:`Model` (Pinocchio's ``model.createData()``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.joints import motion_subspaces
from ..core.layout import (
    FRAME_BODY,
    FRAME_ROTATION,
    FRAME_TRANSLATION,
    HEADER,
    LW_M,
    LW_ND,
    LW_RANK,
    WS_STAMP,
    DataViews,
    data_views,
    loop_factor_order,
    loop_views,
    loop_workspace_size,
    numpy_views,
    workspace_size,
)

if TYPE_CHECKING:  # Model makes its Data (Model.create_data): this module must not need model.py at run time
    from .model import Model

__all__ = ["Data"]


class Data:
    """Preallocated workspace of one model.  Algorithms write here and return copies.

    All per-body fields are views of one flat buffer ``ws`` (``core.tables.DATA_FLOATS`` declares them; ``ws[WS_STAMP]``
    stamps it with the model buffer it was made for); zmax = ``model.zmax``, the largest joint DOF.
    Fields (njoints = number of bodies + 1; index 0 is the base; body frames, [ω; v]):

    - ``E``: (njoints, 3, 3) rotation taking parent-frame components to body-frame ones.
    - ``r``: (njoints, 3) position of body origin o_k relative to its parent's, parent frame.
      ``(E[k], r[k])`` define the twist-propagation matrix A_{k,β} (eq. 7b).
    - ``S``: (njoints, 6, zmax) joint-motion propagation p_k in its first ``nvs[k]`` columns. Constant, set when
      the Data is made, except a universal joint's first column R2ᵀ e1, which the kinematics update.
    - ``oR``, ``op``: (njoints, 3, 3) and (njoints, 3) each body's orientation and origin in the world (Pinocchio's
      ``oMi``), after ``forward_kinematics`` (a frame function computes only its frame's support).  ``oMi``,
      ``oMf``, ``v``, ``a``: Pinocchio's fields of those names, in its layouts, formed from these on access.
    - ``t``, ``tdot``: (njoints, 6) twists and twist-rates (classical accelerations ω̇, ö), body frames; gravity is
      in ``tdot`` after inverse dynamics (the base accelerating at −g), not after ``forward_kinematics``.
    - ``path`` (njoints,), ``frame_pose``, ``twist``, …, ``phi_hat``: a frame's support and small work arrays of
      the kinematics and the solves (``core.tables.DATA_FLOATS``).
    - ``w_tilde``: (njoints, 6) the composite wrenches w̃_k of Table 1, step 2 (the Newton-Euler
      wrenches w_k are not kept: each goes straight into its w̃_k).  Forward dynamics folds Table 1's step 2
      into Table 3's step 1 and sums w̃_k + η̃_k here (``forward.factor_step``).
    - ``fext``: (njoints, 6) external wrenches [n; f] of the last call given any, body frames (a
      call without ``fext`` does not read it).
    - ``tau``: (nv,) result of inverse dynamics (forward dynamics never forms h or φ = τ − h on their own).
    - ``M_hat``: (nslots, 6, 6) articulated mass matrices M̂_k (eq. 20, A.6) while they are open:
      M̂_k lives in slot ``model.slot[k]`` from the elimination of k's first child to that of k
      (``layout.articulated_slots``); a chain needs two slots.  Inside a module the factorization
      passes A_{k,β}ᵀ Φ_k M̂_k A_{k,β} to the parent in registers, so it writes a slot only for a
      module's last body (what its child modules send) and for multi-DOF joints.  ``gim`` keeps its
      composite inertias M̃_k (eq. 17) in the same slots, and B_k = M̃_k p_k in ``Psi_hat``.
    - ``Psi_hat``, ``Psi``: (njoints, 6, zmax) Ψ̂_k = M̂_k P_k and Ψ_k = Ψ̂_k Î_k⁻¹ (eq. 19, A.5),
      first ``nvs[k]`` columns; ``I_hat``, ``I_hat_inv``: (njoints, zmax, zmax) Î_k = p_kᵀ Ψ̂_k and
      its inverse, top-left ``nvs[k]`` x ``nvs[k]`` block (the D blocks of eq. 18).  ``forward_dynamics`` keeps
      Ψ̂_k of 1- and 2-DOF joints in registers (its solve reads Ψ_k): ``udut`` writes them; both write Î_k.
    - ``eta``: (njoints, 6) μ_k of Table 3, step 2, after ``forward_dynamics`` (its step 1 runs in ``w_tilde``).
    - ``ddq``: (nv,) result of forward dynamics.
    - ``gim``, ``gim_inv``, ``U``, ``D``: (nv, nv) GIM, its inverse, and its UDUᵀ factors
      (allocated on first use); ``gim_ws``: the GIM's array once allocated, else None (the fast path reads it).
    - ``derivatives_ws``: the three (nv, nv) results of the last dynamics derivatives (``derivatives()``), or None;
      ``loop_derivatives_ws``: those and the three (n_constraints, nv) of the closed-loop derivatives
      (``loop_derivatives()``), or None.
    - ``lw``, ``loop``: a model with loops or couplings has a second flat buffer, the loop workspace
      (``core.tables.LOOP_FLOATS``), and ``loop`` names its views: ``loop.J`` (n_constraints, nv), ``loop.res``,
      ``loop.Jdv``, ``loop.lam`` (n_constraints,) of the last closed-loop call, and the reaction solve's work
      arrays.  None for a tree.
    """

    def __init__(self, model: Model):
        nv = model.nv
        self.model = model
        # One flat workspace (declared in core/tables.py), so that a compiled call takes one array for all of it.
        self.ws = np.zeros(workspace_size(model.mi[:HEADER]))
        self._set_views()
        self.E[:] = np.eye(3)
        motion_subspaces(
            model.kinds, model.axes, model.axes2, model.pitches, self.S
        )  # constant but for universal joints
        self.fext_is_zero = True
        self.zeros_v = np.zeros(nv)
        self._dense: dict[str, np.ndarray] = {}
        self.gim_ws = None  # the "gim" workspace once allocated: gim's fast path reads an attribute, not the dict
        self.derivatives_ws = None  # ("d_dq", "d_dv", "d_dx") once allocated, for the derivatives' fast paths
        self.loop_derivatives_ws = None  # those and the three (m, nv) of λ's, for the closed-loop derivatives
        self.lw = None
        m = model.n_constraints
        if m:
            nd = loop_factor_order(model.dof_parent, m)
            self.lw = np.zeros(loop_workspace_size(model.mi[:HEADER], m, nd))
            self.lw[LW_M], self.lw[LW_ND] = m, nd
        self._set_loop_views()

    def _set_views(self) -> None:
        """Stamp ``ws`` with its model's buffer (layout.stamped_for: the fast calls check it); fields as its views."""
        self.ws[WS_STAMP] = self.model.mb.ctypes.data
        for field, view in numpy_views(data_views, self.ws, self.model.mi)._asdict().items():
            setattr(self, field, view)

    def _set_loop_views(self) -> None:
        self.loop = None if self.lw is None else numpy_views(loop_views, self.lw, self.model.mi)

    def __getstate__(self) -> dict:
        # Pickle would copy each view into an array of its own, cut off from ws (what the kernels write): only ws
        # goes, and the views are made again from it, stamped for the model as unpickled (its buffer moved).
        return {k: v for k, v in self.__dict__.items() if k not in DataViews._fields and k != "loop"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._set_views()
        self._set_loop_views()

    def dense(self, name: str) -> np.ndarray:
        """The nv x nv workspace ``name`` ("gim", "gim_inv", "U", "D"), allocated on first use:
        data for a 100,000-DOF chain must stay O(n)."""
        if name not in self._dense:
            self._dense[name] = np.zeros((self.model.nv, self.model.nv))
            if name == "gim":
                self.gim_ws = self._dense[name]
        return self._dense[name]

    def derivatives(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The three nv x nv workspaces of the derivatives (``d_dq``, ``d_dv``, ``d_dx``: ∂/∂q, ∂/∂q̇ and ∂/∂q̈ or
        ∂/∂τ of the last ``inverse_dynamics_derivatives`` or ``forward_dynamics_derivatives``), allocated on
        first use."""
        if self.derivatives_ws is None:
            self.derivatives_ws = (self.dense("d_dq"), self.dense("d_dv"), self.dense("d_dx"))
        return self.derivatives_ws

    def loop_derivatives(self) -> tuple[np.ndarray, ...]:
        """The six workspaces of ``constrained_forward_dynamics_derivatives``: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ (the three of
        ``derivatives()``) and ∂λ/∂q, ∂λ/∂q̇, ∂λ/∂τ (n_constraints x nv each), allocated on first use."""
        if self.loop_derivatives_ws is None:
            shape = (self.model.n_constraints, self.model.nv)
            self.loop_derivatives_ws = (*self.derivatives(), np.zeros(shape), np.zeros(shape), np.zeros(shape))
        return self.loop_derivatives_ws

    @property
    def reaction_basis(self) -> np.ndarray:
        """(n_constraints, r): the basis B of J's range the last closed-loop solve used, λ = B x (the rank rule of
        ``constrained_forward_dynamics``); the identity where the constraints are independent (r = n_constraints).
        Derivatives of λ lie in its span (``constrained_forward_dynamics_derivatives``).  (0, 0) for a tree."""
        if self.lw is None:  # a tree: no constraint rows
            return np.zeros((0, 0))
        m, r = self.model.n_constraints, int(self.lw[LW_RANK])
        return np.eye(m) if r == m else self.loop.B.reshape(-1)[: m * r].reshape(m, r).copy()  # B's first m r floats

    # Pinocchio's names for what the kinematics leave here, in its layouts: read-only arrays formed on access.
    @property
    def oMi(self) -> np.ndarray:
        """(njoints, 4, 4) each joint's (= body's) placement in the world, Pinocchio's ``data.oMi[i].homogeneous``,
        from ``oR`` and ``op``: after ``forward_kinematics`` (or ``frame_placements``)."""
        T = np.zeros((self.model.njoints, 4, 4))
        T[:, :3, :3], T[:, :3, 3], T[:, 3, 3] = self.oR, self.op, 1.0
        T.setflags(write=False)
        return T

    @property
    def oMf(self) -> np.ndarray:
        """(nframes, 4, 4) each frame's placement in the world, Pinocchio's ``data.oMf[f].homogeneous`` after
        ``updateFramePlacements``: R_F = R_k R_f, p_F = o_k + R_k p_f from ``oR``, ``op`` and ``model.frames``,
        after ``forward_kinematics`` or ``frame_placements``."""
        fb = self.model.frame_buffer
        k = fb[:, FRAME_BODY].astype(np.int64)
        Rf = fb[:, FRAME_ROTATION : FRAME_ROTATION + 9].reshape(-1, 3, 3)
        pf = fb[:, FRAME_TRANSLATION : FRAME_TRANSLATION + 3]
        T = np.zeros((len(fb), 4, 4))
        T[:, :3, :3] = self.oR[k] @ Rf
        T[:, :3, 3] = self.op[k] + np.einsum("fij,fj->fi", self.oR[k], pf)
        T[:, 3, 3] = 1.0
        T.setflags(write=False)
        return T

    @property
    def v(self) -> np.ndarray:
        """(njoints, 6) each body's spatial velocity [v; ω] in its joint frame, Pinocchio's ``data.v[i].vector``:
        ``t`` with its halves swapped, after ``forward_kinematics(model, data, q, v)``."""
        out = np.concatenate([self.t[:, 3:], self.t[:, :3]], axis=1)
        out.setflags(write=False)
        return out

    @property
    def a(self) -> np.ndarray:
        """(njoints, 6) each body's spatial acceleration [ö − ω × ȯ; ω̇] in its joint frame, Pinocchio's
        ``data.a[i].vector`` (no gravity), after ``forward_kinematics(model, data, q, v, a)``; ``tdot`` holds the
        classical one [ω̇; ö]."""
        w, o = self.t[:, :3], self.t[:, 3:]
        out = np.concatenate([self.tdot[:, 3:] - np.cross(w, o), self.tdot[:, :3]], axis=1)
        out.setflags(write=False)
        return out

    gim = property(lambda self: self.dense("gim"), doc="(nv, nv) the GIM of the last ``gim`` call")
    gim_inv = property(lambda self: self.dense("gim_inv"), doc="(nv, nv) the last ``gim_inverse``")
    U = property(lambda self: self.dense("U"), doc="(nv, nv) U of the last ``udut``")
    D = property(lambda self: self.dense("D"), doc="(nv, nv) D of the last ``udut``")

    def __repr__(self) -> str:
        return f"<denoc_pin.Data of {self.model.name!r}>"
