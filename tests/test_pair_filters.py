"""Which shape pairs may touch: a model's excluded pairs (``Model.excluded_collisions``) from the builder, an MJCF's
``<contact><exclude>``, an SRDF's ``disable_collisions`` (``dp.with_self_collision``, ``dp.exclude_collisions``),
against Pinocchio's ``addAllCollisionPairs`` + ``removeCollisionPairs`` on example-robot-data's SRDFs; explicit
pairs (``Model.collision_pairs``) from the builder and an MJCF's ``<contact><pair>``, against MuJoCo's compiled
pairs on Menagerie's scenes that list them."""

import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from corpus import MENAGERIE, mujoco_model

import denoc_pin as dp
from denoc_pin.contact.detection import PairDetector, pair_friction
from denoc_pin.core.shapes import touches_ground
from denoc_pin.loaders.mjcf import mujoco_state
from denoc_pin.loaders.robots import example_robot_urdf, robots_dir


def link_pairs(model):
    """The pairs of links whose collisions the step tests."""
    cols = model.collisions
    return {tuple(sorted((cols[i].link, cols[j].link))) for i, j in PairDetector(model, 1e-3).compiled}


def two_boxes():
    b = dp.ModelBuilder("two boxes")
    for name in ("a", "b", "c"):
        b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.01, link=name)
        b.add_collision(name, dp.Box((0.1, 0.1, 0.1)))
    return b


def test_the_builder_excludes_by_link_or_collision_name():
    """Three free boxes: all three pairs touch; excluding links a, b leaves two, and the collision names of b, c one;
    an unknown name is a ModelError that lists the collisions."""
    assert link_pairs(two_boxes().build()) == {("a", "b"), ("a", "c"), ("b", "c")}
    b = two_boxes()
    b.exclude_collisions("a", "b")
    b.exclude_collisions("b_collision_1", "c_collision_2")
    m = b.build()
    assert link_pairs(m) == {("a", "c")}
    assert m.excluded_collisions == (("a_collision_0", "b_collision_1"), ("b_collision_1", "c_collision_2"))
    assert link_pairs(dp.lock_joints(m, [], dp.neutral(m))) == {("a", "c")}  # edits keep them
    b = two_boxes()
    b.exclude_collisions("a", "nope")
    with pytest.raises(dp.ModelError, match="'nope' is neither a collision nor a link.*a_collision_0"):
        b.build()


def test_mjcf_exclude_keeps_two_bodies_apart(tmp_path):
    """``<contact><exclude body1 body2>`` removes every geom pair of the two bodies (MuJoCo's rule); an unknown
    body is a ModelError naming the file and line."""
    xml = """<mujoco><worldbody>
      <body name="a"><freejoint/><geom type="box" size=".1 .1 .1"/><geom type="sphere" size=".05" pos="0 0 .2"/></body>
      <body name="b" pos="1 0 0"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
      <body name="c" pos="2 0 0"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    </worldbody><contact><exclude body1="a" body2="b"/></contact></mujoco>"""
    path = tmp_path / "three.xml"
    path.write_text(xml)
    m = dp.load_mjcf(path)
    assert len(m.excluded_collisions) == 2 and link_pairs(m) == {("a", "c"), ("b", "c")}
    path.write_text(xml.replace('body2="b"', 'body2="d"'))
    with pytest.raises(dp.ModelError, match=r"three.xml: <exclude> \(line 5\): body2='d' is not a body"):
        dp.load_mjcf(path)


@pytest.mark.parametrize(("robot", "srdf"), [("panda", "panda_description/srdf/panda.srdf"),
                                             ("talos_reduced", "talos_data/srdf/talos.srdf")])  # fmt: skip
def test_srdf_pairs_as_pinocchio_removes_them(robot, srdf):
    """``with_self_collision(model, srdf=…)`` tests the link pairs Pinocchio keeps after ``addAllCollisionPairs`` and
    ``removeCollisionPairs`` with the same SRDF, but for parent and child links, which denoc_pin always keeps apart
    (Pinocchio's pairs leave out only geometries on one joint): panda 20 of 20, talos 883 of 887 (4 parent–child
    finger links).  A URDF's collisions alone touch only the ground."""
    urdf, path = example_robot_urdf(robot), robots_dir() / srdf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        m = dp.load_urdf(urdf)
        ours = link_pairs(dp.with_self_collision(m, srdf=path))
    pm = pin.buildModelFromUrdf(str(urdf))
    gm = pin.buildGeomFromUrdf(pm, str(urdf), pin.GeometryType.COLLISION, package_dirs=[str(robots_dir().parents[1])])
    gm.addAllCollisionPairs()
    pin.removeCollisionPairs(pm, gm, str(path))
    frame = [pm.frames[g.parentFrame].name for g in gm.geometryObjects]
    theirs = {tuple(sorted((frame[p.first], frame[p.second]))) for p in gm.collisionPairs}
    assert link_pairs(m) == set() and ours <= theirs and len(ours) >= 20
    body = {c.link: c.body for c in m.collisions}
    for a, b in theirs - ours:  # a parent and its child
        assert m.parents[body[a]] == body[b] or m.parents[body[b]] == body[a], (a, b)
    assert len(theirs - ours) <= 4


def test_builder_pairs_touch_whatever_their_bits_with_their_own_friction():
    """``add_collision_pair`` makes two collisions touch that their bits keep apart, parent and child too, with the
    pair's μ (else the larger of the two); ``ground=True`` makes a collision touch the ground without bits; edits
    keep both; a name that is neither a collision nor a link is a ModelError."""
    b = dp.ModelBuilder("pairs")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.01, link="a")
    b.add_body("a", joint="revolute", axis=(0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01, link="b")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.01, link="c")
    b.add_collision("a", dp.Box((0.1, 0.1, 0.1)), name="A", group=0, mask=0, ground=True)
    b.add_collision("b", dp.Sphere(0.05), name="B", group=0, mask=0, friction=0.3)
    b.add_collision("c", dp.Sphere(0.05), name="C", friction=0.7)
    m = b.build()
    assert link_pairs(m) == set()
    assert [touches_ground(c) for c in m.collisions] == [True, False, True]
    b.add_collision_pair("A", "b", friction=0.25)  # parent and child, no bits
    b.add_collision_pair("c", "B")
    m = b.build()
    assert m.collision_pairs == (("A", "B", 0.25), ("B", "C", 1.0))
    assert link_pairs(m) == {("a", "b"), ("b", "c")}
    pairs = PairDetector(m, 1e-3).compiled
    assert dict(zip(pairs, pair_friction(m, pairs), strict=True)) == {(0, 1): 0.25, (1, 2): 1.0}
    edited = dp.lock_joints(m, [], dp.neutral(m))
    assert edited.collision_pairs == m.collision_pairs and edited.collisions[0].ground
    b.add_collision_pair("A", "nope")
    with pytest.raises(dp.ModelError, match="add_collision_pair: 'nope' is neither a collision nor a link"):
        b.build()
    with pytest.raises(dp.ModelError, match="collision pair .*friction must be a number >= 0"):
        dp.Model(**(m.fields() | {"collision_pairs": [("A", "B", -1.0)]}))


def menagerie_pairs(path):
    """MuJoCo's explicit pairs of a scene: ({(geom, geom) sorted: μ} between bodies' geoms, {geoms paired with a
    world plane}), μ its first friction number, 0 where condim is 1."""
    m = mujoco_model(path)
    pairs, ground = {}, set()
    for p in range(m.npair):
        a, b = (m.geom(int(m.pair_geom1[p])), m.geom(int(m.pair_geom2[p])))
        plane = [g for g in (a, b) if m.geom_bodyid[g.id] == 0 and m.geom_type[g.id] == mujoco.mjtGeom.mjGEOM_PLANE]
        if plane:
            ground.add(b.name if plane[0].id == a.id else a.name)
        else:
            pairs[tuple(sorted((a.name, b.name)))] = 0.0 if m.pair_dim[p] == 1 else float(m.pair_friction[p, 0])
    return pairs, ground


@pytest.mark.parametrize("scene", ["apptronik_apollo/scene.xml", "unitree_g1/scene_mjx.xml"])
def test_mjcf_pairs_as_mujoco_compiles_them(scene):
    """Menagerie's apollo and g1 (MJX) scenes give every geom contype = conaffinity = 0 and list the pairs that touch
    as ``<contact><pair>``: the geoms they name are read, those paired with the floor touch the ground, the others
    touch exactly the pairs MuJoCo compiles, each with MuJoCo's μ."""
    path = MENAGERIE / scene
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        m = dp.load_mjcf(path)
    theirs, floor = menagerie_pairs(path)
    pairs = PairDetector(m, 1e-3).compiled
    cols = m.collisions
    ours = {tuple(sorted((cols[i].name, cols[j].name))): mu
            for (i, j), mu in zip(pairs, pair_friction(m, pairs), strict=True)}  # fmt: skip
    assert ours == theirs and len(ours) >= 4
    assert {c.name for c in cols if touches_ground(c)} == floor and len(floor) >= 2


def test_a_humanoid_whose_pairs_are_listed_stands_on_them():
    """g1's MJX scene, dropped 1 cm from its ``home`` keyframe, legs and waist under joint PD (the arms limp: their
    light links need the armature the loader leaves out to take PD at 2 ms): its feet, paired with the floor by
    ``<pair>``, hold it — no contact deeper than 2 mm, the base within 1 cm of the keyframe's height after 0.6 s; the
    same file without its pairs has no collisions at all, which the contact step refuses."""
    path = MENAGERIE / "unitree_g1/scene_mjx.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        m = dp.load_mjcf(path)
    home = mujoco_state(m, mujoco_model(path).key("home").qpos)[0]
    q0 = home.copy()
    q0[2] += 0.01
    legs = np.zeros(m.nv)
    legs[6 : 6 + 15] = 1.0  # the legs' twelve joints and the waist's three
    pd, ground = dp.JointPD(m, 100.0 * legs, 1.0 * legs, q0), dp.Ground(friction=1.0)
    tr = dp.simulate(m, q0, np.zeros(m.nv), 0.6, 2e-3, tau=pd, ground=ground, progress=False)
    deepest = max(float(np.max(-c["depths"])) for c in tr.contacts if len(c["depths"]))
    assert deepest <= 2e-3 and abs(tr.q[-1, 2] - home[2]) <= 0.01
    bare = dp.Model(**(m.fields() | {"collisions": (), "collision_pairs": ()}))
    with pytest.raises(dp.ModelError, match="has no collision shapes"):
        dp.simulate(bare, q0, np.zeros(m.nv), 0.1, 2e-3, ground=ground, progress=False)


def test_mjcf_pair_naming_no_geom_is_refused(tmp_path):
    """A ``<pair>`` whose geom the file lacks is a ModelError naming file, line and attribute (MuJoCo refuses it
    too); one with a world geom other than a plane is left out with a warning that says so."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
      <geom name="post" type="box" size=".1 .1 .5" pos="1 0 0"/>
      <body name="a"><freejoint/><geom name="ga" type="box" size=".1 .1 .1" contype="0" conaffinity="0"/></body>
    </worldbody><contact><pair geom1="ga" geom2="floor"/><pair geom1="ga" geom2="post"/></contact></mujoco>"""
    path = tmp_path / "pairs.xml"
    path.write_text(xml)
    with pytest.warns(dp.ModelWarning, match=r"<pair> \(line 4\): geom 'post' is not a collision denoc_pin reads"):
        m = dp.load_mjcf(path)
    assert [c.name for c in m.collisions if touches_ground(c)] == ["ga"] and m.collision_pairs == ()
    path.write_text(xml.replace('geom2="post"', 'geom2="nope"'))
    with pytest.raises(dp.ModelError, match=r"pairs.xml.*line 4.*geom2='nope' is not a geom"):
        dp.load_mjcf(path)
