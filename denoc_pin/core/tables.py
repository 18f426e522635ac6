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
    ("path", ("nj",), "the support of a frame's body, from it to the root (int64 bit patterns; frames.py)"),
    ("frame_pose", (3, 4), "a frame's world pose [R_F | p_F] (frames.py)"),
    ("twist", (6,), "a body's world twist (ω, v at the world origin; frames.py)"),
    ("frame_twist", (6,), "the world twist of a frame's body (frames.py)"),
    ("inertia_sum", (3, 3), "a subtree's rotational inertia about the centre of mass, world axes (frames.py)"),
    ("inertia_rate", (3, 3), "its time derivative (frames.py)"),
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
    ("J", ("m", "nv"), "constraint Jacobian: the rows of Δ = J q̇ (cuts: C1 components [ω; v]; loops.kernel)"),
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
)

FRAME_ROW = (
    ("body", 1, "the body (joint index) the frame is fixed to, as a float"),
    ("rotation", 9, "the frame's rotation in that body's frame, row by row"),
    ("translation", 3, "the frame's origin in that body's frame"),
)
"""One row of ``Model.frame_buffer`` (nframes, 13): a frame as the kinematics kernels read it."""


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
    column = 0
    for n, width, meaning in FRAME_ROW:
        constants.append(f"FRAME_{n.upper()} = {column}  # {meaning} ({width} column{'s' if width > 1 else ''})")
        column += width
    tuples = [
        f'{name} = namedtuple(\n    "{name}",\n    [\n' + "".join(f'        "{f[0]}",\n' for f in table) + "    ],\n)\n"
        for name, table in (("ModelViews", MODEL_INTS + MODEL_FLOATS), ("DataViews", DATA_FLOATS),
                            ("LoopViews", LOOP_FLOATS))
    ]  # fmt: skip
    functions = [
        _views_function("model_views", "mi, mf", _MODEL_PARTS, "ModelViews", "The model buffers' views."),
        _views_function("data_views", "ws, mi", _DATA_PARTS, "DataViews", "The workspace's views."),
        _views_function(
            "loop_views", "lw, mi", _LOOP_PARTS, "LoopViews", "The loop workspace's views.", "    m = int(lw[LW_M])\n"
        ),
        _sizes_function("model_buffer_sizes", _MODEL_PARTS, "(size of mi, size of mf)."),
        _sizes_function("workspace_size", _DATA_PARTS, "The size of ws.", jit=False),
        _sizes_function(
            "loop_workspace_size", _LOOP_PARTS, "The size of lw for m constraint rows.", "head, m", jit=False
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
        '"""The named views of the flat buffers and the names of their header entries, generated from the tables of\n'
        "``core/layout.py`` by ``scripts/write_views.py``: do not edit (``tests/test_layout.py`` fails when\n"
        'this file is stale)."""\n\n'
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


VIEWS = Path(__file__).with_name("views.py")
"""Where ``views_source`` is written."""


def write_views(path: Path = VIEWS) -> bool:
    """Write ``core/views.py`` from the tables; True if it changed."""
    text = views_source()
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True
