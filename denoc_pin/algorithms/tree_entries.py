"""The compositions of the algorithms: what each compiled entry runs, in order, on the flat buffers (as MJX's
``forward.fwd_position`` reads).  Loops, simulation and tools build on these.

- ``rnea_entry``: the kinematics (E_k, r_k, p_k), then Table 1 (t_k, ṫ_k forward; w̃_k, τ_k backward).
- ``aba_entry``: the kinematics, Table 1's step 1 with q̈ = 0, one backward pass for Table 1's step 2, the UDUᵀ
  factors and Table 3's step 1 (``forward.factor_step`` with ``solve``), then Table 3's step 2.
- ``factor_entry``: the kinematics and the UDUᵀ factors alone (GIM⁻¹, ``udut``).
- ``crba_entry``: the kinematics, composite inertias (eq. 17) and the GIM (eq. 16).

Each is declared once (``protocol.Entry``): its fast entry on the model buffer, its batch over all cores, its
compile at first use.  One state: q (nq,), v (nv,), x (nv,).  A batch: q (B, nq), v (B, nv), x (B, nv).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ..core.layout import FMA, HEAD_NQ, HEAD_NV, all_finite, data_views, model_views
from ..core.memory import copy_into
from ..kernel_cache import compile_on_first_use
from ..model import Data, Model
from ..model.status import BAD_LENGTH, NOT_FINITE, SINGULAR, raise_for_status
from .composite import gim_step, l_solve, lt_solve, ltl_factor
from .forward import factor_step
from .inverse import inverse_dynamics_step
from .kinematics import kinematics_entry
from .protocol import MAT, MB, MF, MI, VEC, Entry, borrowed, on_model_buffer, set_fext, states

__all__ = [
    "ABA",
    "CRBA",
    "FACTOR",
    "RNEA",
    "aba_entry",
    "crba_entry",
    "factor",
    "factor_entry",
    "gim_forward_entry",
    "rnea_entry",
    "run_states",
]


@njit(cache=True)
def rnea_entry(mi, mf, ws, q, v, a, with_fext):
    """Kinematics and Table 1; τ into ws.  A status: NOT_FINITE, BAD_LENGTH (q, v or a of the wrong length)."""
    if len(q) != mi[HEAD_NQ] or len(v) != mi[HEAD_NV] or len(a) != mi[HEAD_NV]:
        return BAD_LENGTH
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return NOT_FINITE
    kinematics_entry(mi, mf, ws, q)
    inverse_dynamics_step(mi, mf, ws, v, a, with_fext, True)
    return 0


@njit(cache=True)
def factor_entry(mi, mf, ws, q):
    """Kinematics and the UDUᵀ factors at q; NOT_FINITE, or SINGULAR + k if Î_k is singular."""
    if not all_finite(q):
        return NOT_FINITE
    kinematics_entry(mi, mf, ws, q)
    k = factor_step(mi, mf, ws, q, False)  # no right side: the τ argument is not read (q: an array of its type)
    return SINGULAR + k if k else 0


@njit(cache=True)
def aba_entry(mi, mf, ws, q, v, tau, with_fext):
    """q̈ = GIM⁻¹ (τ − h): the kinematics, Table 1's step 1 with q̈ = 0, then one backward pass for its step 2, the
    UDUᵀ factors and Table 3's step 1 (``forward.factor_step`` with ``solve``), then Table 3's step 2.  A status:
    NOT_FINITE, SINGULAR + k, BAD_LENGTH."""
    if len(q) != mi[HEAD_NQ] or len(v) != mi[HEAD_NV] or len(tau) != mi[HEAD_NV]:
        return BAD_LENGTH
    if not (all_finite(q) and all_finite(v) and all_finite(tau)):
        return NOT_FINITE
    ddq = data_views(ws, mi).ddq
    ddq[:] = 0.0  # the zero acceleration of note 1 under Table 3
    kinematics_entry(mi, mf, ws, q)
    inverse_dynamics_step(mi, mf, ws, v, ddq, with_fext, False)  # step 1 alone
    k = factor_step(mi, mf, ws, tau, True)
    return SINGULAR + k if k else 0


@njit(cache=True)
def gim_forward_entry(mi, mf, ws, q, v, tau, with_fext, H):
    """q̈ = GIM⁻¹ (τ − h) into ws by the GIM's factor where H (nv x nv) has room, for callers that reuse it
    (M⁻¹ = L⁻¹ L⁻ᵀ): h by Table 1 at q̈ = 0, the GIM (eq. 16) into H, GIM = Lᵀ L in place (``composite.ltl_factor``),
    two sweeps of the λ-paths.  Otherwise (H of 0 rows), or should a pivot fail (the GIM not positive definite to
    rounding), by ``aba_entry``, its UDUᵀ factors left in ws.  (status, factored): ``aba_entry``'s status kinds, and
    whether H holds the factor."""
    if H.shape[0] != mi[HEAD_NV] or H.shape[0] == 0:
        return aba_entry(mi, mf, ws, q, v, tau, with_fext), False
    if len(q) != mi[HEAD_NQ] or len(v) != mi[HEAD_NV] or len(tau) != mi[HEAD_NV]:
        return BAD_LENGTH, False
    if not (all_finite(q) and all_finite(v) and all_finite(tau)):
        return NOT_FINITE, False
    dv = data_views(ws, mi)
    lam = model_views(mi, mf).dof_parent
    ddq = dv.ddq
    ddq[:] = 0.0
    kinematics_entry(mi, mf, ws, q)
    inverse_dynamics_step(mi, mf, ws, v, ddq, with_fext, True)  # h = τ(q, q̇, 0) into dv.tau
    gim_step(mi, mf, ws, H)
    if ltl_factor(H, lam) >= 0:
        return aba_entry(mi, mf, ws, q, v, tau, with_fext), False
    for c in range(len(ddq)):
        ddq[c] = tau[c] - dv.tau[c]
    lt_solve(H, lam, ddq.reshape((len(ddq), 1)))  # q̈ = L⁻¹ L⁻ᵀ (τ − h)
    l_solve(H, lam, ddq)
    return 0, True


@njit(cache=True, fastmath=FMA)
def crba_entry(mi, mf, ws, q, out):
    """Kinematics, composite inertias (eq. 17) and the GIM (eq. 16) into out; NOT_FINITE, BAD_LENGTH."""
    if len(q) != mi[HEAD_NQ]:
        return BAD_LENGTH
    if not all_finite(q):
        return NOT_FINITE
    kinematics_entry(mi, mf, ws, q)
    gim_step(mi, mf, ws, out)
    return 0


@njit(cache=True)
def rnea_fast(mb, ws, q, v, a):
    """rnea_entry without external forces, on the model buffer (the fast path)."""
    return on_model_buffer(rnea_entry, mb, ws, (q, v, a, False))


@njit(cache=True)
def aba_fast(mb, ws, q, v, tau):
    """aba_entry without external forces, on the model buffer (the fast path)."""
    return on_model_buffer(aba_entry, mb, ws, (q, v, tau, False))


@njit(cache=True)
def crba_fast(mb, ws, q, out):
    """crba_entry on the model buffer (the fast path)."""
    return on_model_buffer(crba_entry, mb, ws, (q, out))


@njit(cache=True, nogil=True)
def rnea_rows(mi, mf, ws, lw, fixed, Q, V, A, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch of inverse dynamics (``protocol.run_chunks``); fixed = (with_fext,)."""
    Q, V, A, out, out2 = borrowed(Q, V, A, out, out2)
    tau, status = data_views(ws, mi).tau, 0
    for i in range(lo, hi):
        s = rnea_entry(mi, mf, ws, Q[i], V[i], A[i], fixed[0])
        status = s if s else status
        copy_into(out[i], tau)
    return status


@njit(cache=True, nogil=True)
def aba_rows(mi, mf, ws, lw, fixed, Q, V, T, out, out2, lo, hi):
    """Rows lo … hi−1 of a batch of forward dynamics; fixed = (with_fext,)."""
    Q, V, T, out, out2 = borrowed(Q, V, T, out, out2)
    ddq, status = data_views(ws, mi).ddq, 0
    for i in range(lo, hi):
        s = aba_entry(mi, mf, ws, Q[i], V[i], T[i], fixed[0])
        status = s if s else status
        copy_into(out[i], ddq)
    return status


_STATE = types.int64(MI, MF, VEC, VEC, VEC, VEC, types.boolean)  # (mi, mf, ws, q, v, x, with_fext)
_FAST_STATE = types.int64(MB, VEC, VEC, VEC, VEC)  # (mb, ws, q, v, x), no external forces
_WITH_FEXT = types.Tuple((types.boolean,))  # the rows' fixed arguments: (with_fext,)
# Table 1 with step 2 (inverse dynamics) and without (forward dynamics' step 1): one compile, step2 a runtime flag
# (a literal True and a literal False compiled it twice, 10 s, for a branch a call).
compile_on_first_use(inverse_dynamics_step, types.none(MI, MF, VEC, VEC, VEC, types.boolean, types.boolean))
# factor_step serves the singularity check (no right side) and forward dynamics: one compile of the factorization,
# the longest of the package, for both (a literal True and a literal False would each compile it).
FACTORIZATION = Entry(
    factor_step,
    types.int64(MI, MF, VEC, VEC, types.boolean),
    states=("q",),
    group="factorization",
    what="the UDUᵀ factorization (Table 3)",
    seconds=20,
)
RNEA = Entry(
    rnea_entry,
    _STATE,
    rnea_fast,
    _FAST_STATE,
    rnea_rows,
    ("q", "v", "a"),
    ("nv",),
    after=(inverse_dynamics_step,),
    group="inverse_dynamics",
    what="inverse dynamics (Table 1)",
    seconds=10,
    fixed=_WITH_FEXT,
    rows_group="batches",
)
ABA = Entry(
    aba_entry,
    _STATE,
    aba_fast,
    _FAST_STATE,
    aba_rows,
    ("q", "v", "tau"),
    ("nv",),
    after=(factor_step, inverse_dynamics_step),
    group="forward_dynamics",
    what="forward dynamics",
    seconds=40,
    fixed=_WITH_FEXT,
    rows_group="batches",
)
CRBA = Entry(
    crba_entry,
    types.int64(MI, MF, VEC, VEC, MAT),
    crba_fast,
    types.int64(MB, VEC, VEC, MAT),
    states=("q",),
    group="gim",
    what="the generalized inertia matrix (eq. 16-17)",
    seconds=10,
)
FACTOR = Entry(
    factor_entry,
    types.int64(MI, MF, VEC, VEC),
    states=("q",),
    after=(factor_step,),
    group="udut",
    what="the UDUᵀ factors alone (udut, gim_inverse)",
    seconds=5,
)


def run_states(forward: bool, model: Model, data: Data, q, v, x, fext) -> np.ndarray:
    """Inverse (forward=False) or forward dynamics through the checked path: one state or a batch."""
    entry = ABA if forward else RNEA
    xname = entry.states[2]
    q, v, x, B = states(model, data, q, v, x, xname)
    set_fext(model, data, fext)
    with_fext = not data.fext_is_zero
    if B is None:
        raise_for_status(model, entry.kernel(model.mi, model.mf, data.ws, q, v, x, with_fext), q, v, x, xname)
        return (data.ddq if forward else data.tau).copy()
    status, out = entry.run_batch(model, data, (with_fext,), q, v, x)
    raise_for_status(model, status, q, v, x, xname)
    return out


def factor(model: Model, data: Data, q: np.ndarray) -> None:
    """Kinematics and UDUᵀ factors at q into data; a clear error when singular."""
    raise_for_status(model, factor_entry(model.mi, model.mf, data.ws, q), q, None, None, "")
