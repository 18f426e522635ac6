"""Kinematic modules: the maximal serial chains of a tree (Shah, Saha & Dutt, section 1, Fig. 1).

A body starts a new module when its parent is the base or when its parent has more than
one child (a branch); otherwise it continues its parent's module.  Because every body's
parent has a smaller index, a module's first body comes after its parent module's, so
modules numbered by their first body are ordered parents-first: the inter-modular
recursions of Tables 1 and 3 visit them in that order (forward) or its reverse (backward).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Module", "decompose", "draw_module_tree", "module_arrays"]


@dataclass(frozen=True)
class Module:
    """Kinematic module M_i.

    index:  position in ``model.modules`` (0-based; the paper's M_1 is index 0).
    parent: index of the parent module M_β, ``None`` for a module on the base (M_0).
    joints: names of the module's movable joints, root to tip (links 1^i … η^i).
    nv:     degrees of freedom of the module.
    bodies: body (joint) indices of the module, root to tip.
    """

    index: int
    parent: int | None
    joints: tuple[str, ...]
    nv: int
    bodies: tuple[int, ...]


def decompose(parents: np.ndarray, names: tuple[str, ...], nvs: np.ndarray) -> tuple[Module, ...]:
    """Group bodies 1..nb (``parents[k] < k``, 0 = base) into kinematic modules."""
    nb = len(parents) - 1
    nchildren = np.zeros(nb + 1, dtype=np.int64)
    for k in range(1, nb + 1):
        nchildren[parents[k]] += 1
    module_of = np.full(nb + 1, -1, dtype=np.int64)
    members: list[list[int]] = []
    module_parent: list[int | None] = []
    for k in range(1, nb + 1):
        b = parents[k]
        if b == 0 or nchildren[b] != 1:
            module_of[k] = len(members)
            members.append([k])
            module_parent.append(None if b == 0 else int(module_of[b]))
        else:
            module_of[k] = module_of[b]
            members[module_of[k]].append(k)
    return tuple(
        Module(
            index=i,
            parent=module_parent[i],
            joints=tuple(names[k] for k in bodies),
            nv=int(sum(nvs[k] for k in bodies)),
            bodies=tuple(bodies),
        )
        for i, bodies in enumerate(members)
    )


def module_arrays(modules: tuple[Module, ...], nb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat arrays for the compiled recursions.

    module_ptr:    (s+1,) bodies of module i are module_bodies[module_ptr[i]:module_ptr[i+1]].
    module_bodies: (nb,) body indices, module by module, root to tip within a module.
    body_module:   (nb+1,) module index of each body, -1 for the base.
    """
    ptr = np.zeros(len(modules) + 1, dtype=np.int64)
    bodies = np.zeros(nb, dtype=np.int64)
    body_module = np.full(nb + 1, -1, dtype=np.int64)
    pos = 0
    for m in modules:
        for k in m.bodies:
            bodies[pos] = k
            body_module[k] = m.index
            pos += 1
        ptr[m.index + 1] = pos
    return ptr, bodies, body_module


def draw_module_tree(modules: tuple[Module, ...], base: str = "base") -> str:
    """Text drawing of the module tree, like the paper's Fig. 1 / Fig. 4."""
    children: dict[int | None, list[Module]] = {}
    for m in modules:
        children.setdefault(m.parent, []).append(m)
    lines = [f"M0 ({base})"]

    def walk(parent: int | None, prefix: str) -> None:
        kids = children.get(parent, [])
        for n, m in enumerate(kids):
            last = n == len(kids) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}M{m.index + 1} [{m.nv} dof]: {' → '.join(m.joints)}")
            walk(m.index, prefix + ("    " if last else "│   "))

    walk(None, "")
    return "\n".join(lines)
