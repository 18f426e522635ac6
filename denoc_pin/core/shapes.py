"""Collision shapes, a robot's collisions, and the ground: what the contact detection reads.

A shape is given in its own frame (a capsule's and a cylinder's axis is z, centred on the origin, as in URDF, SDF and
MJCF); a :class:`Collision` fixes one on a body at a placement in the body frame.  ``pack_collisions`` lays the
collisions out for the compiled detection, one row each, in the columns ``COLLISION_ROW`` declares once, the meshes'
support vertices in one array beside them.

Which pairs may touch (``may_touch``): two collisions on different bodies that are not parent and child (but for a
free flyer and the world), not a pair the model excludes (``Model.excluded_collisions``), whose bits match as
MuJoCo's ``contype``/``conaffinity`` do: (group_a & mask_b) or (group_b & mask_a).  The ground has group and
mask 1, so a collision with group 0 and mask 0 (a drawing-only geom) touches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tables import COLLISION_ROW, columns

__all__ = ["COLLISION_ROW", "SHAPE_CODES", "Box", "Capsule", "Collision", "Cylinder", "Ground", "Mesh", "Shape",
           "Sphere", "collisions_named", "contact_frame", "may_touch", "pack_collisions", "pairs_between",
           "touches_ground", "unique_name"]  # fmt: skip

SPHERE, BOX, CAPSULE, CYLINDER, MESH = range(5)


def _positive(what: str, x) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a positive number, got {x!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be a positive number, got {x}")
    return x


CHUNK = 16
"""Vertices a chunk: a mesh's vertices are packed in a spatial order (``_spatial_order``), CHUNK consecutive ones
inside one bounding sphere, so that the detection skips a chunk clear of the plane with one test."""


def _spatial_order(V: np.ndarray) -> np.ndarray:
    """An order of the points in which neighbours in space are mostly neighbours in the list: halved at the median
    of the longest extent, recursively (a k-d tree's leaves, left to right)."""
    if len(V) <= CHUNK:
        return np.arange(len(V))
    axis = int(np.argmax(np.ptp(V, axis=0)))
    order = np.argsort(V[:, axis], kind="stable")
    half = (len(V) // 2 + CHUNK - 1) // CHUNK * CHUNK  # whole chunks on the left
    left, right = order[:half], order[half:]
    return np.r_[left[_spatial_order(V[left])], right[_spatial_order(V[right])]]


class Shape:
    """A collision shape in its own frame; ``code`` is its ``SHAPE_CODES`` entry, ``params`` its three numbers."""

    code: int = -1

    @property
    def params(self) -> tuple[float, float, float]:
        raise NotImplementedError

    def reach(self) -> float:
        """The radius of the shape's bounding sphere about its origin."""
        raise NotImplementedError

    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre, half extents) of the shape's bounding box in its own frame."""
        r, h, _ = self.params
        return np.zeros(3), np.array([r, r, r + h if self.code == CAPSULE else (h if self.code == CYLINDER else r)])

    def support_vertices(self) -> np.ndarray:
        """(n, 3): the points of the shape that can touch a plane first (a mesh's convex hull); empty for the
        closed-form shapes, whose detection is written per shape."""
        return np.zeros((0, 3))

    def support_chunks(self) -> np.ndarray:
        """(⌈n / CHUNK⌉, 4): the bounding sphere (centre in the shape frame, radius) of each CHUNK consecutive
        ``support_vertices``."""
        return np.zeros((0, 4))


@dataclass(frozen=True)
class Sphere(Shape):
    """A sphere of ``radius`` [m] about the origin."""

    radius: float
    code = SPHERE

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Sphere radius", self.radius))

    @property
    def params(self):
        return (self.radius, 0.0, 0.0)

    def reach(self) -> float:
        return self.radius


@dataclass(frozen=True)
class Box(Shape):
    """A box of full edge lengths ``size`` = (x, y, z) [m], centred on the origin (URDF's and SDF's ``size``; MJCF's
    ``size`` is half of it)."""

    size: tuple
    code = BOX

    def __post_init__(self):
        s = np.asarray(self.size, dtype=float).reshape(-1)
        if s.shape != (3,):
            raise ValueError(f"Box size is three edge lengths (x, y, z), got {self.size!r}")
        object.__setattr__(self, "size", tuple(_positive("Box edge length", x) for x in s))

    @property
    def params(self):
        return tuple(0.5 * x for x in self.size)

    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(3), np.array(self.params)

    def reach(self) -> float:
        return float(np.linalg.norm(self.params))


@dataclass(frozen=True)
class Capsule(Shape):
    """A capsule: a cylinder of ``radius`` and ``length`` along z (the distance between the centres of its end
    caps) with hemispherical caps."""

    radius: float
    length: float
    code = CAPSULE

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Capsule radius", self.radius))
        object.__setattr__(self, "length", _positive("Capsule length", self.length))

    @property
    def params(self):
        return (self.radius, 0.5 * self.length, 0.0)

    def reach(self) -> float:
        return self.radius + 0.5 * self.length


@dataclass(frozen=True)
class Cylinder(Shape):
    """A cylinder of ``radius`` and ``length`` along z, centred on the origin."""

    radius: float
    length: float
    code = CYLINDER

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Cylinder radius", self.radius))
        object.__setattr__(self, "length", _positive("Cylinder length", self.length))

    @property
    def params(self):
        return (self.radius, 0.5 * self.length, 0.0)

    def reach(self) -> float:
        return float(np.hypot(self.radius, 0.5 * self.length))


class Mesh(Shape):
    """A triangle mesh read from ``path`` (STL, OBJ, DAE, PLY: what trimesh reads) and scaled by ``scale`` (a number
    or three, non-zero; a negative one mirrors).  Its contacts come from the vertices of its convex hull
    (``vertices``, (n, 3), in the mesh frame), read at their first use (a robot file's meshes cost nothing until a
    contact needs them); ``vertices=`` gives them directly instead of a file."""

    code = MESH

    def __init__(self, path=None, scale=1.0, vertices=None):
        sc = np.broadcast_to(np.asarray(scale, dtype=float), (3,)).copy()
        if not (np.isfinite(sc).all() and (sc != 0).all()):  # a negative scale mirrors (talos's right arm)
            raise ValueError(f"Mesh scale must be finite and non-zero, got {sc.tolist()}")
        self.path = None if path is None else str(path)
        self.scale = tuple(float(x) for x in sc)
        self._vertices = None
        if vertices is None:
            if path is None:
                raise ValueError("Mesh needs a file path or vertices=")
            if not Path(path).is_file():
                raise ValueError(f"{path}: no such mesh file")
        else:
            V = np.asarray(vertices, dtype=float)
            if V.ndim != 2 or V.shape[1] != 3 or len(V) == 0 or not np.isfinite(V).all():
                raise ValueError(f"Mesh vertices must be a finite (n, 3) array, got shape {V.shape}")
            self._vertices = self._finish(V)

    def _finish(self, V: np.ndarray) -> np.ndarray:
        V = _hull_vertices(V) * np.asarray(self.scale)
        V = np.ascontiguousarray(V[_spatial_order(V)])  # neighbours in space are neighbours in the list
        V.setflags(write=False)
        return V

    @property
    def vertices(self) -> np.ndarray:
        if self._vertices is None:
            self._vertices = self._finish(_read_vertices(Path(self.path)))
        return self._vertices

    def __repr__(self) -> str:
        what = repr(self.path) if self.path is not None else f"{len(self.vertices)} vertices"
        return f"Mesh({what}, scale={self.scale})"

    @property
    def params(self):
        half = 0.5 * (self.vertices.max(axis=0) - self.vertices.min(axis=0))
        return tuple(float(h) for h in half)

    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.vertices.min(axis=0), self.vertices.max(axis=0)
        return 0.5 * (lo + hi), 0.5 * (hi - lo)

    def support_vertices(self) -> np.ndarray:
        return self.vertices

    def support_chunks(self) -> np.ndarray:
        if getattr(self, "_chunks", None) is None:
            V = self.vertices
            spheres = []
            for j in range(0, len(V), CHUNK):
                centre = V[j : j + CHUNK].mean(axis=0)
                spheres.append(np.r_[centre, np.sqrt(((V[j : j + CHUNK] - centre) ** 2).sum(axis=1).max())])
            self._chunks = np.array(spheres).reshape(-1, 4)
        return self._chunks


def _read_vertices(path: Path) -> np.ndarray:
    import trimesh

    if not path.is_file():
        raise ValueError(f"{path}: no such mesh file")
    try:
        mesh = trimesh.load(str(path), force="mesh", process=False)
    except Exception as err:  # trimesh raises what its readers raise
        raise ValueError(f"{path}: not a readable mesh ({type(err).__name__}: {err})") from None
    V = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
    if V.ndim != 2 or len(V) == 0 or not np.isfinite(V).all():
        raise ValueError(f"{path}: the mesh has no finite vertices")
    return V


def _hull_vertices(V: np.ndarray) -> np.ndarray:
    """The vertices of the convex hull (the only ones a plane can touch first); all of them if it is flat."""
    if len(V) < 5:
        return V.copy()
    from scipy.spatial import ConvexHull, QhullError

    try:
        return V[ConvexHull(V).vertices].copy()
    except QhullError:  # a flat or degenerate mesh: every vertex may touch
        return np.unique(V, axis=0)


SHAPE_CODES = {"sphere": SPHERE, "box": BOX, "capsule": CAPSULE, "cylinder": CYLINDER, "mesh": MESH}


@dataclass(frozen=True, eq=False)
class Collision:
    """One collision shape fixed on a body: ``shape`` at (``rotation``, ``translation``) in the body frame.

    name: unique in the model; link: the link (frame) it was given on; body: the body that carries it; group and
    mask: MuJoCo's ``contype`` and ``conaffinity`` bits (``may_touch``); friction: μ against another collision
    (a pair takes the larger of its two, as MuJoCo); against the ground the ground's friction holds; ground: it
    touches the ground whatever its bits (an MJCF ``<pair>`` with the world's plane)."""

    name: str
    link: str
    body: int
    shape: Shape
    rotation: np.ndarray
    translation: np.ndarray
    group: int = 1
    mask: int = 1
    friction: float = 1.0
    ground: bool = False


def unique_name(name: str, taken: set) -> str:
    """``name``, with "_" appended until no collision in ``taken`` has it; the name returned is added to ``taken``
    (a file may give two collisions one name, a model may not)."""
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def collisions_named(collisions, x: str) -> list[str]:
    """The names of the collisions a name stands for: the collision so named, else every collision on link x."""
    return [c.name for c in collisions if c.name == x] or [c.name for c in collisions if c.link == x]


def pairs_between(collisions, a: str, b: str, links) -> list[tuple[str, str]]:
    """The pairs of collision names between a and b, each a collision's name or a link's (``collisions_named``); a
    ValueError for a name that is neither a collision nor one of ``links``."""
    named = []
    for x in (a, b):
        own = collisions_named(collisions, x)
        if not own and x not in links:
            raise ValueError(f"{x!r} is neither a collision nor a link; the collisions are "
                             f"{', '.join(c.name for c in collisions) or 'none'}")  # fmt: skip
        named.append(own)
    return [(i, j) for i in named[0] for j in named[1] if i != j]


def touches_ground(c: Collision) -> bool:
    """Whether the collision may touch the ground: it moves (not on body 0) and is paired with the ground
    (``Collision.ground``) or its group or mask has bit 1."""
    return c.body != 0 and bool(c.ground or (c.group & 1) or (c.mask & 1))


def may_touch(a: Collision, b: Collision, parents, loose=(), excluded=()) -> bool:
    """Whether the pair may touch: different bodies, not parent and child, not an excluded pair (sorted names),
    matching bits.  loose: bodies whose joint leaves them free of their parent (a free flyer's: a box dropped on a
    table fixed to the world touches it, as MuJoCo lets a free body touch the world)."""
    if a.body == b.body or tuple(sorted((a.name, b.name))) in excluded:
        return False
    if (parents[a.body] == b.body and a.body not in loose) or (parents[b.body] == a.body and b.body not in loose):
        return False
    return bool((a.group & b.mask) or (b.group & a.mask))


COL = columns(COLLISION_ROW)
"""Each column's start in a packed collision row (``core.tables.COLLISION_ROW``), and its "width"."""
COLLISION_WIDTH = COL["width"]


def pack_collisions(collisions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows (n, COLLISION_WIDTH), vertices (m, 3), chunks (k, 4)): the collisions as the compiled detection reads
    them.  A mesh's vertices are rows vstart … vstart + vcount − 1, in a spatial order; chunk j of it (rows cstart + j)
    is the sphere (centre in the shape frame, radius) holding its vertices vstart + CHUNK j … + CHUNK − 1."""
    rows = np.zeros((len(collisions), COLLISION_WIDTH))
    verts, chunks = [np.zeros((0, 3))], [np.zeros((0, 4))]
    start = cstart = 0
    for i, c in enumerate(collisions):
        r = rows[i]
        r[COL["body"]] = c.body
        r[COL["code"]] = c.shape.code
        r[COL["params"] : COL["params"] + 3] = c.shape.params
        r[COL["R"] : COL["R"] + 9] = np.asarray(c.rotation, dtype=float).reshape(9)
        r[COL["p"] : COL["p"] + 3] = c.translation
        V = c.shape.support_vertices()
        r[COL["vstart"]], r[COL["vcount"]], r[COL["cstart"]] = start, len(V), cstart
        r[COL["reach"]] = np.sqrt((V**2).sum(axis=1).max()) if len(V) else c.shape.reach()
        r[COL["ground"]] = 1.0 if touches_ground(c) else 0.0
        r[COL["box_c"] : COL["box_c"] + 3], r[COL["box_h"] : COL["box_h"] + 3] = c.shape.bounding_box()
        chunks.append(c.shape.support_chunks())
        verts.append(V)
        start += len(V)
        cstart += -(-len(V) // CHUNK)
    return rows, np.ascontiguousarray(np.concatenate(verts)), np.ascontiguousarray(np.concatenate(chunks))


@dataclass(frozen=True)
class Ground:
    """A rigid plane {x : n·x = height} (n: ``normal``, unit, pointing out of the ground); a tilted normal makes an
    incline.  friction: Coulomb's μ; restitution: e, the ratio of the normal velocities after and before an impact."""

    height: float = 0.0
    normal: tuple = (0.0, 0.0, 1.0)
    friction: float = 1.0
    restitution: float = 0.0

    def __post_init__(self):
        n = np.asarray(self.normal, dtype=float).reshape(-1)
        if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) < 1e-12:
            raise ValueError(f"Ground normal must be a non-zero 3-vector, got {self.normal!r}")
        object.__setattr__(self, "normal", tuple(n / np.linalg.norm(n)))
        for what, x, lo, hi in (("height", self.height, -np.inf, np.inf), ("friction", self.friction, 0.0, np.inf),
                                ("restitution", self.restitution, 0.0, 1.0)):  # fmt: skip
            try:
                x = float(x)
            except (TypeError, ValueError):
                raise ValueError(f"Ground {what} must be a number, got {x!r}") from None
            if not (np.isfinite(x) and lo <= x <= hi):
                raise ValueError(f"Ground {what} must be a finite number in [{lo}, {hi}], got {x}")
            object.__setattr__(self, what, x)

    @property
    def frame(self) -> np.ndarray:
        """(3, 3): the contact frame's axes as columns (t₁, t₂, n), the same for every contact on this ground."""
        return contact_frame(self.normal)


def contact_frame(n) -> np.ndarray:
    """(3, 3): a contact frame's axes as columns (t₁, t₂, n) about the unit normal n: t₁ is the world's x (or y, for
    n near x) laid on the plane, so that t₁ = x, t₂ = y on flat ground."""
    n = np.asarray(n, dtype=float)
    e = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = e - (e @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, np.cross(n, t1), n])
