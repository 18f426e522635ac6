"""The models that come with denoc_pin: the seed papers' robots bundled as URDF files inside the package
(``bundled``), and those built in Python (the rope, the huge chains, the spatial four-bar, Isobe & Yagi's tree)."""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.joints import REVOLUTE
from ..core.shapes import Sphere
from ..model import Model, ModelError
from .builder import ModelBuilder
from .files import load

__all__ = [
    "BUNDLED",
    "bundled",
    "bundled_file",
    "chain",
    "cylinder_inertia",
    "every_joint_legs",
    "isobe_multibranch",
    "rod_inertia",
    "rope",
    "spatial_four_bar",
]

BUNDLED = {
    "gripper": "the 4-DOF tree-type gripper of Shah, Saha & Dutt (Fig. 4, Table 2): three kinematic modules",
    "two_link": "Schiehlen's open two-body robot (section 5, Fig. 3)",
    "two_link_closed": "Schiehlen's two-body robot whose tip pin runs in a slot: a closed loop (eq. 17-25)",
    "four_bar": "a planar four-bar linkage (Grashof crank-rocker), cut at the coupler-rocker pin",
    "slider_crank": "a slider-crank, cut at the slider's prismatic guide (redundant constraints in 3-D)",
    "rrr_3": "a 3-RRR planar parallel robot: two cut joints at the platform",
    "isobe_five_bar": "Isobe & Yagi's 5-joint closed loop (section III) as a planar five-bar",
    "spatial_tree": "a branched spatial tree: tilted axes, prismatic, continuous and fixed joints, offset inertias",
}
"""The bundled robot files: name -> what it is.  Each is the checkout's ``urdf/<name>.urdf``, installed as
``denoc_pin/data/urdf/<name>.urdf`` (the data package ``denoc_pin.data.urdf``), found through ``importlib.resources``
(``bundled_file``)."""

_AS_FILES = contextlib.ExitStack()  # the files as_file extracted (from a zipped install): deleted at exit
atexit.register(_AS_FILES.close)


def bundled_file(name: str) -> Path:
    """The path of the bundled robot file ``name`` (a key of ``BUNDLED``: ``"gripper"``, ``"four_bar"``, …), to
    hand to ``load_urdf``, ``pinocchio.buildModelFromUrdf`` or a viewer."""
    if name not in BUNDLED:
        raise ModelError(f"no bundled model {name!r}; bundled: {', '.join(BUNDLED)}")
    return _AS_FILES.enter_context(resources.as_file(resources.files("denoc_pin.data.urdf") / f"{name}.urdf"))


def bundled(name: str, **kw) -> Model:
    """The bundled robot ``name`` (a key of ``BUNDLED``) as a :class:`Model`; keyword arguments go to ``load_urdf``
    (``root_joint``, ``strict``)."""
    return load(bundled_file(name), **kw)


def cylinder_inertia(mass: float, length: float, radius: float) -> np.ndarray:
    """Solid cylinder along z, about its centre of mass."""
    side = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([side, side, mass * radius**2 / 2.0])


def rope(n_links: int = 50, length: float = 2.5, radius: float = 0.005, mass: float = 0.004) -> Model:
    """The rope of Shah, Saha & Dutt (section 4, Fig. 7): ``n_links`` cylindrical elements of
    length ``length / n_links`` (50 mm), radius ``radius`` (5 mm) and mass ``mass`` each (4 g),
    every one joined to the previous, and the first to a fixed point, by a universal joint.

    2 n_links DOF (100 for the paper's rope).  At q = 0 the rope hangs straight down (−z) from the
    origin; each universal joint turns first about x, then about y.  Joint k is ``u{k}``,
    element k is ``element_{k}``.
    """
    if n_links < 1:
        raise ValueError(f"n_links must be at least 1, got {n_links}")
    if not (length > 0 and radius > 0 and mass > 0):
        raise ValueError(f"length, radius and mass must be positive, got {length}, {radius}, {mass}")
    l = length / n_links
    b = ModelBuilder(f"rope_{n_links}")
    I_c = cylinder_inertia(mass, l, radius)
    parent, offset = 0, np.zeros(3)
    for k in range(1, n_links + 1):
        parent = b.add_body(
            parent,
            joint="universal",
            axis=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
            placement=(np.eye(3), offset),
            mass=mass,
            com=(0.0, 0.0, -l / 2),
            inertia=I_c,
            name=f"u{k}",
            link=f"element_{k}",
        )
        offset = np.array([0.0, 0.0, -l])
    return b.build()


def chain(n: int, planar: bool = False, link_length: float = 0.05, radius: float = 0.005, mass: float = 0.004) -> Model:
    """A serial chain of ``n`` revolute joints, the huge-DOF chains of Agarwal et al.

    Links are the rope paper's cylinders (50 mm, 5 mm radius, 4 g).  At q = 0 the chain lies
    horizontal along +x, the configuration it is released from.  ``planar=True``: every axis is y,
    so the chain moves in the vertical x-z plane; otherwise the axes alternate y, z, y, … (spatial).
    Built from arrays, without a Python loop per body, so that n = 100,000 takes about a second.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not (link_length > 0 and radius > 0 and mass > 0):
        raise ValueError(f"link_length, radius and mass must be positive, got {link_length}, {radius}, {mass}")
    nj = n + 1
    axes = np.zeros((nj, 3))
    axes[1:, 1] = 1.0
    if not planar:
        axes[2::2] = (0.0, 0.0, 1.0)
    placement_p = np.zeros((nj, 3))
    placement_p[2:, 0] = link_length
    side = mass * (3.0 * radius**2 + link_length**2) / 12.0
    inertias = np.zeros((nj, 3, 3))
    inertias[1:] = np.diag([mass * radius**2 / 2.0, side, side])
    coms = np.zeros((nj, 3))
    coms[1:, 0] = link_length / 2
    masses = np.full(nj, mass)
    masses[0] = 0.0
    return Model(
        name=f"{'planar' if planar else 'spatial'}_chain_{n}",
        names=["universe"] + [f"j{k}" for k in range(1, nj)],
        link_names=["base"] + [f"link{k}" for k in range(1, nj)],
        parents=np.concatenate([[0], np.arange(n)]),
        kinds=np.concatenate([[0], np.full(n, REVOLUTE)]),
        axes=axes,
        placement_rotation=np.broadcast_to(np.eye(3), (nj, 3, 3)),
        placement_translation=placement_p,
        masses=masses,
        coms=coms,
        inertias=inertias,
        source="denoc_pin.models.chain",
    )


def spatial_four_bar() -> Model:
    """A spatial four-bar (RSSR-like) closed by a ball joint: crank (revolute about z at the origin),
    coupler on a spherical joint at the crank's end (0.2 m), rocker (revolute about x at
    (0.3, 0.4, 0.1)); the spherical cut ``ball`` joins the coupler's end (0.6 m along its x) and the
    rocker's end (0.45 m along its z).  Its cut has a Pinocchio equivalent (CONTACT_3D), so it serves
    the tests and the benchmarks; close it with ``dp.assemble``."""
    b = ModelBuilder("spatial_four_bar")
    b.add_body(0, "revolute", axis=(0, 0, 1), mass=0.5, com=(0.1, 0, 0), inertia=np.diag([1e-4, 0.02, 0.02]),
               name="crank", link="crank")  # fmt: skip
    b.add_body("crank", "spherical", placement=(np.eye(3), (0.2, 0, 0)), mass=1.0, com=(0.3, 0, 0),
               inertia=np.diag([1e-4, 0.05, 0.05]), name="coupler_joint", link="coupler")  # fmt: skip
    b.add_body(0, "revolute", axis=(1, 0, 0), placement=(np.eye(3), (0.3, 0.4, 0.1)), mass=0.8, com=(0, 0, 0.2),
               inertia=np.diag([0.03, 0.03, 1e-4]), name="rocker", link="rocker")  # fmt: skip
    b.add_loop("ball", "spherical", "coupler", "rocker", (np.eye(3), (0.6, 0, 0)), (np.eye(3), (0, 0, 0.45)))
    return b.build()


def every_joint_legs() -> Model:
    """A free-flying base (3 kg) with six legs around it, one of each joint kind that moves a leg — revolute,
    continuous, prismatic, helical, ball, universal — each a 0.3 kg body whose 4 cm sphere sits off every axis
    (0.06, 0.04, −0.2) below its joint: at q[2] = 0.24 the spheres touch a ground at z = 0.  The contact step's
    derivatives are tested and swept on it (each joint kind's ∂/∂q rule at once)."""
    b = ModelBuilder("every joint")
    b.add_body(0, joint="free-flyer", mass=3.0, inertia=np.diag([0.05, 0.06, 0.07]), link="base")
    kinds = [("revolute", {"axis": (0, 1, 0)}), ("continuous", {"axis": (1, 0, 0)}),
             ("prismatic", {"axis": (0, 0, 1)}), ("helical", {"axis": (0, 0, 1), "pitch": 0.05}),
             ("spherical", {}), ("universal", {"axis": ((1, 0, 0), (0, 1, 0))})]  # fmt: skip
    for i, (kind, kw) in enumerate(kinds):
        angle = 2 * np.pi * i / len(kinds)
        at = (np.eye(3), np.array([0.2 * np.cos(angle), 0.2 * np.sin(angle), 0.0]))
        b.add_body("base", joint=kind, placement=at, mass=0.3, inertia=np.diag([2e-3, 3e-3, 4e-3]),
                   com=(0.0, 0.0, -0.1), link=f"leg{i}", **kw)  # fmt: skip
        b.add_collision(f"leg{i}", Sphere(0.04), (np.eye(3), np.array([0.06, 0.04, -0.2])))
    return b.build()


def rod_inertia(mass: float, length: float) -> np.ndarray:
    """A thin rod along x about its centre of mass: m l²/12 about y and z (a small x moment keeps the
    inertia strictly physical)."""
    side = mass * length**2 / 12.0
    return np.diag([1e-3 * side, side, side])


def isobe_multibranch(length: float = 0.4, mass: float = 0.215, tip_mass: float = 0.5) -> Model:
    """Isobe & Yagi's numerical example (section II.C): a multibranch link system in the horizontal
    plane.  Link 1 turns about the vertical at the base (``joint1``); at its tip a branching joint with
    two independent shafts (``joint2``, ``joint3``) carries links 2 and 3.  Each link is a 0.4 m,
    0.215 kg rod with its centre of gravity at mid-length; a 0.5 kg point mass sits at the tip of link 2.

    The paper's Fig. 4 (the layout) is not in our text copy; putting the one tip mass on link 2 is our
    reading.  At q = 0 every link points along +x.  Gravity (−z) is along the joint axes: no torque.
    """
    b = ModelBuilder("isobe_multibranch")
    rod = {"mass": mass, "com": (length / 2, 0.0, 0.0), "inertia": rod_inertia(mass, length)}
    tip = (np.eye(3), (length, 0.0, 0.0))
    b.add_body(0, joint="revolute", axis=(0, 0, 1), name="joint1", link="link1", **rod)
    b.add_body("link1", joint="revolute", axis=(0, 0, 1), placement=tip, name="joint2", link="link2", **rod)
    b.add_body("link2", joint="fixed", placement=tip, mass=tip_mass, inertia=np.zeros((3, 3)), link="tip_mass")
    b.add_body("link1", joint="revolute", axis=(0, 0, 1), placement=tip, name="joint3", link="link3", **rod)
    return b.build()
