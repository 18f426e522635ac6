"""The layout of the flat buffers behind Model and Data, declared once, and the generator of ``core/views.py``.

Each field: its name, its shape in terms of the model's sizes (``MODEL_HEADER``) and its meaning, frame and order.
``views_source`` turns these tables into the views every kernel unpacks; ``scripts/write_views.py`` writes them to
``core/views.py``.  This module imports nothing of the package, so the script can load it by its path even when
``core/views.py`` is stale or broken.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "DATA_FLOATS",
    "FRAME_ROW",
    "HEADER",
    "LOOP_FLOATS",
    "LOOP_HEADER",
    "LOOP_HEADER_FIELDS",
    "MODEL_FLOATS",
    "MODEL_HEADER",
    "MODEL_INTS",
    "SIZES",
    "WS_HEADER",
    "VIEWS",
    "WS_HEADER_FIELDS",
    "views_source",
    "write_views",
]

# ---------------------------------------------------------------------------------------
# The layout, declared once: (name, shape in terms of the sizes, meaning).  Frames: "body" is body k's frame,
# "parent" its parent's joint frame at q = 0, "base" the base frame.
# ---------------------------------------------------------------------------------------

MODEL_HEADER = (
    ("nj", "bodies + 1 (the base is body 0)"),
    ("nv", "DOF"),
    ("nmod", "kinematic modules"),
    ("z", "zmax, the largest joint DOF"),
    ("nq", "configuration size"),
    ("ns", "M̂ slots (articulated_slots)"),
)
"""mi's header: the model's sizes, in order; a kernel reads them as mi[HEAD_NV] (``core/views.py``)."""
SIZES = tuple(name for name, _ in MODEL_HEADER)
HEADER = len(MODEL_HEADER)
WS_HEADER_FIELDS = (("stamp", "the address of the model buffer the workspace was made for (stamped_for)"),)
WS_HEADER = len(WS_HEADER_FIELDS)
LOOP_HEADER_FIELDS = (
    ("m", "the number of constraint rows"),
    ("rank", "the rank r of the last reaction solve: B's columns in use (B is the identity where r = m)"),
    ("nd", "nv if the closed-loop solve factors the GIM (layout.loop_factor_order), else 0: H's order"),
)
LOOP_HEADER = len(LOOP_HEADER_FIELDS)

MODEL_INTS = (
    ("parents", ("nj",), "parent body β of body k, parents[k] < k; parents[0] = 0"),
    ("kinds", ("nj",), "joint-kind code of joint k (core.joints)"),
    ("idx_q", ("nj",), "first entry of joint k in q"),
    ("idx_v", ("nj",), "first entry of joint k in v"),
    ("nvs", ("nj",), "DOF z_k of joint k"),
    ("module_ptr", ("nmod + 1",), "the bodies of module i are module_bodies[module_ptr[i]:module_ptr[i + 1]]"),
    ("module_bodies", ("nj - 1",), "body indices, module by module, root to tip within a module"),
    ("slot", ("nj",), "the M_hat slot that holds M̂_k while it is open (articulated_slots)"),
    ("slot_init", ("nj",), "bit 1: k is a leaf; bit 2: k is the first child of its parent eliminated"),
    ("unrotated", ("nj",), "1 if joint frame k is not rotated in its parent body's frame (placement_rotation[k] = 1)"),
    ("dof_parent", ("nv",), "λ(c): the DOF before c on its path to the base (−1: none); the GIM's Lᵀ L sparsity"),
)
MODEL_FLOATS = (
    ("placement_rotation", ("nj", 3, 3), "rotation of joint frame k in its parent body's frame at q = 0"),
    ("placement_translation", ("nj", 3), "origin of joint frame k in its parent body's frame at q = 0"),
    ("axes", ("nj", 3), "unit joint axis e_k, body frame (a universal joint's first axis: parent's joint frame)"),
    ("axes2", ("nj", 3), "a universal joint's second axis e2, body frame; zero for other kinds"),
    ("pitches", ("nj",), "a helical joint's pitch [m/rad]; zero for other kinds"),
    ("gravity", (3,), "gravity g, base frame"),
    ("masses", ("nj",), "mass m_k"),
    ("coms", ("nj", 3), "centre of mass d_k, body frame"),
    ("inertias_origin", ("nj", 3, 3), "rotational inertia I_k about o_k, body frame; zero for the base"),
)
DATA_FLOATS = (
    ("E", ("nj", 3, 3), "rotation taking parent-frame components to body-frame ones (A_{k,β}, eq. 7b)"),
    ("r", ("nj", 3), "o_k − o_β, parent frame (A_{k,β}, eq. 7b)"),
    ("S", ("nj", 6, "z"), "p_k in its first nvs[k] columns, body frame [ω; v] (eq. 7b)"),
    ("oR", ("nj", 3, 3), "orientation R_k of body k in the base frame (Pinocchio's oMi rotation)"),
    ("op", ("nj", 3), "origin o_k of body k in the base frame (Pinocchio's oMi translation)"),
    ("path", ("nj",), "the support of a frame's body, from it to the root (int64 bit patterns; frame_kinematics.py)"),
    ("frame_pose", (3, 4), "a frame's world pose [R_F | p_F] (frame_kinematics.py)"),
    ("twist", (6,), "a body's world twist (ω, v at the world origin; frame_kinematics.py)"),
    ("frame_twist", (6,), "the world twist of a frame's body (frame_kinematics.py)"),
    ("inertia_sum", (3, 3), "a subtree's rotational inertia about its centre of mass, world axes (frame_kinematics)"),
    ("inertia_rate", (3, 3), "its time derivative (frame_kinematics.py)"),
    ("joint_rotations", (4, 3, 3), "a multi-DOF joint's rotations R_j, R, R1, R2 (joints.joint_kinematics)"),
    ("phi_hat", (6,), "φ̂_k of the forward solve (Table 3, step 1)"),
    ("t", ("nj", 6), "twist t_k = [ω_k; ȯ_k], body frame (eq. 5)"),
    (
        "tdot",
        ("nj", 6),
        "twist-rate ṫ_k (classical accelerations ω̇, ö), body frame (Table 1); gravity in it after "
        "inverse dynamics (the base accelerates at −g), not after forward_kinematics",
    ),
    ("w_tilde", ("nj", 6), "composite wrench w̃_k, body frame (Table 1, step 2); w̃_k + η̃_k inside forward dynamics"),
    ("fext", ("nj", 6), "external wrench [n; f] of the last call given any, body frame"),
    ("eta", ("nj", 6), "μ_k of Table 3, step 2 (forward dynamics)"),
    ("M_hat", ("ns", 6, 6), "open articulated mass matrices M̂_k (eq. 20, A.6), or composite M̃_k (eq. 17)"),
    ("Psi_hat", ("nj", 6, "z"), "Ψ̂_k = M̂_k p_k (eq. 19, A.5), after udut; B_k = M̃_k p_k in gim"),
    ("Psi", ("nj", 6, "z"), "Ψ_k = Ψ̂_k Î_k⁻¹ (eq. 19, A.5)"),
    ("I_hat", ("nj", "z", "z"), "Î_k = p_kᵀ Ψ̂_k, top-left nvs[k] x nvs[k] (eq. 18's D), after udut or aba"),
    ("I_hat_inv", ("nj", "z", "z"), "Î_k⁻¹"),
    ("tau", ("nv",), "τ of the last inverse dynamics"),
    ("ddq", ("nv",), "q̈ of the last forward dynamics"),
)

LOOP_FLOATS = (
    ("J", ("m", "nv"), "constraint Jacobian: the rows of Δ = J q̇ (cuts: C1 components [ω; v]; loops.loop_kinematics)"),
    ("res", ("m",), "residual r(q) of every row"),
    ("Jdv", ("m",), "J̇ q̇: the rows of Δ̇ at q̈ = 0"),
    ("lam", ("m",), "λ of the last constrained forward dynamics, the reaction of link1 on link2 in C1"),
    ("ddq0", ("nv",), "q̈₀ = GIM⁻¹ (τ − h), the tree's accelerations (Schiehlen eq. 18)"),
    ("G", ("m", "m"), "J Jᵀ, then its pivoted Cholesky factor L (lower, in pivot order): the rank rule"),
    ("order", ("m",), "the rows in pivot order (integers held as floats), the independent ones first"),
    ("B", ("m", "m"), "B (m x rank): the basis of J's range the reactions live in, λ = B x"),
    ("JT", ("nv", "m"), "(Bᵀ J)ᵀ, the rows that are solved"),
    ("Y", ("nv", "m"), "Y = GIM⁻¹ Jᵀ B (Schiehlen eq. 19)"),
    ("eta", ("nj", "m", 6), "η_k of Table 3 for each column of Y"),
    ("N", ("m", "m"), "N_c = Bᵀ J Y (eq. 20), then its Cholesky factor or its eigen-decomposition"),
    ("V", ("m", "m"), "eigenvectors of the Jacobi solves"),
    ("gamma", ("m",), "γ = −J̇ q̇ − 2 kd J q̇ − kp² r, the constraints' right-hand side with Baumgarte's terms"),
    ("rhs", ("m",), "Bᵀ (γ − J q̈₀), the reaction system's right-hand side"),
    ("x", ("m",), "the reaction system's solution, λ = B x"),
    ("Rc1", (3, 3), "a cut's C1 frame in the world (kernel.loop_rows)"),
    ("Rc2", (3, 3), "its C2 frame in the world"),
    ("R12", (3, 3), "C2's orientation in C1"),
    ("sel", (6, 6), "a cut's selection rows, the directions it blocks (core.cuts.cut_rows)"),
    ("phi_hat", (6,), "φ̂_k of the solves for Y (Table 3)"),
    ("H", ("nd", "nd"), "the GIM, then its factor L (GIM = Lᵀ L, composite.ltl_factor): q̈₀ and Y by two sweeps"),
)

FRAME_ROW = (
    ("body", 1, "the body (joint index) the frame is fixed to, as a float"),
    ("rotation", 9, "the frame's rotation in that body's frame, row by row"),
    ("translation", 3, "the frame's origin in that body's frame"),
)
"""One row of ``Model.frame_buffer`` (nframes, 13): a frame as the kinematics kernels read it."""

# ---------------------------------------------------------------------------------------
# Rows: flat float arrays of named columns, (name, width, meaning); each column's start is a generated constant
# <PREFIX>_<NAME> and the row's width <PREFIX>_WIDTH (``ROWS``).
# ---------------------------------------------------------------------------------------

COLLISION_ROW = (
    ("body", 1, "the body that carries it (an integer held as a float)"),
    ("code", 1, "the shape's code (SPHERE, BOX, CAPSULE, CYLINDER, MESH)"),
    ("params", 3, "sphere: r; box: half extents; capsule, cylinder: r and half length; mesh: half extents"),
    ("R", 9, "rotation of the shape in the body frame, row by row"),
    ("p", 3, "origin of the shape in the body frame"),
    ("vstart", 1, "a mesh's first row in the vertex array"),
    ("vcount", 1, "its number of support vertices"),
    ("ground", 1, "1 if it may touch the ground: group or mask has bit 1, and it moves (not on body 0)"),
    ("reach", 1, "the radius of its bounding sphere about its origin (a mesh's: its farthest support vertex)"),
    ("cstart", 1, "a mesh: its first row in the chunk array (its vertices in chunks of CHUNK, each in one sphere)"),
    ("box_c", 3, "the centre of its bounding box in the shape frame (a mesh: of its support vertices; else 0)"),
    ("box_h", 3, "that box's half extents (radii included)"),
)
"""A packed collision (``shapes.pack_collisions``), as the compiled detection reads it."""
CUT_ROW = (
    ("body1", 1, "body of link1; a coupling: the coupled joint's body (integers held exactly as floats)"),
    ("body2", 1, "body of link2; a coupling: the reference joint's body"),
    ("kind", 1, "CUT_* code"),
    ("row", 1, "its first constraint row"),
    ("R1", 9, "rotation of C1 in link1's frame, row by row"),
    ("p1", 3, "origin of C1 in link1's frame"),
    ("R2", 9, "rotation of C2 in link2's frame, row by row"),
    ("p2", 3, "origin of C2 in link2's frame"),
    ("axis", 3, "the cut's axis, in C1"),
    ("axis2", 3, "a universal cut's second axis, in C2"),
    ("b1", 3, "b₁ ⟂ axis, in C1"),
    ("b2", 3, "b₂ = axis × b₁, in C1"),
    ("rows", 36, "the constant selection rows of Δ (``cut_rows``), 6 x 6 row by row, zero below the cut's count"),
    ("multiplier", 1, "a coupling's multiplier"),
    ("offset", 1, "a coupling's offset"),
)
"""A packed cut or coupling (``ResolvedLoops.packed``); a cut leaves multiplier and offset zero, a coupling
everything but them, its bodies, kind and row."""
GROUND_ROW = (
    ("on", 1, "1, or 0: no ground"),
    ("height", 1, "h of the plane n·x = h"),
    ("n", 3, "its unit normal n, world, out of the ground"),
    ("t1", 3, "the contact frame's first tangent t₁, world"),
    ("t2", 3, "its second tangent t₂ = n × t₁"),
    ("friction", 1, "Coulomb's μ"),
    ("restitution", 1, "e, the ratio of the normal velocities after and before an impact"),
)
"""The ground as the compiled step reads it (``contact.stepping.ground_numbers``)."""
SETTINGS_ROW = (
    ("solver", 1, "0 ADMM, 1 PGS"),
    ("tol", 1, "the largest residual accepted (m/s)"),
    ("max_iter", 1, "the iteration cap"),
    ("margin", 1, "contacts are looked for up to this distance (m)"),
    ("beta", 1, "β, the share of a penetration corrected in one step"),
    ("threshold", 1, "the normal approach speed (m/s) below which an impact is inelastic"),
    ("warm", 1, "1: warm starts"),
    ("compliant", 1, "1: the compliance (k, c) is used"),
    ("k", 1, "stiffness k (N/m)"),
    ("c", 1, "damping c (N s/m)"),
)
"""``ContactSettings`` as the compiled step reads them (``contact.stepping.settings_numbers``)."""
INFO_ROW = (
    ("contacts", 1, "the step's number of contacts n_c"),
    ("iterations", 1, "the solve's iterations (0: the sticking guess held)"),
    ("residual", 1, "the largest of the three residuals below (m/s)"),
    ("primal", 1, "the largest distance of λ to K"),
    ("dual", 1, "the largest distance of σ̃ to K*"),
    ("complementarity", 1, "the largest natural-map residual of a block"),
    ("converged", 1, "1 if all three are within tol, else 0"),
)
"""What a contact step reports (the solvers' ``stats`` are columns iterations … complementarity, in order)."""

ROWS = (
    ("FRAME", FRAME_ROW),
    ("COL", COLLISION_ROW),
    ("P", CUT_ROW),
    ("GROUND", GROUND_ROW),
    ("SET", SETTINGS_ROW),
    ("INFO", INFO_ROW),
)
"""Each row and the prefix of its generated column constants."""


def columns(row) -> dict:
    """Each column's start in ``row``, and "width": the row's width (for Python code that indexes by name)."""
    out, at = {}, 0
    for name, width, _ in row:
        out[name] = at
        at += width
    out["width"] = at
    return out


# ---------------------------------------------------------------------------------------
# Records: named tuples of arrays the contact step and the runs pass between stages, (name, shape in terms of the
# record's sizes, dtype "f" float64 / "i" int64 / "b" bool, meaning); shape () is a scalar.  Generated into
# ``core/records.py``: the named tuple and its allocator (arrays uninitialised, scalars zero), used by the stepwise
# (Python) and the compiled routes alike.  Contact rows: per contact a block (t₁, t₂, n), the normal last.
# ---------------------------------------------------------------------------------------

CONTACT_SET = (
    ("bodies", ("cap", 2), "i", "the two bodies in contact: the first is 0 (the world) for the ground"),
    ("points", ("cap", 3), "f", "the contact point x_i, world (on the second body's shape)"),
    ("frames", ("cap", 3, 3), "f", "the contact frame, world, axes as columns (t₁, t₂, n), n out of the first body"),
    ("depth", ("cap",), "f", "the signed distance d_i (< 0: penetration)"),
    ("mu", ("cap",), "f", "Coulomb's μ_i"),
    ("restitution", ("cap",), "f", "e_i (0 for a shape pair)"),
    ("keys", ("cap", 3), "i", "the warm start's key: (−1, collision, feature) on the ground, (i, j, feature) a pair"),
    ("impulse", ("cap", 3), "f", "the impulse λ_i of the last solve, contact frame (t₁, t₂, n)"),
    ("warm_row", ("cap",), "i", "its row in the warm starts (−1: a coal pair's, whose start comes with it)"),
    ("info", ("INFO_WIDTH",), "f", "the step's figures (INFO_ROW)"),
)
"""One step's contacts, for up to cap of them (``ContactSet``, ``contact_set(cap)``)."""
SHAPE_PAIRS = (
    ("bodies", ("npairs", 2), "i", "the two shapes' bodies"),
    ("keys", ("npairs", 3), "i", "(collision i, collision j, feature)"),
    ("points", ("npairs", 3), "f", "the contact point, world"),
    ("frames", ("npairs", 3, 3), "f", "the contact frame, columns (t₁, t₂, n), n from shape i towards j"),
    ("depth", ("npairs",), "f", "the signed distance"),
    ("mu", ("npairs",), "f", "μ, the larger of the two shapes'"),
    ("start", ("npairs", 3), "f", "the warm start, the impulse of the same key at the last step (0: none)"),
)
"""The shape pairs' contacts coal found in Python for one step (``ShapePairs``, ``shape_pairs(npairs)``)."""
CONTACT_GEOMETRY = (
    ("rows", ("ncol", "COL_WIDTH"), "f", "the packed collisions (COLLISION_ROW)"),
    ("verts", ("nverts", 3), "f", "the meshes' support vertices, shape frame"),
    ("chunks", ("nchunks", 4), "f", "the meshes' vertex chunks' spheres (centre, radius), shape frame"),
    ("support", ("nj", "nv"), "b", "support[k, c]: column c of v moves body k (its joint and its ancestors')"),
    ("woff", ("ncol",), "i", "collision c's first row in the ground's warm starts (a row per feature)"),
    ("pairs", ("npairs", 2), "i", "the shape pairs the compiled narrow phase tests (i < j), which may touch"),
    ("pair_mu", ("npairs",), "f", "a pair's μ, the larger of its two shapes'"),
    ("pair_warm", ("npairs",), "i", "a pair's row in the warm starts"),
    ("pair_of", ("ncol", "ncol"), "i", "pair_of[i, j], i < j: the pair's row in pairs; −1: the two never touch"),
)
"""What the step knows of the model's collisions (``ContactGeometry``, ``contact_geometry(...)``)."""
WARM_STARTS = (
    ("impulse", ("features", 3), "f", "a ground feature's last impulse, contact frame (row woff[c] + feature)"),
    ("step", ("features",), "i", "the step that impulse is from (used when it is the one before)"),
    ("loops", ("nl",), "f", "the loops' last impulses"),
    ("axes", ("npairs", 3), "f", "a shape pair's last GJK direction v (world, zero: none yet), the next step's first"),
)
"""The warm starts a run carries from step to step (``WarmStarts``, ``warm_starts(features, nl, npairs)``)."""
JOINT_LAW = (
    ("kp", ("nv",), "f", "K_p"),
    ("kd", ("nv",), "f", "K_d"),
    ("q_ref", ("nq",), "f", "q_ref"),
    ("v_ref", ("nv",), "f", "v_ref"),
    ("tau_ff", ("nv",), "f", "τ_ff"),
    ("feedback", (), "b", "K_p or K_d is not zero (else τ = τ_ff, no difference taken)"),
)
"""τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v), the law a compiled run evaluates (``JointLaw``)."""
RUN_OUTPUT = (
    ("Q", ("rows", "nq"), "f", "q of each recorded step"),
    ("V", ("rows", "nv"), "f", "v"),
    ("A", ("rows", "nv"), "f", "(v⁺ − v) / dt of the step that leaves it (the last row: the row before's)"),
    ("T", ("rows", "nv"), "f", "τ"),
    ("KE", ("rows",), "f", "kinetic energy"),
    ("PE", ("rows",), "f", "potential energy"),
    ("W", ("rows",), "f", "the work of τ since the start"),
    ("LAM", ("rows", "nl"), "f", "the loops' impulses of the step that leaves it"),
)
"""A compiled contact run's rows (``RunOutput``, ``run_output(rows, nq, nv, nl)``)."""
CONTACT_RECORDS = (
    ("count", ("rows",), "i", "k, the contacts of the step that leaves the row"),
    ("points", ("rows", "cap", 3), "f", "their points, world"),
    ("normals", ("rows", "cap", 3), "f", "their normals n, world"),
    ("impulses", ("rows", "cap", 3), "f", "their impulses, contact frame (t₁, t₂, n)"),
    ("forces", ("rows", "cap", 3), "f", "the world force on the second body, impulse / dt"),
    ("depths", ("rows", "cap"), "f", "their signed distances"),
    ("keys", ("rows", "cap", 3), "i", "their keys (CONTACT_SET)"),
    ("info", ("rows", "INFO_WIDTH"), "f", "the step's figures (INFO_ROW)"),
)
"""The contacts of a run's recorded steps (``ContactRecords``, ``contact_records(rows, cap)``)."""
CONTACT_WORK_HEADER = (
    ("nj", "bodies + 1"),
    ("nv", "DOF"),
    ("mmax", "the most rows a step can have: 3 cap + the loops' rows"),
    ("cap", "the most contacts a step can have"),
    ("most", "the most support vertices of one collision"),
    ("pair_work", "the floats a shape pair's narrow phase works in (contact.patch.PAIR_WORK)"),
    ("ncol", "collisions"),
    ("nd", "nv if the step factors the GIM (contact.pipeline.factor_pays), else 0"),
)
CONTACT_WORK = (
    ("v_free", ("nv",), "v_f = v + dt M⁻¹ (τ − h)"),
    ("Jall", (6, "nv"), "the bodies' world Jacobian columns [linear; angular] about the world origin"),
    ("J", ("mmax * nv",), "J (m, nv) in its first m nv entries: the contacts' rows, then the loops'"),
    ("JT", ("nv * mmax",), "Jᵀ (nv, m) for the Delassus sweep, then φ̃ᵀ (m, nv) for its product; or Y = L⁻ᵀ Jᵀ"),
    ("H", ("nd * nd",), "the GIM at q, then its factor L (nd, nd): GIM = Lᵀ L in the lower triangle (nd > 0)"),
    ("route", (1,), "1 when the step's M⁻¹ is L⁻¹ L⁻ᵀ (H), 0 when it is the UDUᵀ factors in ws (Table 3)"),
    ("G", ("mmax * mmax",), "G = J M⁻¹ Jᵀ + R (m, m)"),
    ("g", ("mmax",), "g = J v_f + b"),
    ("lam", ("mmax",), "λ, the impulses"),
    ("tilde", ("nv * mmax",), "φ̃ = D⁻¹ U⁻¹ Jᵀ (nv, m) (Table 3, step 1 on Jᵀ's columns)"),
    ("hat", ("mmax * nv",), "(Î φ̃)ᵀ (m, nv), 0 off each column's sweep"),
    ("eta", ("nj * mmax * 6",), "η_k of each column (nj, m, 6)"),
    ("active", ("nj * mmax",), "1 where column j's sweep visits body k (nj, m): k's subtree meets row j of J"),
    ("phi_hat", (6,), "φ̂_k of one body"),
    ("rhs", ("nv",), "Jᵀ λ"),
    ("dvel", ("nv",), "M⁻¹ Jᵀ λ"),
    ("eta1", ("nj * 6",), "η_k of that solve"),
    ("dq", ("nv",), "q_ref ⊖ q of a run's joint law"),
    ("tau", ("nv",), "τ of a run's step"),
    ("stats", (5,), "the solve's figures (INFO_ROW's iterations … complementarity)"),
    ("hit_points", ("cap", 3), "a ground candidate's point on its shape, world"),
    ("hit_depth", ("cap",), "its signed distance to the plane"),
    ("hit_collision", ("cap",), "its collision's index (an integer held as a float)"),
    ("hit_feature", ("cap",), "its feature: a corner, rim point, end cap or hull vertex"),
    ("cand", ("most", 5), "one mesh's candidates (x, d, vertex) before its patch is reduced"),
    ("hint", ("ncol",), "each mesh's chunk that held its deepest vertex at the last detection: searched first"),
    ("keep", (5,), "the candidates a reduced patch keeps"),
    ("col_R", ("ncol", 3, 3), "each collision's world rotation this step (the broad phase's and the pairs')"),
    ("col_p", ("ncol", 3), "its world origin"),
    ("col_par", ("ncol", 3), "its parameters (COLLISION_ROW's params)"),
    ("col_lo", ("ncol", 3), "the low corner of its world bounding box (its shape-frame box turned, − half the margin)"),
    ("col_hi", ("ncol", 3), "the high corner (+ half the margin)"),
    (
        "sweep_order",
        ("ncol",),
        "the collisions sorted by col_lo along the sweep axis (kept from step to step: nearly sorted already)",
    ),
    ("narrow", ("pair_work",), "a shape pair's GJK simplex, EPA polytope, features and clipped patch"),
    ("patch_points", (4, 3), "a shape pair's contact points, world (contact.patch.PAIR_POINTS rows)"),
    ("patch_depths", (4,), "their signed distances"),
    ("patch_frame", (3, 3), "the patch's frame, columns (t₁, t₂, n), n from the first shape to the second"),
)
"""A contact step's work area, one float buffer for up to mmax rows and cap contacts: nothing is allocated a step
(``ContactWork``; ``contact_work_views(cw)``, ``contact_work(nj, nv, mmax, cap, most, pair_work, ncol, nd)``)."""
SOLVER_WORK_HEADER = (("mmax", "the most rows"),)
SOLVER_WORK = (
    ("sigma", ("mmax",), "σ = G λ + g"),
    ("scale", ("mmax",), "ADMM's scaling D, per contact block and bilateral row"),
    ("gs", ("mmax",), "D g"),
    ("Gs", ("mmax * mmax",), "D G D (m, m), or G_SS of the sticking guess"),
    ("L", ("mmax * mmax",), "its Cholesky factor"),
    ("x", ("mmax",), "ADMM's x, or the sticking guess's λ"),
    ("z", ("mmax",), "ADMM's z (in K)"),
    ("u", ("mmax",), "ADMM's scaled dual u"),
    ("s", ("mmax",), "De Saxcé's shift Φ"),
    ("rhs", ("mmax",), "a solve's right-hand side"),
    ("y", ("mmax",), "a solve's result"),
    ("best", ("mmax",), "the iterate of least residual"),
    ("rows", ("mmax",), "the sticking guess's rows (integers held as floats)"),
    ("rho", (1,), "the ρ the last ADMM solve ended with (0: none yet), the next one's start"),
)
"""The solvers' work area, one float buffer for up to mmax rows (``SolverWork``; ``solver_work_views(sw)``,
``solver_work(mmax)``)."""

WORK_AREAS = (
    ("ContactWork", "contact_work", "CW", CONTACT_WORK_HEADER, CONTACT_WORK),
    ("SolverWork", "solver_work", "SW", SOLVER_WORK_HEADER, SOLVER_WORK),
)
"""Flat float work areas that carry their sizes in a header: (named tuple of views, allocator, header prefix,
header, table); the views function is ``<allocator>_views``."""

RECORDS = (
    ("count", ("rows",), "i", "k, the contacts of the step that leaves the row"),
    ("points", ("rows", "cap", 3), "f", "their points, world"),
    ("normals", ("rows", "cap", 3), "f", "their normals n, world"),
    ("impulses", ("rows", "cap", 3), "f", "their impulses, contact frame (t₁, t₂, n)"),
    ("forces", ("rows", "cap", 3), "f", "the world force on the second body, impulse / dt"),
    ("depths", ("rows", "cap"), "f", "their signed distances"),
    ("keys", ("rows", "cap", 3), "i", "their keys (CONTACT_SET)"),
    ("info", ("rows", "INFO_WIDTH"), "f", "the step's figures (INFO_ROW)"),
)
"""The contacts of a run's recorded steps (``ContactRecords``, ``contact_records(rows, cap)``)."""
CONTACT_SCENE = (
    ("geometry", (), "ContactGeometry", "the model's collisions"),
    ("ground", ("GROUND_WIDTH",), "f", "the ground (GROUND_ROW)"),
    ("settings", ("SET_WIDTH",), "f", "the settings (SETTINGS_ROW)"),
    ("warm", (), "WarmStarts", "the warm starts"),
    ("contacts", (), "ContactSet", "the last step's contacts"),
    ("work", ("CW_SIZE",), "f", "the step's work area (a ContactWork buffer)"),
    ("solver", ("SW_SIZE",), "f", "the solvers' work area (a SolverWork buffer)"),
)
"""What a contact step reads and writes besides the model, its data and the state: one argument
(``ContactScene(...)``, made by ``contact.stepping.ContactStepper``; no allocator)."""

CONTACT_JACOBIANS = (
    ("D", ("2 * nv", "3 * nv"), "f", "∂(q⁺, v⁺)/∂(q, v, τ), tangent spaces at q and q⁺ (columns δq | δv | δτ)"),
    ("F", ("2 * nv", "cap"), "f", "∂(q⁺, v⁺)/∂μ_i: contact i's friction coefficient (the first n_c columns)"),
    ("T", ("nv", "nv"), "f", "∂v⁺/∂v_fix: the solved step's change for a change of its fixed-λ velocity"),
    ("Minv", ("nv", "nv"), "f", "M⁻¹ at q (the forward dynamics' derivatives' ∂q̈/∂τ)"),
    ("Jv", ("nv", "nv"), "f", "∂(q ⊕ x)/∂x at x = dt v⁺: the step's last stage in the tangent spaces"),
    ("modes", ("cap",), "i", "each contact's mode at the solution (contact.derivatives.MODES)"),
    ("one_sided", ("cap",), "i", "1 where the contact sits at a mode switch"),
    ("lam", ("mmax",), "f", "the impulses λ: the contacts' (t₁, t₂, n), then the loops'"),
    ("counts", (3,), "i", "n_c, m and the refusal (0; contact.derivatives.REFUSED's code; 2: not finite)"),
)
"""The contact step's Jacobians, for up to cap contacts and mmax rows (``ContactJacobians``,
``contact_jacobians(nv, cap, mmax)``)."""
RECORDS = (
    ("ContactScene", None, CONTACT_SCENE),
    ("ContactSet", "contact_set", CONTACT_SET),
    ("ShapePairs", "shape_pairs", SHAPE_PAIRS),
    ("ContactGeometry", "contact_geometry", CONTACT_GEOMETRY),
    ("WarmStarts", "warm_starts", WARM_STARTS),
    ("JointLaw", "joint_law", JOINT_LAW),
    ("RunOutput", "run_output", RUN_OUTPUT),
    ("ContactRecords", "contact_records", CONTACT_RECORDS),
    ("ContactJacobians", "contact_jacobians", CONTACT_JACOBIANS),
)
"""Each record: its named tuple, its allocator (None: made from its parts) and its table."""


# ---------------------------------------------------------------------------------------
# The generator of core/views.py.
# ---------------------------------------------------------------------------------------

_MODEL_PARTS = (("mi", MODEL_INTS, HEADER), ("mf", MODEL_FLOATS, 0))
_DATA_PARTS = (("ws", DATA_FLOATS, WS_HEADER),)
_LOOP_PARTS = (("lw", LOOP_FLOATS, LOOP_HEADER),)


def _size(shape) -> str:
    """The size of a field of ``shape``, as source: a product of its dimensions."""
    dims = [str(d) for d in shape]
    return dims[0] if len(dims) == 1 else " * ".join(f"({d})" if " " in d else d for d in dims)


def _shape(shape) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


def _comment(text: str, indent: str = "    ") -> str:
    """``text`` as comment lines of at most 120 characters."""
    lines, line = [], indent + "#"
    for word in text.split():
        if len(line) + 1 + len(word) > 120:
            lines.append(line)
            line = indent + "#"
        line += " " + word
    return "\n".join([*lines, line]) + "\n"


def _listed(head: str, items, tail: str, indent: str = "") -> str:
    """``head`` + the items one per line + ``tail`` (the layout ruff gives a list too long for one line)."""
    return f"{indent}{head}\n" + "".join(f"{indent}    {item},\n" for item in items) + f"{indent}{tail}\n"


def _head(parts, head: str = "head") -> str:
    """The line that reads, from mi's header, the sizes the fields of ``parts`` are shaped by."""
    text = " ".join(str(d) for _, table, _ in parts for _, shape, _ in table for d in shape)
    used = [n for n in SIZES if re.search(rf"\b{n}\b", text)]
    return f"    {', '.join(used)} = " + ", ".join(f"{head}[HEAD_{n.upper()}]" for n in used) + "\n"


def _views_function(name: str, args: str, parts, result: str, doc: str, sizes: str = "") -> str:
    out = f'@njit(cache=True, inline="always")\ndef {name}({args}):\n    """{doc}"""\n{_head(parts, "mi")}{sizes}'
    fields = []
    for buf, table, start in parts:
        out += f"    o = {start}\n"
        for field, shape, meaning in table:
            out += _comment(meaning) + f"    {field} = view({buf}, o, {_shape(shape)})\n    o += {_size(shape)}\n"
            fields.append(field)
    return out + _listed(f"return {result}(", fields, ")", "    ")


def _sizes_function(name: str, parts, doc: str, args: str = "head", jit: bool = True) -> str:
    deco = '@njit(cache=True, inline="always")\n' if jit else ""
    out = f'{deco}def {name}({args}):\n    """{doc}"""\n' + _head(parts)
    totals = []
    for buf, table, start in parts:
        total = f"{buf}_size"
        out += f"    {total} = {start}\n"
        for field, shape, _ in table:
            out += f"    {total} += {_size(shape)}  # {field}\n"
        totals.append(total)
    return out + f"    return {', '.join(totals)}\n"


def views_source() -> str:
    """The text of ``core/views.py``, from the tables above."""
    constants = [f"HEAD_{n.upper()} = {i}  # {meaning}" for i, (n, meaning) in enumerate(MODEL_HEADER)]
    constants += [f"WS_{n.upper()} = {i}  # ws[{i}]: {meaning}" for i, (n, meaning) in enumerate(WS_HEADER_FIELDS)]
    constants += [f"LW_{n.upper()} = {i}  # lw[{i}]: {meaning}" for i, (n, meaning) in enumerate(LOOP_HEADER_FIELDS)]
    for prefix, row in ROWS:
        column = 0
        for n, width, meaning in row:
            text = f"{prefix}_{n.upper()} = {column}  # {meaning} ({width} column{'s' if width > 1 else ''})"
            constants.append(text if len(text) <= 120 else text[:117] + "...")
            column += width
        constants.append(f"{prefix}_WIDTH = {column}")
    tuples = [
        f'{name} = namedtuple(\n    "{name}",\n    [\n' + "".join(f'        "{f[0]}",\n' for f in table) + "    ],\n)\n"
        for name, table in (("ModelViews", MODEL_INTS + MODEL_FLOATS), ("DataViews", DATA_FLOATS),
                            ("LoopViews", LOOP_FLOATS))
    ]  # fmt: skip
    functions = [
        _views_function("model_views", "mi, mf", _MODEL_PARTS, "ModelViews", "The model buffers' views."),
        _views_function("data_views", "ws, mi", _DATA_PARTS, "DataViews", "The workspace's views."),
        _views_function(
            "loop_views",
            "lw, mi",
            _LOOP_PARTS,
            "LoopViews",
            "The loop workspace's views.",
            "    m, nd = int(lw[LW_M]), int(lw[LW_ND])\n",
        ),
        _sizes_function("model_buffer_sizes", _MODEL_PARTS, "(size of mi, size of mf)."),
        _sizes_function("workspace_size", _DATA_PARTS, "The size of ws.", jit=False),
        _sizes_function(
            "loop_workspace_size",
            _LOOP_PARTS,
            "The size of lw for m constraint rows and a factor of order nd.",
            "head, m, nd",
            jit=False,
        ),
    ]
    names = sorted(
        [c.split(" = ")[0] for c in constants]
        + [
            "DataViews",
            "LoopViews",
            "ModelViews",
            "data_views",
            "loop_views",
            "loop_workspace_size",
            "model_buffer_sizes",
            "model_views",
            "workspace_size",
        ]
    )
    return (
        '"""The named views of the flat buffers, the names of their header entries and of the rows\' columns,\n'
        "generated from the tables of ``core/tables.py`` by ``scripts/write_views.py``: do not edit\n"
        '(``tests/test_layout.py`` fails when this file is stale)."""\n\n'
        "from __future__ import annotations\n\nfrom collections import namedtuple\n\nfrom numba import njit\n\n"
        "from .memory import view\n\n"
        + _listed("__all__ = [", [f'"{n}"' for n in names], "]")
        + "\n"
        + "\n".join(constants)
        + "\n\n"
        + "".join(tuples)
        + "\n\n"
        + "\n\n".join(functions)
    )


_DTYPES = {"f": ("np.float64", "0.0"), "i": ("np.int64", "0"), "b": ("np.bool_", "False")}


def _allocator(cls: str, name: str, table) -> str:
    """The allocator of a record: each array uninitialised, each scalar zero."""
    text = " ".join(str(d) for _, shape, _, _ in table for d in shape)
    sizes = list(dict.fromkeys(re.findall(r"\b[a-z]\w*\b", text)))
    doc = f"A {cls} (``core/tables.py``), its arrays uninitialised and its scalars zero."
    out = f'@njit(cache=True)\ndef {name}({", ".join(sizes)}):\n    """{doc}"""\n'
    items = []
    for _field, shape, dtype, _ in table:
        np_type, zero = _DTYPES[dtype]
        if not shape:
            items.append(zero)
        else:
            dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
            items.append(f"np.empty(({dims}), dtype={np_type})")
    return out + _listed(f"return {cls}(", items, ")", "    ")


def _work_source(cls: str, alloc: str, prefix: str, header, table) -> tuple[list, str, str]:
    """A work area's header constants, named tuple and functions: the views (its sizes read from its header), the
    size, and the allocator (header written)."""
    constants = [f"{prefix}_{n.upper()} = {i}  # {meaning}" for i, (n, meaning) in enumerate(header)]
    fields = "".join(_comment(f"{f}: {_shape(sh)}; {m}", "        ") + f'        "{f}",\n' for f, sh, m in table)
    tup = f'{cls} = namedtuple(\n    "{cls}",\n    [\n{fields}    ],\n)\n'
    sizes = [n for n, _ in header]
    read = "".join(f"    {n} = int(buf[{prefix}_{n.upper()}])\n" for n in sizes)
    views_name = alloc + "_views"
    out = f'@njit(cache=True, inline="always")\ndef {views_name}(buf):\n    """The views of a {cls} buffer."""\n{read}'
    out += f"    o = {len(header)}\n"
    for field, shape, meaning in table:
        out += _comment(meaning) + f"    {field} = view(buf, o, {_shape(shape)})\n    o += {_size(shape)}\n"
    out += _listed(f"return {cls}(", [f for f, _, _ in table], ")", "    ")
    doc = f'"""``{views_name}`` for Python (NumPy views that keep the buffer alive)."""'
    out += f"\n\ndef {alloc}_arrays(buf):\n    {doc}\n{read}"
    out += _listed("shapes = (", [_shape(sh) for _, sh, _ in table], ")", "    ")
    out += f"    return {cls}(*_tiled(buf, {len(header)}, shapes))\n"
    args = ", ".join(sizes)
    size = f'def {alloc}_size({args}):\n    """The length of a {cls} buffer."""\n    n = {len(header)}\n'
    size += "".join(f"    n += {_size(shape)}  # {field}\n" for field, shape, _ in table) + "    return n\n"
    make = f'@njit(cache=True)\ndef {alloc}({args}):\n    """A {cls} buffer, its header written."""\n'
    make += f"    buf = np.zeros({alloc}_size({args}))\n"
    make += "".join(f"    buf[{prefix}_{n.upper()}] = {n}\n" for n in sizes) + "    return buf\n"
    return constants, tup, "\n\n".join([out, "@njit(cache=True)\n" + size, make])


_TILED = '''
def _tiled(buf, start, shapes):
    """NumPy views of ``shapes``, one after the other in ``buf`` from ``start``."""
    out = []
    for shape in shapes:
        out.append(numpy_view(buf, start, shape))
        start += int(np.prod(shape))
    return out


'''


def records_source() -> str:
    """The text of ``core/records.py``, from the records' tables above."""
    text = " ".join(str(d) for _, name, table in RECORDS if name for _, shape, _, _ in table for d in shape)
    constants = sorted(set(re.findall(r"\b[A-Z][A-Z_]+\b", text)))
    tuples, functions = [], []
    for cls, name, table in RECORDS:
        fields = "".join(_comment(f"{f}: {_shape(sh) if sh else 'scalar'} {d}; {m}", "        ") + f'        "{f}",\n'
                         for f, sh, d, m in table)  # fmt: skip
        tuples.append(f'{cls} = namedtuple(\n    "{cls}",\n    [\n{fields}    ],\n)\n')
        if name:
            functions.append(_allocator(cls, name, table))
    header_constants = []
    for area in WORK_AREAS:
        c, t, f = _work_source(*area)
        header_constants += c
        tuples.append(t)
        functions.append(f)
    names = [cls for cls, _, _ in RECORDS] + [name for _, name, _ in RECORDS if name]
    names += [c.split(" = ")[0] for c in header_constants]
    names = sorted(names + [n for cls, a, *_ in WORK_AREAS for n in (cls, a, a + "_size", a + "_views", a + "_arrays")])
    return (
        '"""The records the contact step and the runs pass between their stages: named tuples of arrays, and an\n'
        "allocator each, generated from the tables of ``core/tables.py`` by ``scripts/write_views.py``: do not edit\n"
        '(``tests/test_layout.py`` fails when this file is stale)."""\n\n'
        "from __future__ import annotations\n\nfrom collections import namedtuple\n\nimport numpy as np\n"
        "from numba import njit\n\nfrom .memory import numpy_view, view\n"
        + (f"from .views import {', '.join(constants)}\n\n" if constants else "\n")
        + _listed("__all__ = [", [f'"{n}"' for n in names], "]")
        + "\n"
        + "\n".join(header_constants)
        + "\n\n"
        + _TILED
        + "".join(tuples)
        + "\n\n"
        + "\n\n".join(functions)
    )


VIEWS = Path(__file__).with_name("views.py")
"""Where ``views_source`` is written."""
RECORDS_FILE = Path(__file__).with_name("records.py")
"""Where ``records_source`` is written."""


def write_views(path: Path = VIEWS, records: Path = RECORDS_FILE) -> bool:
    """Write ``core/views.py`` and ``core/records.py`` from the tables; True if either changed."""
    changed = False
    for where, text in ((path, views_source()), (records, records_source())):
        if not (where.exists() and where.read_text() == text):
            where.write_text(text)
            changed = True
    return changed
