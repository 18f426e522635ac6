"""The records the contact step and the runs pass between their stages: named tuples of arrays, and an
allocator each, generated from the tables of ``core/tables.py`` by ``scripts/write_views.py``: do not edit
(``tests/test_layout.py`` fails when this file is stale)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .memory import numpy_view, view
from .views import COL_WIDTH, INFO_WIDTH

__all__ = [
    "CW_CAP",
    "CW_MMAX",
    "CW_MOST",
    "CW_NCOL",
    "CW_ND",
    "CW_NJ",
    "CW_NV",
    "CW_PAIR_WORK",
    "ContactGeometry",
    "ContactJacobians",
    "ContactRecords",
    "ContactScene",
    "ContactSet",
    "ContactWork",
    "JointLaw",
    "RunOutput",
    "SW_MMAX",
    "ShapePairs",
    "SolverWork",
    "WarmStarts",
    "contact_geometry",
    "contact_jacobians",
    "contact_records",
    "contact_set",
    "contact_work",
    "contact_work_arrays",
    "contact_work_size",
    "contact_work_views",
    "joint_law",
    "run_output",
    "shape_pairs",
    "solver_work",
    "solver_work_arrays",
    "solver_work_size",
    "solver_work_views",
    "warm_starts",
]

CW_NJ = 0  # bodies + 1
CW_NV = 1  # DOF
CW_MMAX = 2  # the most rows a step can have: 3 cap + the loops' rows
CW_CAP = 3  # the most contacts a step can have
CW_MOST = 4  # the most support vertices of one collision
CW_PAIR_WORK = 5  # the floats a shape pair's narrow phase works in (contact.patch.PAIR_WORK)
CW_NCOL = 6  # collisions
CW_ND = 7  # nv if the step factors the GIM (contact.pipeline.factor_pays), else 0
SW_MMAX = 0  # the most rows


def _tiled(buf, start, shapes):
    """NumPy views of ``shapes``, one after the other in ``buf`` from ``start``."""
    out = []
    for shape in shapes:
        out.append(numpy_view(buf, start, shape))
        start += int(np.prod(shape))
    return out


ContactScene = namedtuple(
    "ContactScene",
    [
        # geometry: scalar ContactGeometry; the model's collisions
        "geometry",
        # ground: (GROUND_WIDTH,) f; the ground (GROUND_ROW)
        "ground",
        # settings: (SET_WIDTH,) f; the settings (SETTINGS_ROW)
        "settings",
        # warm: scalar WarmStarts; the warm starts
        "warm",
        # contacts: scalar ContactSet; the last step's contacts
        "contacts",
        # work: (CW_SIZE,) f; the step's work area (a ContactWork buffer)
        "work",
        # solver: (SW_SIZE,) f; the solvers' work area (a SolverWork buffer)
        "solver",
    ],
)
ContactSet = namedtuple(
    "ContactSet",
    [
        # bodies: (cap, 2) i; the two bodies in contact: the first is 0 (the world) for the ground
        "bodies",
        # points: (cap, 3) f; the contact point x_i, world (on the second body's shape)
        "points",
        # frames: (cap, 3, 3) f; the contact frame, world, axes as columns (t₁, t₂, n), n out of the first body
        "frames",
        # depth: (cap,) f; the signed distance d_i (< 0: penetration)
        "depth",
        # mu: (cap,) f; Coulomb's μ_i
        "mu",
        # restitution: (cap,) f; e_i (0 for a shape pair)
        "restitution",
        # keys: (cap, 3) i; the warm start's key: (−1, collision, feature) on the ground, (i, j, feature) a pair
        "keys",
        # impulse: (cap, 3) f; the impulse λ_i of the last solve, contact frame (t₁, t₂, n)
        "impulse",
        # warm_row: (cap,) i; its row in the warm starts (−1: a coal pair's, whose start comes with it)
        "warm_row",
        # info: (INFO_WIDTH,) f; the step's figures (INFO_ROW)
        "info",
    ],
)
ShapePairs = namedtuple(
    "ShapePairs",
    [
        # bodies: (npairs, 2) i; the two shapes' bodies
        "bodies",
        # keys: (npairs, 3) i; (collision i, collision j, feature)
        "keys",
        # points: (npairs, 3) f; the contact point, world
        "points",
        # frames: (npairs, 3, 3) f; the contact frame, columns (t₁, t₂, n), n from shape i towards j
        "frames",
        # depth: (npairs,) f; the signed distance
        "depth",
        # mu: (npairs,) f; μ, the larger of the two shapes'
        "mu",
        # start: (npairs, 3) f; the warm start, the impulse of the same key at the last step (0: none)
        "start",
    ],
)
ContactGeometry = namedtuple(
    "ContactGeometry",
    [
        # rows: (ncol, COL_WIDTH) f; the packed collisions (COLLISION_ROW)
        "rows",
        # verts: (nverts, 3) f; the meshes' support vertices, shape frame
        "verts",
        # chunks: (nchunks, 4) f; the meshes' vertex chunks' spheres (centre, radius), shape frame
        "chunks",
        # support: (nj, nv) b; support[k, c]: column c of v moves body k (its joint and its ancestors')
        "support",
        # woff: (ncol,) i; collision c's first row in the ground's warm starts (a row per feature)
        "woff",
        # pairs: (npairs, 2) i; the shape pairs the compiled narrow phase tests (i < j), which may touch
        "pairs",
        # pair_mu: (npairs,) f; a pair's μ, the larger of its two shapes'
        "pair_mu",
        # pair_warm: (npairs,) i; a pair's row in the warm starts
        "pair_warm",
        # pair_of: (ncol, ncol) i; pair_of[i, j], i < j: the pair's row in pairs; −1: the two never touch
        "pair_of",
    ],
)
WarmStarts = namedtuple(
    "WarmStarts",
    [
        # impulse: (features, 3) f; a ground feature's last impulse, contact frame (row woff[c] + feature)
        "impulse",
        # step: (features,) i; the step that impulse is from (used when it is the one before)
        "step",
        # loops: (nl,) f; the loops' last impulses
        "loops",
        # axes: (npairs, 3) f; a shape pair's last GJK direction v (world, zero: none yet), the next step's first
        "axes",
    ],
)
JointLaw = namedtuple(
    "JointLaw",
    [
        # kp: (nv,) f; K_p
        "kp",
        # kd: (nv,) f; K_d
        "kd",
        # q_ref: (nq,) f; q_ref
        "q_ref",
        # v_ref: (nv,) f; v_ref
        "v_ref",
        # tau_ff: (nv,) f; τ_ff
        "tau_ff",
        # feedback: scalar b; K_p or K_d is not zero (else τ = τ_ff, no difference taken)
        "feedback",
    ],
)
RunOutput = namedtuple(
    "RunOutput",
    [
        # Q: (rows, nq) f; q of each recorded step
        "Q",
        # V: (rows, nv) f; v
        "V",
        # A: (rows, nv) f; (v⁺ − v) / dt of the step that leaves it (the last row: the row before's)
        "A",
        # T: (rows, nv) f; τ
        "T",
        # KE: (rows,) f; kinetic energy
        "KE",
        # PE: (rows,) f; potential energy
        "PE",
        # W: (rows,) f; the work of τ since the start
        "W",
        # LAM: (rows, nl) f; the loops' impulses of the step that leaves it
        "LAM",
    ],
)
ContactRecords = namedtuple(
    "ContactRecords",
    [
        # count: (rows,) i; k, the contacts of the step that leaves the row
        "count",
        # points: (rows, cap, 3) f; their points, world
        "points",
        # normals: (rows, cap, 3) f; their normals n, world
        "normals",
        # impulses: (rows, cap, 3) f; their impulses, contact frame (t₁, t₂, n)
        "impulses",
        # forces: (rows, cap, 3) f; the world force on the second body, impulse / dt
        "forces",
        # depths: (rows, cap) f; their signed distances
        "depths",
        # keys: (rows, cap, 3) i; their keys (CONTACT_SET)
        "keys",
        # info: (rows, INFO_WIDTH) f; the step's figures (INFO_ROW)
        "info",
    ],
)
ContactJacobians = namedtuple(
    "ContactJacobians",
    [
        # D: (2 * nv, 3 * nv) f; ∂(q⁺, v⁺)/∂(q, v, τ), tangent spaces at q and q⁺ (columns δq | δv | δτ)
        "D",
        # F: (2 * nv, cap) f; ∂(q⁺, v⁺)/∂μ_i: contact i's friction coefficient (the first n_c columns)
        "F",
        # T: (nv, nv) f; ∂v⁺/∂v_fix: the solved step's change for a change of its fixed-λ velocity
        "T",
        # Minv: (nv, nv) f; M⁻¹ at q (the forward dynamics' derivatives' ∂q̈/∂τ)
        "Minv",
        # Jv: (nv, nv) f; ∂(q ⊕ x)/∂x at x = dt v⁺: the step's last stage in the tangent spaces
        "Jv",
        # modes: (cap,) i; each contact's mode at the solution (contact.derivatives.MODES)
        "modes",
        # one_sided: (cap,) i; 1 where the contact sits at a mode switch
        "one_sided",
        # lam: (mmax,) f; the impulses λ: the contacts' (t₁, t₂, n), then the loops'
        "lam",
        # counts: (3,) i; n_c, m and the refusal (0; contact.derivatives.REFUSED's code; 2: not finite)
        "counts",
    ],
)
ContactWork = namedtuple(
    "ContactWork",
    [
        # v_free: (nv,); v_f = v + dt M⁻¹ (τ − h)
        "v_free",
        # Jall: (6, nv); the bodies' world Jacobian columns [linear; angular] about the world origin
        "Jall",
        # J: (mmax * nv,); J (m, nv) in its first m nv entries: the contacts' rows, then the loops'
        "J",
        # JT: (nv * mmax,); Jᵀ (nv, m) for the Delassus sweep, then φ̃ᵀ (m, nv) for its product; or Y = L⁻ᵀ Jᵀ
        "JT",
        # H: (nd * nd,); the GIM at q, then its factor L (nd, nd): GIM = Lᵀ L in the lower triangle (nd > 0)
        "H",
        # route: (1,); 1 when the step's M⁻¹ is L⁻¹ L⁻ᵀ (H), 0 when it is the UDUᵀ factors in ws (Table 3)
        "route",
        # G: (mmax * mmax,); G = J M⁻¹ Jᵀ + R (m, m)
        "G",
        # g: (mmax,); g = J v_f + b
        "g",
        # lam: (mmax,); λ, the impulses
        "lam",
        # tilde: (nv * mmax,); φ̃ = D⁻¹ U⁻¹ Jᵀ (nv, m) (Table 3, step 1 on Jᵀ's columns)
        "tilde",
        # hat: (mmax * nv,); (Î φ̃)ᵀ (m, nv), 0 off each column's sweep
        "hat",
        # eta: (nj * mmax * 6,); η_k of each column (nj, m, 6)
        "eta",
        # active: (nj * mmax,); 1 where column j's sweep visits body k (nj, m): k's subtree meets row j of J
        "active",
        # phi_hat: (6,); φ̂_k of one body
        "phi_hat",
        # rhs: (nv,); Jᵀ λ
        "rhs",
        # dvel: (nv,); M⁻¹ Jᵀ λ
        "dvel",
        # eta1: (nj * 6,); η_k of that solve
        "eta1",
        # dq: (nv,); q_ref ⊖ q of a run's joint law
        "dq",
        # tau: (nv,); τ of a run's step
        "tau",
        # stats: (5,); the solve's figures (INFO_ROW's iterations … complementarity)
        "stats",
        # hit_points: (cap, 3); a ground candidate's point on its shape, world
        "hit_points",
        # hit_depth: (cap,); its signed distance to the plane
        "hit_depth",
        # hit_collision: (cap,); its collision's index (an integer held as a float)
        "hit_collision",
        # hit_feature: (cap,); its feature: a corner, rim point, end cap or hull vertex
        "hit_feature",
        # cand: (most, 5); one mesh's candidates (x, d, vertex) before its patch is reduced
        "cand",
        # hint: (ncol,); each mesh's chunk that held its deepest vertex at the last detection: searched first
        "hint",
        # keep: (5,); the candidates a reduced patch keeps
        "keep",
        # col_R: (ncol, 3, 3); each collision's world rotation this step (the broad phase's and the pairs')
        "col_R",
        # col_p: (ncol, 3); its world origin
        "col_p",
        # col_par: (ncol, 3); its parameters (COLLISION_ROW's params)
        "col_par",
        # col_lo: (ncol, 3); the low corner of its world bounding box (its shape-frame box turned, − half the margin)
        "col_lo",
        # col_hi: (ncol, 3); the high corner (+ half the margin)
        "col_hi",
        # sweep_order: (ncol,); the collisions sorted by col_lo along the sweep axis (kept from step to step: nearly
        # sorted already)
        "sweep_order",
        # narrow: (pair_work,); a shape pair's GJK simplex, EPA polytope, features and clipped patch
        "narrow",
        # patch_points: (4, 3); a shape pair's contact points, world (contact.patch.PAIR_POINTS rows)
        "patch_points",
        # patch_depths: (4,); their signed distances
        "patch_depths",
        # patch_frame: (3, 3); the patch's frame, columns (t₁, t₂, n), n from the first shape to the second
        "patch_frame",
    ],
)
SolverWork = namedtuple(
    "SolverWork",
    [
        # sigma: (mmax,); σ = G λ + g
        "sigma",
        # scale: (mmax,); ADMM's scaling D, per contact block and bilateral row
        "scale",
        # gs: (mmax,); D g
        "gs",
        # Gs: (mmax * mmax,); D G D (m, m), or G_SS of the sticking guess
        "Gs",
        # L: (mmax * mmax,); its Cholesky factor
        "L",
        # x: (mmax,); ADMM's x, or the sticking guess's λ
        "x",
        # z: (mmax,); ADMM's z (in K)
        "z",
        # u: (mmax,); ADMM's scaled dual u
        "u",
        # s: (mmax,); De Saxcé's shift Φ
        "s",
        # rhs: (mmax,); a solve's right-hand side
        "rhs",
        # y: (mmax,); a solve's result
        "y",
        # best: (mmax,); the iterate of least residual
        "best",
        # rows: (mmax,); the sticking guess's rows (integers held as floats)
        "rows",
        # rho: (1,); the ρ the last ADMM solve ended with (0: none yet), the next one's start
        "rho",
    ],
)


@njit(cache=True)
def contact_set(cap):
    """A ContactSet (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return ContactSet(
        np.empty((cap, 2), dtype=np.int64),
        np.empty((cap, 3), dtype=np.float64),
        np.empty((cap, 3, 3), dtype=np.float64),
        np.empty((cap,), dtype=np.float64),
        np.empty((cap,), dtype=np.float64),
        np.empty((cap,), dtype=np.float64),
        np.empty((cap, 3), dtype=np.int64),
        np.empty((cap, 3), dtype=np.float64),
        np.empty((cap,), dtype=np.int64),
        np.empty((INFO_WIDTH,), dtype=np.float64),
    )


@njit(cache=True)
def shape_pairs(npairs):
    """A ShapePairs (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return ShapePairs(
        np.empty((npairs, 2), dtype=np.int64),
        np.empty((npairs, 3), dtype=np.int64),
        np.empty((npairs, 3), dtype=np.float64),
        np.empty((npairs, 3, 3), dtype=np.float64),
        np.empty((npairs,), dtype=np.float64),
        np.empty((npairs,), dtype=np.float64),
        np.empty((npairs, 3), dtype=np.float64),
    )


@njit(cache=True)
def contact_geometry(ncol, nverts, nchunks, nj, nv, npairs):
    """A ContactGeometry (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return ContactGeometry(
        np.empty((ncol, COL_WIDTH), dtype=np.float64),
        np.empty((nverts, 3), dtype=np.float64),
        np.empty((nchunks, 4), dtype=np.float64),
        np.empty((nj, nv), dtype=np.bool_),
        np.empty((ncol,), dtype=np.int64),
        np.empty((npairs, 2), dtype=np.int64),
        np.empty((npairs,), dtype=np.float64),
        np.empty((npairs,), dtype=np.int64),
        np.empty((ncol, ncol), dtype=np.int64),
    )


@njit(cache=True)
def warm_starts(features, nl, npairs):
    """A WarmStarts (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return WarmStarts(
        np.empty((features, 3), dtype=np.float64),
        np.empty((features,), dtype=np.int64),
        np.empty((nl,), dtype=np.float64),
        np.empty((npairs, 3), dtype=np.float64),
    )


@njit(cache=True)
def joint_law(nv, nq):
    """A JointLaw (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return JointLaw(
        np.empty((nv,), dtype=np.float64),
        np.empty((nv,), dtype=np.float64),
        np.empty((nq,), dtype=np.float64),
        np.empty((nv,), dtype=np.float64),
        np.empty((nv,), dtype=np.float64),
        False,
    )


@njit(cache=True)
def run_output(rows, nq, nv, nl):
    """A RunOutput (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return RunOutput(
        np.empty((rows, nq), dtype=np.float64),
        np.empty((rows, nv), dtype=np.float64),
        np.empty((rows, nv), dtype=np.float64),
        np.empty((rows, nv), dtype=np.float64),
        np.empty((rows,), dtype=np.float64),
        np.empty((rows,), dtype=np.float64),
        np.empty((rows,), dtype=np.float64),
        np.empty((rows, nl), dtype=np.float64),
    )


@njit(cache=True)
def contact_records(rows, cap):
    """A ContactRecords (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return ContactRecords(
        np.empty((rows,), dtype=np.int64),
        np.empty((rows, cap, 3), dtype=np.float64),
        np.empty((rows, cap, 3), dtype=np.float64),
        np.empty((rows, cap, 3), dtype=np.float64),
        np.empty((rows, cap, 3), dtype=np.float64),
        np.empty((rows, cap), dtype=np.float64),
        np.empty((rows, cap, 3), dtype=np.int64),
        np.empty((rows, INFO_WIDTH), dtype=np.float64),
    )


@njit(cache=True)
def contact_jacobians(nv, cap, mmax):
    """A ContactJacobians (``core/tables.py``), its arrays uninitialised and its scalars zero."""
    return ContactJacobians(
        np.empty((2 * nv, 3 * nv), dtype=np.float64),
        np.empty((2 * nv, cap), dtype=np.float64),
        np.empty((nv, nv), dtype=np.float64),
        np.empty((nv, nv), dtype=np.float64),
        np.empty((nv, nv), dtype=np.float64),
        np.empty((cap,), dtype=np.int64),
        np.empty((cap,), dtype=np.int64),
        np.empty((mmax,), dtype=np.float64),
        np.empty((3,), dtype=np.int64),
    )


@njit(cache=True, inline="always")
def contact_work_views(buf):
    """The views of a ContactWork buffer."""
    nj = int(buf[CW_NJ])
    nv = int(buf[CW_NV])
    mmax = int(buf[CW_MMAX])
    cap = int(buf[CW_CAP])
    most = int(buf[CW_MOST])
    pair_work = int(buf[CW_PAIR_WORK])
    ncol = int(buf[CW_NCOL])
    nd = int(buf[CW_ND])
    o = 8
    # v_f = v + dt M⁻¹ (τ − h)
    v_free = view(buf, o, (nv,))
    o += nv
    # the bodies' world Jacobian columns [linear; angular] about the world origin
    Jall = view(buf, o, (6, nv))
    o += 6 * nv
    # J (m, nv) in its first m nv entries: the contacts' rows, then the loops'
    J = view(buf, o, (mmax * nv,))
    o += mmax * nv
    # Jᵀ (nv, m) for the Delassus sweep, then φ̃ᵀ (m, nv) for its product; or Y = L⁻ᵀ Jᵀ
    JT = view(buf, o, (nv * mmax,))
    o += nv * mmax
    # the GIM at q, then its factor L (nd, nd): GIM = Lᵀ L in the lower triangle (nd > 0)
    H = view(buf, o, (nd * nd,))
    o += nd * nd
    # 1 when the step's M⁻¹ is L⁻¹ L⁻ᵀ (H), 0 when it is the UDUᵀ factors in ws (Table 3)
    route = view(buf, o, (1,))
    o += 1
    # G = J M⁻¹ Jᵀ + R (m, m)
    G = view(buf, o, (mmax * mmax,))
    o += mmax * mmax
    # g = J v_f + b
    g = view(buf, o, (mmax,))
    o += mmax
    # λ, the impulses
    lam = view(buf, o, (mmax,))
    o += mmax
    # φ̃ = D⁻¹ U⁻¹ Jᵀ (nv, m) (Table 3, step 1 on Jᵀ's columns)
    tilde = view(buf, o, (nv * mmax,))
    o += nv * mmax
    # (Î φ̃)ᵀ (m, nv), 0 off each column's sweep
    hat = view(buf, o, (mmax * nv,))
    o += mmax * nv
    # η_k of each column (nj, m, 6)
    eta = view(buf, o, (nj * mmax * 6,))
    o += nj * mmax * 6
    # 1 where column j's sweep visits body k (nj, m): k's subtree meets row j of J
    active = view(buf, o, (nj * mmax,))
    o += nj * mmax
    # φ̂_k of one body
    phi_hat = view(buf, o, (6,))
    o += 6
    # Jᵀ λ
    rhs = view(buf, o, (nv,))
    o += nv
    # M⁻¹ Jᵀ λ
    dvel = view(buf, o, (nv,))
    o += nv
    # η_k of that solve
    eta1 = view(buf, o, (nj * 6,))
    o += nj * 6
    # q_ref ⊖ q of a run's joint law
    dq = view(buf, o, (nv,))
    o += nv
    # τ of a run's step
    tau = view(buf, o, (nv,))
    o += nv
    # the solve's figures (INFO_ROW's iterations … complementarity)
    stats = view(buf, o, (5,))
    o += 5
    # a ground candidate's point on its shape, world
    hit_points = view(buf, o, (cap, 3))
    o += cap * 3
    # its signed distance to the plane
    hit_depth = view(buf, o, (cap,))
    o += cap
    # its collision's index (an integer held as a float)
    hit_collision = view(buf, o, (cap,))
    o += cap
    # its feature: a corner, rim point, end cap or hull vertex
    hit_feature = view(buf, o, (cap,))
    o += cap
    # one mesh's candidates (x, d, vertex) before its patch is reduced
    cand = view(buf, o, (most, 5))
    o += most * 5
    # each mesh's chunk that held its deepest vertex at the last detection: searched first
    hint = view(buf, o, (ncol,))
    o += ncol
    # the candidates a reduced patch keeps
    keep = view(buf, o, (5,))
    o += 5
    # each collision's world rotation this step (the broad phase's and the pairs')
    col_R = view(buf, o, (ncol, 3, 3))
    o += ncol * 3 * 3
    # its world origin
    col_p = view(buf, o, (ncol, 3))
    o += ncol * 3
    # its parameters (COLLISION_ROW's params)
    col_par = view(buf, o, (ncol, 3))
    o += ncol * 3
    # the low corner of its world bounding box (its shape-frame box turned, − half the margin)
    col_lo = view(buf, o, (ncol, 3))
    o += ncol * 3
    # the high corner (+ half the margin)
    col_hi = view(buf, o, (ncol, 3))
    o += ncol * 3
    # the collisions sorted by col_lo along the sweep axis (kept from step to step: nearly sorted already)
    sweep_order = view(buf, o, (ncol,))
    o += ncol
    # a shape pair's GJK simplex, EPA polytope, features and clipped patch
    narrow = view(buf, o, (pair_work,))
    o += pair_work
    # a shape pair's contact points, world (contact.patch.PAIR_POINTS rows)
    patch_points = view(buf, o, (4, 3))
    o += 4 * 3
    # their signed distances
    patch_depths = view(buf, o, (4,))
    o += 4
    # the patch's frame, columns (t₁, t₂, n), n from the first shape to the second
    patch_frame = view(buf, o, (3, 3))
    o += 3 * 3
    return ContactWork(
        v_free,
        Jall,
        J,
        JT,
        H,
        route,
        G,
        g,
        lam,
        tilde,
        hat,
        eta,
        active,
        phi_hat,
        rhs,
        dvel,
        eta1,
        dq,
        tau,
        stats,
        hit_points,
        hit_depth,
        hit_collision,
        hit_feature,
        cand,
        hint,
        keep,
        col_R,
        col_p,
        col_par,
        col_lo,
        col_hi,
        sweep_order,
        narrow,
        patch_points,
        patch_depths,
        patch_frame,
    )


def contact_work_arrays(buf):
    """``contact_work_views`` for Python (NumPy views that keep the buffer alive)."""
    nj = int(buf[CW_NJ])
    nv = int(buf[CW_NV])
    mmax = int(buf[CW_MMAX])
    cap = int(buf[CW_CAP])
    most = int(buf[CW_MOST])
    pair_work = int(buf[CW_PAIR_WORK])
    ncol = int(buf[CW_NCOL])
    nd = int(buf[CW_ND])
    shapes = (
        (nv,),
        (6, nv),
        (mmax * nv,),
        (nv * mmax,),
        (nd * nd,),
        (1,),
        (mmax * mmax,),
        (mmax,),
        (mmax,),
        (nv * mmax,),
        (mmax * nv,),
        (nj * mmax * 6,),
        (nj * mmax,),
        (6,),
        (nv,),
        (nv,),
        (nj * 6,),
        (nv,),
        (nv,),
        (5,),
        (cap, 3),
        (cap,),
        (cap,),
        (cap,),
        (most, 5),
        (ncol,),
        (5,),
        (ncol, 3, 3),
        (ncol, 3),
        (ncol, 3),
        (ncol, 3),
        (ncol, 3),
        (ncol,),
        (pair_work,),
        (4, 3),
        (4,),
        (3, 3),
    )
    return ContactWork(*_tiled(buf, 8, shapes))


@njit(cache=True)
def contact_work_size(nj, nv, mmax, cap, most, pair_work, ncol, nd):
    """The length of a ContactWork buffer."""
    n = 8
    n += nv  # v_free
    n += 6 * nv  # Jall
    n += mmax * nv  # J
    n += nv * mmax  # JT
    n += nd * nd  # H
    n += 1  # route
    n += mmax * mmax  # G
    n += mmax  # g
    n += mmax  # lam
    n += nv * mmax  # tilde
    n += mmax * nv  # hat
    n += nj * mmax * 6  # eta
    n += nj * mmax  # active
    n += 6  # phi_hat
    n += nv  # rhs
    n += nv  # dvel
    n += nj * 6  # eta1
    n += nv  # dq
    n += nv  # tau
    n += 5  # stats
    n += cap * 3  # hit_points
    n += cap  # hit_depth
    n += cap  # hit_collision
    n += cap  # hit_feature
    n += most * 5  # cand
    n += ncol  # hint
    n += 5  # keep
    n += ncol * 3 * 3  # col_R
    n += ncol * 3  # col_p
    n += ncol * 3  # col_par
    n += ncol * 3  # col_lo
    n += ncol * 3  # col_hi
    n += ncol  # sweep_order
    n += pair_work  # narrow
    n += 4 * 3  # patch_points
    n += 4  # patch_depths
    n += 3 * 3  # patch_frame
    return n


@njit(cache=True)
def contact_work(nj, nv, mmax, cap, most, pair_work, ncol, nd):
    """A ContactWork buffer, its header written."""
    buf = np.zeros(contact_work_size(nj, nv, mmax, cap, most, pair_work, ncol, nd))
    buf[CW_NJ] = nj
    buf[CW_NV] = nv
    buf[CW_MMAX] = mmax
    buf[CW_CAP] = cap
    buf[CW_MOST] = most
    buf[CW_PAIR_WORK] = pair_work
    buf[CW_NCOL] = ncol
    buf[CW_ND] = nd
    return buf


@njit(cache=True, inline="always")
def solver_work_views(buf):
    """The views of a SolverWork buffer."""
    mmax = int(buf[SW_MMAX])
    o = 1
    # σ = G λ + g
    sigma = view(buf, o, (mmax,))
    o += mmax
    # ADMM's scaling D, per contact block and bilateral row
    scale = view(buf, o, (mmax,))
    o += mmax
    # D g
    gs = view(buf, o, (mmax,))
    o += mmax
    # D G D (m, m), or G_SS of the sticking guess
    Gs = view(buf, o, (mmax * mmax,))
    o += mmax * mmax
    # its Cholesky factor
    L = view(buf, o, (mmax * mmax,))
    o += mmax * mmax
    # ADMM's x, or the sticking guess's λ
    x = view(buf, o, (mmax,))
    o += mmax
    # ADMM's z (in K)
    z = view(buf, o, (mmax,))
    o += mmax
    # ADMM's scaled dual u
    u = view(buf, o, (mmax,))
    o += mmax
    # De Saxcé's shift Φ
    s = view(buf, o, (mmax,))
    o += mmax
    # a solve's right-hand side
    rhs = view(buf, o, (mmax,))
    o += mmax
    # a solve's result
    y = view(buf, o, (mmax,))
    o += mmax
    # the iterate of least residual
    best = view(buf, o, (mmax,))
    o += mmax
    # the sticking guess's rows (integers held as floats)
    rows = view(buf, o, (mmax,))
    o += mmax
    # the ρ the last ADMM solve ended with (0: none yet), the next one's start
    rho = view(buf, o, (1,))
    o += 1
    return SolverWork(
        sigma,
        scale,
        gs,
        Gs,
        L,
        x,
        z,
        u,
        s,
        rhs,
        y,
        best,
        rows,
        rho,
    )


def solver_work_arrays(buf):
    """``solver_work_views`` for Python (NumPy views that keep the buffer alive)."""
    mmax = int(buf[SW_MMAX])
    shapes = (
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax * mmax,),
        (mmax * mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (mmax,),
        (1,),
    )
    return SolverWork(*_tiled(buf, 1, shapes))


@njit(cache=True)
def solver_work_size(mmax):
    """The length of a SolverWork buffer."""
    n = 1
    n += mmax  # sigma
    n += mmax  # scale
    n += mmax  # gs
    n += mmax * mmax  # Gs
    n += mmax * mmax  # L
    n += mmax  # x
    n += mmax  # z
    n += mmax  # u
    n += mmax  # s
    n += mmax  # rhs
    n += mmax  # y
    n += mmax  # best
    n += mmax  # rows
    n += 1  # rho
    return n


@njit(cache=True)
def solver_work(mmax):
    """A SolverWork buffer, its header written."""
    buf = np.zeros(solver_work_size(mmax))
    buf[SW_MMAX] = mmax
    return buf
