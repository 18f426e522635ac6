"""URDF → :class:`Model`, with the same joint order and q/v layout as ``pinocchio.buildModelFromUrdf``.

Parsing is yourdfpy's (the maintained successor of urdfpy).  Before it runs, ``urdf_xml.py`` reads the
XML under the input policy (``docs/input-policy.md``), so that a bad file gives a :class:`ModelError`
naming the file, the element (and its line) and what is wrong, never a traceback from inside lxml or
yourdfpy, and yourdfpy reads the checked text.

Body order follows Pinocchio (urdfdom): a depth-first walk from the root link in which the
child joints of a link are visited in the byte order of their names.  Fixed joints are
merged: the child link's inertia is added to the parent body, as Pinocchio does.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np

from ..algorithms.checks import check_not_singular
from ..core.joints import CONTINUOUS, JOINTS, ROOT_JOINTS, spellings
from ..core.shapes import Box, Collision, Cylinder, Mesh, Sphere, unique_name
from ..core.spatial import axis_angle, inertia_about_origin
from ..loops import LOOP_TYPES, JointCoupling, LoopJoint, resolve_loops
from ..model import LIMIT_FIELDS, UNBOUNDED, Frame, MimicModel, Model, ModelError, ModelWarning
from .robots import mesh_file, mesh_folders
from .urdf_xml import UrdfXml, quoted, read_urdf_xml, robot_file

__all__ = ["InertiaWarning", "body_inertias", "check_inertia", "load_urdf", "rpy_matrix"]

# The URDF types denoc_pin takes inside a tree (fixed: merged into the parent body), and its root joints.
SUPPORTED_JOINT_TYPES = {**spellings("urdf"), "fixed": None}

# Relative tolerance for the inertia checks: CAD exports round principal moments.
_INERTIA_RTOL = 1e-6


class InertiaWarning(ModelWarning):
    """A link inertia that is physically inconsistent but still usable (Pinocchio accepts it too)."""


def check_inertia(path: Path, link: str, m: float, I: np.ndarray, strict: bool) -> None:
    """Negative mass is always refused; physical-consistency violations warn, or raise when ``strict``."""
    if m < 0:
        raise ModelError(f"{path}: link {link!r} has a negative mass ({m})")
    problem = None
    # Principal moments below this are rounding noise of a point mass (kg m²).
    tol = _INERTIA_RTOL * abs(np.trace(I)) + 1e-15
    if m == 0:
        if np.any(I != 0):
            problem = f"link {link!r} has zero mass but a non-zero inertia; a massless link has both zero"
    else:
        lam = np.linalg.eigvalsh(I)
        if lam[0] < -tol:
            problem = f"the inertia of link {link!r} is not positive semi-definite (principal moments {lam.tolist()})"
        elif lam[2] > lam[0] + lam[1] + tol:
            problem = (
                f"the inertia of link {link!r} breaks the triangle inequality: principal moments {lam.tolist()}, "
                "the largest exceeds the sum of the other two"
            )
    if problem is None:
        return
    if strict:
        raise ModelError(f"{path}: {problem}")
    warnings.warn(
        f"{path}: {problem} (loaded as is, as Pinocchio does; strict=True refuses it)", InertiaWarning, stacklevel=3
    )


def _pose(T) -> tuple[np.ndarray, np.ndarray]:
    if T is None:
        return np.eye(3), np.zeros(3)
    T = np.asarray(T, dtype=float)
    return T[:3, :3].copy(), T[:3, 3].copy()


def load_urdf(path, root_joint=None, *, strict: bool = False, mimic: bool | str = False) -> Model | MimicModel:
    """Load a URDF file into a :class:`Model` with Pinocchio's joint order and q/v layout.

    root_joint: None (fixed base: the root link is the base, M_0), ``"free-flyer"`` or
    ``"planar"``: a 6-DOF (resp. x, y, θ) joint named ``root_joint`` carries the root link, exactly as
    ``pinocchio.buildModelFromUrdf(path, pinocchio.JointModelFreeFlyer())`` (resp. ``JointModelPlanar()``).
    strict: also refuse what loads by default with a :class:`ModelWarning`: defects that leave the dynamics
    untouched (the XML declaration, a malformed ``<visual>``, …; ``docs/input-policy.md``) and physically
    inconsistent inertias (not positive semi-definite, triangle inequality broken, zero mass with non-zero
    inertia: an :class:`InertiaWarning`, as Pinocchio loads them; many standard URDFs — anymal, pr2, tiago,
    allegro, … — carry such CAD inertias).
    mimic: each ``<mimic joint= multiplier= offset=>`` becomes a :class:`JointCoupling` (θ = multiplier · θ_joint +
    offset, one constraint row, ``model.couplings``, named after the mimic joint); ``mimic="reduce"`` gives
    Pinocchio 4's reduced model (``buildModelFromUrdf(path, mimic=True)``): a :class:`MimicModel`, whose q and v
    leave the mimic joints out; by default (False) mimic joints stay independent, as in Pinocchio.
    Raises :class:`ModelError` naming the file, the line, the element and the problem for a bad file.
    """
    import yourdfpy

    if mimic not in (False, True, "reduce"):
        raise ValueError(f"mimic must be False, True (couplings) or 'reduce' (Pinocchio's reduced model), got "
                         f"{mimic!r}")  # fmt: skip
    path = robot_file(path, root_joint, ROOT_JOINTS)
    xml = read_urdf_xml(path, strict)
    loops = _loop_joints(path, xml.robot)
    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(xml.text),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as e:  # yourdfpy's own failures, after our checks, still name the file
        raise ModelError(f"{path}: yourdfpy could not read the file: {type(e).__name__}: {e}") from None
    robot = urdf.robot
    links = {link.name: link for link in robot.links}
    if not links:
        raise ModelError(f"{path}: <robot> has no <link>")

    for j in robot.joints:
        if j.type not in SUPPORTED_JOINT_TYPES:
            raise ModelError(
                f"{path}: {xml.where('joint', j.name)} has type {j.type!r}, which denoc_pin does not support inside "
                "a URDF tree; "
                f"supported: {', '.join(SUPPORTED_JOINT_TYPES)}"
            )
    for name, link in links.items():
        if link.inertial is not None:
            check_inertia(path, name, float(link.inertial.mass), np.asarray(link.inertial.inertia, dtype=float), strict)

    root, children = _topology(path, robot, links, xml)
    bodies = _bodies(path, root, children, root_joint, xml)
    names, link_names, parents, kinds, axes, PR, Pp, body_of, pose_in_body, frames = bodies
    mass, com, I_com = _merged_inertias(links, body_of, pose_in_body, len(names))
    for lp, line in loops:
        for link in (lp.link1, lp.link2):
            if link not in links:
                raise ModelError(
                    f"{path}: loop joint {lp.name!r} (line {line}) names unknown link {link!r}; "
                    f"links are: {quoted(links)}"
                )
    couplings = _mimics(path, robot, names, xml, strict) if mimic and mimic != "reduce" else []
    try:
        limits = _limits(robot, names, kinds, root_joint)
        collisions = _collisions(path, robot, frames, xml, strict)
        model = _model(path, robot, names, link_names, parents, kinds, axes, PR, Pp, mass, com, I_com, frames, loops,
                       limits, couplings, collisions)  # fmt: skip
    except ModelError as e:
        raise ModelError(f"{path}: {e}") from None
    check_not_singular(model, where=str(path), strict=strict)
    if mimic == "reduce":
        rules = [(c.joint, c.reference, c.multiplier, c.offset) for c in _mimics(path, robot, names, xml, strict)]
        try:
            return MimicModel(model, rules)
        except ModelError as e:
            raise ModelError(f"{path}: {e}") from None
    return model


def _topology(path: Path, robot, links: dict, xml: UrdfXml) -> tuple[str, dict[str, list]]:
    """The tree of links: (root link, child joints of each link); one parent per link, one root, no cycle."""
    parent_joint: dict[str, object] = {}
    children: dict[str, list] = {name: [] for name in links}
    for j in robot.joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise ModelError(
                    f"{path}: {xml.where('joint', j.name)} names unknown {role} link {link!r}; "
                    f"links are: {quoted(links)}"
                )
        if j.child in parent_joint:
            raise ModelError(
                f"{path}: {xml.where('link', j.child)} has two parents: "
                f"{xml.where('joint', parent_joint[j.child].name)} and {xml.where('joint', j.name)}"
            )
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        raise ModelError(
            f"{path}: more than one root link ({', '.join(xml.where('link', r) for r in roots[:25])}); every link "
            "but one must be the child of a joint"
        )
    reached = set()
    if roots:
        stack = [roots[0]]
        while stack:
            name = stack.pop()
            reached.add(name)
            stack.extend(j.child for j in children[name])
    if len(reached) != len(links):
        start = next(name for name in links if name not in reached)
        cycle, name = [], start
        while name not in cycle:
            cycle.append(name)
            name = parent_joint[name].parent
        cycle = cycle[cycle.index(name) :]
        joints = ", ".join(xml.where("joint", parent_joint[link].name) for link in reversed(cycle))
        raise ModelError(
            f"{path}: kinematic cycle through links {' → '.join(reversed(cycle))} → {cycle[-1]} (through {joints})"
        )
    return roots[0], children


def _bodies(path: Path, root: str, children: dict[str, list], root_joint, xml: UrdfXml):
    """Bodies in Pinocchio's order (a depth-first walk, child joints in the byte order of their names), fixed
    joints merged: per body (index 0 = the base) the joint name, link name, parent body, kind, axis and placement;
    where every link sits: its body (body_of) and its pose in that body (pose_in_body); and the frames, in
    the order Pinocchio's parser makes them (each joint's, then its child link's)."""
    # Per body k (index 0 = the base): joint name, link name, parent body, kind, axis, placement.
    names, link_names, parents, kinds, axes, PR, Pp = (
        ["universe"],
        [root],
        [0],
        [0],
        [np.zeros(3)],
        [np.eye(3)],
        [np.zeros(3)],
    )
    body_of = {root: 0}
    eye, zero = np.eye(3), np.zeros(3)
    frames = [Frame("universe", 0, eye, zero, "fixed_joint")]  # Pinocchio's frames, in its parser's order
    if root_joint is not None:
        # The root link rides on the root joint, which Pinocchio names "root_joint".
        names.append("root_joint")
        link_names[0] = "universe"
        link_names.append(root)
        parents.append(0)
        kinds.append(ROOT_JOINTS[root_joint])
        axes.append(np.zeros(3))
        PR.append(np.eye(3))
        Pp.append(np.zeros(3))
        body_of[root] = 1
        frames.append(Frame("root_joint", 1, eye, zero, "joint"))
    frames.append(Frame(root, body_of[root], eye, zero, "body"))
    pose_in_body = {root: (np.eye(3), np.zeros(3))}

    def child_joints(link: str) -> list:
        # Reversed so that popping the stack visits siblings in name order.
        return sorted(children[link], key=lambda j: j.name.encode(), reverse=True)

    stack = child_joints(root)  # explicit stack: chains of any length, no recursion limit
    while stack:
        j = stack.pop()
        Rl, pl = pose_in_body[j.parent]
        Ro, po = _pose(j.origin)
        R, p = Rl @ Ro, Rl @ po + pl  # joint frame in the parent body's frame
        if j.type == "fixed":
            body_of[j.child] = body_of[j.parent]
            pose_in_body[j.child] = (R, p)
            frames += [Frame(j.name, body_of[j.parent], R, p, "fixed_joint"), Frame(j.child, body_of[j.parent], R, p)]
        else:
            axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
            n = np.linalg.norm(axis)
            if not n > 0:
                raise ModelError(f"{path}: {xml.where('joint', j.name)} has a zero-length <axis> ({axis.tolist()})")
            names.append(j.name)
            link_names.append(j.child)
            parents.append(body_of[j.parent])
            kinds.append(SUPPORTED_JOINT_TYPES[j.type])
            axes.append(axis / n)
            PR.append(R)
            Pp.append(p)
            body_of[j.child] = len(names) - 1
            pose_in_body[j.child] = (eye, zero)
            frames += [Frame(j.name, len(names) - 1, eye, zero, "joint"), Frame(j.child, len(names) - 1, eye, zero)]
        stack.extend(child_joints(j.child))
    if len(names) < 2:
        raise ModelError(f"{path}: the robot has no movable joint (revolute, continuous or prismatic)")
    return names, link_names, parents, kinds, axes, PR, Pp, body_of, pose_in_body, frames


def _given(value, default: float) -> float:
    return default if value is None else float(value)


def _limits(robot, names: list[str], kinds: list[int], root_joint) -> dict[str, np.ndarray]:
    """Pinocchio's joint limits, as its URDF parser sets them: a revolute or prismatic joint's from its
    ``<limit>`` (lower and upper 0 when absent, as the specification says); a continuous joint's (cos, sin) within
    ±1.01; velocity and effort from ``<limit>``, inf without it; the root joint unbounded (``UNBOUNDED``).  A
    revolute or prismatic joint without ``<limit>`` (warned about) gets ±``UNBOUNDED``."""
    joints = {j.name: j for j in robot.joints}
    lower, upper, velocity, effort = [], [], [], []
    for k in range(1, len(names)):
        kind = JOINTS[kinds[k]]
        if k == 1 and root_joint is not None:
            lower += [-UNBOUNDED] * kind.nq
            upper += [UNBOUNDED] * kind.nq
            velocity += [UNBOUNDED] * kind.nv
            effort += [UNBOUNDED] * kind.nv
            continue
        limit = joints[names[k]].limit
        if kinds[k] == CONTINUOUS:
            lower += [-1.01, -1.01]
            upper += [1.01, 1.01]
        elif limit is None:
            lower.append(-UNBOUNDED)
            upper.append(UNBOUNDED)
        else:
            lower.append(_given(limit.lower, 0.0))
            upper.append(_given(limit.upper, 0.0))
        velocity.append(np.inf if limit is None else _given(limit.velocity, np.inf))
        effort.append(np.inf if limit is None else _given(limit.effort, np.inf))
    return dict(zip(LIMIT_FIELDS, (np.array(x) for x in (lower, upper, velocity, effort)), strict=True))


def _merged_inertias(links: dict, body_of: dict, pose_in_body: dict, nj: int):
    """(mass, centre of mass, inertia about it) of every body: its links' inertias summed about the body origin."""
    parts = []
    for name, link in links.items():
        if link.inertial is None:
            continue  # zero mass with an inertia still counts: Pinocchio keeps it too
        Ri, pi = _pose(link.inertial.origin)
        parts.append((body_of[name], pose_in_body[name], float(link.inertial.mass), Ri, pi,
                      np.asarray(link.inertial.inertia, dtype=float)))  # fmt: skip
    return body_inertias(parts, nj)


def body_inertias(parts, nj: int):
    """(mass, centre of mass, inertia about it) of every body from its links' parts (body, (R, p) of the link in
    the body, mass, (R, p) of the inertial frame in the link, inertia about the centre of mass in that frame),
    summed about the body origin."""
    mass = np.zeros(nj)
    first_moment = np.zeros((nj, 3))
    I_o = np.zeros((nj, 3, 3))
    for k, (Rl, pl), m, Ri, pi, I_c in parts:
        R, c = Rl @ Ri, Rl @ pi + pl
        mass[k] += m
        first_moment[k] += m * c
        I_o[k] += inertia_about_origin(m, c, R @ I_c @ R.T)
    com = np.zeros((nj, 3))
    I_com = np.zeros((nj, 3, 3))
    for k in range(nj):
        if mass[k] > 0:
            com[k] = first_moment[k] / mass[k]
            I_com[k] = I_o[k] - inertia_about_origin(mass[k], com[k], np.zeros((3, 3)))
        else:
            I_com[k] = I_o[k]
    return mass, com, I_com


def _mimics(path: Path, robot, names: list[str], xml: UrdfXml, strict: bool) -> list[JointCoupling]:
    """The ``<mimic>`` elements as couplings: θ_joint = multiplier · θ_target + offset (URDF's defaults 1, 0); a
    fixed joint's ``<mimic>`` (talos's grippers have some) moves nothing: ignored, with a warning."""
    out = []
    for j in robot.joints:
        if j.mimic is None:
            continue
        if j.type == "fixed":
            message = f"{path}: {xml.where('joint', j.name)} is fixed: its <mimic> is ignored"
            if strict:
                raise ModelError(f"{message} (strict=True refuses what the default only warns about)")
            warnings.warn(message, ModelWarning, stacklevel=3)
            continue
        for name in (j.name, j.mimic.joint):
            if name not in names:
                raise ModelError(f"{path}: {xml.where('joint', j.name)}: <mimic joint={j.mimic.joint!r}> couples "
                                 f"{name!r}, which is not a movable joint of the tree; joints are: "
                                 f"{quoted(names[1:])}")  # fmt: skip
        multiplier = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
        offset = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
        out.append(JointCoupling(j.name, j.name, j.mimic.joint, multiplier, offset))
    return out


def _model(path, robot, names, link_names, parents, kinds, axes, PR, Pp, mass, com, I_com, frames, loops,
           limits, couplings=(), collisions=()) -> Model:  # fmt: skip
    return Model(
        collisions=collisions,
        **limits,
        name=robot.name or path.stem,
        names=names,
        link_names=link_names,
        parents=parents,
        kinds=kinds,
        axes=axes,
        placement_rotation=PR,
        placement_translation=Pp,
        masses=mass,
        coms=com,
        inertias=I_com,
        frames=frames,
        source=str(path),
        loops=resolve_loops(
            robot.name or path.stem, link_names, frames, [lp for lp, _ in loops], couplings, names, kinds
        ),
    )


def _collisions(path: Path, robot, frames, xml: UrdfXml, strict: bool) -> list[Collision]:
    """The links' ``<collision>`` shapes on their bodies (``Model.collisions``).  They touch the ground and not each
    other (group 1, mask 0): a URDF says nothing of which pairs may touch (Pinocchio reads that from an SRDF), and a
    robot's neighbouring meshes overlap.  A collision that cannot be made (a bad size, a mesh file not found) is left
    out with a warning, refused when ``strict``: the dynamics do not read it."""
    folders = mesh_folders(path)
    where = {f.name: f for f in frames if f.type == "body"}
    out: list[Collision] = []
    taken: set[str] = set()
    for link in robot.links:
        frame = where.get(link.name)
        for k, col in enumerate(link.collisions):
            g = col.geometry
            what = xml.where("link", link.name)
            try:
                if g is None:
                    raise ValueError("has no <geometry>")
                if g.box is not None:
                    shape = Box(g.box.size)
                elif g.sphere is not None:
                    shape = Sphere(g.sphere.radius)
                elif g.cylinder is not None:
                    shape = Cylinder(g.cylinder.radius, g.cylinder.length)
                elif g.mesh is not None:
                    found = mesh_file(g.mesh.filename, folders)
                    if found is None:
                        problem = f"{path}: {what}: collision mesh {g.mesh.filename!r} not found; it is left out"
                        if strict:
                            raise ModelError(problem)
                        warnings.warn(problem, ModelWarning, stacklevel=4)
                        continue
                    shape = Mesh(found, 1.0 if g.mesh.scale is None else g.mesh.scale)
                else:
                    raise ValueError("has a <geometry> of no known kind")
            except (TypeError, ValueError) as err:
                if isinstance(err, ModelError):
                    raise
                problem = f"{path}: {what}: <collision> {k}: {err}; it is left out"
                if strict:
                    raise ModelError(problem) from None
                warnings.warn(problem, ModelWarning, stacklevel=4)
                continue
            T = np.eye(4) if col.origin is None else np.asarray(col.origin, dtype=float)
            name = unique_name(col.name or f"{link.name}_collision_{k}", taken)
            R, p = frame.rotation @ T[:3, :3], frame.rotation @ T[:3, 3] + frame.translation
            out.append(Collision(name, link.name, frame.body, shape, R, p, group=1, mask=0))
    return out


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's (and SDF's) fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    ex, ey, ez = np.eye(3)
    return axis_angle(ez, y) @ axis_angle(ey, p) @ axis_angle(ex, r)


def _loop_joints(path: Path, robot) -> list[tuple[LoopJoint, int]]:
    """The ``<loop_joint>`` extension elements (closed loops; other URDF parsers ignore them)."""
    out = []
    for el in robot.findall("loop_joint"):
        name, kind, line = el.get("name"), el.get("type"), el.sourceline
        if not name:
            raise ModelError(f"{path}: <loop_joint> (line {line}) has no name attribute")
        if kind not in LOOP_TYPES:
            raise ModelError(
                f"{path}: loop joint {name!r} (line {line}) has unknown type {kind!r}; loop joint types are: "
                f"{', '.join(LOOP_TYPES)}"
            )
        ends = []
        for tag in ("link1", "link2"):
            e = el.find(tag)
            if e is None or not e.get("link"):
                raise ModelError(f'{path}: loop joint {name!r} (line {line}) has no <{tag} link="…" xyz="…" rpy="…"/>')
            xyz = [float(x) for x in e.get("xyz", "0 0 0").split()]
            rpy = [float(x) for x in e.get("rpy", "0 0 0").split()]
            ends.append((e.get("link"), (rpy_matrix(rpy), np.array(xyz))))
        axes = []
        for tag, default in (("axis", "1 0 0"), ("axis2", None)):
            e = el.find(tag)
            raw = e.get("xyz") if e is not None else default
            axis = None if raw is None else np.array([float(x) for x in raw.split()])
            if axis is not None and not np.linalg.norm(axis) > 0:
                raise ModelError(f"{path}: loop joint {name!r} (line {line}) has a zero-length <{tag}>")
            axes.append(axis)
        if kind == "universal" and axes[1] is None:
            raise ModelError(
                f'{path}: universal loop joint {name!r} (line {line}) needs <axis2 xyz="…"/> (in the link2 frame)'
            )
        lp = LoopJoint(name, kind, ends[0][0], ends[1][0], ends[0][1], ends[1][1], axes[0], axes[1])
        out.append((lp, line))
    return out
