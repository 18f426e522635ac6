"""The mass properties of a triangle mesh as MuJoCo's compiler computes them for a mesh geom (MJCF ``<mesh inertia>``).

MuJoCo integrates over tetrahedra: the volume and centre of mass over pyramids from the area-weighted centroid of the
faces, the second moments over pyramids from that centre of mass.  Its four modes differ in the volumes they sum:

- ``legacy`` (MuJoCo's default): each pyramid's volume taken positive, so a concave or open mesh counts its folds twice;
- ``exact``: signed volumes, the true solid of a closed, consistently oriented mesh;
- ``convex``: the signed volumes of the convex hull (qhull, as MuJoCo);
- ``shell``: the mass on the surface, each triangle weighted by its area.

A tetrahedron with one vertex at the origin and the others at a, b, c of volume V has second moments
∫ x xᵀ dV = V/20 (a aᵀ + b bᵀ + c cᵀ + s sᵀ), s = a + b + c; a triangle of area A has A/12 (…) over its surface.
MuJoCo reads vertices in single precision; so does ``read_mesh``, so that the results agree with it to rounding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.spatial import quaternion_rotation

__all__ = ["MESH_INERTIA", "mesh_mass_properties", "read_mesh", "read_obj", "transform_vertices"]

MESH_INERTIA = ("legacy", "exact", "convex", "shell")
"""MJCF's ``<mesh inertia>`` values, MuJoCo's default first."""

MIN_MEASURE = 1e-15  # MuJoCo's mjMINVAL: a mesh of no volume (or area) has no inertia


def read_mesh(path: Path, scale=(1.0, 1.0, 1.0), refpos=(0.0, 0.0, 0.0), refquat=(1.0, 0.0, 0.0, 0.0)):
    """(vertices (n, 3), faces (m, 3)) of an STL (through trimesh, unprocessed: MuJoCo's triangles as written) or
    OBJ file (``read_obj``), read in single precision as MuJoCo reads them, then moved as MuJoCo's ``refpos``,
    ``refquat`` (w, x, y, z) and ``scale`` move them: v ← diag(scale) R(refquat)ᵀ (v − refpos).  Raises
    ``ValueError`` (or ``OSError``) on an unreadable file."""
    if Path(path).suffix.lower() == ".obj":
        V, F = read_obj(Path(path))
    elif Path(path).suffix.lower() == ".msh":
        V, F = read_msh(Path(path))
    else:
        import trimesh  # through yourdfpy; only a mesh geom with mass needs it

        mesh = trimesh.load(str(path), force="mesh", process=False)
        V = np.asarray(mesh.vertices, dtype=np.float32).astype(float)
        F = np.asarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
    return transform_vertices(V, scale, refpos, refquat), (F[:, [0, 2, 1]] if np.prod(scale) < 0 else F)


def read_msh(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's binary MSH mesh (its XML reference, asset/mesh): four int32 counts (vertices, normals, texture
    coordinates, faces), then float32 vertices (3 each), normals (3), texture coordinates (2) and int32 faces (3),
    little-endian, nothing after; faces 0 means the vertices' convex hull.  A size or index that does not fit is a
    ValueError."""
    data = path.read_bytes()
    if len(data) < 16:
        raise ValueError(f"an MSH file starts with 4 int32 counts; it has {len(data)} bytes")
    nv, nn, nt, nf = (int(x) for x in np.frombuffer(data[:16], dtype="<i4"))
    expected = 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf)
    if min(nv, nn, nt, nf) < 0 or nv < 4 or len(data) != expected:
        raise ValueError(f"MSH counts (vertices {nv}, normals {nn}, texcoords {nt}, faces {nf}) need {expected} "
                         f"bytes and at least 4 vertices; the file has {len(data)}")  # fmt: skip
    V = np.frombuffer(data, dtype="<f4", count=3 * nv, offset=16).astype(float).reshape(-1, 3)
    F = np.frombuffer(data, dtype="<i4", count=3 * nf, offset=expected - 12 * nf).astype(np.int64).reshape(-1, 3)
    if F.size and (F.min() < 0 or F.max() >= nv):
        raise ValueError(f"an MSH face indexes vertex {int(F.max() if F.max() >= nv else F.min())} of {nv}")
    return V, (F if nf else convex_hull_faces(V))


def read_obj(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The ``v`` and ``f`` lines of an OBJ file, triangulated as MuJoCo's reader (tinyobjloader) does: a quad along
    its shorter diagonal (a non-planar quad's two splits differ in volume); a larger polygon as a fan from its first
    vertex, which is tinyobjloader's ear clipping wherever the polygon is planar and convex.  Indices may be
    negative (counted back from the last vertex)."""
    V, F = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            t = line.split()
            if not t:
                continue
            if t[0] == "v":
                V.append([float(x) for x in t[1:4]])
            elif t[0] == "f":
                idx = [int(x.split("/")[0]) for x in t[1:]]
                idx = [i - 1 if i > 0 else len(V) + i for i in idx]
                if len(idx) == 4:
                    p = np.float32([V[i] for i in idx])
                    d02, d13 = np.sum((p[2] - p[0]) ** 2), np.sum((p[3] - p[1]) ** 2)
                    a, b, c, d = idx
                    F += [[a, b, c], [a, c, d]] if d02 < d13 else [[a, b, d], [b, c, d]]
                else:
                    F += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
    V = np.asarray(V, dtype=np.float32).astype(float).reshape(-1, 3)
    F = np.asarray(F, dtype=np.int64).reshape(-1, 3)
    if F.size and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError("a face names a vertex that does not exist")
    return V, F


def transform_vertices(V: np.ndarray, scale=(1.0, 1.0, 1.0), refpos=(0.0, 0.0, 0.0), refquat=(1.0, 0.0, 0.0, 0.0)):
    """MuJoCo's mesh transformations in its order: translate by −refpos, rotate by refquatᵀ, scale."""
    refpos, refquat, scale = (np.asarray(x, dtype=float) for x in (refpos, refquat, scale))
    if np.any(refpos != 0.0):
        V = V - refpos
    if np.any(refquat != (1.0, 0.0, 0.0, 0.0)):
        w, x, y, z = refquat / np.linalg.norm(refquat)
        V = V @ quaternion_rotation(x, y, z, w)  # row vectors: Rᵀ v for each
    if np.any(scale != 1.0):
        V = V * scale
    return V


def convex_hull_faces(V: np.ndarray) -> np.ndarray:
    """The outward triangles of the convex hull of the vertices (qhull, as MuJoCo)."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(V)
    F = hull.simplices.copy()
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - V[hull.vertices].mean(axis=0)) < 0
    F[inward] = F[inward][:, [0, 2, 1]]
    return F


def mesh_mass_properties(V: np.ndarray, F: np.ndarray, mode: str = "legacy") -> tuple[float, np.ndarray, np.ndarray]:
    """(measure, centre of mass, inertia about it per unit density) of a mesh in MuJoCo's ``mode``: the measure is
    the volume (the area for ``shell``), so mass = density · measure and the inertia = density · the returned one.
    Raises ``ValueError`` for a mesh of no volume (or area)."""
    if mode == "convex":
        F = convex_hull_faces(V)
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    n2 = np.cross(b - a, c - a)  # twice the area times the unit normal
    area = 0.5 * np.linalg.norm(n2, axis=1)
    centre = (a + b + c) / 3.0
    if area.sum() < MIN_MEASURE:
        raise ValueError("the mesh's surface area is too small")
    facecen = area @ centre / area.sum()

    def weights(points: np.ndarray, apex: np.ndarray) -> np.ndarray:
        if mode == "shell":
            return area
        w = np.einsum("ij,ij->i", points - apex, n2) / 6.0  # the pyramid from apex over each face
        return np.abs(w) if mode == "legacy" else w

    w = weights(centre, facecen)
    total = w.sum()
    if total < MIN_MEASURE:
        raise ValueError("the mesh's volume is negative (its faces point inward)" if total < 0 else
                         "the mesh's volume is too small (inertia=\"shell\" puts the mass on its surface)")  # fmt: skip
    com = (w @ (0.75 * centre + 0.25 * facecen)) / total
    a, b, c = a - com, b - com, c - com
    w = weights((a + b + c) / 3.0, np.zeros(3))
    s = a + b + c
    k = 12.0 if mode == "shell" else 20.0
    C = np.einsum("i,ij,ik->jk", w / k, a, a) + np.einsum("i,ij,ik->jk", w / k, b, b)
    C += np.einsum("i,ij,ik->jk", w / k, c, c) + np.einsum("i,ij,ik->jk", w / k, s, s)
    measure = float(w.sum())
    return measure, com, np.trace(C) * np.eye(3) - C
