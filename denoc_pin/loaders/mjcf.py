"""MJCF (MuJoCo's XML) → :class:`Model`: the body tree, its inertias, and the equality constraints as loops.

What is read (``docs/mjcf.md``): ``<include>`` (expanded first), ``<compiler angle eulerseq inertiafromgeom
autolimits>``, ``<default>`` classes with ``class`` and ``childclass``, the ``<worldbody>`` tree with every
orientation form, ``<inertial>`` or the inertia of the geoms, ``<joint>`` hinge, slide, ball and free (several in a
body compose in order), ``<site>`` as frames, and ``<equality>`` ``connect`` (a spherical cut), ``weld`` (a fixed
cut) and ``joint`` (a coupling); the geoms that touch something as ``model.collisions``.  What lies beyond the
rigid-body dynamics (actuators, tendons, sensors, contacts, armature, damping, friction loss) is left out, with one
warning listing it.

Bodies come in MuJoCo's order (depth first, file order), so v has MuJoCo's dof order; q differs only in the
quaternions: a ball joint's (x, y, z, w) and a free joint's (x, y, z, qx, qy, qz, qw) in Pinocchio's layout, whose
free-joint velocity is in the body frame (MuJoCo's linear part is in the world frame): ``mujoco_state``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from pathlib import Path

import numpy as np

from ..algorithms.checks import check_not_singular
from ..core.joints import FREE_FLYER, JOINTS, PRISMATIC, REVOLUTE, ROOT_JOINTS, SPHERICAL, spellings
from ..core.shapes import Box, Capsule, Collision, Cylinder, Mesh, Sphere, unique_name
from ..core.spatial import axis_angle, quaternion_rotation
from ..loops import JointCoupling, LoopJoint, resolve_loops
from ..model import LIMIT_FIELDS, MAX_MAGNITUDE, UNBOUNDED, Frame, Model, ModelError, ModelWarning
from .meshes import MESH_INERTIA, convex_hull_faces, mesh_mass_properties, read_mesh, transform_vertices
from .sdf import Pose, compose_poses, inverse_pose
from .urdf import body_inertias, check_inertia
from .urdf_xml import parse_xml, quoted, robot_file

__all__ = ["MJCF_JOINT_TYPES", "load_mjcf", "mujoco_state", "to_mujoco_state"]

MJCF_JOINT_TYPES = spellings("mjcf", roots=True)  # JOINTS' mjcf spellings: hinge, slide, free, ball
IGNORED = ("actuator", "tendon", "sensor", "keyframe")  # beyond the rigid-body dynamics
BODY_MAKERS = ("attach", "replicate", "composite", "flexcomp")  # MuJoCo 3's elements that make bodies: refused
IGNORED_JOINT_ATTRIBUTES = ("armature", "damping", "frictionloss", "stiffness")
ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")  # one of them orients an element


class _Reader:
    """The expanded document, its compiler settings and default classes."""

    def __init__(self, path: Path, strict: bool):
        self.path, self.strict, self.lenient = path, strict, []
        self.root = self._expand(path, [])
        compilers = self.root.findall("compiler")  # several (one per included file): later attributes win
        compiler = compilers[-1] if compilers else None
        settings = {k: v for el in compilers for k, v in el.attrib.items()}
        get = settings.get
        self.degrees = get("angle", "degree") == "degree"
        self.eulerseq = get("eulerseq", "xyz")
        self.from_geom = get("inertiafromgeom", "auto")
        self.autolimits = get("autolimits", "true") == "true"
        # the mass options (MuJoCo's XML reference, compiler): bounds and balance per body, then the total scaled
        self.boundmass, self.boundinertia, self.settotalmass = (
            self._setting(compilers, key, default) for key, default in
            (("boundmass", 0.0), ("boundinertia", 0.0), ("settotalmass", -1.0)))  # fmt: skip
        self.balanceinertia = get("balanceinertia", "false") == "true"
        if get("alignfree", "false") == "true":  # the free bodies' frames moved onto their inertias'
            at = next(el for el in reversed(compilers) if "alignfree" in el.attrib)
            raise self.error(at, "alignfree=\"true\" (a free body's frame moved to its centre of mass and "
                                 "principal axes) is not read; leave it out: q is then the pose of the body's frame "
                                 "as written")  # fmt: skip
        group_el = next((el for el in reversed(compilers) if "inertiagrouprange" in el.attrib), None)
        self.inertia_groups = (0, 5) if group_el is None else tuple(
            int(x) for x in self.numbers(group_el, dict(group_el.attrib), "inertiagrouprange", 2))  # fmt: skip
        top = path.parent  # MuJoCo finds meshes in meshdir (else assetdir), relative to the main file
        self.meshdir = top / get("meshdir", get("assetdir", "."))
        if len(self.eulerseq) != 3 or set(self.eulerseq.lower()) - set("xyz"):
            raise self.error(compiler, f"eulerseq {self.eulerseq!r} is not three of x, y, z (or X, Y, Z)")
        self.defaults: dict[str, dict[str, dict]] = {}
        self.parent_class: dict[str, str | None] = {}
        for d in self.root.findall("default"):
            self._read_default(d, None)
        self.meshes = {}  # name -> the <mesh> element and its attributes over its class's
        for el in (m for asset in self.root.findall("asset") for m in asset.findall("mesh")):
            attrs = self.attrib(el, None)
            name = attrs.get("name") or Path(attrs.get("file", "")).stem
            if not name:
                raise self.error(el, "a mesh needs a name or a file")
            self.meshes[name] = (el, attrs)
        self.mesh_cache: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
        self.mesh_data: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _setting(self, compilers: list, key: str, default: float) -> float:
        """A number of ``<compiler>`` (the last one giving it wins)."""
        el = next((el for el in reversed(compilers) if key in el.attrib), None)
        return default if el is None else float(self.numbers(el, dict(el.attrib), key, 1)[0])

    def mesh_asset(self, name: str, geom) -> tuple[object, dict]:
        """(element, attributes) of the ``<asset><mesh>`` named ``name``, which ``geom`` uses."""
        if name not in self.meshes:
            raise self.error(geom, f"mesh {name!r} is not in <asset>; meshes are: {quoted(self.meshes)}")
        return self.meshes[name]

    def mesh_path(self, attrs: dict) -> Path:
        """A mesh's ``file``: as given if absolute, else in meshdir."""
        file = Path(attrs["file"])
        return file if file.is_absolute() else self.meshdir / file

    def mesh_geometry(self, name: str, geom, purpose: str) -> tuple[np.ndarray, np.ndarray]:
        """(vertices, faces) of mesh ``name`` as MuJoCo places them in a geom's frame (``scale``, ``refpos``,
        ``refquat``; from ``file`` or ``vertex``/``face``); ``purpose`` says in errors what needs them."""
        el, attrs = self.mesh_asset(name, geom)
        if name in self.mesh_data:
            return self.mesh_data[name]
        scale = self.numbers(el, attrs, "scale", 3, (1.0, 1.0, 1.0))
        refpos = self.numbers(el, attrs, "refpos", 3, (0.0, 0.0, 0.0))
        refquat = self.numbers(el, attrs, "refquat", 4, (1.0, 0.0, 0.0, 0.0))
        if not np.linalg.norm(refquat) > 0:
            raise self.error(el, "refquat is zero")
        if "file" in attrs:
            file = self.mesh_path(attrs)
            if file.suffix.lower() not in (".stl", ".obj", ".msh"):
                raise self.error(el, f"{file.name}: only STL, OBJ and MSH meshes are read ({purpose})")
            if not file.is_file():
                raise self.error(el, f"no such mesh file {file} (meshdir {self.meshdir}); {purpose} comes from it")
            try:
                V, F = read_mesh(file, scale, refpos, refquat)
            except (ValueError, OSError, IndexError) as e:
                raise self.error(el, f"cannot read the mesh {file}: {e}") from None
        else:
            if "vertex" not in attrs:
                raise self.error(el, "a mesh needs a file or vertex")
            n = len(attrs["vertex"].split())
            if n < 12 or n % 3:
                raise self.error(el, f"vertex has {n} numbers: expected triples, at least 4")
            V = np.float32(self.numbers(el, attrs, "vertex", n).reshape(-1, 3)).astype(float)
            V = transform_vertices(V, scale, refpos, refquat)
            face = attrs.get("face")
            F = convex_hull_faces(V) if face is None else self.integers(el, attrs, "face", V.shape[0])
        self.mesh_data[name] = (V, F)
        return V, F

    def collision_mesh(self, name: str, geom) -> Mesh:
        """Mesh ``name`` as a collision shape: a file only scaled is read at its first use (``Mesh``); one moved by
        ``refpos``/``refquat``, or given by its vertices, is read now."""
        el, attrs = self.mesh_asset(name, geom)
        moved = "refpos" in attrs or "refquat" in attrs
        if "file" in attrs and not moved and Path(attrs["file"]).suffix.lower() != ".msh":  # MSH: read here
            file = self.mesh_path(attrs)
            if not file.is_file():
                raise self.error(el, f"no such mesh file {file} (meshdir {self.meshdir})")
            return Mesh(file, self.numbers(el, attrs, "scale", 3, (1.0, 1.0, 1.0)))
        return Mesh(vertices=self.mesh_geometry(name, geom, "its collision shape")[0])

    def mesh_properties(self, name: str, geom) -> tuple[float, np.ndarray, np.ndarray]:
        """(volume or area, centre, inertia per unit density) of mesh ``name``, computed as MuJoCo does (its
        ``inertia`` mode, ``refpos``, ``refquat``, ``scale``; from ``file`` or ``vertex``/``face``)."""
        el, attrs = self.mesh_asset(name, geom)
        if name in self.mesh_cache:
            return self.mesh_cache[name]
        mode = attrs.get("inertia", MESH_INERTIA[0])
        if mode not in MESH_INERTIA:
            raise self.error(el, f"inertia {mode!r}; mesh inertia modes are: {', '.join(MESH_INERTIA)}")
        if "maxhullvert" in attrs and mode == "convex":
            raise self.error(el, "maxhullvert with inertia=\"convex\" is not read (qhull's reduced hull); give "
                                 "the body an <inertial> (or the geom mass=\"0\")")  # fmt: skip
        V, F = self.mesh_geometry(name, geom, "the body's inertia: give the body an <inertial> or the file")
        try:
            found = mesh_mass_properties(V, F, mode)
        except ValueError as e:
            raise self.error(el, f"{e}; MuJoCo refuses it too") from None
        self.mesh_cache[name] = found
        return found

    def integers(self, el, attrs: dict, key: str, bound: int) -> np.ndarray:
        """A list of vertex indices in triples, each below ``bound``."""
        try:
            values = np.array([int(x) for x in attrs[key].split()], dtype=np.int64)
        except ValueError:
            raise self.error(el, f"{key} is not integers") from None
        if values.size == 0 or values.size % 3 or values.min() < 0 or values.max() >= bound:
            raise self.error(el, f"{key}: expected triples of vertex indices below {bound}")
        return values.reshape(-1, 3)

    def error(self, el, problem: str) -> ModelError:
        name = el.get("name") if el is not None else None
        what = f"<{el.tag}>" + (f" {name!r}" if name else "") if el is not None else "the file"
        line = f" (line {el.sourceline})" if el is not None else ""
        return ModelError(f"{self.path}: {what}{line}: {problem}")

    def _expand(self, path: Path, stack: list) -> object:
        """The <mujoco> element with every <include file> replaced by the included file's children."""
        if path in stack:
            raise ModelError(f"{stack[-1]}: <include> cycle through {path}")
        root = parse_xml(path, ("mujoco", "mujocoinclude") if stack else "mujoco", self.lenient)
        for inc in list(root.iter("include")):
            name = inc.get("file")
            if not name:
                raise ModelError(f"{path}: <include> (line {inc.sourceline}) has no file attribute")
            target = (path.parent / name).resolve()
            if not target.is_file():
                what = "is a directory, not a file" if target.is_dir() else "no such file"
                raise ModelError(f"{path}: <include> (line {inc.sourceline}): {what}: {target}")
            try:
                included = self._expand(target, [*stack, path])
            except ModelError as e:  # an error in the included file: both files named
                raise ModelError(f"{path}: <include> (line {inc.sourceline}) of {e}") from None
            parent = inc.getparent()
            at = parent.index(inc)
            parent.remove(inc)
            for i, child in enumerate(list(included)):
                parent.insert(at + i, child)
        return root

    def _read_default(self, el, parent: str | None) -> None:
        name = el.get("class", "main")
        self.parent_class[name] = parent
        own = {}
        for child in el:
            if isinstance(child.tag, str) and child.tag != "default":
                own[child.tag] = dict(child.attrib)
        self.defaults[name] = own
        for child in el.findall("default"):
            self._read_default(child, name)

    def attrib(self, el, cls: str | None) -> dict:
        """``el``'s attributes over those of its default class chain (its ``class``, else ``cls``, else main)."""
        chain, name = [], el.get("class", cls or "main")
        if name not in self.defaults and name != "main":
            raise self.error(el, f"class {name!r} is not defined; classes are: {quoted(self.defaults)}")
        while name is not None:
            chain.append(self.defaults.get(name, {}).get(el.tag, {}))
            name = self.parent_class.get(name)
        out = {}
        for d in [*reversed(chain), el.attrib]:  # a more specific orientation replaces the defaults' (MuJoCo's too)
            if any(k in d for k in ORIENTATIONS):
                for k in ORIENTATIONS:
                    out.pop(k, None)
            out.update(d)
        return out

    def numbers(self, el, attrs: dict, key: str, count, default=None) -> np.ndarray | None:
        raw = attrs.get(key)
        if raw is None:
            return None if default is None else np.array(default, dtype=float)
        try:
            values = np.array([float(x) for x in raw.split()])
        except ValueError:
            raise self.error(el, f"{key}={raw!r} is not numbers") from None
        counts = (count,) if isinstance(count, int) else count
        if values.size not in counts:
            raise self.error(el, f"{key}={raw!r}: expected {' or '.join(map(str, counts))} numbers")
        if not (np.isfinite(values).all() and np.abs(values).max(initial=0) <= MAX_MAGNITUDE):
            raise self.error(el, f"{key}={raw!r}: numbers must be finite and at most {MAX_MAGNITUDE:g}")
        return values

    def angle(self, x: float) -> float:
        return math.radians(x) if self.degrees else x

    def orientation(self, el, attrs: dict) -> np.ndarray:
        """The rotation of ``quat`` (w x y z), ``axisangle``, ``euler`` (the compiler's eulerseq: lower case
        moving axes, upper case fixed), ``xyaxes`` or ``zaxis``; identity without any."""
        given = [k for k in ORIENTATIONS if k in attrs]
        if len(given) > 1:
            raise self.error(el, f"more than one orientation: {', '.join(given)}")
        if not given:
            return np.eye(3)
        kind = given[0]
        if kind == "quat":
            w, x, y, z = self.numbers(el, attrs, "quat", 4)
            n = math.sqrt(w * w + x * x + y * y + z * z)
            if not n > 0:
                raise self.error(el, "quat is zero")
            return quaternion_rotation(x / n, y / n, z / n, w / n)
        if kind == "axisangle":
            v = self.numbers(el, attrs, "axisangle", 4)
            return axis_angle(_unit(self, el, v[:3], "axisangle's axis"), self.angle(v[3]))
        if kind == "euler":
            R = np.eye(3)
            for ch, a in zip(self.eulerseq, self.numbers(el, attrs, "euler", 3), strict=True):
                Ra = axis_angle(np.eye(3)["xyz".index(ch.lower())], self.angle(a))
                R = R @ Ra if ch.islower() else Ra @ R  # moving axes: post-multiply; fixed: pre-multiply
            return R
        if kind == "xyaxes":
            v = self.numbers(el, attrs, "xyaxes", 6)
            x = _unit(self, el, v[:3], "xyaxes' x")
            y = v[3:] - x * (x @ v[3:])
            y = _unit(self, el, y, "xyaxes' y (after removing its x part)")
            return np.column_stack([x, y, np.cross(x, y)])
        z = _unit(self, el, self.numbers(el, attrs, "zaxis", 3), "zaxis")
        return _rotation_to(z)

    def pose(self, el, attrs: dict) -> Pose:
        return self.orientation(el, attrs), self.numbers(el, attrs, "pos", 3, (0.0, 0.0, 0.0))


def _unit(reader: _Reader, el, v: np.ndarray, what: str) -> np.ndarray:
    n = float(np.linalg.norm(v))
    if not n > 1e-12:
        raise reader.error(el, f"{what} is zero")
    return v / n


def _rotation_to(z: np.ndarray) -> np.ndarray:
    """The minimal rotation taking (0, 0, 1) to the unit vector z (MuJoCo's zaxis and fromto frames)."""
    e = np.array([0.0, 0.0, 1.0])
    c = float(e @ z)
    if c < -1.0 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    axis = np.cross(e, z)
    s = float(np.linalg.norm(axis))
    return np.eye(3) if s < 1e-15 else axis_angle(axis / s, math.atan2(s, c))


def _excluded(reader: _Reader, tree) -> list[tuple[str, str]]:
    """The collision pairs ``<contact><exclude body1= body2=>`` keep apart: every geom of one body against every
    geom of the other (MuJoCo's rule); a body the file does not have is a ModelError."""
    out = []
    for el in reader.root.iter("exclude"):
        names = []
        for key in ("body1", "body2"):
            body = el.get(key)
            if body is None or body not in tree.world:
                raise ModelError(f"{reader.path}: <exclude> (line {el.sourceline}): {key}={body!r} is not a body; the "
                                 f"bodies are {', '.join(sorted(tree.world))}")  # fmt: skip
            names.append([c.name for c in tree.collisions if c.link == body])
        out += [(a, b) for a in names[0] for b in names[1] if a != b]
    return out


def _pairs(reader: _Reader, tree) -> list[tuple[str, str, float]]:
    """``<contact><pair geom1= geom2=>``: two geoms that touch whatever their bits and the exclusions, with the
    pair's own friction (its first, sliding, number; MuJoCo's default 1; 0 where condim is 1) — MuJoCo's explicit
    pairs.  A pair with a plane of the world (a scene's floor) makes the other geom touch the ground (its μ is the
    ground's, said in a warning); a geom name the file does not have is a ModelError; a pair with a geom that is
    left out (a shape not detected, a world geom other than a plane) is left out with a warning."""
    out = []
    collisions = {c.name: i for i, c in enumerate(tree.collisions)}
    world_geoms = {}  # the world's own geoms (not read as collisions): name → type
    for world in reader.root.findall("worldbody"):
        for g, _, cls in tree.children(world, None, ("geom",)):
            if g.get("name"):
                world_geoms[g.get("name")] = reader.attrib(g, cls).get("type", "sphere")
    named = {g.get("name") for g in reader.root.iter("geom")}
    floor: dict[str, list] = {}
    for el in reader.root.iter("pair"):
        attrs = reader.attrib(el, None)
        names = [attrs.get(key) for key in ("geom1", "geom2")]
        for key, name in zip(("geom1", "geom2"), names, strict=True):
            if name is None or name not in named:
                raise reader.error(el, f"{key}={name!r} is not a geom; a pair names two geoms by their names")
        condim = int(reader.numbers(el, attrs, "condim", 1, (3.0,))[0])
        mu = 0.0 if condim == 1 else float(reader.numbers(el, attrs, "friction", (1, 2, 3, 4, 5), (1.0,))[0])
        planes = [n for n in names if world_geoms.get(n) == "plane"]
        if planes and names[0] != names[1]:
            other = names[1] if names[0] in planes else names[0]
            if other in collisions:
                k = collisions[other]
                tree.collisions[k] = dataclasses.replace(tree.collisions[k], ground=True)
                floor.setdefault(planes[0], []).append((other, mu, el.sourceline))
                continue
        if all(n in collisions for n in names):
            out.append((names[0], names[1], mu))
            continue
        lost = [n for n in names if n not in collisions]
        reader.lenient.append(
            f"<pair> (line {el.sourceline}): geom {lost[0]!r} is not a collision denoc_pin "
            "reads (a world geom other than a plane, or a shape left out); the pair is left out"
        )
    for plane, given in floor.items():
        names = [repr(n) for n, *_ in given]
        mus = sorted({f"{mu:g}" for _, mu, _ in given})
        count = f"{len(given)} geoms touch" if len(given) > 1 else "1 geom touches"
        reader.lenient.append(
            f"<pair>s with the world's plane {plane!r} (from line {given[0][2]}): {count} the ground "
            f"({', '.join(names[:4])}{', …' if len(names) > 4 else ''}); its height, normal and friction are "
            f"dp.Ground's (the file's pairs give μ = {', '.join(mus)})"
        )
    return out


def _geom_frame(reader: _Reader, el, attrs: dict, kind: str) -> tuple[np.ndarray, Pose]:
    """(size, pose in the body) of a primitive geom: MuJoCo's three size numbers (radius, half length, …; a box's
    half edges), its ``fromto`` segment read as a pose and a half length; sizes refused where MuJoCo refuses them."""
    size = reader.numbers(el, attrs, "size", (1, 2, 3), (0.0, 0.0, 0.0))
    size = np.r_[size, np.zeros(3 - size.size)]
    fromto = reader.numbers(el, attrs, "fromto", 6)
    if fromto is not None:
        if kind not in ("capsule", "cylinder", "box", "ellipsoid"):
            raise reader.error(el, f"fromto is not for a {kind}")
        a, b = fromto[:3], fromto[3:]
        half = 0.5 * float(np.linalg.norm(b - a))
        pose = (_rotation_to(_unit(reader, el, a - b, "fromto's segment")), 0.5 * (a + b))  # z from "to" to "from"
        size = np.array([size[0], half, size[2]]) if kind in ("capsule", "cylinder") else np.array(
            [size[0], size[1], half])  # fmt: skip
    else:
        pose = reader.pose(el, attrs)
    needed = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}.get(kind, 0)
    if needed and not np.all(size[:needed] > 0):
        raise reader.error(el, f"a {kind} of size {size[:needed].tolist()}: its size must be positive (MuJoCo "
                               "refuses it too)")  # fmt: skip
    return size, pose


def _geom_inertia(reader: _Reader, el, attrs: dict) -> tuple[float, Pose, np.ndarray] | None:
    """(mass, pose in the body, inertia about the centre in that pose) of a geom, as MuJoCo computes it from
    ``mass`` or ``density`` (default 1000); None for a geom of no mass."""
    kind = attrs.get("type", "sphere")
    given = reader.numbers(el, attrs, "mass", 1)
    density = float(reader.numbers(el, attrs, "density", 1, (1000.0,))[0])
    if (given is not None and given[0] < 0) or density < 0:
        raise reader.error(el, "a negative mass or density")
    if (given is not None and given[0] == 0.0) or (given is None and density == 0.0) or kind == "plane":
        return None  # a geom of no mass (MuJoCo's visual geoms) adds nothing, whatever its shape
    if kind == "mesh":
        measure, centre, I = reader.mesh_properties(attrs.get("mesh", ""), el)
        mass = float(given[0]) if given is not None else density * measure
        R, p = reader.pose(el, attrs)
        return mass, (R, p + R @ centre), I * (mass / measure)
    size, pose = _geom_frame(reader, el, attrs, kind)
    r = size[0]
    if kind == "sphere":
        vol = 4.0 / 3.0 * math.pi * r**3
        moments = lambda m: np.full(3, 0.4 * m * r * r)  # noqa: E731
    elif kind == "capsule":
        h = 2.0 * size[1]
        vol = math.pi * r * r * h + 4.0 / 3.0 * math.pi * r**3

        def moments(m):
            sphere = m * (4.0 / 3.0 * r) / (h + 4.0 / 3.0 * r)  # the masses in proportion to the volumes
            cyl = m - sphere
            ix = cyl * (3 * r * r + h * h) / 12 + sphere * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8)
            return np.array([ix, ix, cyl * r * r / 2 + sphere * 2 * r * r / 5])
    elif kind == "cylinder":
        h = 2.0 * size[1]
        vol = math.pi * r * r * h
        moments = lambda m: np.array([m * (3 * r * r + h * h) / 12] * 2 + [m * r * r / 2])  # noqa: E731
    elif kind in ("box", "ellipsoid"):
        a, b, c = size
        vol = 8 * a * b * c if kind == "box" else 4.0 / 3.0 * math.pi * a * b * c
        k = 3.0 if kind == "box" else 5.0
        moments = lambda m: m / k * np.array([b * b + c * c, a * a + c * c, a * a + b * b])  # noqa: E731
    else:
        raise reader.error(el, f"the inertia of a {kind} geom is not computed (box, sphere, capsule, cylinder, "
                               "ellipsoid, mesh are); give the body an <inertial>")  # fmt: skip
    mass = float(given[0]) if given is not None else density * vol
    return mass, pose, np.diag(moments(mass))


def load_mjcf(path, root_joint=None, *, strict: bool = False) -> Model:
    """Load an MJCF file into a :class:`Model`, its equality constraints as loops and couplings.

    root_joint: None keeps the file's joints (a free joint on a top-level body is a free-flyer; a top-level body
    without joints is welded to the world); ``"free-flyer"`` or ``"planar"`` carries a top-level body that has no
    joint.  strict: refuse what loads with a :class:`ModelWarning` otherwise.  Raises :class:`ModelError` naming
    file, line and element.
    """
    path = robot_file(path, root_joint, ROOT_JOINTS)
    reader = _Reader(path, strict)
    tree = _Tree(reader, root_joint)
    tree.paired = {el.get(key) for el in reader.root.iter("pair") for key in ("geom1", "geom2")}
    for world in reader.root.findall("worldbody"):  # several (one per included file, say): one world
        for el, X, cls in tree.children(world, None, ("body", "site")):
            if el.tag == "body":
                tree.add(el, 0, X, cls, top=True)
            else:
                tree.site(el, X, cls, "world", 0, (np.eye(3), np.zeros(3)))
    if not tree.world.keys() - {"world"}:
        raise ModelError(f"{path}: no <worldbody> with a <body>")
    if len(tree.names) < 2:
        raise ModelError(f"{path}: no movable joint (hinge, slide, ball or free)")
    loops, couplings = _equalities(reader, tree)
    excluded = _excluded(reader, tree)
    paired = _pairs(reader, tree)
    flags = _flags(reader)
    if (flags.get("equality") == "disable" or flags.get("constraint") == "disable") and (loops or couplings):
        reader.lenient.append("<option><flag equality/constraint=\"disable\"/>: MuJoCo leaves the equality "
                              "constraints out, and so does denoc_pin (their loops and couplings)")  # fmt: skip
        loops, couplings = [], []
    if (flags.get("contact") == "disable" or flags.get("constraint") == "disable") and tree.collisions:
        reader.lenient.append("<option><flag contact/constraint=\"disable\"/>: MuJoCo leaves contacts out, and so "
                              "does denoc_pin (model.collisions is empty)")  # fmt: skip
        tree.collisions, excluded, paired = [], [], []
    sizes = {"density": 1, "viscosity": 1, "wind": 3}  # the medium (MuJoCo's fluid forces)
    fluid = [k for el in reader.root.findall("option") for k, n in sizes.items()
             if np.any(reader.numbers(el, dict(el.attrib), k, n, (0.0,) * n) != 0)]  # fmt: skip
    if fluid:
        reader.lenient.append(f"left out, beyond the rigid-body dynamics: the medium's forces (<option> "
                              f"{', '.join(sorted(set(fluid)))})")  # fmt: skip
    used = {
        el.get(k) for eq in reader.root.iter("equality") for el in eq.iter("tendon") for k in ("tendon1", "tendon2")
    }
    beyond = [
        t for el in reader.root.findall("tendon") for t in el if isinstance(t.tag, str) and t.get("name") not in used
    ]
    ignored = sorted({el.tag for tag in IGNORED for el in reader.root.iter(tag) if tag != "tendon" or beyond}
                     | {f"joint {a}" for el in reader.root.iter("joint") for a in IGNORED_JOINT_ATTRIBUTES
                        if a in el.attrib})  # fmt: skip
    if ignored:
        reader.lenient.append(f"left out, beyond the rigid-body dynamics: {', '.join(ignored)}")
    if reader.lenient and strict:
        raise ModelError(f"{path}: {reader.lenient[0]} (strict=True refuses what the default only warns about)")
    for message in reader.lenient:
        warnings.warn(f"{path}: {message}", ModelWarning, stacklevel=2)
    if reader.settotalmass > 0:  # after the bounds: every body's mass and inertia scaled to the total
        total = sum(part[2] for part in tree.parts) + tree.static_mass
        if not total > 0:
            raise ModelError(f"{path}: <compiler settotalmass={reader.settotalmass:g}>: the model has no mass to scale")
        scale = reader.settotalmass / total
        tree.parts = [(k, pose, m * scale, Ri, pi, I * scale) for k, pose, m, Ri, pi, I in tree.parts]
    mass, com, I_com = body_inertias(tree.parts, len(tree.names))
    name = reader.root.get("model", path.stem)
    options = [el for el in reader.root.findall("option") if "gravity" in el.attrib]  # the last one given wins
    gravity = reader.numbers(options[-1], dict(options[-1].attrib), "gravity", 3) if options else None
    if flags.get("gravity") == "disable":  # <option><flag gravity="disable"/>: no gravity in the dynamics
        gravity = np.zeros(3)
    try:
        model = Model(
            **{f: np.array(v, dtype=float) for f, v in tree.limits.items()},
            name=name, names=tree.names, link_names=tree.links, parents=tree.parents, kinds=tree.kinds,
            axes=tree.axes, placement_rotation=tree.R, placement_translation=tree.p, masses=mass, coms=com,
            inertias=I_com, frames=tree.frames, source=str(path),
            gravity=(0.0, 0.0, -9.81) if gravity is None else gravity,
            loops=resolve_loops(name, tree.links, tree.frames, loops, couplings, tree.names, tree.kinds),
            collisions=tree.collisions, excluded_collisions=excluded, collision_pairs=paired,
        )  # fmt: skip
    except ModelError as e:
        raise ModelError(f"{path}: {e}") from None
    check_not_singular(model, where=str(path), strict=strict)
    return model


class _Tree:
    """The bodies as they are read: per body its joint, link, parent, kind, axis, placement; the links' inertia
    parts, where each body and link sits (``link_pose``: body and pose) and at q = 0 in the world (``world``); the
    sites (``sites``) have names of their own, as each kind of MuJoCo element has."""

    def __init__(self, reader: _Reader, root_joint):
        eye, zero = np.eye(3), np.zeros(3)
        self.reader, self.root_joint = reader, root_joint
        self.names, self.links, self.parents, self.kinds = ["universe"], ["world"], [0], [0]
        self.axes, self.R, self.p = [zero], [eye], [zero]
        self.file_pose: list[Pose] = [(eye, zero)]  # each placement at q = ref, the file's pose (R, p: at q = 0)
        self.frames = [Frame("universe", 0, eye, zero, "fixed_joint"), Frame("world", 0, eye, zero)]
        self.limits: dict[str, list] = {f: [] for f in LIMIT_FIELDS}
        self.parts: list = []
        self.static_mass = 0.0  # the bodies welded to the world: towards the total mass only
        self.link_pose: dict[str, tuple[int, Pose]] = {"world": (0, (eye, zero))}
        self.sites: dict[str, tuple[str, Pose]] = {}  # each site's body and its pose in that body's frame
        self.world: dict[str, Pose] = {"world": (eye, zero)}
        self.joint_names: set = set()
        self.qpos0: dict[str, float] = {}  # a hinge's or slide's position in the file's pose (MuJoCo's qpos0: ref)
        self.count = 0
        self.collisions: list[Collision] = []
        self.collision_names: set[str] = set()
        self.paired: set = set()  # the geoms a <contact><pair> names: read even where their bits touch nothing

    def _name(self, el, prefix: str) -> str:
        self.count += 1
        return el.get("name") or f"{prefix}_{self.count}"

    def _body(self, name, link, parent, kind, R, p, axis, limits, file_pose: Pose | None = None) -> int:
        self.file_pose.append((R, p) if file_pose is None else file_pose)
        self.names.append(name)
        self.links.append(link)
        self.parents.append(parent)
        self.kinds.append(kind)
        self.axes.append(axis)
        self.R.append(R)
        self.p.append(p)
        k = len(self.names) - 1
        for f, v in zip(LIMIT_FIELDS, limits, strict=True):
            self.limits[f].extend(v)
        return k

    def add(self, el, parent: int, in_parent: Pose, cls: str | None, top: bool = False) -> None:
        """Body ``el`` (and its subtree) under body ``parent``; ``in_parent``: the pose of ``el``'s parent link in
        the frame of body ``parent``."""
        reader = self.reader
        attrs = reader.attrib(el, cls)
        name = self._name(el, "body")
        if name in self.link_pose:
            raise reader.error(el, f"a body named {name!r} exists already")
        cls = el.get("childclass", cls)
        X = compose_poses(in_parent, reader.pose(el, attrs))  # the body's frame in body ``parent``'s at q = 0
        joints = [j for j in el if isinstance(j.tag, str) and j.tag in ("joint", "freejoint")]
        if top and not joints and self.root_joint is not None:
            joints = ["root"]
        free = any(j == "root" or j.tag == "freejoint" or reader.attrib(j, cls).get("type") == "free" for j in joints)
        if free:  # a free joint's q is the body's pose in the world (MuJoCo's qpos): the file's pose is only qpos0
            X = (np.eye(3), np.zeros(3))
        k, T = parent, X  # T: the frame of body k that the next joint hangs from, in body k
        for i, j in enumerate(joints):
            last = i == len(joints) - 1
            if j == "root":
                jname, kind, anchor, axis, limits = "root_joint", ROOT_JOINTS[self.root_joint], np.zeros(3), None, None
            else:
                ja = reader.attrib(j, cls) if j.tag == "joint" else dict(j.attrib)
                jtype = "free" if j.tag == "freejoint" else ja.get("type", "hinge")
                if jtype not in MJCF_JOINT_TYPES:
                    raise reader.error(j, f"type {jtype!r}; joint types are: {', '.join(MJCF_JOINT_TYPES)}")
                if jtype == "free" and not top:
                    raise reader.error(j, "a free joint belongs on a top-level body")
                jname = self._name(j, f"{name}_joint")
                kind = MJCF_JOINT_TYPES[jtype]
                anchor = reader.numbers(j, ja, "pos", 3, (0.0, 0.0, 0.0)) if jtype != "free" else np.zeros(3)
                axis = (_unit(reader, j, reader.numbers(j, ja, "axis", 3, (0.0, 0.0, 1.0)), "axis")
                        if kind in (REVOLUTE, PRISMATIC) else None)  # fmt: skip
                limits = self._range(j, ja, kind)
                ref = reader.numbers(j, ja, "ref", 1, (0.0,))[0] if kind in (REVOLUTE, PRISMATIC) else 0.0
                if kind in (REVOLUTE, PRISMATIC):
                    self.qpos0[jname] = reader.angle(ref) if kind == REVOLUTE else float(ref)
            if jname in self.joint_names:
                raise reader.error(j if j != "root" else el, f"a joint named {jname!r} exists already")
            self.joint_names.add(jname)
            # the joint frame: the body's frame moved to the joint's anchor (axes in the body's frame)
            J = compose_poses(X, (np.eye(3), anchor))
            in_file = placement = compose_poses(inverse_pose(T), J) if k != parent else J
            if j != "root" and ref != 0.0:  # the file's pose is at q = ref (MuJoCo's qpos0): q − ref moves from it
                back = ((axis_angle(axis, -reader.angle(ref)), np.zeros(3)) if kind == REVOLUTE else
                        (np.eye(3), -ref * axis))  # fmt: skip
                placement = compose_poses(placement, back)
            link = name if last else f"{name}::{jname}"
            nq, nv = JOINTS[kind].nq, JOINTS[kind].nv
            limits = limits or ([-UNBOUNDED] * nq, [UNBOUNDED] * nq, [np.inf] * nv, [np.inf] * nv)
            k = self._body(jname, link, k, kind, placement[0], placement[1],
                           np.zeros(3) if axis is None else axis, limits, in_file)  # fmt: skip
            T = J
            self.frames.append(Frame(jname, k, np.eye(3), np.zeros(3), "joint"))
            if not last:
                self.frames.append(Frame(link, k, np.eye(3), np.zeros(3)))
                self.link_pose[link] = (k, (np.eye(3), np.zeros(3)))
        # the body's own frame in body k
        pose = compose_poses(inverse_pose(T), X) if k != parent else X
        self.frames.append(Frame(name, k, *pose))
        self.link_pose[name] = (k, pose)
        self.world[name] = compose_poses(self._world_of(k), pose)
        self._inertia(el, attrs, cls, name, k, pose)
        for i, (g, Xg, gcls) in enumerate(self.children(el, cls, ("geom",))):
            self._collision(g, Xg, gcls, name, i, k, pose)
        for child, Xc, ccls in self.children(el, cls, ("site", "body")):
            if child.tag == "site":
                self.site(child, Xc, ccls, name, k, pose)
            else:
                self.add(child, k, compose_poses(pose, Xc), ccls)

    def children(self, el, cls: str | None, tags: tuple[str, ...]):
        """(child, its frame's pose in ``el``, its class) for ``el``'s children of ``tags``, those inside
        ``<frame>`` elements (MuJoCo 3) included: a frame moves what it holds and gives it its ``childclass``."""
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "frame":
                F = self.reader.pose(child, dict(child.attrib))
                for inner, X, icls in self.children(child, child.get("childclass", cls), tags):
                    yield inner, compose_poses(F, X), icls
            elif child.tag in tags:
                yield child, (np.eye(3), np.zeros(3)), cls
            elif child.tag in BODY_MAKERS:
                raise self.reader.error(child, "it makes bodies: not read; write the bodies out, or compile the "
                                               "file with MuJoCo and save it (mj_saveLastXML)")  # fmt: skip
            elif el.tag == "frame" and child.tag in ("joint", "freejoint"):
                raise self.reader.error(child, "a joint inside a <frame> is not read; put it in the body")

    def site(self, el, X: Pose, cls, body: str, k: int, pose: Pose) -> None:
        """Site ``el`` of ``body`` (body k's link frame at ``pose``), inside frames at ``X``: an op_frame."""
        attrs = self.reader.attrib(el, cls)
        if "fromto" in attrs:  # the segment's midpoint, its z axis along it (as a geom's)
            sized = {**attrs, "size": attrs.get("size", "1 1 1")}  # a site's size only draws it
            own = _geom_frame(self.reader, el, sized, attrs.get("type", "sphere"))[1]
        else:
            own = self.reader.pose(el, attrs)
        in_body = compose_poses(X, own)
        sname = self._name(el, f"{body}_site")
        self.frames.append(Frame(sname, k, *compose_poses(pose, in_body), "op_frame"))
        if sname in self.sites:  # each kind of element has its own names (MuJoCo's): a site's only the sites'
            raise self.reader.error(el, f"a site named {sname!r} exists already")
        self.sites[sname] = (body, in_body)

    def _collision(self, el, X: Pose, cls, body: str, i: int, k: int, pose: Pose) -> None:
        """Geom ``el`` (``body``'s i-th) as a :class:`Collision` on body k, unless it touches nothing (``contype`` and
        ``conaffinity`` 0: MuJoCo's visual geoms) and no ``<pair>`` names it.  Its bits are kept; its friction is the
        sliding one, 0 where ``condim`` is 1.  A shape denoc_pin does not detect (ellipsoid, height field, SDF, a
        plane on a body) is left out with a warning: the dynamics do not read it."""
        reader = self.reader
        attrs = reader.attrib(el, cls)
        contype, conaffinity = (int(reader.numbers(el, attrs, key, 1, (1.0,))[0]) for key in ("contype", "conaffinity"))
        if contype == 0 and conaffinity == 0 and el.get("name") not in self.paired:
            return  # touches nothing: a visual geom (unless a <pair> names it)
        kind = attrs.get("type", "sphere")
        gname = unique_name(el.get("name") or f"{body}_geom_{i}", self.collision_names)
        if kind == "mesh":
            try:
                shape, in_body = reader.collision_mesh(attrs.get("mesh", ""), el), reader.pose(el, attrs)
            except (ModelError, ValueError) as e:
                where = str(e).removeprefix(f"{reader.path}: ")
                reader.lenient.append(f"{where}: geom {gname!r} (line {el.sourceline}) is left out of the collisions")
                return
        elif kind in ("sphere", "capsule", "cylinder", "box") and "mesh" in attrs and "size" not in attrs:
            reader.lenient.append(
                f"<geom> {gname!r} (line {el.sourceline}): a {kind} fitted to mesh "
                f"{attrs['mesh']!r} (MuJoCo sizes it from the mesh) is not read as a collision; it is left out"
            )
            return
        elif kind in ("sphere", "capsule", "cylinder", "box"):
            size, in_body = _geom_frame(reader, el, attrs, kind)
            shape = {
                "sphere": lambda: Sphere(size[0]),
                "capsule": lambda: Capsule(size[0], 2.0 * size[1]),
                "cylinder": lambda: Cylinder(size[0], 2.0 * size[1]),
                "box": lambda: Box(2.0 * size),
            }[kind]()
        else:
            reader.lenient.append(
                f"<geom> {gname!r} (line {el.sourceline}): type {kind!r} is not a collision shape "
                "denoc_pin detects (sphere, capsule, cylinder, box, mesh); it is left out"
            )
            return
        condim = int(reader.numbers(el, attrs, "condim", 1, (3.0,))[0])
        mu = 0.0 if condim == 1 else float(reader.numbers(el, attrs, "friction", (1, 2, 3), (1.0,))[0])
        R, p = compose_poses(pose, compose_poses(X, in_body))
        self.collisions.append(Collision(gname, body, k, shape, R, p, group=contype, mask=conaffinity, friction=mu))

    def _world_of(self, k: int) -> Pose:
        """Body k's frame in the world in the file's pose, at q = ref (MuJoCo's qpos0; q = 0 where no joint has a
        ref), where MuJoCo places the equality constraints' anchors."""
        eye, zero = np.eye(3), np.zeros(3)
        chain = []
        while k > 0:
            chain.append(self.file_pose[k])
            k = self.parents[k]
        out = (eye, zero)
        for X in reversed(chain):
            out = compose_poses(out, X)
        return out

    def _range(self, j, ja: dict, kind: int):
        nv = JOINTS[kind].nv
        rng = self.reader.numbers(j, ja, "range", 2)
        limited = ja.get("limited", "auto")
        on = limited == "true" or (limited == "auto" and self.reader.autolimits and rng is not None)
        if kind not in (REVOLUTE, PRISMATIC) or not on or rng is None:
            return None
        lo, hi = (self.reader.angle(x) for x in rng) if kind == REVOLUTE else rng
        return [lo], [hi], [np.inf] * nv, [np.inf] * nv

    def _inertia(self, el, attrs, cls, name: str, k: int, pose: Pose) -> None:
        """Body ``el``'s inertia parts (its ``<inertial>``, or its geoms' in the compiler's ``inertiagrouprange``),
        bounded and balanced as the compiler says; a body welded to the world only counts towards the total mass
        (``settotalmass``)."""
        reader = self.reader
        if k == 0 and not reader.settotalmass > 0:  # welded to the world: its mass moves nothing, its files unread
            return
        own: list = []  # (mass, R, p, inertia about p in R) in the body's frame
        inertial = el.find("inertial")
        use_geoms = reader.from_geom == "true" or (reader.from_geom == "auto" and inertial is None)
        if inertial is not None and not use_geoms:
            ia = dict(inertial.attrib)
            m = float(reader.numbers(inertial, ia, "mass", 1, (0.0,))[0])
            full = reader.numbers(inertial, ia, "fullinertia", 6)
            diag = reader.numbers(inertial, ia, "diaginertia", 3)
            if (full is None) == (diag is None):
                raise reader.error(inertial, "give diaginertia or fullinertia (one of them)")
            if full is not None:
                xx, yy, zz, xy, xz, yz = full
                I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            else:
                I = np.diag(diag)
            Ri, pi = reader.pose(inertial, ia)
            if not (reader.balanceinertia or reader.boundmass > 0 or reader.boundinertia > 0):
                check_inertia(reader.path, name, m, Ri @ I @ Ri.T, reader.strict)
            own.append((m, Ri, pi, I))
        elif use_geoms:
            lo, hi = reader.inertia_groups
            for g, X, gcls in self.children(el, cls, ("geom",)):
                gattrs = reader.attrib(g, gcls)
                if not lo <= int(reader.numbers(g, gattrs, "group", 1, (0.0,))[0]) <= hi:
                    continue  # outside the compiler's inertiagrouprange: no mass
                found = _geom_inertia(reader, g, gattrs)
                if found is not None:
                    m, G, I = found
                    own.append((m, *compose_poses(X, G), I))
        if reader.balanceinertia or reader.boundmass > 0 or reader.boundinertia > 0:
            own = [_bounded(reader, *_combined(own))]
        if k == 0:  # MuJoCo's static bodies: towards the total only
            self.static_mass += sum(part[0] for part in own)
            return
        self.parts += [(k, pose, *part) for part in own]


def _combined(parts: list) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One body's parts (mass, R, p, inertia about p in R) as one: (mass, principal axes R, centre, principal
    moments) — MuJoCo's body inertia (its ipos, iquat, inertia)."""
    eye, zero = np.eye(3), np.zeros(3)
    mass, com, I_com = body_inertias([(0, (eye, zero), *part) for part in parts], 1)  # summed as a body's links
    m, c, I = float(mass[0]), com[0], I_com[0]
    if not m > 0:
        return 0.0, eye, zero, zero
    w, V = np.linalg.eigh(0.5 * (I + I.T))
    if np.linalg.det(V) < 0:
        V[:, 2] = -V[:, 2]
    return m, V, c, w


def _bounded(reader: _Reader, m: float, R: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple:
    """A body's (mass, R, centre, principal moments) under the compiler's ``balanceinertia`` (moments that break
    A + B ≥ C all set to their mean), ``boundmass`` and ``boundinertia`` (lower bounds), as a part."""
    w = np.array(w, dtype=float)
    if reader.balanceinertia and not (w[0] + w[1] >= w[2] and w[0] + w[2] >= w[1] and w[1] + w[2] >= w[0]):
        w[:] = w.mean()
    return max(m, reader.boundmass), R, c, np.diag(np.maximum(w, reader.boundinertia))


def _equalities(reader: _Reader, tree: _Tree) -> tuple[list[LoopJoint], list[JointCoupling]]:
    """``connect`` → spherical cut (anchor in body1's frame; body2's point where it is at q = 0), ``weld`` → fixed
    cut (``relpose`` of body2 in body1, or their poses at q = 0), ``joint`` and ``tendon`` (fixed tendons) →
    coupling (``_linear_equality``)."""
    loops, couplings, i = [], [], 0
    tendons = _fixed_tendons(reader, tree)
    for el in (el for eq in reader.root.findall("equality") for el in eq):
        if not isinstance(el.tag, str):
            continue
        i += 1
        attrs = reader.attrib(el, None)
        name = el.get("name") or f"{el.tag}_{i}"
        if attrs.get("active", "true") == "false":
            reader.lenient.append(f"<{el.tag}> {name!r} (line {el.sourceline}) is inactive: left out")
            continue
        if el.tag == "connect" and ("site1" in attrs or "site2" in attrs):  # MuJoCo 3.1: the two sites' origins meet
            ends, points = [], []
            for role in ("site1", "site2"):
                site = attrs.get(role)
                if site not in tree.sites:
                    raise reader.error(el, f"{role} {site!r} is not a site; sites are: {quoted(tree.sites)}")
                if "body1" in attrs or "body2" in attrs or "anchor" in attrs:
                    raise reader.error(el, "a connect takes site1 and site2, or body1, body2 and anchor: not both")
                body, (_, p) = tree.sites[site]
                ends.append(body)
                points.append((np.eye(3), p))
            loops.append(LoopJoint(name, "spherical", ends[0], ends[1], *points))
        elif el.tag == "weld" and ("site1" in attrs or "site2" in attrs):
            raise reader.error(el, "a weld between sites is not read; give body1, body2 (and relpose)")
        elif el.tag in ("connect", "weld"):
            ends = []
            for role in ("body1", "body2"):
                b = attrs.get(role, "world" if role == "body2" else None)
                if b is None or b not in tree.world:
                    raise reader.error(el, f"{role} {b!r} is not a body; bodies are: {quoted(tree.world)}")
                ends.append(b)
            W1, W2 = tree.world[ends[0]], tree.world[ends[1]]
            if el.tag == "connect":
                anchor = reader.numbers(el, attrs, "anchor", 3)
                if anchor is None:
                    raise reader.error(el, "a connect needs anchor (a point of body1, in its frame)")
                C1 = (np.eye(3), anchor)
                C2 = compose_poses(inverse_pose(W2), compose_poses(W1, C1))
                loops.append(LoopJoint(name, "spherical", ends[0], ends[1], C1, C2))
            else:
                rel = reader.numbers(el, attrs, "relpose", 7, (0, 1, 0, 0, 0, 0, 0))
                if np.abs(rel[3:]).max() == 0.0:  # MuJoCo's default: the relative pose at q = 0
                    C1 = compose_poses(inverse_pose(W1), W2)
                else:
                    w, x, y, z = rel[3:] / np.linalg.norm(rel[3:])
                    C1 = (quaternion_rotation(x, y, z, w), rel[:3])
                loops.append(LoopJoint(name, "fixed", ends[0], ends[1], C1, (np.eye(3), np.zeros(3))))
        elif el.tag in ("joint", "tendon"):
            couplings.append(_linear_equality(reader, tree, el, attrs, name, tendons))
        else:
            raise reader.error(el, f"the equality type <{el.tag}> is not read; connect, weld, joint and tendon are")
    return loops, couplings


def _flags(reader: _Reader) -> dict[str, str]:
    """``<option><flag …>`` (MuJoCo's XML reference, option/flag), the last value given of each: "enable" or
    "disable" (anything else a ModelError)."""
    out = {}
    for el in (f for option in reader.root.findall("option") for f in option.findall("flag")):
        for key, value in el.attrib.items():
            if value not in ("enable", "disable"):
                raise reader.error(el, f"{key}={value!r}: expected enable or disable")
            out[key] = value
    return out


def _fixed_tendons(reader: _Reader, tree: _Tree) -> dict[str, dict[str, float]]:
    """``<tendon><fixed>``: each fixed tendon's length L = Σ coefᵢ qᵢ as {joint: coef} (a joint listed twice adds
    up); a joint the model does not have is a ModelError."""
    out: dict[str, dict[str, float]] = {}
    for t in (t for el in reader.root.findall("tendon") for t in el.findall("fixed")):
        terms: dict[str, float] = {}
        for j in t.findall("joint"):
            ja = reader.attrib(j, None)
            joint = ja.get("joint")
            if joint not in tree.qpos0:
                raise reader.error(j, f"joint {joint!r} is not a hinge or slide joint of the model; a fixed tendon "
                                      f"sums those: {quoted(tree.qpos0)}")  # fmt: skip
            terms[joint] = terms.get(joint, 0.0) + float(reader.numbers(j, ja, "coef", 1, (1.0,))[0])
        if t.get("name"):
            out[t.get("name")] = terms
    return out


def _linear_equality(reader: _Reader, tree: _Tree, el, attrs: dict, name: str, tendons: dict) -> JointCoupling:
    """A joint or fixed-tendon equality (MuJoCo's XML reference, equality/joint and equality/tendon): y − y₀ =
    a₀ + a₁ (x − x₀) with y, x the first and second joint's position or tendon's length and y₀, x₀ theirs in the
    file's pose (qpos0), or y − y₀ = a₀ without a second — a linear relation Σ cⱼ qⱼ = b.  Over two joints it is a
    :class:`JointCoupling`; over one, the joint held at a value (a coupling of the joint to itself, multiplier 0).
    polycoef beyond a₁, or a relation over more joints, is refused (a coupling joins two joints)."""
    role1, role2 = ("joint1", "joint2") if el.tag == "joint" else ("tendon1", "tendon2")
    coef = reader.numbers(el, attrs, "polycoef", 5, (0, 1, 0, 0, 0))
    ends = []
    for role in (role1, role2):
        key = attrs.get(role)
        if key is None:
            if role == role1:
                raise reader.error(el, f"a {el.tag} equality needs {role1}")
            ends.append(None)
        elif el.tag == "joint":
            if key not in tree.qpos0:
                raise reader.error(el, f"{role} {key!r} is not a hinge or slide joint; they are {quoted(tree.qpos0)}")
            ends.append({key: 1.0})
        else:
            if key not in tendons:
                listed = quoted(tendons) or "none"
                raise reader.error(el, f"{role} {key!r} is not a fixed tendon; fixed tendons are: {listed} (a "
                                       "spatial tendon's length is not a joint's)")  # fmt: skip
            ends.append(tendons[key])
    if ends[1] is not None and np.abs(coef[2:]).max() > 0:
        raise reader.error(el, f"polycoef {coef.tolist()}: only the linear part (a0 + a1 x) is read")
    terms: dict[str, float] = {}  # Σ cⱼ qⱼ = b
    b = float(coef[0]) + sum(c * tree.qpos0[j] for j, c in ends[0].items())
    for j, c in ends[0].items():
        terms[j] = terms.get(j, 0.0) + c
    if ends[1] is not None:
        for j, c in ends[1].items():
            terms[j] = terms.get(j, 0.0) - coef[1] * c
            b -= coef[1] * c * tree.qpos0[j]
    terms = {j: c for j, c in terms.items() if c != 0.0}
    if not terms or len(terms) > 2:
        raise reader.error(el, f"the equality relates {len(terms)} joints ({', '.join(terms) or 'none'}); a "
                               "coupling joins two, or holds one")  # fmt: skip
    (j1, c1), *rest = terms.items()
    if not rest:  # one joint held: q₁ = b / c₁
        return JointCoupling(name, j1, j1, 0.0, b / c1)
    j2, c2 = rest[0]
    return JointCoupling(name, j1, j2, -c2 / c1, b / c1)


def mujoco_state(model: Model, qpos: np.ndarray, qvel: np.ndarray | None = None):
    """(q, v) in Pinocchio's layout from MuJoCo's (qpos, qvel) of the same MJCF file: a ball joint's quaternion
    (w, x, y, z) → (x, y, z, w); a free joint's qpos (x, y, z, w, qx, qy, qz) → (x, y, z, qx, qy, qz, w) and its
    qvel (v_world, ω_body) → (v_body, ω_body)."""
    return _state(model, qpos, qvel, to_mujoco=False)


def to_mujoco_state(model: Model, q: np.ndarray, v: np.ndarray | None = None):
    """(qpos, qvel) in MuJoCo's layout from (q, v) in Pinocchio's — ``mujoco_state``'s inverse: a ball joint's
    quaternion (x, y, z, w) → (w, x, y, z); a free-flyer's (x, y, z, qx, qy, qz, qw) → (x, y, z, w, qx, qy, qz) and
    its velocity (v_body, ω_body) → (v_world, ω_body).  For a model from any file whose floating base is the root's
    world pose (MJCF, SDF with ``root_joint="free-flyer"``, URDF with a free-flyer)."""
    return _state(model, q, v, to_mujoco=True)


def _state(model: Model, q: np.ndarray, v: np.ndarray | None, to_mujoco: bool):
    """The one conversion, either way: each ball or free joint's quaternion reordered, a free joint's linear
    velocity turned by its rotation R (world = R body)."""
    q = np.asarray(q, dtype=float)
    q_out = q.copy()
    v_out = None if v is None else np.asarray(v, dtype=float).copy()
    for k in range(1, model.njoints):
        if model.kinds[k] not in (SPHERICAL, FREE_FLYER):
            continue
        i = int(model.idx_q[k]) + (3 if model.kinds[k] == FREE_FLYER else 0)  # the quaternion's first entry
        xyzw = q[i : i + 4] if to_mujoco else np.r_[q[i + 1 : i + 4], q[i]]
        q_out[i : i + 4] = np.r_[xyzw[3], xyzw[:3]] if to_mujoco else xyzw
        if model.kinds[k] == FREE_FLYER and v_out is not None:
            R = quaternion_rotation(*xyzw)
            iv = int(model.idx_v[k])
            v_out[iv : iv + 3] = (R if to_mujoco else R.T) @ v_out[iv : iv + 3]
    return q_out, v_out
