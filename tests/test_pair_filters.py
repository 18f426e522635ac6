"""Which shape pairs may touch: a model's excluded pairs (``Model.excluded_collisions``) from the builder, an MJCF's
``<contact><exclude>``, an SRDF's ``disable_collisions`` (``dp.with_self_collision``, ``dp.exclude_collisions``),
against Pinocchio's ``addAllCollisionPairs`` + ``removeCollisionPairs`` on example-robot-data's SRDFs."""

import warnings

import numpy as np
import pinocchio as pin
import pytest

import denoc_pin as dp
from denoc_pin.contact.detection import PairDetector
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
