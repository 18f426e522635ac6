"""Loop joints resolved onto the bodies of a tree, before the :class:`Model` is made: the builder, the loaders
and the edits call ``resolve_loops`` and hand the result to ``Model(loops=…)``."""

from __future__ import annotations

import math

import numpy as np

from ..core.cuts import CUT_WITH_AXIS, Coupling, Cut, ResolvedLoops, cut_rows, perpendicular_pair
from ..core.joints import JOINTS, ONE_DOF
from ..model import Frame, ModelError, placement_pair
from .types import LOOP_TYPES, JointCoupling, LoopJoint

__all__ = ["resolve_loops"]


def _unit(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.isfinite(a).all() or not np.linalg.norm(a) > 1e-12:
        raise ModelError(f"{what} must be a non-zero finite 3-vector, got {np.asarray(x).tolist()}")
    return a / np.linalg.norm(a)


def _named(model: str, items, cls: type, kind: str, seen: set):
    """(item, what) for each of ``items``, checked to be ``cls`` (ModelError otherwise) and named apart from every
    name in ``seen`` (the loop joints' and couplings' names share one space: their constraint rows)."""
    for item in items:
        if not isinstance(item, cls):
            raise ModelError(f"model {model!r}: {kind}s must be dp.{cls.__name__}, got {type(item).__name__}")
        if item.name in seen:
            raise ModelError(f"model {model!r}: two loop joints or couplings named {item.name!r}")
        seen.add(item.name)
        yield item, f"model {model!r}: {kind} {item.name!r}"


def _member(table: dict, key, what: str, role: str, kind: str):
    """``table[key]``, or a ModelError that names ``key`` and lists the valid ones (the first 30)."""
    if key not in table:
        names = sorted(table) if kind == "link" else list(table)
        listed = ", ".join(names[:30]) + (f", … ({len(names)} {kind}s)" if len(names) > 30 else "")
        raise ModelError(f"{what}: {role} {key!r} is not a {kind} of the model; {kind}s are: {listed}")
    return table[key]


def resolve_couplings(name: str, joint_names, kinds, couplings, taken=()) -> tuple[Coupling, ...]:
    """Check joint couplings against a tree's joints and resolve them onto the bodies (ModelError if bad);
    ``taken``: constraint names already used (the cut joints')."""
    body = {n: k for k, n in enumerate(joint_names) if k > 0}
    out = []
    for c, what in _named(name, couplings, JointCoupling, "joint coupling", set(taken)):
        ends = []
        for role, joint in (("joint", c.joint), ("reference", c.reference)):
            k = _member(body, joint, what, role, "joint")
            if int(kinds[k]) not in ONE_DOF:
                raise ModelError(f"{what}: {role} {joint!r} is {JOINTS[int(kinds[k])].name}; a coupling joins 1-DOF "
                                 f"joints ({', '.join(JOINTS[x].name for x in ONE_DOF)})")  # fmt: skip
            ends.append(k)
        if ends[0] == ends[1] and c.multiplier != 0.0:  # multiplier 0: the joint held at the offset
            raise ModelError(f"{what} couples joint {c.joint!r} to itself (multiplier {c.multiplier:g}; 0 holds it "
                             "at the offset)")  # fmt: skip
        m, off = float(c.multiplier), float(c.offset)
        if not (math.isfinite(m) and math.isfinite(off)):
            raise ModelError(f"{what}: multiplier and offset must be finite, got {c.multiplier!r}, {c.offset!r}")
        out.append(Coupling(c, ends[0], ends[1], m, off))
    return tuple(out)


def resolve_loops(name: str, link_names, frames: tuple[Frame, ...], loops, couplings=(), joint_names=(),
                  kinds=()) -> ResolvedLoops:  # fmt: skip
    """Check loop joints against a tree's links (``link_names``: the link of each body; ``frames``: where every
    link sits on its body) and joint couplings against its joints (``joint_names``, ``kinds``: of each body), and
    resolve them onto the bodies (ModelError if bad)."""
    taken = [getattr(lp, "name", None) for lp in loops]
    resolved = resolve_couplings(name, joint_names, kinds, couplings, taken) if couplings else ()
    if not loops:
        return ResolvedLoops((), resolved)  # no per-link table: at 100,000 links it alone was the build's peak
    where: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
    eye, zero = np.eye(3), np.zeros(3)  # shared, never written
    for k, link in enumerate(link_names):
        where[link] = (k, eye, zero)
    for f in frames:  # links (an SDF link's frame need not be its body's), and user frames; not a joint's frame
        if f.type == "body":
            where[f.name] = (f.body, np.asarray(f.rotation, float), np.asarray(f.translation, float))
        elif f.type not in ("joint", "fixed_joint"):
            where.setdefault(f.name, (f.body, np.asarray(f.rotation, float), np.asarray(f.translation, float)))
    cuts = []
    for lp, what in _named(name, loops, LoopJoint, "loop joint", set()):
        if lp.type not in LOOP_TYPES:
            raise ModelError(f"{what} has unknown type {lp.type!r}; loop joint types are: {', '.join(LOOP_TYPES)}")
        ends = []
        for role, link, placement in (("link1", lp.link1, lp.placement1), ("link2", lp.link2, lp.placement2)):
            body, Rb, pb = _member(where, link, what, role, "link")
            R, p = placement_pair(placement, f"{what}: placement of {role}")  # (R, p), 4 x 4 or a pinocchio.SE3
            ends.append((body, Rb @ R, Rb @ p + pb))
        if ends[0][0] == ends[1][0]:
            raise ModelError(
                f"{what} joins {lp.link1!r} and {lp.link2!r}, which are rigidly connected (same body "
                f"{link_names[ends[0][0]]!r}): it closes no loop"
            )
        axis = _unit(lp.axis, f"{what}: axis") if lp.type in CUT_WITH_AXIS else np.array([0.0, 0.0, 1.0])
        axis2 = np.zeros(3)
        if lp.type == "universal":
            if lp.axis2 is None:
                raise ModelError(
                    f"{what}: a universal loop joint needs a second axis (<axis2 xyz=…/>, in the link2 frame)"
                )
            axis2 = _unit(lp.axis2, f"{what}: axis2")
            if abs(axis @ axis2) > 1e-9:
                raise ModelError(
                    f"{what}: the universal's axes must be orthogonal, got {axis.tolist()} and {axis2.tolist()}"
                )
        b1, b2 = perpendicular_pair(axis)
        placements = [placement_pair(pl) for pl in (lp.placement1, lp.placement2)]
        lp = LoopJoint(
            lp.name, lp.type, lp.link1, lp.link2, *placements, axis, axis2 if lp.type == "universal" else None
        )
        cuts.append(Cut(lp, ends[0][0], ends[0][1], ends[0][2], ends[1][0], ends[1][1], ends[1][2], axis, axis2,
                        b1, b2, cut_rows(lp.type, b1, b2)))  # fmt: skip
    return ResolvedLoops(tuple(cuts), resolved)
