"""SDFormat → :class:`Model`, closed loops included, without Pinocchio's SDF support (its pip wheel has none).

The subset robot files use, versions 1.3 (read as 1.4) to 1.12 (``docs/sdf.md``): one ``<model>`` (nested models
flattened, their names scoped ``outer::inner::link``), ``<link>`` with ``<pose>``, ``<inertial>``, ``<visual>`` and
``<collision>`` (``model.collisions``),
``<frame>``, and ``<joint>`` of types revolute, continuous, prismatic, ball, universal, fixed and gearbox;
``<include>``s expanded first (``model://`` in gz-sim's model paths), and in a world of static scenery its one
moving model.

Poses form a graph (``relative_to``, ``attached_to``, each element's default frame) resolved into the model frame:
the joints' file pose is q = 0; a floating root's q is the root link's pose in the world (``root_joint``), as
MuJoCo's and Drake's floating bases are, so q = 0 puts the root at the origin, as the fixed base is. A link may be
the child of several joints (a closed loop): the spanning tree keeps one parent joint per link and every other joint
becomes a :class:`LoopJoint` of its own type (``choose_tree``); a gearbox joint adds no joint but a
:class:`JointCoupling` between the two joints it gears. Each body's frame is its joint's frame (the child link's
frame moved by the joint's ``<pose>``), so every joint turns about its body's origin; the link's own frame is a
frame of that body.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..algorithms.checks import check_not_singular
from ..core.joints import (
    CONTINUOUS,
    JOINTS,
    PRISMATIC,
    REVOLUTE,
    ROOT_JOINTS,
    UNIVERSAL,
    spellings,
)
from ..core.shapes import Box, Capsule, Collision, Cylinder, Mesh, Shape, Sphere
from ..core.spatial import quaternion_rotation
from ..loops import LOOP_TYPES, JointCoupling, LoopJoint, resolve_loops
from ..model import LIMIT_FIELDS, MAX_MAGNITUDE, UNBOUNDED, Frame, Model, ModelError, ModelWarning
from .robots import mesh_file, mesh_folders
from .urdf import body_inertias, check_inertia, rpy_matrix
from .urdf_xml import parse_xml, quoted, robot_file

__all__ = ["SDF_JOINT_TYPES", "SDF_VERSIONS", "Pose", "compose_poses", "inverse_pose", "load_sdf", "sdf_visuals"]

SDF_VERSIONS = ("1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12")
# SDF joint type -> tree joint kind (``JOINTS``' sdf spellings; None: fixed, merged into the parent body;
# "gearbox": a coupling).
SDF_JOINT_TYPES = {**spellings("sdf"), "fixed": None, "gearbox": "gearbox"}
CUT_TYPE = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "ball": "spherical",
            "universal": "universal", "fixed": "fixed"}  # fmt: skip
"""The cut joint (``LoopJoint`` type) an SDF joint becomes when it closes a loop."""
NO_LIMIT = 1e16  # the specification's default <lower>/<upper>: "no limit"
WORLD = "world"

Pose = tuple[np.ndarray, np.ndarray]  # (R, p): a frame in another, x_outer = R x + p


def compose_poses(a: Pose, b: Pose) -> Pose:
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def inverse_pose(a: Pose) -> Pose:
    return a[0].T, -a[0].T @ a[1]


def _relative(a: Pose, b: Pose) -> Pose:
    """b in a's frame (both in the model frame)."""
    return compose_poses(inverse_pose(a), b)


@dataclass
class _Node:
    """A frame of the pose graph: a model, link, joint or ``<frame>``, scoped name, with its ``<pose>``."""

    name: str
    kind: str  # "model", "link", "joint", "frame"
    scope: str  # the scope of the model it is in ("" at the top)
    line: int
    pose: Pose
    relative_to: str | None  # scoped; None: the element's default frame
    attached_to: str | None = None  # a <frame>'s (scoped); a model's canonical link
    element: object = None


@dataclass
class _Joint:
    name: str
    type: str
    parent: str  # scoped link name, or "world"
    child: str
    line: int
    index: int  # order in the file
    element: object
    axis: np.ndarray | None = None  # unit, model frame
    axis2: np.ndarray | None = None
    limits: tuple = ()  # per axis: (lower, upper, velocity, effort)
    reference: str | None = None  # gearbox
    ratio: float = 0.0
    mimic: tuple | None = None  # SDF 1.11's <axis><mimic>: (leader joint, multiplier, offset − multiplier · reference)

    @property
    def n_constraints(self) -> int:
        return 6 if self.type == "fixed" else LOOP_TYPES[CUT_TYPE[self.type]]


@dataclass
class _Doc:
    """An SDF model read and flattened: its pose graph, links (file order) and joints (file order)."""

    path: Path
    version: str
    name: str
    nodes: dict[str, _Node] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    joints: list[_Joint] = field(default_factory=list)
    joint_of: dict[str, _Joint] = field(default_factory=dict)  # by scoped name
    lenient: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # where model:// is looked up
    _world: dict[str, Pose] = field(default_factory=dict)

    def where(self, name: str) -> str:
        node = self.nodes.get(name)
        return f"<{node.kind}> {name!r} (line {node.line})" if node else repr(name)

    def error(self, el, problem: str) -> ModelError:
        owner = el
        while owner is not None and owner.tag not in ("link", "joint", "frame", "model"):
            owner = owner.getparent()
        what = f"<{el.tag}>" if owner is el else f"<{el.tag}> of <{owner.tag}> {owner.get('name')!r}"
        source = next((a.get(SOURCE) for a in el.iterancestors() if a.get(SOURCE)), el.get(SOURCE))
        where = f"{self.path}, in {source}" if source else f"{self.path}"
        return ModelError(f"{where}: {what} (line {el.sourceline}): {problem}")

    def resolve(self, name: str, scope: str, el, what: str) -> str:
        """The scoped name of frame ``name`` as written inside ``scope``, or ModelError listing the valid ones."""
        if name == "__model__":
            return scope or "__model__"
        if name.endswith("::__model__"):
            name = name[: -len("::__model__")]
        full = f"{scope}::{name}" if scope else name
        if full in self.nodes:
            return full
        prefix = f"{scope}::" if scope else ""
        inside = [n[len(prefix) :] for n in self.nodes if n.startswith(prefix)]
        raise self.error(el, f"{what} {name!r} names no frame of the model; frames are: {quoted(inside)}")

    def world(self, name: str, stack=()) -> Pose:
        """The pose of frame ``name`` in the model frame (the world of q = 0)."""
        if name in self._world:
            return self._world[name]
        if name in stack:
            cycle = " → ".join(self.where(n) for n in (*stack[stack.index(name) :], name))
            raise ModelError(f"{self.path}: the poses form a cycle: {cycle}")
        node = self.nodes[name]
        base = node.relative_to
        if base is None:
            base = node.attached_to if node.kind == "frame" else (node.scope or "__model__")
            if node.kind == "joint":
                base = self.joint_of[name].child
        out = node.pose if name == "__model__" else compose_poses(self.world(base, (*stack, name)), node.pose)
        self._world[name] = out
        return out

    def link_of(self, name: str, stack=()) -> str:
        """The link a frame is fixed to (a model's: its canonical link)."""
        node = self.nodes[name]
        if node.kind == "link":
            return name
        if name in stack:
            raise ModelError(f"{self.path}: {self.where(name)}: attached_to forms a cycle")
        if node.kind == "joint":
            return self.joint_of[name].child
        if node.attached_to is None:
            raise ModelError(f"{self.path}: {self.where(name)} has no link to attach to (the model has no link)")
        return self.link_of(node.attached_to, (*stack, name))


def _numbers(doc: _Doc, el, count: int | tuple, what: str | None = None) -> list[float]:
    """The numbers of ``el``'s text: ``count`` of them (one of the counts), finite, within MAX_MAGNITUDE."""
    if el is None:
        raise ModelError(f"{doc.path}: {what or 'an element'} is missing")
    text = (el.text or "").strip()
    counts = (count,) if isinstance(count, int) else count
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = None
    if values is None or len(values) not in counts:
        raise doc.error(el, f"expected {' or '.join(map(str, counts))} numbers, got {text!r}")
    if not all(math.isfinite(x) and abs(x) <= MAX_MAGNITUDE for x in values):
        raise doc.error(el, f"numbers must be finite and at most {MAX_MAGNITUDE:g} in magnitude, got {text!r}")
    return values


def _number(doc: _Doc, el, tag: str, default: float | None) -> float | None:
    sub = el.find(tag)
    return default if sub is None else _numbers(doc, sub, 1)[0]


def _limit(doc: _Doc, el, tag: str, default: float | None) -> float | None:
    """A ``<limit>`` number: any magnitude, ±inf included (|x| ≥ NO_LIMIT, the specification's 1e16 or gz-sim's
    ±1.79769e308, means none); a NaN or a word is refused.  Limits leave the dynamics untouched."""
    sub = el.find(tag)
    if sub is None:
        return default
    text = (sub.text or "").strip()
    try:
        x = float(text)
    except ValueError:
        raise doc.error(sub, f"expected a number, got {text!r}") from None
    if math.isnan(x):
        raise doc.error(sub, f"a limit must be a number or ±inf, got {text!r}")
    return x


def _pose(doc: _Doc, el, scope: str) -> tuple[Pose, str | None]:
    """(pose, scoped relative_to or None) of ``el``'s ``<pose>`` (identity if absent)."""
    pose_el = el.find("pose")
    if pose_el is None:
        return (np.eye(3), np.zeros(3)), None
    fmt = pose_el.get("rotation_format", "euler_rpy")
    if fmt not in ("euler_rpy", "quat_xyzw"):
        raise doc.error(pose_el, f"rotation_format {fmt!r} is not one of 'euler_rpy', 'quat_xyzw'")
    if not (pose_el.text or "").strip():
        values = [0.0] * 6
    else:
        values = _numbers(doc, pose_el, 7 if fmt == "quat_xyzw" else 6)
    if fmt == "quat_xyzw":
        qv = np.array(values[3:])
        n = np.linalg.norm(qv)
        if not n > 0:
            raise doc.error(pose_el, "the quaternion is zero")
        R = quaternion_rotation(*(qv / n))
    else:
        angles = values[3:]
        if pose_el.get("degrees", "false").strip().lower() in ("true", "1"):
            angles = [math.radians(a) for a in angles]
        R = rpy_matrix(angles)
    rel = pose_el.get("relative_to")
    if rel is None and pose_el.get("frame"):  # SDF 1.5–1.6's frame attribute, read as 1.7's relative_to
        rel = pose_el.get("frame")
    if rel is not None and doc.version in ("1.4", "1.5", "1.6") and pose_el.get("relative_to") is not None:
        doc.lenient.append(f"<pose> (line {pose_el.sourceline}): relative_to is SDF 1.7's; read in a "
                           f"{doc.version} file")  # fmt: skip
    return (R, np.array(values[:3])), (rel or None)


MODEL_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH")
"""The environment variables whose folders ``model://name`` is looked up in (after ``model_paths=``), as gz-sim."""
SOURCE = "_denoc_source"  # set on an included <model>: the file it came from, for the errors


def _sdf_root(path: Path, lenient: list[str]):
    root = parse_xml(path, "sdf", lenient)
    version = (root.get("version") or "").strip()
    if version not in SDF_VERSIONS:
        raise ModelError(f"{path}: <sdf> (line {root.sourceline}) has version {version!r}; denoc_pin reads SDFormat "
                         f"{', '.join(SDF_VERSIONS)}")  # fmt: skip
    return root, "1.4" if version == "1.3" else version  # libsdformat's 1.3 → 1.4 conversion moves world physics only


def model_paths(extra=()) -> list[Path]:
    """The folders ``model://`` URIs are looked up in: ``extra`` (``model_paths=``), then those of
    ``MODEL_PATH_VARIABLES``, each a list separated by the platform's path separator."""
    import os

    out = [Path(p) for p in ([extra] if isinstance(extra, (str, Path)) else extra)]
    for var in MODEL_PATH_VARIABLES:
        out += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return out


def _model_file(where: str, folder: Path) -> Path:
    """The SDF file of a model folder: the one its model.config names (the newest version read here)."""
    config = folder / "model.config"
    if not config.is_file():
        raise ModelError(f"{where}: {folder} is a folder without a model.config")
    found = parse_xml(config, "model", []).findall("sdf")
    readable = [e for e in found if (e.get("version") or "") in SDF_VERSIONS] or found
    if not readable or not (readable[0].text or "").strip():
        raise ModelError(f"{config}: names no <sdf> file")
    best = max(readable, key=lambda e: SDF_VERSIONS.index(e.get("version")) if e.get("version") in SDF_VERSIONS
               else -1)  # fmt: skip
    return folder / (best.text or "").strip()


def _resolve_uri(where: str, uri: str, base: Path, paths: list[Path]) -> Path:
    """The file an <include>'s <uri> names: ``model://name/rest`` in the model paths; ``file://`` or a path,
    relative to the including file; a folder means its model.config's SDF."""
    if uri.startswith("model://"):
        name, _, rest = uri[len("model://") :].partition("/")
        hits = [p / name / rest for p in paths if (p / name).is_dir()]
        if not hits:
            raise ModelError(f"{where}: {uri!r}: no folder {name!r} in the model paths "
                             f"({', '.join(map(str, paths)) or 'none set'}); give model_paths= or set "
                             f"{' or '.join(MODEL_PATH_VARIABLES)}")  # fmt: skip
        target = hits[0]
    elif "://" in uri and not uri.startswith("file://"):
        raise ModelError(f"{where}: {uri!r}: only model://, file:// and paths are resolved (no downloads)")
    else:
        target = Path(uri[len("file://") :] if uri.startswith("file://") else uri)
        if not target.is_absolute():  # next to the including file, else a model's name in the model paths
            near = [base / target] + [p / target for p in paths]
            target = next((t for t in near if t.exists()), base / target)
    if target.is_dir():
        target = _model_file(where, target)
    if not target.is_file():
        raise ModelError(f"{where}: {uri!r}: no such file {target}")
    return target


def _expand(root, path: Path, version: str, paths: list[Path], lenient: list[str], stack=()) -> None:
    """Replace each <include> of ``root`` by the <model> of the file it names, with the include's <name>, <pose>
    and <static>.  Each model's axes keep the meaning of its own version: an SDF 1.4 model's in a newer file get
    use_parent_model_frame true (libsdformat's conversion), a newer model's in an SDF 1.4 file false."""
    import copy

    for inc in [e for e in root.iter("include")]:
        where = f"{path}: <include> (line {inc.sourceline})"
        uri = (inc.findtext("uri") or "").strip()
        if not uri:
            raise ModelError(f"{where}: has no <uri>")
        for unread in ("placement_frame",):
            if inc.find(unread) is not None:
                raise ModelError(f"{where}: <{unread}> is not read; give the <pose> of the model frame")
        if (inc.get("merge") or "").strip().lower() in ("1", "true"):
            raise ModelError(f'{where}: merge="true" is not read; include the model without merge (nested)')
        target = _resolve_uri(where, uri, path.parent, paths)
        if target.resolve() in stack:
            raise ModelError(f"{where}: an <include> cycle through {target}")
        try:
            inner, inner_version = _sdf_root(target, lenient)
        except ModelError as e:  # the included file unreadable: both files named
            raise ModelError(f"{where}: includes {e}") from None
        _expand(inner, target, inner_version, paths, lenient, (*stack, target.resolve()))
        model = inner.find("model")
        if model is None:
            raise ModelError(f"{where}: {target} has no <model> to include")
        model = copy.deepcopy(model)
        model.set(SOURCE, str(target))
        if inner_version == "1.4" and version != "1.4":
            for axis in [*model.iter("axis"), *model.iter("axis2")]:
                if axis.find("use_parent_model_frame") is None:
                    flag = axis.makeelement("use_parent_model_frame", {})
                    flag.text = "true"
                    axis.append(flag)
        elif inner_version != "1.4" and version == "1.4":  # its axes stay in their joint frames
            for axis in [*model.iter("axis"), *model.iter("axis2")]:
                if axis.find("use_parent_model_frame") is None:
                    flag = axis.makeelement("use_parent_model_frame", {})
                    flag.text = "false"
                    axis.append(flag)
        for tag in ("name",):
            if inc.find(tag) is not None:
                model.set("name", (inc.findtext(tag) or "").strip())
        for tag in ("pose", "static"):
            if inc.find(tag) is not None:
                for old in model.findall(tag):
                    model.remove(old)
                model.insert(0, copy.deepcopy(inc.find(tag)))
        parent = inc.getparent()
        parent.replace(inc, model)


def _is_static(model) -> bool:
    return (model.findtext("static") or "").strip().lower() in ("1", "true")


def _read(path: Path, model_name: str | None, strict: bool, paths=()) -> _Doc:
    """Parse and flatten the file: every frame of the pose graph, the links, the joints with their axes in the
    model frame."""
    lenient: list[str] = []
    root, version = _sdf_root(path, lenient)
    _expand(root, path, version, model_paths(paths), lenient)
    models = root.findall("model") + root.findall("world/model")
    if not models:
        raise ModelError(f"{path}: no <model> in <sdf> (or in its <world>)")
    names = [m.get("name") for m in models]
    moving = [m for m in models if not _is_static(m)]
    if model_name is None:
        if len(models) > 1 and len(moving) == 1:  # one robot in static scenery: that one
            top = moving[0]
            warnings.warn(f"{path}: {len(models)} models; the one that is not static, {top.get('name')!r}, is "
                          f"loaded (model_name= chooses another: {quoted(names)})",
                          ModelWarning, stacklevel=3)  # fmt: skip
        elif len(models) > 1:
            raise ModelError(f"{path}: {len(models)} models, {len(moving)} of them not static: {quoted(names)}; "
                             "choose one with model_name=")  # fmt: skip
        else:
            top = models[0]
    elif model_name in names:
        top = models[names.index(model_name)]
    else:
        raise ModelError(f"{path}: no model named {model_name!r}; models are: {quoted(names)}")
    if _is_static(top):
        raise ModelError(f"{path}: model {top.get('name')!r} (line {top.sourceline}) is static: nothing in it moves")
    for nested in top.iter("model"):
        if nested is not top and _is_static(nested):
            raise ModelError(f"{path}: nested model {nested.get('name')!r} (line {nested.sourceline}) is static "
                             "(welded to the world inside a moving model): not read; weld it with a fixed "
                             "joint")  # fmt: skip
    doc = _Doc(path, version, top.get("name") or path.stem, lenient=lenient, paths=model_paths(paths))
    pose, rel = _pose(doc, top, "")
    if rel is not None:
        raise doc.error(top.find("pose"), "the top model's pose is in the world; relative_to is not allowed here")
    doc.nodes["__model__"] = _Node("__model__", "model", "", top.sourceline, pose, None, element=top)
    _walk(doc, top, "")
    for joint in doc.joints:
        _joint_details(doc, joint)
    return doc


def _walk(doc: _Doc, model_el, scope: str) -> None:
    """Collect the frames, links and joints of a model and its nested models (scoped names)."""
    canonical = model_el.get("canonical_link")
    first_link = None
    elements = []
    for el in model_el:
        if not isinstance(el.tag, str) or el.tag not in ("link", "joint", "frame", "model"):
            continue
        name = el.get("name")
        if not name:
            raise doc.error(el, "has no name attribute")
        if "::" in name or name in ("world", "__model__"):
            raise doc.error(el, f"the name {name!r} is reserved (it may not be 'world', '__model__' or hold '::')")
        full = f"{scope}::{name}" if scope else name
        if full in doc.nodes:
            raise doc.error(el, f"the name {name!r} is taken by {doc.where(full)} in the same model")
        pose, rel = _pose(doc, el, scope)
        if rel is not None:
            rel = ("__rel__", rel, el)  # resolved once every name of the model is known
        doc.nodes[full] = _Node(full, el.tag, scope, el.sourceline, pose, rel, element=el)
        elements.append((full, el))
        if el.tag == "link":
            doc.links.append(full)
            first_link = first_link or full
        elif el.tag == "joint":
            doc.joints.append(_Joint(full, el.get("type", ""), "", "", el.sourceline, len(doc.joints), el))
            doc.joint_of[full] = doc.joints[-1]
        elif el.tag == "model":
            _walk(doc, el, full)
            first_link = first_link or doc.nodes[full].attached_to
    model_node = doc.nodes[scope or "__model__"]
    if canonical is not None:
        model_node.attached_to = doc.resolve(canonical, scope, model_el, "canonical_link")
    else:
        model_node.attached_to = first_link
    for full, el in elements:  # names are known now: relative_to, attached_to, parent, child
        node = doc.nodes[full]
        if node.relative_to is not None:
            node.relative_to = doc.resolve(node.relative_to[1], scope, el.find("pose"), "relative_to")
        if el.tag == "frame":
            target = el.get("attached_to")
            node.attached_to = doc.resolve(target, scope, el, "attached_to") if target else (scope or "__model__")
    # A joint's parent or child may name a frame fixed to another joint, whose frame is its child link's: children
    # first, each pass taking the ends that resolve ("" while they lead to a joint not yet resolved).
    joints = [(doc.joint_of[full], el) for full, el in elements if el.tag == "joint"]
    for role in ("child", "parent"):
        while joints:
            pending = [(joint, el) for joint, el in joints if not _joint_end(doc, scope, joint, el, role)]
            if len(pending) == len(joints):
                joint, el = pending[0]
                raise doc.error(el.find(role), f"the {role} {(el.find(role).text or '').strip()!r} of joint "
                                f"{joint.name!r} is fixed to the joint's own frame (a joint's frame is on its "
                                "child link): it names no link")  # fmt: skip
            joints = pending
        joints = [(doc.joint_of[full], el) for full, el in elements if el.tag == "joint"]


def _joint_end(doc: _Doc, scope: str, joint: _Joint, el, role: str) -> bool:
    """Set ``joint``'s parent or child link from its element; False if it leads to a joint not resolved yet."""
    sub = el.find(role)
    text = (sub.text or "").strip() if sub is not None else ""
    if not text:
        raise doc.error(el, f"has no <{role}>")
    if text == WORLD and role == "parent":
        joint.parent = WORLD
        return True
    if text == WORLD:
        raise doc.error(sub, "a joint's child cannot be the world")
    name = doc.resolve(text, scope, sub, role)
    if doc.nodes[name].kind != "link":
        name = doc.link_of(name)  # a frame or a nested model: the link it is fixed to
    setattr(joint, role, name)
    return bool(name)


def _axis(doc: _Doc, joint: _Joint, tag: str) -> tuple[np.ndarray | None, tuple]:
    """The unit axis ``tag`` (axis, axis2) in the model frame, and its (lower, upper, velocity, effort)."""
    el = joint.element.find(tag)
    if el is None:
        return None, (None, None, None, None)
    xyz = el.find("xyz")
    if xyz is None:
        doc.lenient.append(f"<{tag}> of joint {joint.name!r} (line {el.sourceline}) has no <xyz>; the "
                           "specification's default (0, 0, 1) is taken")  # fmt: skip
        a = np.array([0.0, 0.0, 1.0])
    else:
        a = np.array(_numbers(doc, xyz, 3))
    n = np.linalg.norm(a)
    if not n > 0:
        raise doc.error(xyz, "the axis is zero")
    a /= n
    scope = doc.nodes[joint.name].scope
    upmf = el.find("use_parent_model_frame")
    expressed = xyz.get("expressed_in") if xyz is not None else None
    if upmf is not None:
        in_model = (upmf.text or "").strip().lower() in ("1", "true")
    else:
        # SDF 1.4 expresses the axis in the model frame; from 1.5 on use_parent_model_frame defaults to false (the
        # joint frame), as libsdformat reads a native 1.5 file (its 1.4 → 1.5 conversion adds true).
        in_model = doc.version == "1.4"
    if expressed is not None:
        frame = doc.resolve(expressed, scope, xyz, "expressed_in")
    else:
        frame = (scope or "__model__") if in_model else joint.name
    R = doc.world(frame)[0]
    limit = el.find("limit")
    limits = (None, None, None, None)
    if limit is not None:
        lower, upper = _limit(doc, limit, "lower", None), _limit(doc, limit, "upper", None)
        velocity, effort = _limit(doc, limit, "velocity", -1.0), _limit(doc, limit, "effort", -1.0)
        limits = (lower, upper, velocity, effort)
    return R @ a, limits


def _joint_details(doc: _Doc, joint: _Joint) -> None:
    el = joint.element
    if joint.type not in SDF_JOINT_TYPES:
        raise doc.error(el, f"type {joint.type!r} is not read; joint types are: {', '.join(SDF_JOINT_TYPES)}")
    joint.axis, lim1 = _axis(doc, joint, "axis")
    joint.axis2, lim2 = _axis(doc, joint, "axis2")
    joint.limits = (lim1, lim2)
    needs = {"revolute": 1, "continuous": 1, "prismatic": 1, "universal": 2, "gearbox": 2}.get(joint.type, 0)
    for tag, a in (("axis", joint.axis), ("axis2", joint.axis2))[:needs]:
        if a is None:
            raise doc.error(el, f"a {joint.type} joint needs <{tag}><xyz>…</xyz></{tag}>")
    if joint.type == "universal" and abs(joint.axis @ joint.axis2) > 1e-9:
        raise doc.error(el, f"the universal joint's axes are not orthogonal ({joint.axis.tolist()}, "
                            f"{joint.axis2.tolist()} in the model frame)")  # fmt: skip
    _mimic(doc, joint)
    if joint.type == "gearbox":
        ref = el.find("gearbox_reference_body")
        if ref is None or not (ref.text or "").strip():
            raise doc.error(el, "a gearbox joint needs <gearbox_reference_body>")
        name = doc.resolve(ref.text.strip(), doc.nodes[joint.name].scope, ref, "gearbox_reference_body")
        joint.reference = name if doc.nodes[name].kind == "link" else doc.link_of(name)
        ratio = el.find("gearbox_ratio")
        if ratio is None:
            raise doc.error(el, "a gearbox joint needs <gearbox_ratio>")
        joint.ratio = _numbers(doc, ratio, 1)[0]
    if joint.parent == joint.child:
        raise doc.error(el, f"joins link {joint.child!r} to itself")


def _mimic(doc: _Doc, joint: _Joint) -> None:
    """SDF 1.11's ``<axis><mimic joint axis><multiplier><offset><reference>``: follower = multiplier · (leader −
    reference) + offset, a coupling between two one-axis joints (on ``axis2`` it is refused)."""
    for tag in ("axis", "axis2"):
        el = joint.element.find(f"{tag}/mimic")
        if el is None:
            continue
        leader_axis = el.get("axis", "axis")
        if tag == "axis2" or leader_axis != "axis":
            raise doc.error(el, "a mimic between second axes (axis2) is not read: couplings join one-axis joints")
        name = el.get("joint")
        if not name:
            raise doc.error(el, "a <mimic> needs joint= (the leader)")
        leader = doc.resolve(name, doc.nodes[joint.name].scope, el, "mimic joint")
        if leader not in doc.joint_of:
            raise doc.error(el, f"mimic joint {name!r} names a {doc.nodes[leader].kind}, not a joint")
        m, o, r = (_number(doc, el, t, d) for t, d in (("multiplier", 1.0), ("offset", 0.0), ("reference", 0.0)))
        joint.mimic = (leader, m, o - m * r)


def choose_tree(doc: _Doc, cuts) -> tuple[dict[str, _Joint], list[_Joint], str]:
    """The spanning tree: (parent joint of each link, the joints cut, the root: a link or "world").

    Joints are kept in order of their number of constraints, most first (fixed, then revolute, continuous and
    prismatic, universal, ball), then in file order; a joint is cut when its child has a parent joint already
    or it would close a cycle.  So the loops are cut at their ball joints where they have any, and where a
    joint is a link's only parent joint it stays.  ``cuts``: the names of the joints to cut instead."""
    tree_joints = [j for j in doc.joints if j.type != "gearbox"]
    by_name = {j.name: j for j in tree_joints}
    forced = []
    if cuts is not None:
        if isinstance(cuts, str):
            raise ModelError(f"{doc.path}: cuts must be a list of joint names, got the string {cuts!r}")
        for name in cuts:
            if name not in by_name or by_name[name].parent == WORLD:
                raise ModelError(f"{doc.path}: cuts: {name!r} is not a joint between two links; joints are: "
                                 f"{quoted(n for n, j in by_name.items() if j.parent != WORLD)}")  # fmt: skip
            forced.append(by_name[name])
    group = {name: name for name in [*doc.links, WORLD]}

    def find(x: str) -> str:
        while group[x] != x:
            group[x] = group[group[x]]
            x = group[x]
        return x

    parent_joint: dict[str, _Joint] = {}
    cut: list[_Joint] = []
    order = sorted(tree_joints, key=lambda j: (j.parent != WORLD, -j.n_constraints, j.index))
    for j in order:
        if j in forced:
            continue
        a, b = find(j.parent), find(j.child)
        if j.child in parent_joint or a == b:
            if cuts is not None:
                other = parent_joint.get(j.child)
                why = f"link {j.child!r} has parent joint {other.name!r} too" if other else "it closes a loop"
                raise ModelError(f"{doc.path}: cuts={list(cuts)} leave a loop: joint {j.name!r} (line {j.line}) "
                                 f"stays, but {why}; cut it too")  # fmt: skip
            if j.parent == WORLD:
                raise doc.error(j.element, f"attaches link {j.child!r} to the world, but it has parent joint "
                                           f"{parent_joint[j.child].name!r}")  # fmt: skip
            cut.append(j)
            continue
        parent_joint[j.child] = j
        group[b] = a
    cut += forced
    cut.sort(key=lambda j: j.index)
    orphans = [link for link in doc.links if link not in parent_joint]
    world_joints = [j for j in tree_joints if j.parent == WORLD]
    if len(world_joints) > 1:
        raise ModelError(f"{doc.path}: {len(world_joints)} joints attach the model to the world: "
                         f"{quoted(doc.where(j.name) for j in world_joints)}; one at most")  # fmt: skip
    if world_joints:
        root = WORLD
        if orphans:
            raise ModelError(f"{doc.path}: links {quoted(orphans)} are not connected to the rest of the model")
    else:
        if len(orphans) != 1:
            what = "no link is the root (every link is a joint's child)" if not orphans else (
                f"{len(orphans)} links are no joint's child: {quoted(doc.where(n) for n in orphans)}; every link but "
                "the root must be the child of a joint")  # fmt: skip
            raise ModelError(f"{doc.path}: {what}")
        root = orphans[0]
    return parent_joint, cut, root


def load_sdf(
    path, root_joint=None, *, model_name: str | None = None, cuts=None, strict: bool = False, model_paths=()
) -> Model:
    """Load an SDFormat file (versions 1.3–1.12) into a :class:`Model`, its closed loops in ``model.loops`` and its
    gearboxes in ``model.couplings``.

    root_joint: None keeps the file's joint to the world if it has one (fixed: the root link is welded where the file
    puts it), else the root link is the fixed base, at the world's origin; ``"free-flyer"`` or ``"planar"``: a joint
    named ``root_joint`` carries the root link (replacing a joint to the world, with a warning when that one was not
    fixed), its q the root link's pose in the world (``dp.to_mujoco_state`` and ``dp.mujoco_state`` convert it from and
    to MuJoCo's layout). model_name: which ``<model>`` of the file (needed when it has several that move; a world of one
    robot in static scenery loads the robot, with a warning). cuts: names of the joints to cut open (default:
    ``choose_tree``'s rule). strict: refuse what loads with a :class:`ModelWarning` otherwise. model_paths: folders
    where ``<include>``'s ``model://name`` is looked up, before those of ``GZ_SIM_RESOURCE_PATH``, ``SDF_PATH`` and
    ``GAZEBO_MODEL_PATH``. Raises :class:`ModelError` naming file, line and element.
    """
    path = robot_file(path, root_joint, ROOT_JOINTS)
    doc = _read(path, model_name, strict, model_paths)
    if not doc.links:
        raise ModelError(f"{path}: model {doc.name!r} has no <link>")
    parent_joint, cut, root = choose_tree(doc, cuts)
    attach = next((j for j in parent_joint.values() if j.parent == WORLD), None)
    if attach is not None and root_joint is not None:
        if attach.type != "fixed":
            warnings.warn(f"{path}: joint {attach.name!r} (line {attach.line}, {attach.type}) attaches "
                          f"{attach.child!r} to the world; replaced by root_joint={root_joint!r}", ModelWarning,
                          stacklevel=2)  # fmt: skip
        del parent_joint[attach.child]
        root, attach = attach.child, None
    elif attach is not None:
        root = WORLD
    return _build(doc, parent_joint, cut, root, attach, root_joint, strict)


def _inertial(doc: _Doc, link: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia about it) in the link frame; the specification's defaults (1 kg, unit
    moments) where ``<inertial>`` or its parts are missing, with a warning."""
    el = doc.nodes[link].element
    inertial = el.find("inertial")
    if inertial is None:
        doc.lenient.append(f"link {link!r} (line {el.sourceline}) has no <inertial>: the specification's default, "
                           "1 kg with unit moments of inertia, is taken")  # fmt: skip
        return 1.0, np.zeros(3), np.eye(3)
    if inertial.get("auto", "false").strip().lower() in ("true", "1"):
        raise doc.error(inertial, "auto='true' (SDF 1.11: the inertia computed from the collision shapes) is not "
                                  "read; give <mass> and <inertia>")  # fmt: skip
    pose, rel = _pose(doc, inertial, doc.nodes[link].scope)
    if rel is not None:
        target = doc.resolve(rel, doc.nodes[link].scope, inertial.find("pose"), "relative_to")
        pose = _relative(doc.world(link), compose_poses(doc.world(target), pose))
    m = _number(doc, inertial, "mass", None)
    if m is None:
        doc.lenient.append(f"<inertial> of link {link!r} (line {inertial.sourceline}) has no <mass>: 1 kg taken")
        m = 1.0
    I = np.eye(3)
    iel = inertial.find("inertia")
    if iel is None:
        doc.lenient.append(f"<inertial> of link {link!r} (line {inertial.sourceline}) has no <inertia>: unit moments "
                           "taken")  # fmt: skip
    else:
        v = {t: _number(doc, iel, t, 1.0 if t in ("ixx", "iyy", "izz") else 0.0)
             for t in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}  # fmt: skip
        I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    R, c = pose
    return m, c, R @ I @ R.T


def _build(doc: _Doc, parent_joint: dict, cut: list, root: str, attach, root_joint, strict: bool) -> Model:
    path = doc.path
    children: dict[str, list] = {name: [] for name in [*doc.links, WORLD]}
    for j in sorted(parent_joint.values(), key=lambda j: j.index):
        children[j.parent].append(j)
    eye, zero = np.eye(3), np.zeros(3)
    names, link_names, parents, kinds = ["universe"], [], [0], [0]
    axes, axes2, PR, Pp = [zero], [zero], [eye], [zero]
    limits: dict[str, list] = {f: [] for f in LIMIT_FIELDS}
    frames = [Frame("universe", 0, eye, zero, "fixed_joint")]
    body_of: dict[str, int] = {}
    pose_in_body: dict[str, Pose] = {}
    T_body = [(eye, zero)]  # each body frame in the model frame, at q = 0
    joint_of_body: dict[int, _Joint] = {}

    def add_body(name: str, link: str, parent: int, kind: int, T: Pose, a1, a2, joint: _Joint | None) -> int:
        R, p = _relative(T_body[parent], T)
        names.append(name)
        link_names.append(link)
        parents.append(parent)
        kinds.append(kind)
        axes.append(zero if a1 is None else T[0].T @ a1)
        axes2.append(zero if a2 is None else T[0].T @ a2)
        PR.append(R)
        Pp.append(p)
        T_body.append(T)
        k = len(names) - 1
        body_of[link] = k
        pose_in_body[link] = _relative(T, doc.world(link))
        frames.append(Frame(name, k, eye, zero, "joint"))
        frames.append(Frame(link, k, *pose_in_body[link]))
        _add_limits(limits, kind, joint)
        if joint is not None:
            joint_of_body[k] = joint
        return k

    start = []
    if root == WORLD:  # the file's joint to the world, kept
        link_names.append("universe")
        start = [attach]
    elif root_joint is not None:
        link_names.append("universe")
        k = add_body("root_joint", root, 0, ROOT_JOINTS[root_joint], doc.world(root), None, None, None)
        PR[k], Pp[k] = eye, zero  # q is the root link's pose in the world (MuJoCo's and Drake's floating base)
        start = children[root]
    else:  # the root link is the base: its frame is the world's
        link_names.append(root)
        T_body[0] = doc.world(root)
        body_of[root] = 0
        pose_in_body[root] = (eye, zero)
        frames.append(Frame(root, 0, eye, zero))
        start = children[root]
    stack = list(reversed(start))  # depth first, siblings in file order
    while stack:
        j = stack.pop()
        T = doc.world(j.name)
        k0 = 0 if j.parent == WORLD else body_of[j.parent]
        if j.type == "fixed":
            body_of[j.child] = k0
            pose_in_body[j.child] = _relative(T_body[k0], doc.world(j.child))
            frames.append(Frame(j.name, k0, *_relative(T_body[k0], T), "fixed_joint"))
            frames.append(Frame(j.child, k0, *pose_in_body[j.child]))
        else:
            add_body(j.name, j.child, k0, SDF_JOINT_TYPES[j.type], T, j.axis, j.axis2, j)
        stack.extend(reversed(children[j.child]))
    if len(names) < 2:
        raise ModelError(f"{path}: model {doc.name!r} has no movable joint")
    for name, node in doc.nodes.items():  # the file's <frame> elements, on the body of their link
        if node.kind == "frame":
            k = body_of[doc.link_of(name)]
            frames.append(Frame(name, k, *_relative(T_body[k], doc.world(name)), "op_frame"))
    mass, com, I_com = _inertias(doc, body_of, pose_in_body, len(names), strict)
    collisions = _collisions(doc, body_of, pose_in_body)
    loops = [_loop_joint(doc, j) for j in cut]
    couplings = [_coupling(doc, j, body_of, joint_of_body) for j in doc.joints if j.type == "gearbox"]
    couplings += [JointCoupling(f"{j.name}_mimic", j.name, j.mimic[0], j.mimic[1], j.mimic[2])
                  for j in doc.joints if j.mimic is not None]  # fmt: skip
    if doc.lenient and strict:
        raise ModelError(f"{path}: {doc.lenient[0]} (strict=True refuses what the default only warns about)")
    for message in doc.lenient:
        warnings.warn(f"{path}: {message}", ModelWarning, stacklevel=3)
    try:
        model = Model(
            **{f: np.array(v, dtype=float) for f, v in limits.items()},
            name=doc.name, names=names, link_names=link_names, parents=parents, kinds=kinds, axes=axes, axes2=axes2,
            placement_rotation=PR, placement_translation=Pp, masses=mass, coms=com, inertias=I_com, frames=frames,
            source=str(path), collisions=collisions,
            loops=resolve_loops(doc.name, link_names, frames, loops, couplings, names, kinds),
        )  # fmt: skip
    except ModelError as e:
        raise ModelError(f"{path}: {e}") from None
    check_not_singular(model, where=str(path), strict=strict)
    return model


def _add_limits(limits: dict, kind: int, joint: _Joint | None) -> None:
    """Pinocchio's four limit fields for one joint: a revolute's, prismatic's or universal's from each axis's
    ``<limit>`` (the specification's 1e16 meaning none: ``UNBOUNDED``; velocity and effort −1: inf); a continuous
    joint's (cos, sin) within ±1.01 (as for URDF); a ball's and a root joint's unbounded."""
    nq, nv = JOINTS[kind].nq, JOINTS[kind].nv
    lower, upper, velocity, effort = [-UNBOUNDED] * nq, [UNBOUNDED] * nq, [np.inf] * nv, [np.inf] * nv
    if kind == CONTINUOUS:
        lower, upper = [-1.01, -1.01], [1.01, 1.01]
    if joint is not None and kind in (REVOLUTE, PRISMATIC, UNIVERSAL, CONTINUOUS):
        for i, (lo, hi, vel, eff) in enumerate(joint.limits[:nv]):
            if lo is None and hi is None and vel is None:
                continue
            if kind != CONTINUOUS:
                lower[i] = -UNBOUNDED if lo is None or lo <= -NO_LIMIT else lo
                upper[i] = UNBOUNDED if hi is None or hi >= NO_LIMIT else hi
            velocity[i] = np.inf if vel is None or vel < 0 else vel
            effort[i] = np.inf if eff is None or eff < 0 else eff
    for f, v in zip(LIMIT_FIELDS, (lower, upper, velocity, effort), strict=True):
        limits[f].extend(v)


def _inertias(doc: _Doc, body_of: dict, pose_in_body: dict, nj: int, strict: bool):
    """(mass, centre of mass, inertia about it) of every body: its links' inertias summed about the body origin."""
    parts = []
    for link in doc.links:
        m, c, I_c = _inertial(doc, link)
        check_inertia(doc.path, link, m, I_c, strict)
        parts.append((body_of[link], pose_in_body[link], m, np.eye(3), c, I_c))
    return body_inertias(parts, nj)


def _loop_joint(doc: _Doc, j: _Joint) -> LoopJoint:
    """A cut SDF joint: C1 and C2 are its joint frame, fixed to the parent and to the child link (they coincide in
    the file's pose); its axes in that frame."""
    if j.parent == WORLD:
        raise doc.error(j.element, "a joint to the world cannot be cut")
    T = doc.world(j.name)
    to_joint = T[0].T
    return LoopJoint(
        j.name, CUT_TYPE[j.type], j.parent, j.child, _relative(doc.world(j.parent), T),
        _relative(doc.world(j.child), T), to_joint @ j.axis if j.axis is not None else np.array([0.0, 0.0, 1.0]),
        to_joint @ j.axis2 if j.type == "universal" else None,
    )  # fmt: skip


def _coupling(doc: _Doc, j: _Joint, body_of: dict, joint_of_body: dict) -> JointCoupling:
    """A gearbox joint as a coupling: θ₂ = −ratio · θ₁ (SDFormat's ``gearbox_ratio``), θ₁ the angle from the
    reference body to the parent link about ``axis``, θ₂ from the reference body to the child link about
    ``axis2``; each is ± the angle of the revolute joint that carries that link on the reference body."""
    ends = []
    for link, axis, tag in ((j.parent, j.axis, "axis"), (j.child, j.axis2, "axis2")):
        k = body_of.get(link)
        tj = joint_of_body.get(k)
        if tj is None or body_of.get(tj.parent, -1) != body_of.get(j.reference) or tj.type not in (
                "revolute", "continuous"):  # fmt: skip
            raise doc.error(j.element, f"gearbox: link {link!r} must turn on the reference body {j.reference!r} by a "
                                       "revolute joint of the tree")  # fmt: skip
        s = float(tj.axis @ axis)
        if abs(abs(s) - 1.0) > 1e-6:
            raise doc.error(j.element, f"gearbox: <{tag}> is not parallel to the axis of joint {tj.name!r} that turns "
                                       f"link {link!r}")  # fmt: skip
        ends.append((tj.name, math.copysign(1.0, s)))
    (ref, s1), (out, s2) = ends
    return JointCoupling(j.name, out, ref, -j.ratio * s1 * s2, 0.0)


def sdf_visuals(model: Model, strict: bool = False, model_paths=()) -> list[tuple[str, int, Pose, dict]]:
    """The ``<visual>`` geometry of the SDF a model was loaded from: (name, body, placement in the body frame,
    geometry) with geometry {"mesh": uri, "scale": (3,)} | {"box": (3,)} | {"cylinder": (radius, length)} |
    {"sphere": radius}.  A visual it cannot draw is left out, named in a warning.  model_paths: as for
    ``load_sdf``."""
    path = Path(model.source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = _read(path, model.name if model.name else None, strict, model_paths)
    where = {f.name: (f.body, (np.asarray(f.rotation), np.asarray(f.translation))) for f in model.frames
             if f.type == "body"}  # fmt: skip
    out = []
    for link in doc.links:
        if link not in where:
            continue
        k, T_link = where[link]
        for el in doc.nodes[link].element.findall("visual"):
            name = f"{link}::{el.get('name', 'visual')}"
            try:
                pose = _in_link(doc, link, el)
                geometry = _geometry(doc, el.find("geometry"))
            except ModelError as e:
                warnings.warn(f"not drawn: {e}", ModelWarning, stacklevel=2)
                continue
            if geometry is not None and next(iter(geometry)) in ("mesh", "box", "cylinder", "sphere"):
                out.append((name, k, compose_poses(T_link, pose), geometry))
    return out


def _in_link(doc: _Doc, link: str, el) -> Pose:
    """The pose of ``el`` (a link's ``<visual>`` or ``<collision>``) in the link frame, its ``relative_to``
    resolved."""
    pose, rel = _pose(doc, el, doc.nodes[link].scope)
    if rel is not None:
        target = doc.resolve(rel, doc.nodes[link].scope, el.find("pose"), "relative_to")
        pose = _relative(doc.world(link), compose_poses(doc.world(target), pose))
    return pose


def _self_collide(el) -> bool:
    return (el.findtext("self_collide") or "").strip().lower() in ("true", "1")


def _collisions(doc: _Doc, body_of: dict, pose_in_body: dict) -> list[Collision]:
    """Each link's ``<collision>`` on its body (``Model.collisions``).  ``collide_bitmask`` (default 0xff, as
    libsdformat) and ``self_collide`` (the link's or its model's, default false) decide which pairs touch, as Gazebo:
    links that self-collide get group = mask = bitmask (they touch where their bitmasks share a bit), the others touch
    the ground only (group 1, mask 0); a bitmask of 0 touches nothing and is not read.  friction:
    ``<surface><friction><ode><mu>`` (default 1).  A shape denoc_pin does not detect (plane, ellipsoid, heightmap,
    polyline) or a mesh not found is left out with a warning (``doc.lenient``)."""
    folders = [*doc.paths, *mesh_folders(doc.path)]
    out: list[Collision] = []
    for link in doc.links:
        if link not in body_of:
            continue
        node = doc.nodes[link]
        self_collide, model = _self_collide(node.element), doc.nodes[node.scope or "__model__"].element
        while not self_collide and model is not None:  # the link's, or its model's, or an enclosing model's
            self_collide, model = _self_collide(model), model.getparent()
            model = model if model is not None and model.tag == "model" else None
        for i, el in enumerate(node.element.findall("collision")):
            name = f"{link}::{el.get('name') or f'collision_{i}'}"
            contact = el.find("surface/contact/collide_bitmask")
            try:
                bitmask = 0xFF if contact is None else int((contact.text or "").strip(), 0)
            except ValueError:
                doc.lenient.append(f"collision {name!r} (line {el.sourceline}): collide_bitmask {contact.text!r} is "
                                   "not an integer; it is left out")  # fmt: skip
                continue
            if bitmask == 0:
                continue
            mu = 1.0 if el.find("surface/friction/ode/mu") is None else _numbers(
                doc, el.find("surface/friction/ode/mu"), 1)[0]  # fmt: skip
            if not mu >= 0:
                doc.lenient.append(f"collision {name!r} (line {el.sourceline}): a negative friction coefficient "
                                   f"{mu}; it is left out")  # fmt: skip
                continue
            shape = _shape(doc, el, name, folders)
            if shape is None:
                continue
            R, p = compose_poses(pose_in_body[link], _in_link(doc, link, el))
            group, mask = (bitmask, bitmask) if self_collide else (1, 0)
            out.append(Collision(name, link, body_of[link], shape, R, p, group=group, mask=mask, friction=mu))
    return out


def _shape(doc: _Doc, el, name: str, folders) -> Shape | None:
    """The collision shape of ``el``'s ``<geometry>`` (``_geometry``), or None (left out, with a warning) for one
    not detected."""
    try:
        geometry = _geometry(doc, el.find("geometry"))
        if geometry is None:
            doc.lenient.append(f"collision {name!r} (line {el.sourceline}) has no geometry: it is left out")
            return None
        kind, value = next(iter(geometry.items()))
        if kind in SHAPES:
            return SHAPES[kind](*np.atleast_1d(value))
        if kind == "mesh":
            source = next((a.get(SOURCE) for a in el.iterancestors() if a.get(SOURCE)), None)
            found = mesh_file(value, [Path(source).parent, *folders] if source else folders)
            if found is None:
                doc.lenient.append(f"collision {name!r} (line {el.sourceline}): mesh {value!r} not found; it is left "
                                   "out")  # fmt: skip
                return None
            return Mesh(found, geometry["scale"])
    except ValueError as e:  # a bad shape (a ModelError too): left out, as URDF's; the dynamics do not read it
        problem = str(e).split(": ", 1)[1] if isinstance(e, ModelError) else str(e)
        doc.lenient.append(f"collision {name!r} (line {el.sourceline}): {problem}; it is left out")
        return None
    doc.lenient.append(f"collision {name!r} (line {el.sourceline}): a <{value}> is not a shape denoc_pin "
                       "detects (box, sphere, cylinder, capsule, mesh); it is left out")  # fmt: skip
    return None


SHAPES = {"box": lambda *size: Box(size), "sphere": Sphere, "cylinder": Cylinder, "capsule": Capsule}
"""The collision shape of each ``_geometry`` kind but a mesh, from its numbers."""


def _geometry(doc: _Doc, el) -> dict | None:
    """The shape of a ``<geometry>`` element, read once for visuals and collisions, the specification's defaults
    where a size is missing: {"box": (3,)}, {"sphere": radius}, {"cylinder": (radius, length)}, {"capsule": (radius,
    length)}, {"mesh": uri, "scale": (3,)}, or {"other": tag} for a shape denoc_pin does not read; None when empty."""
    shape = next((g for g in (el if el is not None else []) if isinstance(g.tag, str)), None)
    if shape is None:
        return None
    if shape.tag == "box":
        size = shape.find("size")
        return {"box": np.array(_numbers(doc, size, 3) if size is not None else (1.0, 1.0, 1.0))}
    if shape.tag == "sphere":
        return {"sphere": _number(doc, shape, "radius", 1.0)}
    if shape.tag in ("cylinder", "capsule"):
        radius = _number(doc, shape, "radius", 0.5 if shape.tag == "capsule" else 1.0)
        return {shape.tag: (radius, _number(doc, shape, "length", 1.0))}
    if shape.tag == "mesh":
        scale = shape.find("scale")
        uri = (shape.findtext("uri") or "").strip()
        return {"mesh": uri, "scale": np.array(_numbers(doc, scale, 3)) if scale is not None else np.ones(3)}
    return {"other": shape.tag}
    for shape in el:
        if not isinstance(shape.tag, str):
            continue
        if shape.tag == "mesh":
            uri = (shape.findtext("uri") or "").strip()
            scale = shape.find("scale")
            return {"mesh": uri, "scale": np.array(_numbers(doc, scale, 3)) if scale is not None else np.ones(3)}
        if shape.tag == "box":
            return {"box": np.array(_numbers(doc, shape.find("size"), 3, "<box> <size>"))}
        if shape.tag == "cylinder":
            return {"cylinder": (_number(doc, shape, "radius", 1.0), _number(doc, shape, "length", 1.0))}
        if shape.tag == "sphere":
            return {"sphere": _number(doc, shape, "radius", 1.0)}
    return None
