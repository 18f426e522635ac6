"""Flat buffers behind Model and Data, and their named views.

A numba call costs about 0.13 µs per array argument, so the compiled entry points take the
whole model as two flat buffers (``mi`` integers, ``mf`` floats) and the whole workspace as
one (``ws``).  The views below are the single definition of what lives where: Model and Data
expose them as named arrays, and every kernel unpacks the same views (named tuples, so a
kernel reads ``mv.parents``, ``dv.S``) at its start.

The same holds between compiled functions: each step of an algorithm (kinematics, Table 1, the
UDUᵀ factors, the solve) is a compiled function of the flat buffers that unpacks its views
itself (``model_views`` and ``data_views`` are inlined), and the paper-shaped kernel it calls
with the views is inlined into it (or, for the largest, written out in it: numba copies an
inlined function's IR block by block with its whole variable scope, which made compiling them
slow).  A call passing the ~20 views of a kernel moves their ~200 words of shapes, strides and
pointers; it cost more than the kernel itself on panda (FD took 3.5 µs inside numba with
view-passing calls, 2.0 µs with buffer-passing ones).

The kernels' views are ``numba.carray``s on the buffers' memory, which take no reference: a
sliced view costs two atomic reference-count updates of its buffer, about 25 ns, and the ~35
views of a call came to 0.7 µs, a third of panda's whole ID kernel.  Such views must not outlive
their buffers: they live inside one compiled call, whose arguments hold the buffers.  Python
gets ordinary NumPy views of the same memory (``numpy_views``), cut by the same generated source.

``zmax`` is the largest joint DOF of the model: p_k, Ψ̂_k, Ψ_k are stored 6 x zmax and Î_k
zmax x zmax, so that a chain of 1-DOF joints needs no 6 x 6 blocks for them.

Memory is what bounds the papers' 100,000-DOF chains, so nothing here is stored that a kernel
can form in a few flops: M_k (eq. 2b) is made from m_k, d_k and I_k where it is needed, ṗ_k of a
universal joint from p_k and its second axis, and w_k goes straight into w̃_k.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = [
    "DATA_FLOATS",
    "FMA",
    "FRAME_ROW",
    "HEADER",
    "LOOP_FLOATS",
    "LOOP_HEADER",
    "MODEL_FLOATS",
    "MODEL_INTS",
    "SIZES",
    "WS_HEADER",
    "DataViews",
    "LoopViews",
    "ModelViews",
    "all_finite",
    "articulated_slots",
    "borrow",
    "buffer_sizes",
    "data_views",
    "frame_rows",
    "leading",
    "loop_views",
    "loop_workspace_size",
    "model_buffer",
    "model_buffer_sizes",
    "model_views",
    "numpy_views",
    "split_model",
    "stamped_for",
    "workspace_size",
]

HEADER = 6  # mi[0:6] = the sizes: nj, nv, nmod, z, nq, ns (below)
SIZES = ("nj", "nv", "nmod", "z", "nq", "ns")
"""The model's sizes, in the order of mi's header: bodies + 1, DOF, modules, zmax (the largest joint DOF),
configuration size, M̂ slots (``articulated_slots``)."""
# The steps of the algorithms compile with a*b + c contracted into fused multiply-adds: one rounding
# instead of two (never less accurate), no reassociation, and NaN/inf semantics unchanged.  It took
# panda's FD step from 1.71 to 1.61 µs and its GIM from 0.95 to 0.83 µs inside numba.
FMA = {"contract"}
WS_HEADER = 1  # ws[0] = the address of the model buffer it was made for (the stamp); the views follow

# ---------------------------------------------------------------------------------------
# The layout, declared once: (name, shape in terms of SIZES, meaning).  Offsets, buffer sizes and the
# named views below are generated from these tables; Model and Data document their fields from them.
# Frames: "body" is body k's frame, "parent" its parent's joint frame at q = 0, "base" the base frame.
# ---------------------------------------------------------------------------------------

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
    (
        "scratch",
        (78,),
        "a frame's world pose [R | p] (3 x 4, row by row), two world twists (6 each), two 3 x 3, "
        "and four 3 x 3 for a multi-DOF joint's transform; φ̂_k of the forward solve (Table 3)",
    ),
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
    ("I_hat", ("nj", "z", "z"), "Î_k = p_kᵀ Ψ̂_k, top-left nvs[k] x nvs[k] (the D blocks of eq. 18), after udut"),
    ("I_hat_inv", ("nj", "z", "z"), "Î_k⁻¹"),
    ("tau", ("nv",), "τ of the last inverse dynamics"),
    ("ddq", ("nv",), "q̈ of the last forward dynamics"),
)

LOOP_HEADER = 1  # lw[0] = m, the number of constraint rows; the views follow
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
    ("scratch", (69,), "Rc1, Rc2, R12 (3 x 3 each), a cut's selection rows (6 x 6) and φ̂ (6) of the solves"),
)

FRAME_ROW = (
    ("body", 1, "the body (joint index) the frame is fixed to, as a float"),
    ("rotation", 9, "the frame's rotation in that body's frame, row by row"),
    ("translation", 3, "the frame's origin in that body's frame"),
)
"""One row of ``Model.frame_buffer`` (nframes, 13): a frame as the kinematics kernels read it."""


def frame_rows(frames) -> np.ndarray:
    """(nframes, 13) read-only rows (``FRAME_ROW``) of frames given as (body, rotation, translation)."""
    out = np.zeros((len(frames), sum(n for _, n, _ in FRAME_ROW)))
    for i, (body, R, p) in enumerate(frames):
        out[i, 0] = body
        out[i, 1:10] = np.asarray(R, dtype=float).ravel()
        out[i, 10:13] = p
    out.setflags(write=False)
    return out


ModelViews = namedtuple("ModelViews", [f[0] for f in MODEL_INTS + MODEL_FLOATS])
DataViews = namedtuple("DataViews", [f[0] for f in DATA_FLOATS])
LoopViews = namedtuple("LoopViews", [f[0] for f in LOOP_FLOATS])


def _size(shape) -> str:
    return " * ".join(f"({d})" if isinstance(d, str) else str(d) for d in shape)


_HEAD = f"    {', '.join(SIZES)} = " + ", ".join(f"head[{i}]" for i in range(len(SIZES))) + "\n"


# Each buffer as (its argument name, its table, where its first field starts).
_MODEL_PARTS = (("mi", MODEL_INTS, "HEADER"), ("mf", MODEL_FLOATS, "0"))
_DATA_PARTS = (("ws", DATA_FLOATS, "WS_HEADER"),)
_LOOP_PARTS = (("lw", LOOP_FLOATS, "LOOP_HEADER"),)
_LOOP_SIZE = "    m = int(lw[0])\n"  # the loop workspace's own size, in its header


def _views_source(name: str, args: str, parts, result: str, sizes: str = "") -> str:
    """A function ``name(args)`` that cuts each buffer of ``parts`` into the views of its table, in order, and
    returns them as the named tuple ``result`` (``head``: mi, whose header has SIZES; ``sizes``: lines that
    read more sizes)."""
    body, fields = sizes, []
    for buf, table, start in parts:
        body += f"    o = {start}\n"
        for field, shape, _ in table:
            body += f"    {field} = _view({buf}, o, ({', '.join(map(str, shape))},))\n    o += {_size(shape)}\n"
            fields.append(field)
    return f"def {name}({args}):\n    head = mi\n{_HEAD}{body}    return {result}({', '.join(fields)})\n"


def _sizes_source(name: str, parts, args: str = "head") -> str:
    """A function ``name(args)`` returning the size of each buffer of ``parts``."""
    sums = [" + ".join([start] + [_size(shape) for _, shape, _ in table]) for _, table, start in parts]
    return f"def {name}({args}):\n{_HEAD}    return {', '.join(sums)}\n"


def _compile(source: str, name: str, jit: bool = True):
    """A generated function, inlined by numba into its callers (``jit``) or plain Python.  Its code object names
    this file, so numba's cache finds it and keys it by this file's stamp (the tables above are in this file).
    A views function also gets its NumPy twin (``numpy_views``), made from the same source."""
    exec(compile(source, __file__, "exec"), globals())
    if not jit:
        return globals()[name]
    twin = dict(globals(), _view=_numpy_view)
    exec(compile(source, __file__, "exec"), twin)
    _NUMPY_TWINS[name] = twin[name]
    return njit(cache=True, inline="always")(globals()[name])


_NUMPY_TWINS: dict = {}


def _numpy_view(buf: np.ndarray, offset, shape) -> np.ndarray:
    """buf[offset : offset + prod(shape)] as a NumPy array of ``shape``: ``_view`` for Python callers."""
    return buf[offset : offset + int(np.prod(shape))].reshape(shape)


@intrinsic
def _address(typingctx, buf, offset):
    """Pointer to the element ``offset`` (flat, C order) of a C-contiguous array, taking no reference."""
    sig = types.CPointer(buf.dtype)(buf, offset)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(ary.data, [args[1]])

    return sig, codegen


@intrinsic
def _int64_address(typingctx, buf):
    """Pointer to the first element of a C-contiguous float64 array, read as int64 (mi inside mb)."""
    sig = types.CPointer(types.int64)(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.bitcast(ary.data, ir.IntType(64).as_pointer())

    return sig, codegen


@intrinsic
def _stamp(typingctx, buf):
    """The address of a C-contiguous array's data as a float64 (exact below 2⁵³): compared, never followed."""
    sig = types.float64(buf)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.uitofp(builder.ptrtoint(ary.data, ir.IntType(64)), ir.DoubleType())

    return sig, codegen


@njit(cache=True, inline="always")
def _view(buf, offset, shape):
    """buf[offset : offset + prod(shape)] as an array of ``shape`` that takes no reference."""
    return numba.carray(_address(buf, offset), shape)


@njit(cache=True, inline="always")
def leading(a, shape):
    """The first prod(shape) elements of a C-contiguous array as an array of ``shape`` that takes no reference
    (a workspace sized for the most columns, used with fewer)."""
    return numba.carray(_address(a, 0), shape)


@njit(cache=True, inline="always")
def borrow(a):
    """``a`` as a view that takes no reference, for the hot loops of the call whose argument ``a`` is."""
    return numba.carray(_address(a, 0), a.shape)


# model_views(mi, mf) -> ModelViews, data_views(ws, mi) -> DataViews: the kernels' views of the buffers;
# model_buffer_sizes(head) -> (size of mi, size of mf) and workspace_size(head), for the sizes in mi's header.
# Python callers size the buffers with the plain functions (buffer_sizes, workspace_size): making a model or its
# data need not load compiled code for them.
model_views = _compile(_views_source("model_views", "mi, mf", _MODEL_PARTS, "ModelViews"), "model_views")
data_views = _compile(_views_source("data_views", "ws, mi", _DATA_PARTS, "DataViews"), "data_views")
model_buffer_sizes = _compile(_sizes_source("model_buffer_sizes", _MODEL_PARTS), "model_buffer_sizes")
buffer_sizes = model_buffer_sizes.py_func
workspace_size = _compile(_sizes_source("workspace_size", _DATA_PARTS), "workspace_size", jit=False)
# loop_views(lw, mi) -> LoopViews and loop_workspace_size(head, m): the same for the loop workspace (Data.lw).
loop_views = _compile(_views_source("loop_views", "lw, mi", _LOOP_PARTS, "LoopViews", _LOOP_SIZE), "loop_views")
loop_workspace_size = _compile(_sizes_source("loop_workspace_size", _LOOP_PARTS, "head, m"), "loop_workspace_size",
                               jit=False)  # fmt: skip


def model_buffer(mi: np.ndarray, nf: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mb, mi, mf): one float64 buffer mb holding the integers mi (bit for bit) and then nf floats.

    The fast entry points take the model as this one array (``split_model``): each array argument
    of a numba call costs about 0.07 µs."""
    mb = np.empty(mi.size + nf)
    ints = mb[: mi.size].view(np.int64)
    ints[:] = mi
    return mb, ints, mb[mi.size :]


@njit(cache=True, inline="always")
def split_model(mb):
    """(mi, mf) of a model buffer made by ``model_buffer``, as views that take no reference."""
    ints = _int64_address(mb)
    head = numba.carray(ints, HEADER)
    ni = model_buffer_sizes(head)[0]
    return numba.carray(ints, ni), _view(mb, ni, len(mb) - ni)


@njit(cache=True, inline="always")
def stamped_for(ws, mb) -> bool:
    """Whether workspace ws was made for (stamped with) model buffer mb (``Data``)."""
    return ws[0] == _stamp(mb)


def numpy_views(views, *buffers: np.ndarray):
    """What the kernels' ``views`` (model_views, data_views, loop_views) give on ``buffers``, as NumPy views.

    The same generated source with NumPy slices for ``_view``: the offsets stay defined once, above, nothing is
    compiled for Python's views, and each view keeps its buffer alive and carries its writability."""
    return _NUMPY_TWINS[views.py_func.__name__](*buffers)


@njit(cache=True)
def articulated_slots(parents, module_bodies):
    """Where the factorization keeps each M̂_k: (slot, slot_init, number of slots).

    M̂_k is needed only from the moment its first child is eliminated until k itself is, so the
    backward sweep of eq. (20–21) keeps the open ones in a few recycled 6 x 6 slots: two for a
    chain, about one per pending branch for a tree, instead of one per body (29 MB at 100,000).
    slot_init[k] bit 1: k is a leaf and starts its own slot with M_k; bit 2: k is the first child
    of its parent to be eliminated and starts the parent's slot with M_β.
    """
    nj = len(parents)
    slot = np.full(nj, -1, dtype=np.int64)
    slot_init = np.zeros(nj, dtype=np.int64)
    free = np.empty(nj + 1, dtype=np.int64)  # a stack of released slots; free[nj] counts the slots made
    nfree = 0
    free[nj] = 0
    for j in range(len(module_bodies) - 1, -1, -1):  # the factorization's order (forward.factor_step)
        k = module_bodies[j]
        if slot[k] < 0:
            slot[k], nfree = _open_slot(free, nfree)
            slot_init[k] |= 1
        b = parents[k]
        if b > 0 and slot[b] < 0:
            slot[b], nfree = _open_slot(free, nfree)
            slot_init[k] |= 2
        free[nfree] = slot[k]  # k is eliminated: its slot is free again
        nfree += 1
    return slot, slot_init, max(free[nj], 1)


@njit(cache=True, inline="always")
def _open_slot(free, nfree):
    """A released slot if there is one, else a new one (free[-1] counts them); (slot, nfree)."""
    if nfree:
        return free[nfree - 1], nfree - 1
    free[-1] += 1
    return free[-1] - 1, nfree


@njit(cache=True)
def all_finite(x) -> bool:
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True
