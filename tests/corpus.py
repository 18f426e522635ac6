"""The public robot files kept under tests/data, and their referees: MuJoCo reads the same MJCF files here."""

from __future__ import annotations

from pathlib import Path

import mujoco

DATA = Path(__file__).parent / "data"
MENAGERIE = DATA / "menagerie"
MENAGERIE_FILES = sorted(MENAGERIE.glob("*/*.xml"))

# A stand-in for a mesh file not kept here: a tetrahedron.  Only meshes that carry no mass are left out of
# tests/data (visual geoms, bodies with an <inertial>, bodies welded to the world), so MuJoCo's dynamics of the file
# are those of the complete file; the loader, which needs a mesh only for its mass, would refuse the file otherwise.
TETRAHEDRON = [0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01]


def mujoco_model(path: Path) -> mujoco.MjModel:
    """MuJoCo's model of an MJCF file, with the meshes that are not kept here replaced by a tetrahedron (and the
    images by a checker), and with what lies beyond the rigid-body dynamics off: constraints, contacts, springs,
    dampers, armature."""
    spec = mujoco.MjSpec.from_file(str(path))
    base = Path(spec.modelfiledir) / spec.meshdir
    for mesh in spec.meshes:
        if mesh.file and not (base / mesh.file).is_file():
            mesh.file = ""
            mesh.uservert = TETRAHEDRON
            mesh.scale = [1.0, 1.0, 1.0]
    for tex in spec.textures:  # images are not kept either: a built-in checker in their place
        if tex.file and not (Path(spec.modelfiledir) / spec.texturedir / tex.file).is_file():
            tex.file = ""
            tex.builtin = mujoco.mjtBuiltin.mjBUILTIN_CHECKER
            tex.width = tex.height = 8
    for field in spec.hfields:  # a height field's image: a flat 2 x 2 field in its place (it is world geometry)
        here = [Path(spec.modelfiledir) / d / field.file for d in ("", spec.meshdir, spec.texturedir)]
        if field.file and not any(p.is_file() for p in here):
            field.file = ""
            field.nrow = field.ncol = 2
            field.userdata = [0.0] * 4
    for joint in spec.joints:
        joint.armature = 0.0
    m = spec.compile()
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_DAMPER
    return m
