"""URDF loading: Pinocchio's layout, fixed-joint merging, and a clear ModelError for every bad input."""

import re
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close, load_pair

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

GOOD_LINK = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def chain(
    extra: str = "", axis: str | None = "0 0 1", jtype: str = "revolute", link_a: str = GOOD_LINK, in_joint: str = ""
) -> str:
    """base -> j1 -> a; extra: more elements after them; in_joint: more elements inside j1 (axis=None: none)."""
    axis_el = "" if axis is None else f'<axis xyz="{axis}"/>'
    return robot(
        f'<link name="base"/><link name="a">{link_a}</link>'
        f'<joint name="j1" type="{jtype}"><parent link="base"/><child link="a"/>{axis_el}{LIMIT}{in_joint}</joint>'
        + extra
    )


def write(tmp_path, text: str | bytes, name: str = "bad.urdf"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
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
    model = dp.load_urdf(URDF_DIR / "spatial_tree.urdf")
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
        for p in sorted((URDF_DIR).glob("*.urdf")):
            dp.load_urdf(p, strict=True)
        dp.load_urdf(example_robot_urdf("panda"), strict=True)


def test_root_joint_values_are_checked():
    with pytest.raises(ValueError, match="root_joint must be one of"):
        dp.load_urdf(URDF_DIR / "gripper.urdf", root_joint="ball")


# ---- every bad input: the exception type and a message naming the problem ----------------

BAD = {
    "malformed XML": ("<robot name='x'><link name='a'>", r"bad\.urdf: line 1: malformed XML: Premature end of data"),
    "no robot": ('<?xml version="1.0"?><model name="x"/>', r"no <robot> element: the root element is <model>"),
    "unknown link": (
        chain('<joint name="j2" type="fixed"><parent link="a"/><child link="ghost"/></joint>'),
        r"joint 'j2' \(line \d+\) names unknown child link 'ghost'; links are: 'base', 'a'",
    ),
    "two parents": (
        chain(f'<joint name="j2" type="revolute"><parent link="base"/><child link="a"/>{LIMIT}</joint>'),
        r"link 'a' \(line \d+\) has two parents: joint 'j1' \(line \d+\) and joint 'j2' \(line \d+\)",
    ),
    "cycle": (
        robot(
            f'<link name="base"/><link name="a">{GOOD_LINK}</link><link name="b">{GOOD_LINK}</link>'
            f'<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>{LIMIT}</joint>'
            f'<link name="c">{GOOD_LINK}</link>'
            f'<joint name="j2" type="revolute"><parent link="b"/><child link="c"/>{LIMIT}</joint>'
            f'<joint name="j3" type="revolute"><parent link="c"/><child link="b"/>{LIMIT}</joint>'
        ),
        r"kinematic cycle through links (b → c → b|c → b → c) \(through joint 'j[23]' \(line \d+\), joint 'j[23]'",
    ),
    "two roots": (
        chain(f'<link name="floating_thing">{GOOD_LINK}</link>'),
        r"more than one root link \(link 'base' \(line \d+\), link 'floating_thing' \(line \d+\)\)",
    ),
    "unknown joint type": (
        chain(jtype="ball"),
        r"joint 'j1' \(line \d+\) has unknown type 'ball'; URDF joint types are",
    ),
    "unsupported joint type": (
        chain(jtype="floating"),
        r"joint 'j1' \(line \d+\) has type 'floating', which denoc_pin does not support",
    ),
    "zero axis": (chain(axis="0 0 0"), r"joint 'j1' \(line \d+\) has a zero-length <axis>"),
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
    # Required attributes: no silent default (the URDF specification gives them none).
    "inertia without iyy": (
        chain(link_a=GOOD_LINK.replace(' iyy="0.1"', "")),
        r"<inertia> of link 'a' \(line \d+\): the required attribute 'iyy' is missing",
    ),
    "mass without value": (
        chain(link_a=GOOD_LINK.replace(' value="1"', "")),
        r"<mass> of link 'a' \(line \d+\): the required attribute 'value' is missing",
    ),
    "axis without xyz": (
        chain(axis=None, in_joint="<axis/>"),
        r"<axis> of joint 'j1' \(line \d+\): the required attribute 'xyz'",
    ),
    "inertial without inertia": (
        chain(link_a='<inertial><mass value="1"/></inertial>'),
        r"<inertial> of link 'a' \(line \d+\) has no <inertia>",
    ),
    "absurd inertia": (
        chain(link_a=GOOD_LINK.replace('ixx="0.1"', 'ixx="-1e308"')),
        r"<inertia> of link 'a' \(line \d+\): attribute ixx='-1e308' has a magnitude beyond 1e\+12",
    ),
    "absurd length": (
        chain(in_joint='<origin xyz="0 0 2e12"/>'),
        r"<origin> of joint 'j1' \(line \d+\): attribute xyz='0 0 2e12' has a magnitude",
    ),
    "two origins": (
        chain(in_joint='<origin xyz="0 0 1"/><origin/>'),
        r"joint 'j1' \(line \d+\) has 2 <origin> that differ \(lines \d+, \d+\): which one holds is not defined",
    ),
    "invalid UTF-8 in a number": (
        chain(link_a=GOOD_LINK.replace('value="', 'value="1\udcff', 1)).encode(errors="surrogateescape"),
        r"<mass> of link 'a' \(line \d+\): attribute value='1\ufffd.*' is not 1 finite number",
    ),
    "a NUL byte": (b'<robot name="x">\n<link name="a\x00"/></robot>', r"bad\.urdf: line 2: malformed XML: "),
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


# ---- defects that leave the dynamics untouched: a ModelWarning naming them; strict=True refuses them ----

GRIPPER = (URDF_DIR / "gripper.urdf").read_text()
LENIENT = {
    "version 0.0": (GRIPPER.replace('<?xml version="1.0"?>', '<?xml version="0.0"?>'), r"version is '0\.0'"),
    "blank line first": ("\n  \n" + GRIPPER, r"whitespace character\(s\) before the XML declaration"),
    "mesh scale of four": (
        re.sub(r"<cylinder[^>]*/>", '<mesh filename="a.stl" scale="1 1 1 1"/>', GRIPPER, count=1),
        r"<visual> of link 'link_1_1' \(line 29\): <mesh> \(line 31\): attribute scale='1 1 1 1' is not 3 finite",
    ),
    "empty geometry": (
        GRIPPER.replace("</inertial>", "</inertial><collision><geometry/></collision>", 1),
        r"<collision> of link 'link_1_1' \(line 28\): <geometry> \(line 28\) holds nothing; it needs one of: box",
    ),
    "not UTF-8 in a comment": (
        GRIPPER.replace("kinematic modules", "kinematic modul\udce9s").encode(errors="surrogateescape"),
        r"line 3: 1 byte sequence\(s\) that are not UTF-8, replaced by U\+FFFD",
    ),
    "a misspelt attribute": (
        GRIPPER.replace('<mass value="0.4"/>', '<mass value="0.4" vlaue="0.5"/>', 1),
        r"<mass> of link 'link_1_1' \(line 26\): unknown attribute\(s\) vlaue ignored; <mass> takes value",
    ),
    "an unknown element in <inertial>": (
        GRIPPER.replace('<mass value="0.4"/>', '<mass value="0.4"/><mas value="1"/>', 1),
        r"<mas> of link 'link_1_1' \(line 26\): unknown element ignored; <inertial> takes <origin>, <mass>, <inertia>",
    ),
    "robot without a name": (GRIPPER.replace('<robot name="gripper">', "<robot>"), r"<robot> \(line 14\) has no name"),
    "bad limit": (
        GRIPPER.replace('effort="100"', 'effort="lots"', 1),
        r"<limit> of joint 'joint_1_1' \(line 21\): attribute effort='lots' is not 1 finite number",
    ),
    "revolute without limit": (
        GRIPPER.replace('<limit lower="-3.1416" upper="3.1416" effort="100" velocity="10"/>', "", 1),
        r"joint 'joint_1_1' \(line 16\) is revolute but has no <limit> \(the specification requires one\); its "
        r"position is unbounded",
    ),
    "lower above upper": (
        GRIPPER.replace('lower="-3.1416" upper="3.1416"', 'lower="3.1416" upper="-3.1416"', 1),
        r"<limit> of joint 'joint_1_1' \(line 21\): lower 3.1416 is above upper -3.1416; kept as given",
    ),
    "two identical axes": (  # pybullet's spirit40newer.urdf has such joints
        GRIPPER.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><axis xyz="0.0 1 0.0"/>', 1),
        r"joint 'joint_1_1' \(line 16\) has 2 identical <axis> \(lines 20, 20\); one is read",
    ),
    "limit without effort": (
        GRIPPER.replace(' effort="100"', "", 1),
        r"<limit> of joint 'joint_1_1' \(line 21\): no effort \(the specification requires them\); taken as inf",
    ),
}


@pytest.mark.parametrize("defect", list(LENIENT))
def test_defects_outside_the_dynamics_load_with_a_warning_and_strict_refuses_them(tmp_path, defect):
    text, pattern = LENIENT[defect]
    path = write(tmp_path, text)
    with pytest.warns(dp.ModelWarning, match=pattern):
        m = dp.load_urdf(path)
    assert m.mb.tobytes() == dp.load_urdf(URDF_DIR / "gripper.urdf").mb.tobytes()  # the same dynamics
    assert m.names == dp.load_urdf(URDF_DIR / "gripper.urdf").names
    with pytest.raises(dp.ModelError, match=pattern + r".*strict=True refuses"):
        dp.load_urdf(path, strict=True)


def test_whitespace_before_the_declaration_keeps_the_line_numbers(tmp_path):
    text = "\n\n" + chain(
        link_a='<inertial><mass/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
    )
    line = 1 + text.splitlines().index(next(x for x in text.splitlines() if "<link" in x))
    with pytest.raises(dp.ModelError, match=rf"<mass> of link 'a' \(line {line}\)"):
        dp.load_urdf(write(tmp_path, text))


def test_extension_elements_are_not_judged(tmp_path):
    # A <gazebo> or <transmission> block may hold elements named like URDF's own, in its own forms.
    extra = (
        '<gazebo reference="a"><mass>0.5</mass><origin>0 0 1</origin><axis/><limit effort="none"/></gazebo>'
        '<transmission name="t"><joint name="j1"><hardwareInterface>x</hardwareInterface></joint></transmission>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning
        m = dp.load_urdf(write(tmp_path, chain(extra)))
    assert m.mb.tobytes() == dp.load_urdf(write(tmp_path, chain(), "plain.urdf")).mb.tobytes()


def test_a_massless_subtree_loads_with_a_warning_and_only_forward_dynamics_refuses(tmp_path):
    """A finger of massless links (a sensor's joint, a gripper's unweighted phalanx) moves no mass: the model loads
    with a ModelWarning naming the joint and links (strict=True refuses it); its mass matrix, bias forces, inverse
    dynamics and kinematics hold — against Pinocchio, which loads it too — and forward dynamics raises
    SingularConfigurationError naming the joint."""
    path = tmp_path / "finger.urdf"
    path.write_text(chain('<link name="f1"/><link name="f2"/>'
                          f'<joint name="finger" type="revolute"><parent link="a"/><child link="f1"/>'
                          f'<origin xyz="0.1 0 0"/><axis xyz="0 1 0"/>{LIMIT}</joint>'
                          f'<joint name="tip" type="revolute"><parent link="f1"/><child link="f2"/>'
                          f'<origin xyz="0.1 0 0"/><axis xyz="0 1 0"/>{LIMIT}</joint>'))  # fmt: skip
    with pytest.warns(dp.ModelWarning, match=r"joint 'finger' moves only massless links \('f1', 'f2'\), so the GIM"):
        model = dp.load_urdf(path)
    with pytest.raises(dp.ModelError, match="joint 'finger' moves only massless links"):
        dp.load_urdf(path, strict=True)
    pm = pin.buildModelFromUrdf(str(path))
    pd, data = pm.createData(), model.create_data()
    rng = np.random.default_rng(2)
    q, v, a = rng.uniform(-1, 1, (3, model.nv))
    assert_close(dp.gim(model, data, q), pin.crba(pm, pd, q), 1e-12)
    assert_close(dp.nonlinear_effects(model, data, q, v), pin.nonLinearEffects(pm, pd, q, v), 1e-12)
    assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a), 1e-12)
    pin.framesForwardKinematics(pm, pd, q)
    tip = dp.frame_placement(model, data, q, "f2")
    assert_close(tip, pd.oMf[pm.getFrameId("f2")].homogeneous, 1e-12)
    with pytest.raises(dp.SingularConfigurationError, match="joint 'tip' moves no mass"):  # the first pivot
        dp.forward_dynamics(model, data, q, v, a)


def test_a_velocity_that_is_not_a_number_drops_only_itself(tmp_path):
    """A stray quote in <limit velocity> (no dynamics reads it): that number is dropped with a warning naming the
    file, line and value; the position limits and the effort stay."""
    path = tmp_path / "quote.urdf"
    path.write_text(robot(f'<link name="base"/><link name="a">{GOOD_LINK}</link><joint name="j1" type="revolute">'
                          '<parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
                          """<limit lower="-1.5" upper="2" effort="7" velocity="1.0'"/></joint>"""))  # fmt: skip
    message = r"quote.urdf: <limit> of joint 'j1' \(line \d+\): attribute velocity=\"1.0'\" is not 1 finite number"
    with pytest.warns(dp.ModelWarning, match=message + "; velocity taken as inf"):
        model = dp.load_urdf(path)
    assert model.lower_position_limit.tolist() == [-1.5] and model.upper_position_limit.tolist() == [2.0]
    assert model.effort_limit.tolist() == [7.0] and model.velocity_limit.tolist() == [np.inf]


def test_an_undeclared_world_parent_is_the_world(tmp_path):
    """A joint hanging from link 'world' that the file does not declare (Gazebo and Drake take it as the world):
    loaded with a warning, the same model as the file that declares it."""
    body = (f'<link name="a">{GOOD_LINK}</link><joint name="fix" type="fixed"><parent link="world"/>'
            '<child link="a"/><origin xyz="0 0 0.5"/></joint>'
            f'<link name="b">{GOOD_LINK}</link><joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
            '<origin xyz="0.2 0 0"/><axis xyz="0 1 0"/></joint>')  # fmt: skip
    (tmp_path / "bare.urdf").write_text(robot(body))
    (tmp_path / "declared.urdf").write_text(robot('<link name="world"/>' + body))
    with pytest.warns(dp.ModelWarning, match="joint 'fix' .* hangs from link 'world', which the file does not "
                                             "declare; taken as the world"):  # fmt: skip
        bare = dp.load_urdf(tmp_path / "bare.urdf")
    declared = dp.load_urdf(tmp_path / "declared.urdf")
    q, v = np.array([np.cos(0.3), np.sin(0.3)]), np.array([-0.7])  # a continuous joint: (cos, sin)
    assert bare.names == declared.names
    assert_close(dp.nonlinear_effects(bare, bare.create_data(), q, v),
                 dp.nonlinear_effects(declared, declared.create_data(), q, v), 1e-15)  # fmt: skip
    assert_close(
        dp.frame_placement(bare, bare.create_data(), q, "b"),
        dp.frame_placement(declared, declared.create_data(), q, "b"),
        1e-15,
    )


def test_a_capsule_shape_is_left_out_not_the_file(tmp_path):
    """<capsule> (pybullet's and Gazebo's extension; pybullet_data's humanoid uses it) made yourdfpy refuse the whole
    file: the capsule's <collision> and <visual> are left out with a warning, the rest loads and keeps its shapes."""
    capsule = '<geometry><capsule radius="0.05" length="0.3"/></geometry>'
    link = (f'{GOOD_LINK}<visual>{capsule}</visual><collision>{capsule}</collision>'
            '<collision><geometry><sphere radius="0.1"/></geometry></collision>')  # fmt: skip
    path = tmp_path / "capsule.urdf"
    path.write_text(chain(link_a=link))
    with pytest.warns(dp.ModelWarning, match=r"<collision> of link 'a' \(line \d+\): a <capsule> .* left out of the "
                                             "collisions"):  # fmt: skip
        model = dp.load_urdf(path)
    assert [type(c.shape).__name__ for c in model.collisions] == ["Sphere"]
    assert model.nv == 1
