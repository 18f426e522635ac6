"""The named views of the flat buffers, the names of their header entries and of the rows' columns,
generated from the tables of ``core/tables.py`` by ``scripts/write_views.py``: do not edit
(``tests/test_layout.py`` fails when this file is stale)."""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from .memory import view

__all__ = [
    "COL_BODY",
    "COL_BOX_C",
    "COL_BOX_H",
    "COL_CODE",
    "COL_CSTART",
    "COL_GROUND",
    "COL_P",
    "COL_PARAMS",
    "COL_R",
    "COL_REACH",
    "COL_VCOUNT",
    "COL_VSTART",
    "COL_WIDTH",
    "DataViews",
    "FRAME_BODY",
    "FRAME_ROTATION",
    "FRAME_TRANSLATION",
    "FRAME_WIDTH",
    "GROUND_FRICTION",
    "GROUND_HEIGHT",
    "GROUND_N",
    "GROUND_ON",
    "GROUND_RESTITUTION",
    "GROUND_T1",
    "GROUND_T2",
    "GROUND_WIDTH",
    "HEAD_NJ",
    "HEAD_NMOD",
    "HEAD_NQ",
    "HEAD_NS",
    "HEAD_NV",
    "HEAD_Z",
    "INFO_COMPLEMENTARITY",
    "INFO_CONTACTS",
    "INFO_CONVERGED",
    "INFO_DUAL",
    "INFO_ITERATIONS",
    "INFO_PRIMAL",
    "INFO_RESIDUAL",
    "INFO_WIDTH",
    "LW_M",
    "LW_ND",
    "LW_RANK",
    "LoopViews",
    "ModelViews",
    "P_AXIS",
    "P_AXIS2",
    "P_B1",
    "P_B2",
    "P_BODY1",
    "P_BODY2",
    "P_KIND",
    "P_MULTIPLIER",
    "P_OFFSET",
    "P_P1",
    "P_P2",
    "P_R1",
    "P_R2",
    "P_ROW",
    "P_ROWS",
    "P_WIDTH",
    "SET_BETA",
    "SET_C",
    "SET_COMPLIANT",
    "SET_K",
    "SET_MARGIN",
    "SET_MAX_ITER",
    "SET_SOLVER",
    "SET_THRESHOLD",
    "SET_TOL",
    "SET_WARM",
    "SET_WIDTH",
    "WS_STAMP",
    "data_views",
    "loop_views",
    "loop_workspace_size",
    "model_buffer_sizes",
    "model_views",
    "workspace_size",
]

HEAD_NJ = 0  # bodies + 1 (the base is body 0)
HEAD_NV = 1  # DOF
HEAD_NMOD = 2  # kinematic modules
HEAD_Z = 3  # zmax, the largest joint DOF
HEAD_NQ = 4  # configuration size
HEAD_NS = 5  # M̂ slots (articulated_slots)
WS_STAMP = 0  # ws[0]: the address of the model buffer the workspace was made for (stamped_for)
LW_M = 0  # lw[0]: the number of constraint rows
LW_RANK = 1  # lw[1]: the rank r of the last reaction solve: B's columns in use (B is the identity where r = m)
LW_ND = 2  # lw[2]: nv if the closed-loop solve factors the GIM (layout.loop_factor_order), else 0: H's order
FRAME_BODY = 0  # the body (joint index) the frame is fixed to, as a float (1 column)
FRAME_ROTATION = 1  # the frame's rotation in that body's frame, row by row (9 columns)
FRAME_TRANSLATION = 10  # the frame's origin in that body's frame (3 columns)
FRAME_WIDTH = 13
COL_BODY = 0  # the body that carries it (an integer held as a float) (1 column)
COL_CODE = 1  # the shape's code (SPHERE, BOX, CAPSULE, CYLINDER, MESH) (1 column)
COL_PARAMS = 2  # sphere: r; box: half extents; capsule, cylinder: r and half length; mesh: half extents (3 columns)
COL_R = 5  # rotation of the shape in the body frame, row by row (9 columns)
COL_P = 14  # origin of the shape in the body frame (3 columns)
COL_VSTART = 17  # a mesh's first row in the vertex array (1 column)
COL_VCOUNT = 18  # its number of support vertices (1 column)
COL_GROUND = 19  # 1 if it may touch the ground: group or mask has bit 1, and it moves (not on body 0) (1 column)
COL_REACH = 20  # the radius of its bounding sphere about its origin (a mesh's: its farthest support vertex) (1 column)
COL_CSTART = 21  # a mesh: its first row in the chunk array (its vertices in chunks of CHUNK, each in one sphere) (1 ...
COL_BOX_C = 22  # the centre of its bounding box in the shape frame (a mesh: of its support vertices; else 0) (3 colu...
COL_BOX_H = 25  # that box's half extents (radii included) (3 columns)
COL_WIDTH = 28
P_BODY1 = 0  # body of link1; a coupling: the coupled joint's body (integers held exactly as floats) (1 column)
P_BODY2 = 1  # body of link2; a coupling: the reference joint's body (1 column)
P_KIND = 2  # CUT_* code (1 column)
P_ROW = 3  # its first constraint row (1 column)
P_R1 = 4  # rotation of C1 in link1's frame, row by row (9 columns)
P_P1 = 13  # origin of C1 in link1's frame (3 columns)
P_R2 = 16  # rotation of C2 in link2's frame, row by row (9 columns)
P_P2 = 25  # origin of C2 in link2's frame (3 columns)
P_AXIS = 28  # the cut's axis, in C1 (3 columns)
P_AXIS2 = 31  # a universal cut's second axis, in C2 (3 columns)
P_B1 = 34  # b₁ ⟂ axis, in C1 (3 columns)
P_B2 = 37  # b₂ = axis × b₁, in C1 (3 columns)
P_ROWS = 40  # the constant selection rows of Δ (``cut_rows``), 6 x 6 row by row, zero below the cut's count (36 colu...
P_MULTIPLIER = 76  # a coupling's multiplier (1 column)
P_OFFSET = 77  # a coupling's offset (1 column)
P_WIDTH = 78
GROUND_ON = 0  # 1, or 0: no ground (1 column)
GROUND_HEIGHT = 1  # h of the plane n·x = h (1 column)
GROUND_N = 2  # its unit normal n, world, out of the ground (3 columns)
GROUND_T1 = 5  # the contact frame's first tangent t₁, world (3 columns)
GROUND_T2 = 8  # its second tangent t₂ = n × t₁ (3 columns)
GROUND_FRICTION = 11  # Coulomb's μ (1 column)
GROUND_RESTITUTION = 12  # e, the ratio of the normal velocities after and before an impact (1 column)
GROUND_WIDTH = 13
SET_SOLVER = 0  # 0 ADMM, 1 PGS (1 column)
SET_TOL = 1  # the largest residual accepted (m/s) (1 column)
SET_MAX_ITER = 2  # the iteration cap (1 column)
SET_MARGIN = 3  # contacts are looked for up to this distance (m) (1 column)
SET_BETA = 4  # β, the share of a penetration corrected in one step (1 column)
SET_THRESHOLD = 5  # the normal approach speed (m/s) below which an impact is inelastic (1 column)
SET_WARM = 6  # 1: warm starts (1 column)
SET_COMPLIANT = 7  # 1: the compliance (k, c) is used (1 column)
SET_K = 8  # stiffness k (N/m) (1 column)
SET_C = 9  # damping c (N s/m) (1 column)
SET_WIDTH = 10
INFO_CONTACTS = 0  # the step's number of contacts n_c (1 column)
INFO_ITERATIONS = 1  # the solve's iterations (0: the sticking guess held) (1 column)
INFO_RESIDUAL = 2  # the largest of the three residuals below (m/s) (1 column)
INFO_PRIMAL = 3  # the largest distance of λ to K (1 column)
INFO_DUAL = 4  # the largest distance of σ̃ to K* (1 column)
INFO_COMPLEMENTARITY = 5  # the largest natural-map residual of a block (1 column)
INFO_CONVERGED = 6  # 1 if all three are within tol, else 0 (1 column)
INFO_WIDTH = 7

ModelViews = namedtuple(
    "ModelViews",
    [
        "parents",
        "kinds",
        "idx_q",
        "idx_v",
        "nvs",
        "module_ptr",
        "module_bodies",
        "slot",
        "slot_init",
        "unrotated",
        "dof_parent",
        "placement_rotation",
        "placement_translation",
        "axes",
        "axes2",
        "pitches",
        "gravity",
        "masses",
        "coms",
        "inertias_origin",
    ],
)
DataViews = namedtuple(
    "DataViews",
    [
        "E",
        "r",
        "S",
        "oR",
        "op",
        "path",
        "frame_pose",
        "twist",
        "frame_twist",
        "inertia_sum",
        "inertia_rate",
        "joint_rotations",
        "phi_hat",
        "t",
        "tdot",
        "w_tilde",
        "fext",
        "eta",
        "M_hat",
        "Psi_hat",
        "Psi",
        "I_hat",
        "I_hat_inv",
        "tau",
        "ddq",
    ],
)
LoopViews = namedtuple(
    "LoopViews",
    [
        "J",
        "res",
        "Jdv",
        "lam",
        "ddq0",
        "G",
        "order",
        "B",
        "JT",
        "Y",
        "eta",
        "N",
        "V",
        "gamma",
        "rhs",
        "x",
        "Rc1",
        "Rc2",
        "R12",
        "sel",
        "phi_hat",
        "H",
    ],
)


@njit(cache=True, inline="always")
def model_views(mi, mf):
    """The model buffers' views."""
    nj, nv, nmod = mi[HEAD_NJ], mi[HEAD_NV], mi[HEAD_NMOD]
    o = 6
    # parent body β of body k, parents[k] < k; parents[0] = 0
    parents = view(mi, o, (nj,))
    o += nj
    # joint-kind code of joint k (core.joints)
    kinds = view(mi, o, (nj,))
    o += nj
    # first entry of joint k in q
    idx_q = view(mi, o, (nj,))
    o += nj
    # first entry of joint k in v
    idx_v = view(mi, o, (nj,))
    o += nj
    # DOF z_k of joint k
    nvs = view(mi, o, (nj,))
    o += nj
    # the bodies of module i are module_bodies[module_ptr[i]:module_ptr[i + 1]]
    module_ptr = view(mi, o, (nmod + 1,))
    o += nmod + 1
    # body indices, module by module, root to tip within a module
    module_bodies = view(mi, o, (nj - 1,))
    o += nj - 1
    # the M_hat slot that holds M̂_k while it is open (articulated_slots)
    slot = view(mi, o, (nj,))
    o += nj
    # bit 1: k is a leaf; bit 2: k is the first child of its parent eliminated
    slot_init = view(mi, o, (nj,))
    o += nj
    # 1 if joint frame k is not rotated in its parent body's frame (placement_rotation[k] = 1)
    unrotated = view(mi, o, (nj,))
    o += nj
    # λ(c): the DOF before c on its path to the base (−1: none); the GIM's Lᵀ L sparsity
    dof_parent = view(mi, o, (nv,))
    o += nv
    o = 0
    # rotation of joint frame k in its parent body's frame at q = 0
    placement_rotation = view(mf, o, (nj, 3, 3))
    o += nj * 3 * 3
    # origin of joint frame k in its parent body's frame at q = 0
    placement_translation = view(mf, o, (nj, 3))
    o += nj * 3
    # unit joint axis e_k, body frame (a universal joint's first axis: parent's joint frame)
    axes = view(mf, o, (nj, 3))
    o += nj * 3
    # a universal joint's second axis e2, body frame; zero for other kinds
    axes2 = view(mf, o, (nj, 3))
    o += nj * 3
    # a helical joint's pitch [m/rad]; zero for other kinds
    pitches = view(mf, o, (nj,))
    o += nj
    # gravity g, base frame
    gravity = view(mf, o, (3,))
    o += 3
    # mass m_k
    masses = view(mf, o, (nj,))
    o += nj
    # centre of mass d_k, body frame
    coms = view(mf, o, (nj, 3))
    o += nj * 3
    # rotational inertia I_k about o_k, body frame; zero for the base
    inertias_origin = view(mf, o, (nj, 3, 3))
    o += nj * 3 * 3
    return ModelViews(
        parents,
        kinds,
        idx_q,
        idx_v,
        nvs,
        module_ptr,
        module_bodies,
        slot,
        slot_init,
        unrotated,
        dof_parent,
        placement_rotation,
        placement_translation,
        axes,
        axes2,
        pitches,
        gravity,
        masses,
        coms,
        inertias_origin,
    )


@njit(cache=True, inline="always")
def data_views(ws, mi):
    """The workspace's views."""
    nj, nv, z, ns = mi[HEAD_NJ], mi[HEAD_NV], mi[HEAD_Z], mi[HEAD_NS]
    o = 1
    # rotation taking parent-frame components to body-frame ones (A_{k,β}, eq. 7b)
    E = view(ws, o, (nj, 3, 3))
    o += nj * 3 * 3
    # o_k − o_β, parent frame (A_{k,β}, eq. 7b)
    r = view(ws, o, (nj, 3))
    o += nj * 3
    # p_k in its first nvs[k] columns, body frame [ω; v] (eq. 7b)
    S = view(ws, o, (nj, 6, z))
    o += nj * 6 * z
    # orientation R_k of body k in the base frame (Pinocchio's oMi rotation)
    oR = view(ws, o, (nj, 3, 3))
    o += nj * 3 * 3
    # origin o_k of body k in the base frame (Pinocchio's oMi translation)
    op = view(ws, o, (nj, 3))
    o += nj * 3
    # the support of a frame's body, from it to the root (int64 bit patterns; frame_kinematics.py)
    path = view(ws, o, (nj,))
    o += nj
    # a frame's world pose [R_F | p_F] (frame_kinematics.py)
    frame_pose = view(ws, o, (3, 4))
    o += 3 * 4
    # a body's world twist (ω, v at the world origin; frame_kinematics.py)
    twist = view(ws, o, (6,))
    o += 6
    # the world twist of a frame's body (frame_kinematics.py)
    frame_twist = view(ws, o, (6,))
    o += 6
    # a subtree's rotational inertia about its centre of mass, world axes (frame_kinematics)
    inertia_sum = view(ws, o, (3, 3))
    o += 3 * 3
    # its time derivative (frame_kinematics.py)
    inertia_rate = view(ws, o, (3, 3))
    o += 3 * 3
    # a multi-DOF joint's rotations R_j, R, R1, R2 (joints.joint_kinematics)
    joint_rotations = view(ws, o, (4, 3, 3))
    o += 4 * 3 * 3
    # φ̂_k of the forward solve (Table 3, step 1)
    phi_hat = view(ws, o, (6,))
    o += 6
    # twist t_k = [ω_k; ȯ_k], body frame (eq. 5)
    t = view(ws, o, (nj, 6))
    o += nj * 6
    # twist-rate ṫ_k (classical accelerations ω̇, ö), body frame (Table 1); gravity in it after inverse dynamics (the
    # base accelerates at −g), not after forward_kinematics
    tdot = view(ws, o, (nj, 6))
    o += nj * 6
    # composite wrench w̃_k, body frame (Table 1, step 2); w̃_k + η̃_k inside forward dynamics
    w_tilde = view(ws, o, (nj, 6))
    o += nj * 6
    # external wrench [n; f] of the last call given any, body frame
    fext = view(ws, o, (nj, 6))
    o += nj * 6
    # μ_k of Table 3, step 2 (forward dynamics)
    eta = view(ws, o, (nj, 6))
    o += nj * 6
    # open articulated mass matrices M̂_k (eq. 20, A.6), or composite M̃_k (eq. 17)
    M_hat = view(ws, o, (ns, 6, 6))
    o += ns * 6 * 6
    # Ψ̂_k = M̂_k p_k (eq. 19, A.5), after udut; B_k = M̃_k p_k in gim
    Psi_hat = view(ws, o, (nj, 6, z))
    o += nj * 6 * z
    # Ψ_k = Ψ̂_k Î_k⁻¹ (eq. 19, A.5)
    Psi = view(ws, o, (nj, 6, z))
    o += nj * 6 * z
    # Î_k = p_kᵀ Ψ̂_k, top-left nvs[k] x nvs[k] (eq. 18's D), after udut or aba
    I_hat = view(ws, o, (nj, z, z))
    o += nj * z * z
    # Î_k⁻¹
    I_hat_inv = view(ws, o, (nj, z, z))
    o += nj * z * z
    # τ of the last inverse dynamics
    tau = view(ws, o, (nv,))
    o += nv
    # q̈ of the last forward dynamics
    ddq = view(ws, o, (nv,))
    o += nv
    return DataViews(
        E,
        r,
        S,
        oR,
        op,
        path,
        frame_pose,
        twist,
        frame_twist,
        inertia_sum,
        inertia_rate,
        joint_rotations,
        phi_hat,
        t,
        tdot,
        w_tilde,
        fext,
        eta,
        M_hat,
        Psi_hat,
        Psi,
        I_hat,
        I_hat_inv,
        tau,
        ddq,
    )


@njit(cache=True, inline="always")
def loop_views(lw, mi):
    """The loop workspace's views."""
    nj, nv = mi[HEAD_NJ], mi[HEAD_NV]
    m, nd = int(lw[LW_M]), int(lw[LW_ND])
    o = 3
    # constraint Jacobian: the rows of Δ = J q̇ (cuts: C1 components [ω; v]; loops.loop_kinematics)
    J = view(lw, o, (m, nv))
    o += m * nv
    # residual r(q) of every row
    res = view(lw, o, (m,))
    o += m
    # J̇ q̇: the rows of Δ̇ at q̈ = 0
    Jdv = view(lw, o, (m,))
    o += m
    # λ of the last constrained forward dynamics, the reaction of link1 on link2 in C1
    lam = view(lw, o, (m,))
    o += m
    # q̈₀ = GIM⁻¹ (τ − h), the tree's accelerations (Schiehlen eq. 18)
    ddq0 = view(lw, o, (nv,))
    o += nv
    # J Jᵀ, then its pivoted Cholesky factor L (lower, in pivot order): the rank rule
    G = view(lw, o, (m, m))
    o += m * m
    # the rows in pivot order (integers held as floats), the independent ones first
    order = view(lw, o, (m,))
    o += m
    # B (m x rank): the basis of J's range the reactions live in, λ = B x
    B = view(lw, o, (m, m))
    o += m * m
    # (Bᵀ J)ᵀ, the rows that are solved
    JT = view(lw, o, (nv, m))
    o += nv * m
    # Y = GIM⁻¹ Jᵀ B (Schiehlen eq. 19)
    Y = view(lw, o, (nv, m))
    o += nv * m
    # η_k of Table 3 for each column of Y
    eta = view(lw, o, (nj, m, 6))
    o += nj * m * 6
    # N_c = Bᵀ J Y (eq. 20), then its Cholesky factor or its eigen-decomposition
    N = view(lw, o, (m, m))
    o += m * m
    # eigenvectors of the Jacobi solves
    V = view(lw, o, (m, m))
    o += m * m
    # γ = −J̇ q̇ − 2 kd J q̇ − kp² r, the constraints' right-hand side with Baumgarte's terms
    gamma = view(lw, o, (m,))
    o += m
    # Bᵀ (γ − J q̈₀), the reaction system's right-hand side
    rhs = view(lw, o, (m,))
    o += m
    # the reaction system's solution, λ = B x
    x = view(lw, o, (m,))
    o += m
    # a cut's C1 frame in the world (kernel.loop_rows)
    Rc1 = view(lw, o, (3, 3))
    o += 3 * 3
    # its C2 frame in the world
    Rc2 = view(lw, o, (3, 3))
    o += 3 * 3
    # C2's orientation in C1
    R12 = view(lw, o, (3, 3))
    o += 3 * 3
    # a cut's selection rows, the directions it blocks (core.cuts.cut_rows)
    sel = view(lw, o, (6, 6))
    o += 6 * 6
    # φ̂_k of the solves for Y (Table 3)
    phi_hat = view(lw, o, (6,))
    o += 6
    # the GIM, then its factor L (GIM = Lᵀ L, composite.ltl_factor): q̈₀ and Y by two sweeps
    H = view(lw, o, (nd, nd))
    o += nd * nd
    return LoopViews(
        J,
        res,
        Jdv,
        lam,
        ddq0,
        G,
        order,
        B,
        JT,
        Y,
        eta,
        N,
        V,
        gamma,
        rhs,
        x,
        Rc1,
        Rc2,
        R12,
        sel,
        phi_hat,
        H,
    )


@njit(cache=True, inline="always")
def model_buffer_sizes(head):
    """(size of mi, size of mf)."""
    nj, nv, nmod = head[HEAD_NJ], head[HEAD_NV], head[HEAD_NMOD]
    mi_size = 6
    mi_size += nj  # parents
    mi_size += nj  # kinds
    mi_size += nj  # idx_q
    mi_size += nj  # idx_v
    mi_size += nj  # nvs
    mi_size += nmod + 1  # module_ptr
    mi_size += nj - 1  # module_bodies
    mi_size += nj  # slot
    mi_size += nj  # slot_init
    mi_size += nj  # unrotated
    mi_size += nv  # dof_parent
    mf_size = 0
    mf_size += nj * 3 * 3  # placement_rotation
    mf_size += nj * 3  # placement_translation
    mf_size += nj * 3  # axes
    mf_size += nj * 3  # axes2
    mf_size += nj  # pitches
    mf_size += 3  # gravity
    mf_size += nj  # masses
    mf_size += nj * 3  # coms
    mf_size += nj * 3 * 3  # inertias_origin
    return mi_size, mf_size


def workspace_size(head):
    """The size of ws."""
    nj, nv, z, ns = head[HEAD_NJ], head[HEAD_NV], head[HEAD_Z], head[HEAD_NS]
    ws_size = 1
    ws_size += nj * 3 * 3  # E
    ws_size += nj * 3  # r
    ws_size += nj * 6 * z  # S
    ws_size += nj * 3 * 3  # oR
    ws_size += nj * 3  # op
    ws_size += nj  # path
    ws_size += 3 * 4  # frame_pose
    ws_size += 6  # twist
    ws_size += 6  # frame_twist
    ws_size += 3 * 3  # inertia_sum
    ws_size += 3 * 3  # inertia_rate
    ws_size += 4 * 3 * 3  # joint_rotations
    ws_size += 6  # phi_hat
    ws_size += nj * 6  # t
    ws_size += nj * 6  # tdot
    ws_size += nj * 6  # w_tilde
    ws_size += nj * 6  # fext
    ws_size += nj * 6  # eta
    ws_size += ns * 6 * 6  # M_hat
    ws_size += nj * 6 * z  # Psi_hat
    ws_size += nj * 6 * z  # Psi
    ws_size += nj * z * z  # I_hat
    ws_size += nj * z * z  # I_hat_inv
    ws_size += nv  # tau
    ws_size += nv  # ddq
    return ws_size


def loop_workspace_size(head, m, nd):
    """The size of lw for m constraint rows and a factor of order nd."""
    nj, nv = head[HEAD_NJ], head[HEAD_NV]
    lw_size = 3
    lw_size += m * nv  # J
    lw_size += m  # res
    lw_size += m  # Jdv
    lw_size += m  # lam
    lw_size += nv  # ddq0
    lw_size += m * m  # G
    lw_size += m  # order
    lw_size += m * m  # B
    lw_size += nv * m  # JT
    lw_size += nv * m  # Y
    lw_size += nj * m * 6  # eta
    lw_size += m * m  # N
    lw_size += m * m  # V
    lw_size += m  # gamma
    lw_size += m  # rhs
    lw_size += m  # x
    lw_size += 3 * 3  # Rc1
    lw_size += 3 * 3  # Rc2
    lw_size += 3 * 3  # R12
    lw_size += 6 * 6  # sel
    lw_size += 6  # phi_hat
    lw_size += nd * nd  # H
    return lw_size
