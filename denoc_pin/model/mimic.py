"""Pinocchio 4's reduced mimic model: a tree whose mimic joints have no coordinate of their own.

A mimic joint j follows its reference r, θ_j = m θ_r + o (URDF's ``<mimic joint multiplier offset>``).  The reduced
coordinates drop θ_j; the tree's are recovered by a constant linear map, so every quantity of the reduced model is the
tree's, mapped:

    q_tree = E(q)  (θ_j = m θ_r + o, every other entry copied),   q̇_tree = G q̇,   q̈_tree = G q̈,

with G (nv_tree, nv) the column of the identity for each kept coordinate and m in row j, column r.  The principle of
virtual work gives τ = Gᵀ τ_tree, the GIM Gᵀ I G, a Jacobian J_tree G: the natural orthogonal complement N of the
tree times G is the reduced model's (Shah, Saha, Dutt, eq. 9).  :class:`MimicModel` holds the tree and the map; the
algorithms that take it (``MIMIC_FUNCTIONS``) run on the tree and map in and out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .data import Data
from .model import Model, ModelError

__all__ = ["MIMIC_FUNCTIONS", "MimicModel", "NotOnMimicModel"]

MIMIC_FUNCTIONS = (
    "neutral", "integrate", "difference", "normalize", "random_configuration",
    "inverse_dynamics", "nonlinear_effects", "forward_dynamics", "gim", "gim_inverse",
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives",
    "forward_kinematics", "frame_placement", "frame_placements", "frame_velocity", "frame_acceleration",
    "frame_jacobian", "joint_jacobian", "joint_jacobians", "frame_jacobian_time_variation",
    "center_of_mass", "com_jacobian", "centroidal_momentum", "centroidal_map", "centroidal_map_time_variation",
)  # fmt: skip
"""The public functions that take a :class:`MimicModel`."""


class NotOnMimicModel(AttributeError):
    """A field or function of a tree :class:`Model` asked of a :class:`MimicModel`."""


class MimicModel:
    """A tree with mimic joints reduced away, in Pinocchio 4's layout (``buildModelFromUrdf(path, mimic=True)``).

    Fields:

    - ``tree``: the :class:`Model` with every joint a coordinate (``load_urdf(path)``).
    - ``mimics``: tuple of (joint, reference, multiplier, offset): θ_joint = multiplier · θ_reference + offset.
    - ``nq``, ``nv``: the reduced sizes; ``idx_q``, ``idx_v``, ``nqs``, ``nvs``: (njoints,) Pinocchio's layout (a
      mimic joint has its reference's ``idx_q``/``idx_v`` and ``nqs = nvs = 0``).
    - ``G``: (tree.nv, nv) the velocity map q̇_tree = G q̇; ``kept_q``, ``kept_v``: the tree's entries that are
      reduced coordinates, in order.
    - ``names``, ``njoints``, ``frames``, ``name``, ``gravity``, the limits: those of the tree (limits reduced).

    ``create_data()`` gives the tree's :class:`Data`: its fields (``oMi``, ``oMf``, …) are in the tree's layout, which
    has Pinocchio's njoints and frames.  The functions in ``MIMIC_FUNCTIONS`` take this model; the others raise, naming
    them (for loops and the rest, ``load_urdf(path, mimic=True)`` keeps the coordinates and adds coupling rows).
    """

    def __init__(self, tree: Model, mimics: Sequence[tuple[str, str, float, float]]):
        self.tree = tree
        rules: dict[int, tuple[int, float, float]] = {}
        for joint, reference, multiplier, offset in mimics:
            j, r = tree.joint_id(joint), tree.joint_id(reference)
            for k in (j, r):
                if tree.nqs[k] != 1 or tree.nvs[k] != 1:
                    raise ModelError(f"mimic joint {joint!r} -> {reference!r}: joint {tree.names[k]!r} has "
                                     f"nq = {tree.nqs[k]}; a reduced mimic joins joints of one coordinate θ "
                                     "(revolute, prismatic, helical)")  # fmt: skip
            if j in rules:
                raise ModelError(f"joint {joint!r} mimics two joints")
            rules[j] = (r, float(multiplier), float(offset))
        for j in list(rules):  # a mimic of a mimic follows the chain: θ_j = m (m' θ_r' + o') + o
            seen = {j}
            r, m, o = rules[j]
            while r in rules:
                if r in seen:
                    raise ModelError(f"mimic joints form a cycle through {tree.names[j]!r}")
                seen.add(r)
                r2, m2, o2 = rules[r]
                r, m, o = r2, m * m2, m * o2 + o
            rules[j] = (r, m, o)
        self.mimics = tuple((tree.names[j], tree.names[r], m, o) for j, (r, m, o) in sorted(rules.items()))

        nj = tree.njoints
        idx_q, idx_v = np.zeros(nj, dtype=np.int64), np.zeros(nj, dtype=np.int64)
        nqs, nvs = tree.nqs.copy(), tree.nvs.copy()
        kept_q: list[int] = []
        kept_v: list[int] = []
        for k in range(1, nj):
            if k in rules:
                nqs[k] = nvs[k] = 0
                continue
            idx_q[k], idx_v[k] = len(kept_q), len(kept_v)
            kept_q += range(tree.idx_q[k], tree.idx_q[k] + tree.nqs[k])
            kept_v += range(tree.idx_v[k], tree.idx_v[k] + tree.nvs[k])
        for j, (r, _, _) in rules.items():
            idx_q[j], idx_v[j] = idx_q[r], idx_v[r]
        self.nq, self.nv = len(kept_q), len(kept_v)
        self.idx_q, self.idx_v, self.nqs, self.nvs = idx_q, idx_v, nqs, nvs
        self.kept_q, self.kept_v = np.array(kept_q, dtype=np.int64), np.array(kept_v, dtype=np.int64)

        # E(q) = q[q_source] · q_scale + q_offset; G = the same map on velocities, as a matrix.
        q_source, q_scale, q_offset = np.zeros(tree.nq, np.int64), np.ones(tree.nq), np.zeros(tree.nq)
        q_source[self.kept_q] = np.arange(self.nq)
        G = np.zeros((tree.nv, self.nv))
        G[self.kept_v, np.arange(self.nv)] = 1.0
        for j, (r, m, o) in rules.items():
            q_source[tree.idx_q[j]], q_scale[tree.idx_q[j]], q_offset[tree.idx_q[j]] = idx_q[r], m, o
            G[tree.idx_v[j], idx_v[r]] = m
        self.q_source, self.q_scale, self.q_offset, self.G = q_source, q_scale, q_offset, G
        c = np.zeros((len(rules), tree.nv))  # the coupling rows: q̈_j − m q̈_r = 0 on the tree, C G = 0
        for i, (j, (r, m, _)) in enumerate(sorted(rules.items())):
            c[i, tree.idx_v[j]], c[i, tree.idx_v[r]] = 1.0, -m
        self.coupling_rows = c
        for a in (idx_q, idx_v, nqs, nvs, self.kept_q, self.kept_v, q_source, q_scale, q_offset, G, c):
            a.flags.writeable = False

        self.name, self.names, self.njoints, self.gravity = tree.name, tree.names, nj, tree.gravity
        self.lower_position_limit = tree.lower_position_limit[self.kept_q]
        self.upper_position_limit = tree.upper_position_limit[self.kept_q]
        self.velocity_limit = tree.velocity_limit[self.kept_v]
        self.effort_limit = tree.effort_limit[self.kept_v]
        for a in (self.lower_position_limit, self.upper_position_limit, self.velocity_limit, self.effort_limit):
            a.flags.writeable = False
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, key, value):
        if self.__dict__.get("_frozen"):
            raise AttributeError(f"a MimicModel is immutable (set {key!r}); build a new one from an edited tree")
        object.__setattr__(self, key, value)

    # ---- the tree's names and frames --------------------------------------------------------------------------
    @property
    def frames(self):
        return self.tree.frames

    @property
    def nframes(self) -> int:
        return self.tree.nframes

    def frame_id(self, name: str, type: str | None = None) -> int:
        return self.tree.frame_id(name, type)

    def frame_index(self, frame) -> int:
        return self.tree.frame_index(frame)

    def joint_id(self, name: str) -> int:
        return self.tree.joint_id(name)

    def create_data(self) -> Data:
        """The tree's workspace (its fields in the tree's layout)."""
        return self.tree.create_data()

    # ---- the maps ---------------------------------------------------------------------------------------------
    def expand_q(self, q, what: str = "q") -> np.ndarray:
        """E(q): the tree's configuration(s) (nq_tree,) or (B, nq_tree) from reduced q (nq,), (nq, 1) or (B, nq)."""
        q = self.check_reduced(q, self.nq, what)
        return q[..., self.q_source] * self.q_scale + self.q_offset

    def expand_v(self, v, what: str = "v") -> np.ndarray:
        """G v: the tree's velocities (or accelerations) from reduced ones, (nv,) or (B, nv)."""
        return self.check_reduced(v, self.nv, what) @ self.G.T

    def reduce_q(self, q_tree: np.ndarray) -> np.ndarray:
        """The reduced coordinates of the tree's q (its kept entries)."""
        return q_tree[..., self.kept_q]

    def reduce_v(self, v_tree: np.ndarray) -> np.ndarray:
        """The reduced entries of a tree velocity that is G v (its kept entries)."""
        return v_tree[..., self.kept_v]

    @staticmethod
    def check_reduced(x, n: int, what: str) -> np.ndarray:
        """``x`` as a float array of reduced entries, (n,) or a batch (B, n) ((n, 1) is taken as (n,)), or
        ``ValueError`` naming ``what`` and the expected shape."""
        a = np.asarray(x, dtype=np.float64)
        if a.shape == (n, 1):
            a = a[:, 0]
        if a.ndim not in (1, 2) or a.shape[-1] != n:
            raise ValueError(f"{what} must have shape ({n},) for this reduced mimic model (or (B, {n}) for a batch), "
                             f"got {a.shape} (wrong argument size: expected {n}, got {a.size})")  # fmt: skip
        return a

    def refusal(self, what: str) -> str:
        """Why ``what`` does not take this model, and what does."""
        return (f"a reduced mimic model (load_urdf(path, mimic='reduce')) has no {what}: the functions that take it "
                f"are {', '.join(MIMIC_FUNCTIONS)}; for the others use its tree (model.tree, with "
                "q = model.expand_q(q)) or load_urdf(path, mimic=True), which keeps the mimic coordinates and adds "
                "coupling rows")  # fmt: skip

    def __getattr__(self, key: str):
        if key.startswith("__"):
            raise AttributeError(key)
        raise NotOnMimicModel(self.refusal(repr(key)))

    def __repr__(self) -> str:
        return (f"<denoc_pin.MimicModel {self.name!r}: nq={self.nq}, nv={self.nv}, {len(self.mimics)} mimic joints "
                f"reduced from nq={self.tree.nq}>")  # fmt: skip
