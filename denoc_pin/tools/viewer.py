"""MeshCat viewer: a model drawn at a configuration, a trajectory played live or saved as an offline HTML file.

Geometry comes from two places:

- the URDF's visual meshes and shapes (``pinocchio.buildGeomFromUrdf`` on the model's Pinocchio twin,
  ``package://`` paths resolved against the URDF's folders, example-robot-data and ``package_dirs``), or an SDF's
  (``loaders.sdf.sdf_visuals``, ``model://`` URIs resolved the same way);
- a body without visuals that has collision shapes (``model.collisions``: an MJCF's geoms, ``ModelBuilder``'s
  ``add_collision``) is drawn by them;
- primitives for every other body that has no visual (generated models: rope, chains, ``ModelBuilder``
  trees; bundled URDFs such as the gripper): a sphere at the joint and a cylinder from the joint to
  each child joint (to twice the centre of mass for a tip body, whose far end the model does not know).

A closed loop's cut joint is marked by a red sphere on each side (C1 on link1, C2 on link2): they
coincide when the loop is closed.

With contacts (``docs/contacts.md``): the ground (a ``dp.Ground``, given to the viewer or carried by a contact
``Trajectory``) is a grey slab under the model with meshcat's grid laid on it, tilted with its normal; each contact
of a ``Trajectory.contacts`` row is a red dot at its point and a green arrow along the force the ground (or the other
shape) applies there, the robot's weight m g drawn as long as the framed box's radius; collision shapes are
see-through, so that the contacts inside them show.

Drawing uses ``pinocchio.visualize.MeshcatVisualizer`` on ``dp.to_pinocchio(model)``, whose q/v layout is
the model's.  The meshcat scene is recorded in this process (the tree the meshcat server keeps), so
``save_html`` needs no server; ``display`` and ``play`` also reach a live meshcat server when the viewer
has one (``live=True``, or ``zmq_url`` of a running ``meshcat-server``).  The server ``live=True`` starts
(``meshcat_server.py``) listens on 127.0.0.1 only, its web page as its command socket.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
import time
import warnings
from html import escape as html_escape
from pathlib import Path

import numpy as np

from ..algorithms.configuration import neutral
from ..algorithms.kinematics_api import forward_kinematics
from ..contact.detection import coal_geometry
from ..core.shapes import Ground
from ..loaders.pinocchio_bridge import to_pinocchio
from ..loaders.robots import mesh_file, mesh_folders
from ..loaders.sdf import sdf_visuals
from ..loaders.urdf_xml import read_urdf_xml
from ..model import Model, ModelError, ModelWarning, configuration

__all__ = ["MAX_BODIES", "Viewer", "visual_model"]

MAX_BODIES = 2000
"""Largest model the viewer draws: a 100,000-link chain would be 200,000 meshcat objects."""

LINK_COLOR = (0.25, 0.45, 0.85, 1.0)
JOINT_COLOR = (0.95, 0.55, 0.1, 1.0)
CUT_COLOR = (0.9, 0.1, 0.1, 1.0)
COLLISION_COLOR = (0.8, 0.8, 0.75, 0.55)  # see-through: the contacts inside show
GROUND_COLOR = 0x9A9F9A
POINT_COLOR = 0xD01A1A
FORCE_COLOR = 0x1AA83A
FPS = 30  # frames per second of an animation


def _import_meshcat():
    """meshcat, imported without the DeprecationWarning its server module raises (a pyzmq event loop)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import meshcat
        import meshcat.visualizer

    return meshcat


class _Scene:
    """A meshcat window (the object ``meshcat.Visualizer`` sends its commands to) that keeps the scene
    tree as meshcat's server does, and forwards every command to a live window when there is one."""

    def __init__(self, live=None):
        _import_meshcat()
        from meshcat.servers.tree import SceneTree

        self.tree = SceneTree()
        self.live = live

    @property
    def web_url(self) -> str | None:
        return None if self.live is None else self.live.web_url

    def send(self, command) -> None:
        import umsgpack
        from meshcat.servers.tree import SceneTree, find_node

        data = command.lower()
        packed = umsgpack.packb(data)
        path = [p for p in data["path"].split("/") if p]
        node = find_node(self.tree, path)
        kind = data["type"]
        if kind == "set_object":
            node.object, node.properties = packed, []
        elif kind == "set_transform":
            node.transform = packed
        elif kind == "set_property":
            node.properties.append(packed)
        elif kind == "set_animation":
            node.animation = packed
        elif kind == "delete":
            if path:
                find_node(self.tree, path[:-1]).pop(path[-1], None)
            else:
                self.tree = SceneTree()
        if self.live is not None:
            self.live.send(command)

    def html(self) -> str:
        """A self-contained page: meshcat's viewer script and the scene's commands, inlined."""
        import meshcat
        from meshcat.servers.tree import walk

        script = (Path(meshcat.__file__).parent / "viewer" / "dist" / "main.min.js").read_text()
        commands = []
        for node in walk(self.tree):
            blobs = ([node.object] if node.object is not None else []) + list(node.properties)
            blobs += [b for b in (node.transform, node.animation) if b is not None]
            for b in blobs:
                commands.append(
                    f'fetch("data:application/octet-binary;base64,{base64.b64encode(b).decode()}")'
                    ".then(r => r.arrayBuffer()).then(b => viewer.handle_command_bytearray(new Uint8Array(b)));"
                )
        body = "\n".join(commands)
        return (
            "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>denoc_pin</title>"
            "<style>body {margin: 0} #meshcat-pane {width: 100vw; height: 100vh; overflow: hidden}</style>"
            f'</head><body><div id="meshcat-pane"></div><script>{script}</script><script>\n'
            'var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));\n'
            f"{body}\n</script></body></html>\n"
        )


def _frame_axes(z: np.ndarray) -> np.ndarray:
    """A rotation whose third column is the unit vector z."""
    t = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(t, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _package_dirs(model: Model, extra) -> list[str]:
    """Where ``package://`` URIs may point (``loaders.robots.mesh_folders``)."""
    return [str(d) for d in mesh_folders(model.source, extra)]


def _urdf_visuals(model: Model, pm, dirs: list[str]):
    """The URDF's visuals as Pinocchio builds them, from the text ``load_urdf`` read (urdf_xml), without the
    visuals it cannot draw — a malformed one, or a mesh file not found — each named in a warning."""
    import pinocchio as pin

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # load_urdf reported the file's defects already
        xml = read_urdf_xml(Path(model.source))
    messages = [m for m in xml.dropped if m.startswith("<visual>")]
    folders = [Path(model.source).resolve().parent, *(Path(d) for d in dirs)]
    changed = bool(xml.dropped)
    for visual in xml.robot.findall("link/visual"):
        mesh = visual.find("geometry/mesh")
        if mesh is None:
            continue
        found = mesh_file(mesh.get("filename"), folders)
        if found is None:
            messages.append(
                f"<visual> of link {visual.getparent().get('name')!r} (line {visual.sourceline}): mesh file "
                f"{mesh.get('filename')!r} not found (looked in the URDF's folder and {len(dirs)} package folders)"
            )
            visual.getparent().remove(visual)
            changed = True
        else:
            mesh.set("filename", str(found))  # absolute: the text below has no folder of its own
    for message in messages:
        warnings.warn(f"{model.source}: not drawn: {message}", ModelWarning, stacklevel=4)
    if not changed:  # the file itself, as Pinocchio reads it
        return pin.buildGeomFromUrdf(pm, str(model.source), pin.GeometryType.VISUAL, package_dirs=dirs)
    return pin.buildGeomFromUrdfString(pm, xml.text.decode(), pin.GeometryType.VISUAL, package_dirs=dirs)


def _sdf_visuals(model: Model, gm, dirs: list[str]) -> None:
    """The SDF's visuals (``loaders.sdf.sdf_visuals``): meshes by ``model://``, ``package://`` or relative URI,
    boxes, cylinders and spheres; one not found is named in a warning."""
    import coal
    import pinocchio as pin

    folders = [Path(model.source).resolve().parent, *(Path(d) for d in dirs)]
    for name, body, (R, p), geometry in sdf_visuals(model):
        placement = pin.SE3(np.asarray(R, float), np.asarray(p, float))
        if "mesh" in geometry:
            found = mesh_file(geometry["mesh"], folders)
            if found is None:
                warnings.warn(f"{model.source}: not drawn: visual {name!r}: mesh {geometry['mesh']!r} not found "
                              f"(looked in the SDF's folder and {len(dirs)} model folders)", ModelWarning,
                              stacklevel=4)  # fmt: skip
                continue
            shape = coal.MeshLoader().load(str(found), np.asarray(geometry["scale"], float))
            g = pin.GeometryObject(name, int(body), placement, shape)
            g.meshPath, g.meshScale = str(found), np.asarray(geometry["scale"], float)
        elif "box" in geometry:
            g = pin.GeometryObject(name, int(body), placement, coal.Box(*np.asarray(geometry["box"], float)))
        elif "cylinder" in geometry:
            g = pin.GeometryObject(name, int(body), placement, coal.Cylinder(*geometry["cylinder"]))
        else:
            g = pin.GeometryObject(name, int(body), placement, coal.Sphere(geometry["sphere"]))
        g.meshColor = np.array([0.7, 0.7, 0.72, 1.0])
        gm.addGeometryObject(g)


def visual_model(model: Model, package_dirs=None):
    """(pinocchio twin, pinocchio.GeometryModel) of what the viewer draws: URDF visuals where the
    model's source has them, primitives for every other body, markers for the cut joints."""
    import coal
    import pinocchio as pin

    pm = to_pinocchio(model)
    gm = pin.GeometryModel()
    if model.source and str(model.source).endswith(".urdf"):
        try:
            gm = _urdf_visuals(model, pm, _package_dirs(model, package_dirs))
        except (ValueError, RuntimeError, OSError) as e:
            warnings.warn(f"visual meshes of {model.source} not loaded ({e}); drawing primitives", stacklevel=3)
            gm = pin.GeometryModel()
    elif model.source and str(model.source).endswith(".sdf"):
        _sdf_visuals(model, gm, _package_dirs(model, package_dirs))
    drawn = {int(g.parentJoint) for g in gm.geometryObjects}
    scale = _link_scale(model)

    def add(name, body, R, p, shape, color):
        g = pin.GeometryObject(name, int(body), pin.SE3(np.asarray(R, float), np.asarray(p, float)), shape)
        g.meshColor = np.array(color)
        gm.addGeometryObject(g)

    shown = set()
    for c in model.collisions:  # a body the file draws nothing of is drawn by its collision shapes
        if c.body in drawn or c.body == 0:
            continue
        add(f"collision_{c.name}", c.body, c.rotation, c.translation, coal_geometry(c.shape), COLLISION_COLOR)
        shown.add(c.body)
    drawn |= shown

    children = [[] for _ in range(model.njoints)]
    for k in range(1, model.njoints):
        children[int(model.parents[k])].append(k)
    for k in range(1, model.njoints):
        if k in drawn:
            continue
        add(f"joint_{model.names[k]}", k, np.eye(3), np.zeros(3), coal.Sphere(1.5 * scale), JOINT_COLOR)
        ends = [model.placement_translation[c] for c in children[k]] or [2.0 * model.coms[k]]
        for i, p in enumerate(ends):
            length = float(np.linalg.norm(p))
            if length > 1e-9:
                add(f"link_{model.names[k]}_{i}", k, _frame_axes(p / length), 0.5 * p, coal.Cylinder(scale, length),
                    LINK_COLOR)  # fmt: skip
    for lp, cut in zip(model.loops, model.cuts, strict=True):
        for side, (body, R, p) in enumerate(((cut.body1, cut.R1, cut.p1), (cut.body2, cut.R2, cut.p2)), start=1):
            add(f"cut_{lp.name}_C{side}", body, R, p, coal.Sphere(2.0 * scale), CUT_COLOR)
    return pm, gm


def _points(model: Model) -> np.ndarray:
    """(n, 3) world positions of every joint and tip at q = 0; a tip body (no children) ends at twice its
    centre of mass, as it is drawn."""
    data = model.create_data()
    forward_kinematics(model, data, neutral(model))
    R, o = data.oR, data.op
    leaf = np.ones(model.njoints, bool)
    leaf[np.asarray(model.parents)[1:]] = False
    tips = o[leaf] + 2.0 * np.einsum("kij,kj->ki", R[leaf], np.asarray(model.coms)[leaf])
    return np.vstack([o, tips])


def _extent(model: Model) -> float:
    """Radius of a sphere about the world origin that holds every joint and tip at q = 0 (at least 0.2 m)."""
    return max(0.2, 1.1 * float(np.linalg.norm(_points(model), axis=1).max()))


def _link_scale(model: Model) -> float:
    """Radius of the drawn links: 8% of the median joint-to-joint distance, and at least 0.6% of the
    model's extent, so that a long rope of short links stays visible."""
    d = np.linalg.norm(np.asarray(model.placement_translation)[1:], axis=1)
    d = d[d > 1e-9]
    return max(0.08 * float(np.median(d)) if d.size else 0.01, 0.006 * _extent(model))


def start_server(host: str = "127.0.0.1", timeout: float = 30.0) -> tuple[subprocess.Popen, str]:
    """A meshcat server listening on ``host`` only (``meshcat_server.py``, a script beside this module, run without
    importing denoc_pin): (its process, its ZeroMQ address)."""
    script = Path(__file__).with_name("meshcat_server.py")
    # Its output into files, not pipes: a pipe nobody reads any more would fill (or break) and stall the server.  The
    # server keeps writing into its own descriptors of these unlinked files once this process closes its own.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-u", str(script), "--host", host], stdout=out, stderr=err,
                                start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            out.seek(0)
            for line in out.read().decode(errors="replace").splitlines():
                if line.startswith("zmq_url="):
                    return proc, line.split("=", 1)[1].strip()
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        err.seek(0)
        log = err.read().decode(errors="replace")[-2000:]
    raise RuntimeError(f"the meshcat server did not start on {host}: {log}")


class Viewer:
    """A MeshCat view of a model (``pinocchio.visualize.MeshcatVisualizer`` under the hood).

    live: start a meshcat server for ``display``/``play`` in a browser, listening on ``host`` (127.0.0.1: this
    machine only; ``host="0.0.0.0"`` exposes the page, which shows the scene, and the ZeroMQ socket, which
    takes commands that change it, to every machine that reaches this one); ``zmq_url``: connect to a running
    one instead.  With neither, the scene is only recorded, for
    ``save_html``.  ``package_dirs``: extra folders for the URDF's ``package://`` meshes.
    ``offset``: (3,) where the drawn scene sits in meshcat's world, minus the centre of the model's box at q = 0
    (meshcat's camera looks at the origin; ``frame``).  Objects added through ``viewer.meshcat`` under
    ``"denoc_pin"`` move with the model.  ``ground``: a ``dp.Ground`` to draw (``show_ground``); ``display(q,
    contacts)`` and ``animate`` of a contact ``Trajectory`` draw the contacts and their forces.
    """

    def __init__(self, model: Model, live: bool = False, zmq_url: str | None = None, package_dirs=None, ground=None,
                 host: str = "127.0.0.1"):  # fmt: skip
        meshcat = _import_meshcat()
        import pinocchio as pin
        from pinocchio.visualize import MeshcatVisualizer

        if not isinstance(model, Model):
            raise TypeError(f"Viewer needs a denoc_pin.Model, got {type(model).__name__}")
        if model.njoints - 1 > MAX_BODIES:
            raise ModelError(
                f"Viewer draws models of at most {MAX_BODIES} bodies; {model.name!r} has {model.njoints - 1}"
            )
        self.model = model
        window, server = None, None
        if live and zmq_url is None:
            server, zmq_url = start_server(host)
        if zmq_url is not None:
            window = meshcat.visualizer.ViewerWindow(zmq_url=zmq_url, start_server=False, server_args=[])
            window.server_proc = server  # close() stops it
        self._scene = _Scene(window)
        self.meshcat = meshcat.Visualizer(window=self._scene)
        self.pin_model, self.visual_model = visual_model(model, package_dirs)
        self._viz = MeshcatVisualizer(self.pin_model, self.visual_model, self.visual_model)
        self._viz.initViewer(viewer=self.meshcat)
        self._viz.loadViewerModel(rootNodeName="denoc_pin")
        # Pinocchio loads the shapes; denoc_pin places them (_placements), from its own kinematics.
        self._data = model.create_data()
        self._paths = [
            self._viz.getViewerNodeName(g, pin.GeometryType.VISUAL) for g in self.visual_model.geometryObjects
        ]
        self._local_corners = None  # the shapes' boxes in their own frames, on first use (_drawn_corners)
        self.ground = None
        self._markers = 0  # contact markers made so far (_contact_markers)
        self.frame(_neutral(model))
        if ground is not None:
            self.show_ground(ground)
        self.display(_neutral(model))

    def close(self) -> None:
        """Disconnect from the live server, and stop it if this viewer started it."""
        live = self._scene.live
        if live is not None:
            live.zmq_socket.close(linger=0)
            if live.server_proc is not None:
                live.server_proc.kill()
                live.server_proc.wait()
            self._scene.live = None

    @property
    def url(self) -> str | None:
        """The live viewer's address (None without a server)."""
        return self._scene.web_url

    def _placements(self, q) -> list[np.ndarray]:
        """(4, 4) world placement of every drawn shape and mesh at q: its body's placement from denoc_pin's own
        kinematics (``forward_kinematics``), times the shape's placement in that body."""
        forward_kinematics(self.model, self._data, q)
        oR, op = self._data.oR, self._data.op
        out = []
        for g in self.visual_model.geometryObjects:
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = oR[g.parentJoint], op[g.parentJoint]
            out.append(T @ g.placement.homogeneous)
        return out

    def _drawn_corners(self, q) -> np.ndarray:
        """(8 n, 3) world corners of the boxes around every drawn shape and mesh at q (coal's local AABBs, computed
        once per viewer: ``frame`` asks for every frame of an animation)."""
        if self._local_corners is None:
            self._local_corners = []
            for g in self.visual_model.geometryObjects:
                g.geometry.computeLocalAABB()
                lo, hi = np.asarray(g.geometry.aabb_local.min_), np.asarray(g.geometry.aabb_local.max_)
                self._local_corners.append(
                    np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
                )
        out = [np.zeros((0, 3))]
        for corners, M in zip(self._local_corners, self._placements(q), strict=True):
            out.append(corners @ M[:3, :3].T + M[:3, 3])
        return np.vstack(out)

    def frame(self, qs) -> None:
        """Fit the view to the box swept by the configurations ``qs`` (N, nq): the camera frames all of it, looking
        at its centre from the side across the box's longer horizontal extent (a model lying along x is seen from
        +y, one along y from +x), slightly from above; the ground grid under its lowest point (or at z = 0, under
        the base), its cells scaled to the model.  ``animate`` and ``save_html`` frame their trajectory so.

        meshcat's camera always looks at the world origin (its orbit controls re-aim it there on every frame), so
        the scene is moved instead: the model, the axes and the grid by −c, c the centre of the box
        (``self.offset`` = −c); and the camera rig ``/Cameras/default`` is turned about z and scaled, which moves
        the camera about the origin and along its line of sight while it keeps meshcat's default place in the rig
        (3, 0, 1), from +x."""
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        self._framed = qs
        p = np.vstack([self._drawn_corners(configuration(self.model, q)) for q in qs])
        if len(qs) == 1 and np.array_equal(qs[0], _neutral(self.model)):
            p = np.vstack([p, _points(self.model)])
        lo, hi = p.min(axis=0), p.max(axis=0)
        centre = 0.5 * (lo + hi)
        radius = max(0.1, 0.5 * float(np.linalg.norm(hi - lo)))
        self.offset = -centre
        self._centre, self._radius = centre, radius

        def moved(by) -> np.ndarray:
            T = np.eye(4)
            T[:3, 3] = by
            return T

        self.meshcat["denoc_pin"].set_transform(moved(-centre))
        self.meshcat["/Axes"].set_transform(moved(-centre))
        # meshcat's grid is 20 m wide in cells of 0.5 m: scaled by a power of ten, so that cells are 5 cm under a
        # hand, 0.5 m under an arm, 5 m under a 100 m chain.
        grid = moved(-centre + [0.0, 0.0, min(0.0, float(lo[2]))])
        if self.ground is not None:  # on the ground, lifted off its slab by a hair (no flicker)
            R, o = self._ground_pose()
            grid[:3, :3], grid[:3, 3] = R, o + 1e-3 * radius * R[:, 2] - centre
            self._draw_ground()
        grid[:3, :3] *= 10.0 ** np.floor(np.log10(2.0 * radius))
        self.meshcat["/Grid"].set_transform(grid)
        # meshcat's vertical field of view is 75°: a sphere of radius r fits at r / sin(37.5°) = 1.64 r.
        rig = np.eye(4)
        if hi[0] - lo[0] > hi[1] - lo[1]:  # longer along x: look from +y (meshcat's camera, turned 90° about z)
            rig[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
        rig[:3, :3] *= 1.8 * radius / np.sqrt(10.0)
        self.meshcat["/Cameras/default"].set_transform(rig)

    def show_ground(self, ground) -> None:
        """Draw ``ground`` (a ``dp.Ground``): a grey slab about the model's box projected on the plane, 4 times the
        box's diameter wide (at least 2 m), meshcat's grid laid on it; re-centred whenever the view is framed."""
        if not isinstance(ground, Ground):
            raise TypeError(f"show_ground needs a dp.Ground, got {type(ground).__name__}")
        self.ground = ground
        self.frame(self._framed)

    def _ground_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(R, o): the ground's frame (t₁, t₂, n) and the point of the plane under the framed box's centre."""
        n, R = np.asarray(self.ground.normal), self.ground.frame
        c = self._centre
        return R, c - (n @ c - self.ground.height) * n

    def _draw_ground(self) -> None:
        meshcat = _import_meshcat()
        g = meshcat.geometry
        side = max(2.0, 8.0 * self._radius)
        thick = 0.02 * side
        R, o = self._ground_pose()
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, o - 0.5 * thick * R[:, 2]
        node = self.meshcat["denoc_pin/ground"]
        node.set_object(g.Box([side, side, thick]), g.MeshLambertMaterial(color=GROUND_COLOR))
        node.set_transform(T)

    def _contact_markers(self, count: int) -> None:
        """At least ``count`` contact markers under ``denoc_pin/contacts/i``: a dot, and an arrow (a unit shaft and a
        head, three.js cylinders along y) scaled per contact by ``_contact_transforms``."""
        g = _import_meshcat().geometry
        r = 0.03 * self._radius
        for i in range(self._markers, count):
            node = self.meshcat[f"denoc_pin/contacts/{i}"]
            node["point"].set_object(g.Sphere(r), g.MeshLambertMaterial(color=POINT_COLOR))
            node["shaft"].set_object(g.Cylinder(1.0, 0.4 * r), g.MeshLambertMaterial(color=FORCE_COLOR))
            node["head"].set_object(g.Cylinder(1.0, radiusTop=0.0, radiusBottom=r), g.MeshLambertMaterial(
                color=FORCE_COLOR))  # fmt: skip
        self._markers = max(self._markers, count)

    def _contact_transforms(self, contacts) -> list[tuple[str, np.ndarray]]:
        """(path, 4 x 4 transform) of every contact marker for one ``Trajectory.contacts`` row: the dot at each
        point, the arrow along its force (length |f| / (m g) times the framed box's radius), unused markers shrunk
        to nothing."""
        points = np.asarray(contacts["points"], dtype=float).reshape(-1, 3)
        forces = np.asarray(contacts["forces"], dtype=float).reshape(-1, 3)
        self._contact_markers(len(points))
        weight = float(np.sum(self.model.masses)) * max(float(np.linalg.norm(self.model.gravity)), 1e-9)
        per_newton = self._radius / max(weight, 1e-12)
        head = 0.1 * self._radius
        hidden = np.diag([1e-9, 1e-9, 1e-9, 1.0])
        out = []
        for i in range(self._markers):
            base = f"denoc_pin/contacts/{i}"
            if i >= len(points):
                out += [(f"{base}/{part}", hidden) for part in ("point", "shaft", "head")]
                continue
            dot = np.eye(4)
            dot[:3, 3] = points[i]
            out.append((f"{base}/point", dot))
            f = forces[i]
            length = per_newton * float(np.linalg.norm(f))
            if length < 1e-9 * self._radius:
                out += [(f"{base}/shaft", hidden), (f"{base}/head", hidden)]
                continue
            A = _frame_axes(f / np.linalg.norm(f))
            R = np.column_stack([A[:, 1], A[:, 2], A[:, 0]])  # y along the force (a cyclic turn: a rotation)
            shaft_len = max(length - head, 0.0)
            for part, size, at in (
                ("shaft", shaft_len, 0.5 * shaft_len),
                ("head", min(head, length), shaft_len + 0.5 * min(head, length)),
            ):
                T = np.eye(4)
                T[:3, :3] = R @ np.diag([1.0, max(size, 1e-9), 1.0])
                T[:3, 3] = points[i] + at * R[:, 1]
                out.append((f"{base}/{part}", T))
        return out

    def display(self, q, contacts=None) -> None:
        """Draw the model at configuration q (nq,); with ``contacts`` (a ``Trajectory.contacts`` row, or a dict of
        "points" and "forces" (k, 3), world), its contact points and forces too."""
        q = configuration(self.model, q)
        for path, g, M in zip(self._paths, self.visual_model.geometryObjects, self._placements(q), strict=True):
            self.meshcat[path].set_transform(_scaled(M, g.meshScale))
        if contacts is not None:
            for path, T in self._contact_transforms(contacts):
                self.meshcat[path].set_transform(T)

    def _frames(self, traj, speed: float):
        """Indices into ``traj`` of the animation frames, FPS per second of wall time at ``speed``."""
        if not (np.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a positive number, got {speed}")
        t = np.asarray(traj.t, float)
        if t.ndim != 1 or len(t) == 0 or np.asarray(traj.q).shape != (len(t), self.model.nq):
            raise ValueError(
                f"traj must hold t (N,) and q (N, {self.model.nq}) of this model, got {t.shape} and "
                f"{np.asarray(traj.q).shape}"
            )
        n = max(1, int(np.floor((t[-1] - t[0]) / speed * FPS)) + 1)
        wanted = t[0] + np.arange(n) * speed / FPS
        return np.minimum(np.searchsorted(t, wanted - 1e-12), len(t) - 1)

    def play(self, traj, speed: float = 1.0) -> None:
        """Play a :class:`Trajectory` in the live viewer in real time (× ``speed``), framed whole (``frame``)."""
        frames = self._frames(traj, speed)
        self._ground_of(traj)
        self.frame(np.asarray(traj.q)[frames])
        start = time.perf_counter()
        contacts = getattr(traj, "contacts", None)
        for i, k in enumerate(frames):
            self.display(traj.q[k], None if contacts is None else contacts[k])
            delay = start + i / FPS - time.perf_counter()
            if delay > 0:
                time.sleep(delay)

    def animate(self, traj, speed: float = 1.0, repetitions: int = 1) -> int:
        """Load ``traj`` as a meshcat animation (the player of the page's controls); returns its frame count."""
        import meshcat.animation

        frames = self._frames(traj, speed)
        self._ground_of(traj)
        self.frame(np.asarray(traj.q)[frames])
        anim = meshcat.animation.Animation(default_framerate=FPS)
        geometries = self.visual_model.geometryObjects
        contacts = getattr(traj, "contacts", None)
        if contacts is not None:  # every frame animates the same markers: as many as the busiest frame needs
            self._contact_markers(max(len(contacts[k]["points"]) for k in frames))
        for i, k in enumerate(frames):
            placements = self._placements(configuration(self.model, traj.q[k]))
            with anim.at_frame(self.meshcat, i) as frame:
                for path, g, M in zip(self._paths, geometries, placements, strict=True):
                    frame[path].set_transform(_scaled(M, g.meshScale))
                for path, T in self._contact_transforms(contacts[k]) if contacts is not None else ():
                    frame[path].set_transform(T)
        self.meshcat.set_animation(anim, play=True, repetitions=int(repetitions))
        return len(frames)

    def _ground_of(self, traj) -> None:
        """Draw the ground a contact trajectory ran on, unless one is drawn already."""
        if self.ground is None and getattr(traj, "ground", None) is not None:
            self.ground = traj.ground

    def html(self, traj=None, speed: float = 1.0) -> str:
        """The self-contained page (meshcat's viewer and the scene inlined; opens offline) as a string; with
        ``traj``, it plays it as an animation (its controls can replay it), with its ground and contacts when it
        has them."""
        if traj is not None:
            contacts = getattr(traj, "contacts", None)
            self._ground_of(traj)
            self.display(traj.q[0], None if contacts is None else contacts[0])
            self.animate(traj, speed, repetitions=1)
        return self._scene.html()

    def save_html(self, path, traj=None, speed: float = 1.0) -> Path:
        """Write ``html(traj, speed)`` to ``path`` (a file a browser opens offline)."""
        page = self.html(traj, speed)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
        return path

    def iframe(self, traj=None, speed: float = 1.0, height: int = 420) -> str:
        """An ``<iframe>`` of the view for a notebook's output: the self-contained page in its ``srcdoc`` (no
        server, and it survives the notebook's export to HTML), or, for a live viewer, the server's page (its
        ``src``, as meshcat's own ``jupyter_cell``; it shows while the server runs)."""
        if not (isinstance(height, int) and 100 <= height <= 4000):
            raise ValueError(f"height is the frame's height in pixels, 100 … 4000; got {height!r}")
        style = f'style="width: 100%; height: {height}px; border: 0"'
        if self.url is not None and traj is None:
            return f'<iframe src="{html_escape(self.url)}" {style}></iframe>'
        return f'<iframe srcdoc="{html_escape(self.html(traj, speed))}" {style}></iframe>'

    def show(self, traj=None, speed: float = 1.0, height: int = 420):
        """The view in a Jupyter cell (JupyterLab, classic Notebook, VS Code): ``IPython.display.HTML`` of
        ``iframe``; with ``traj``, its animation with the page's play controls."""
        try:
            from IPython.display import HTML
        except ImportError:
            raise ImportError(
                "Viewer.show draws in a Jupyter notebook, which needs IPython (pip install ipykernel); "
                "viewer.iframe() gives the same HTML, viewer.save_html(path) a page"
            ) from None
        return HTML(f"<div>{self.iframe(traj, speed, height)}</div>")  # IPython takes a bare <iframe> for a mistake

    def _repr_html_(self) -> str:
        """A viewer as a cell's last value shows itself (Jupyter's rich display): ``iframe()``."""
        return self.iframe()


def _scaled(T: np.ndarray, scale) -> np.ndarray:
    """A homogeneous transform with a mesh scale applied to its rotation block (as Pinocchio's viewer does)."""
    T = np.array(T, dtype=float)
    T[:3, :3] = T[:3, :3] @ np.diag(np.asarray(scale, float))
    return T


def _neutral(model: Model) -> np.ndarray:

    return neutral(model)
