"""URDF loading: Pinocchio's layout, fixed-joint merging, and a clear ModelError for every bad input."""

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, assert_close, load_pair

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

GOOD_LINK = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def chain(extra: str = "", axis: str = "0 0 1", jtype: str = "revolute", link_a: str = GOOD_LINK) -> str:
    return robot(
        f'<link name="base"/><link name="a">{link_a}</link>'
        f'<joint name="j1" type="{jtype}"><parent link="base"/><child link="a"/><axis xyz="{axis}"/>{LIMIT}</joint>'
        + extra
    )


def write(tmp_path, text: str, name: str = "bad.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_same_layout_as_pinocchio(case):
    model, pm = case
    assert list(model.names) == list(pm.names)
    assert list(model.parents) == list(pm.parents)
    assert (model.nq, model.nv) == (pm.nq, pm.nv)
    assert [int(j.idx_q) for j in pm.joints][1:] == list(model.idx_q[1:])
    assert [int(j.idx_v) for j in pm.joints][1:] == list(model.idx_v[1:])
    for k in range(1, model.njoints):
        assert_close(model.masses[k], pm.inertias[k].mass, what=f"mass {k}")
        assert_close(model.placement_translation[k], pm.jointPlacements[k].translation, atol=1e-15, what="placement")


def test_siblings_are_ordered_by_joint_name_like_urdfdom(tmp_path):
    body = '<link name="base"/>'
    for child, joint in [("zeta", "j_b"), ("alpha", "j_c"), ("mid", "j_a"), ("kid", "a_k")]:
        body += f'<link name="{child}">{GOOD_LINK}</link>'
        parent = "zeta" if child == "kid" else "base"
        body += f'<joint name="{joint}" type="revolute"><parent link="{parent}"/><child link="{child}"/>{LIMIT}</joint>'
    model, pm = load_pair(write(tmp_path, robot(body), "order.urdf"))
    assert model.names == ("universe", "j_a", "j_b", "a_k", "j_c") == tuple(pm.names)


def test_fixed_joints_are_merged_into_the_parent_body():
    model = dp.load_urdf(ROOT / "urdf" / "spatial_tree.urdf")
    assert "payload_mount" not in model.names
    hand = model.joint_id("wrist")
    assert_close(model.masses[hand], 0.35 + 0.5, what="hand + payload")
    frame = next(f for f in model.frames if f.name == "payload")
    assert frame.body == hand and np.linalg.norm(frame.translation - [0.05, 0.01, -0.02]) < 1e-15


def test_continuous_joints_use_cos_sin(tmp_path):
    model = dp.load_urdf(write(tmp_path, chain(jtype="continuous"), "c.urdf"))
    assert (model.nq, model.nv) == (2, 1)
    data = model.create_data()
    th = 0.7
    a = np.array([1.0])
    # (cos θ, sin θ) need not be unit: only the angle counts.
    t1 = dp.inverse_dynamics(model, data, [np.cos(th), np.sin(th)], [0.3], a)
    t2 = dp.inverse_dynamics(model, data, [2 * np.cos(th), 2 * np.sin(th)], [0.3], a)
    np.testing.assert_allclose(t1, t2, rtol=1e-14)


def test_axes_are_normalised_like_pinocchio(tmp_path):
    model, pm = load_pair(write(tmp_path, chain(axis="0 0 5"), "axis.urdf"))
    np.testing.assert_allclose(model.axes[1], [0, 0, 1])
    q, v, a = np.array([0.3]), np.array([0.2]), np.array([0.1])
    assert_close(dp.inverse_dynamics(model, model.create_data(), q, v, a), pin.rnea(pm, pm.createData(), q, v, a))


def test_standard_robots_with_cad_inertias_load_with_a_warning():
    with pytest.warns(dp.InertiaWarning, match="breaks the triangle inequality"):
        dp.load_urdf(example_robot_urdf("allegro"))
    with pytest.raises(dp.ModelError, match="breaks the triangle inequality"):
        dp.load_urdf(example_robot_urdf("allegro"), strict=True)


def test_clean_urdfs_load_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in sorted((ROOT / "urdf").glob("*.urdf")):
            dp.load_urdf(p, strict=True)
        dp.load_urdf(example_robot_urdf("panda"), strict=True)


def test_root_joint_values_are_checked():
    with pytest.raises(ValueError, match="root_joint must be one of"):
        dp.load_urdf(ROOT / "urdf" / "gripper.urdf", root_joint="ball")


# ---- every bad input: the exception type and a message naming the problem ----------------

BAD = {
    "malformed XML": ("<robot name='x'><link name='a'>", r"bad\.urdf: malformed XML: .*line 1"),
    "no robot": ('<?xml version="1.0"?><model name="x"/>', r"no <robot> element: the root element is <model>"),
    "unknown link": (
        chain('<joint name="j2" type="fixed"><parent link="a"/><child link="ghost"/></joint>'),
        r"joint 'j2' names unknown child link 'ghost'; links are: 'base', 'a'",
    ),
    "two parents": (
        chain(f'<joint name="j2" type="revolute"><parent link="base"/><child link="a"/>{LIMIT}</joint>'),
        r"link 'a' has two parents: joints 'j1' and 'j2'",
    ),
    "cycle": (
        robot(
            f'<link name="base"/><link name="a">{GOOD_LINK}</link><link name="b">{GOOD_LINK}</link>'
            f'<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>{LIMIT}</joint>'
            f'<link name="c">{GOOD_LINK}</link>'
            f'<joint name="j2" type="revolute"><parent link="b"/><child link="c"/>{LIMIT}</joint>'
            f'<joint name="j3" type="revolute"><parent link="c"/><child link="b"/>{LIMIT}</joint>'
        ),
        r"kinematic cycle through links .*'?b'? → |kinematic cycle through links",
    ),
    "two roots": (
        chain(f'<link name="floating_thing">{GOOD_LINK}</link>'),
        r"more than one root link \('base', 'floating_thing'\)",
    ),
    "unknown joint type": (
        chain(jtype="ball"),
        r"joint 'j1' \(line \d+\) has unknown type 'ball'; URDF joint types are",
    ),
    "unsupported joint type": (
        chain(jtype="floating"),
        r"joint 'j1' has type 'floating', which denoc_pin does not support",
    ),
    "zero axis": (chain(axis="0 0 0"), r"joint 'j1' has a zero-length <axis>"),
    "negative mass": (
        chain(
            link_a='<inertial><mass value="-1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
        ),
        r"link 'a' has a negative mass \(-1.0\)",
    ),
    "non-numeric xyz": (
        chain(
            '<link name="b"/><joint name="j2" type="fixed"><parent link="a"/><child link="b"/>'
            '<origin xyz="0 one 0"/></joint>'
        ),
        r"<origin> of joint 'j2' \(line \d+\): attribute xyz='0 one 0' is not 3 finite numbers",
    ),
    "non-numeric mass": (
        chain(link_a='<inertial><mass value="heavy"/></inertial>'),
        r"<mass> of link 'a' \(line \d+\): attribute value='heavy' is not 1 finite number",
    ),
    "nan inertia": (
        chain(
            link_a='<inertial><mass value="1"/><inertia ixx="nan" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
        ),
        r"<inertia> of link 'a' \(line \d+\): attribute ixx='nan' is not 1 finite number",
    ),
    "massless leaf": (
        chain(
            '<link name="sensor"/>'
            f'<joint name="j2" type="revolute"><parent link="a"/><child link="sensor"/>{LIMIT}</joint>'
        ),
        r"joint 'j2' moves only massless links \('sensor'\), so the generalized inertia matrix is singular",
    ),
    "no movable joint": (
        robot(
            f'<link name="base"/><link name="a">{GOOD_LINK}</link>'
            '<joint name="j" type="fixed"><parent link="base"/><child link="a"/></joint>'
        ),
        r"the robot has no movable joint",
    ),
    "duplicate link": (chain(f'<link name="a">{GOOD_LINK}</link>'), r"two <link> elements named 'a' \(lines"),
    "joint without child": (
        chain('<joint name="j2" type="fixed"><parent link="a"/></joint>'),
        r"joint 'j2' \(line \d+\) has no <child link=",
    ),
    "inertial without mass": (chain(link_a="<inertial/>"), r"<inertial> of link 'a' \(line \d+\) has no <mass>"),
}


@pytest.mark.parametrize("problem", list(BAD))
def test_bad_urdf_raises_model_error_naming_the_problem(tmp_path, problem):
    text, pattern = BAD[problem]
    path = write(tmp_path, text)
    with pytest.raises(dp.ModelError, match=pattern) as err:
        dp.load_urdf(path)
    assert isinstance(err.value, ValueError)
    assert str(path) in str(err.value), "the message names the file"


# Physically inconsistent inertias: refused with strict=True, a warning by default.
INCONSISTENT = {
    "zero mass with inertia": (
        '<inertial><mass value="0"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
        r"link 'a' has zero mass but a non-zero inertia",
    ),
    "not positive semi-definite": (
        '<inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
        r"the inertia of link 'a' is not positive semi-definite",
    ),
    "triangle inequality": (
        '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.5"/></inertial>',
        r"the inertia of link 'a' breaks the triangle inequality",
    ),
}


@pytest.mark.parametrize("problem", list(INCONSISTENT))
def test_inconsistent_inertia_strict_error_or_warning(tmp_path, problem):
    inertial, pattern = INCONSISTENT[problem]
    leaf = (
        f'<link name="tip">{GOOD_LINK}</link>'
        f'<joint name="j2" type="revolute"><parent link="a"/><child link="tip"/>{LIMIT}</joint>'
    )
    path = write(tmp_path, chain(leaf, link_a=inertial))
    with pytest.raises(dp.ModelError, match=pattern):
        dp.load_urdf(path, strict=True)
    with pytest.warns(dp.InertiaWarning, match=pattern):
        dp.load_urdf(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(dp.ModelError, match=r"nope\.urdf: no such file"):
        dp.load_urdf(tmp_path / "nope.urdf")
    with pytest.raises(dp.ModelError, match=r"no such file \(it is a directory\)"):
        dp.load_urdf(tmp_path)
