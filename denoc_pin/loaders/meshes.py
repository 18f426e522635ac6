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

__all__ = ["MESH_INERTIA", "mesh_mass_properties", "read_mesh"]

MESH_INERTIA = ("legacy", "exact", "convex", "shell")
"""MJCF's ``<mesh inertia>`` values, MuJoCo's default first."""

MIN_MEASURE = 1e-15  # MuJoCo's mjMINVAL: a mesh of no volume (or area) has no inertia


def read_mesh(path: Path, scale=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3), faces (m, 3)) of an STL or OBJ file through trimesh, unprocessed (MuJoCo's triangles as
    written), read in single precision as MuJoCo reads them, then scaled.  Raises ``ValueError`` (or ``OSError``) on an
    unreadable file."""
    import trimesh  # through yourdfpy; only a mesh geom with mass needs it

    mesh = trimesh.load(str(path), force="mesh", process=False)
    V = np.asarray(mesh.vertices, dtype=np.float32).astype(float)
    F = np.asarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
    scale = np.asarray(scale, dtype=float)
    if np.any(scale != 1.0):
        V = V * scale
    if np.prod(scale) < 0:  # a mirroring scale: MuJoCo reverses the faces so they stay outward
        F = F[:, [0, 2, 1]]
    return V, F


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
