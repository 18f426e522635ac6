"""SDF files (loaders/sdf.py): the pose algebra against a URDF written independently, Cassie's closed legs against a
50-digit solve built from Pinocchio's own matrices, gearboxes and URDF mimic joints as couplings, bad files."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

import denoc_pin as dp
from denoc_pin.core.joints import JOINTS
from denoc_pin.loaders.robots import robots_dir
from denoc_pin.model import UNBOUNDED
from denoc_pin.tools.validate import (
    compare_loops,
    high_precision_constrained_dynamics,
    independent_rows,
    loop_reactions_in_world,
    reference_constrained_dynamics,
)

CASSIE = robots_dir() / "cassie_description" / "robots"
MOTORS = [f"{side}-{j}-op" for side in ("left", "right") for j in ("roll", "yaw", "pitch", "knee", "foot")]


def cassie(name: str = "cassie_v2.sdf", root_joint="free-flyer") -> dp.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # CAD inertias, the replaced world joint
        return dp.load_sdf(CASSIE / name, root_joint=root_joint)


# ---------------------------------------------------------------------------------------------------------------
# The pose algebra: an SDF 1.8 file with a nested model, relative_to frames, axes expressed in other frames, a
# continuous and a fixed joint, against a URDF whose origins are composed here with Pinocchio's SE3.
# ---------------------------------------------------------------------------------------------------------------


def numbers(xs) -> str:
    return " ".join(repr(float(x)) for x in xs)


def X(xyz, rpy=(0.0, 0.0, 0.0)) -> pin.SE3:
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz, float))


INERTIAL = {  # link: (mass, pose of the centre of mass in the link, ixx iyy izz ixy ixz iyz)
    "base": (2.0, X((0.01, 0.0, 0.02)), (0.02, 0.03, 0.04, 0.0, 0.0, 0.0)),
    "l1": (1.5, X((0.02, -0.01, 0.15), (0.1, 0.2, 0.3)), (0.011, 0.012, 0.013, 0.001, 0.0, 0.0)),
    "a": (0.8, X((0.0, 0.02, 0.05), (0.0, 0.4, 0.0)), (0.004, 0.005, 0.006, 0.0, 0.0005, 0.0)),
    "b": (0.6, X((0.03, 0.0, -0.02), (0.2, 0.0, 0.5)), (0.003, 0.002, 0.004, 0.0, 0.0, 0.0002)),
    "c": (0.3, X((0.0, 0.0, 0.01)), (0.001, 0.001, 0.001, 0.0, 0.0, 0.0)),
}


def _inertial_sdf(link: str) -> str:
    m, P, I = INERTIAL[link]
    xyz, rpy = P.translation, pin.rpy.matrixToRpy(P.rotation)
    names = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    return (f"<inertial><pose>{numbers([*xyz, *rpy])}</pose><mass>{m}</mass><inertia>"
            + "".join(f"<{n}>{v}</{n}>" for n, v in zip(names, I, strict=True)) + "</inertia></inertial>")  # fmt: skip


SDF_1_8 = f"""<?xml version="1.0"?>
<sdf version="1.8">
  <model name="arm">
    <frame name="mount"><pose>0.1 0 0.2 0 0 0.5</pose></frame>
    <link name="base"><pose relative_to="mount">0 0 0 0 0 0</pose>{_inertial_sdf("base")}</link>
    <joint name="j1" type="revolute">
      <pose relative_to="base">0 0 0.3 0.2 0 0</pose>
      <parent>base</parent><child>l1</child>
      <axis><xyz expressed_in="__model__">0 1 1</xyz><limit><lower>-1</lower><upper>2</upper></limit></axis>
    </joint>
    <link name="l1"><pose relative_to="j1">0.05 0 0.1 0 0.3 0</pose>{_inertial_sdf("l1")}</link>
    <model name="wrist">
      <pose relative_to="l1">0 0 0.4 0 0 0.7</pose>
      <link name="a">{_inertial_sdf("a")}</link>
      <link name="b"><pose relative_to="a">0.1 0 0 0 0 0</pose>{_inertial_sdf("b")}</link>
      <link name="c"><pose>0 0.1 0 0 0 0</pose>{_inertial_sdf("c")}</link>
      <joint name="ja" type="continuous">
        <pose>0 0 0 0.1 0.2 0.3</pose>
        <parent>a</parent><child>b</child><axis><xyz>1 0 0</xyz></axis>
      </joint>
      <joint name="weld" type="fixed"><parent>b</parent><child>c</child></joint>
      <frame name="tool" attached_to="b"><pose>0 0 0.05 0 0 0</pose></frame>
    </model>
    <joint name="j2" type="prismatic">
      <parent>l1</parent><child>wrist::a</child>
      <axis><xyz expressed_in="l1">0 0 1</xyz></axis>
    </joint>
  </model>
</sdf>
"""


def _hand_urdf() -> str:
    """The same tree as a URDF: every pose composed here by the SDF rules (link poses in the model frame unless
    relative_to; a joint's in its child link; a nested model's links in its frame), each URDF link frame being its
    joint's frame."""
    M = X((0.1, 0, 0.2), (0, 0, 0.5))
    B = M
    J1 = B * X((0, 0, 0.3), (0.2, 0, 0))
    L1 = J1 * X((0.05, 0, 0.1), (0, 0.3, 0))
    W = L1 * X((0, 0, 0.4), (0, 0, 0.7))
    A, Bb, C = W, W * X((0.1, 0, 0)), W * X((0, 0.1, 0))
    JA = Bb * X((0, 0, 0), (0.1, 0.2, 0.3))
    J2 = A  # no <pose>: at its child link
    T = Bb * X((0, 0, 0.05))
    a1 = J1.rotation.T @ (np.array([0, 1, 1]) / np.sqrt(2))  # expressed in the model frame
    a2 = J2.rotation.T @ L1.rotation @ np.array([0, 0, 1.0])  # expressed in l1
    frame_of = {"base": B, "l1": J1, "a": J2, "b": JA}  # each URDF link frame: its joint frame (base: itself)

    def origin(P: pin.SE3) -> str:
        return f'<origin xyz="{numbers(P.translation)}" rpy="{numbers(pin.rpy.matrixToRpy(P.rotation))}"/>'

    def inertial(link: str, where: pin.SE3) -> str:
        m, P, I = INERTIAL[link]
        att = dict(zip(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"), I, strict=True))
        return (f"<inertial>{origin(where * P)}<mass value='{m}'/><inertia "
                + " ".join(f"{k}='{v}'" for k, v in att.items()) + "/></inertial>")  # fmt: skip

    links = {"base": B, "l1": L1, "a": A, "b": Bb}
    text = "<robot name='arm'>"
    for name, L in links.items():
        text += f"<link name='{name}'>{inertial(name, frame_of[name].inverse() * L)}</link>"
    text += f"<link name='c'>{inertial('c', pin.SE3.Identity())}</link><link name='tool'/>"
    text += (f"<joint name='j1' type='revolute'><parent link='base'/><child link='l1'/>{origin(B.inverse() * J1)}"
             f"<axis xyz='{numbers(a1)}'/><limit lower='-1' upper='2' effort='1' velocity='1'/></joint>"
             f"<joint name='j2' type='prismatic'><parent link='l1'/><child link='a'/>{origin(J1.inverse() * J2)}"
             f"<axis xyz='{numbers(a2)}'/><limit lower='0' upper='0' effort='1' velocity='1'/></joint>"
             f"<joint name='wrist::ja' type='continuous'><parent link='a'/><child link='b'/>"
             f"{origin(J2.inverse() * JA)}<axis xyz='1 0 0'/></joint>"
             f"<joint name='wrist::weld' type='fixed'><parent link='b'/><child link='c'/>{origin(JA.inverse() * C)}"
             f"</joint><joint name='tool_joint' type='fixed'><parent link='b'/><child link='tool'/>"
             f"{origin(JA.inverse() * T)}</joint></robot>")  # fmt: skip
    return text


def test_an_sdf_equals_a_urdf_of_the_same_tree_written_independently(tmp_path):
    (tmp_path / "arm.sdf").write_text(SDF_1_8)
    (tmp_path / "arm.urdf").write_text(_hand_urdf())
    ours = dp.load_sdf(tmp_path / "arm.sdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # the URDF's zero-limit prismatic joint
        twin = dp.load_urdf(tmp_path / "arm.urdf")
    assert ours.names == ("universe", "j1", "j2", "wrist::ja")
    assert list(ours.names[1:]) == list(twin.names[1:])[: len(ours.names) - 1]
    rng = np.random.default_rng(3)
    d1, d2 = ours.create_data(), twin.create_data()
    for _ in range(5):
        q = dp.random_configuration(twin, rng)
        v, a = rng.normal(size=twin.nv), rng.normal(size=twin.nv)
        assert_close(dp.inverse_dynamics(ours, d1, q, v, a), dp.inverse_dynamics(twin, d2, q, v, a), 1e-12)
        assert_close(dp.forward_dynamics(ours, d1, q, v, a), dp.forward_dynamics(twin, d2, q, v, a), 1e-12)
        assert_close(dp.gim(ours, d1, q), dp.gim(twin, d2, q), 1e-12)
        tool = "wrist::tool"  # the nested model's frame, scoped
        assert_close(dp.frame_placement(ours, d1, q, tool), dp.frame_placement(twin, d2, q, "tool"), 1e-12)
        assert_close(dp.frame_jacobian(ours, d1, q, tool, "world"), dp.frame_jacobian(twin, d2, q, "tool", "world"),
                     1e-12)  # fmt: skip
    assert ours.lower_position_limit[0] == -1.0 and ours.upper_position_limit[0] == 2.0
    assert ours.frames[ours.frame_id("wrist::tool")].type == "op_frame"


SDF_1_6 = """<sdf version="{version}"><model name="m">
  <link name="base"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
  <link name="l"><pose>0 0 1 0 0 1.5707963267948966</pose>
    <inertial><pose>0.3 0 0 0 0 0</pose><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia>
    </inertial></link>
  <joint name="j" type="revolute"><parent>base</parent><child>l</child>
    <axis><xyz>1 0 0</xyz>{upmf}</axis></joint>
</model></sdf>"""


@pytest.mark.parametrize(
    ("version", "upmf", "axis"),
    [
        ("1.6", "", (1.0, 0.0, 0.0)),  # in the joint frame: the child link's, turned 90° about z
        ("1.6", "<use_parent_model_frame>true</use_parent_model_frame>", (0.0, -1.0, 0.0)),
        ("1.5", "", (1.0, 0.0, 0.0)),  # 1.5's use_parent_model_frame defaults to false: the joint frame
        ("1.4", "", (0.0, -1.0, 0.0)),  # 1.4: the model frame (libsdformat's 1.4 → 1.5 conversion adds true)
        ("1.5", "<use_parent_model_frame>1</use_parent_model_frame>", (0.0, -1.0, 0.0)),
        ("1.5", "<use_parent_model_frame>0</use_parent_model_frame>", (1.0, 0.0, 0.0)),
    ],
)
def test_the_axis_frame_follows_each_version(tmp_path, version, upmf, axis):
    path = tmp_path / "m.sdf"
    path.write_text(SDF_1_6.format(version=version, upmf=upmf))
    model = dp.load_sdf(path)
    assert_close(model.axes[1], np.array(axis), atol=1e-15)


@pytest.mark.parametrize("value", ["-1e16", "-1.79769e+308", "-inf", "-1e300"])
def test_no_limit_values_mean_unbounded(tmp_path, value):
    """The specification's 1e16 ("no limit"), gz-sim's ±1.79769e308 and ±inf are read as no limit."""
    upper = value.lstrip("-")
    limit = f"<limit><lower>{value}</lower><upper>{upper}</upper><velocity>-1</velocity><effort>inf</effort></limit>"
    path = tmp_path / "m.sdf"
    path.write_text(SDF_1_6.format(version="1.7", upmf=limit))
    model = dp.load_sdf(path)
    assert model.lower_position_limit[0] == -UNBOUNDED and model.upper_position_limit[0] == UNBOUNDED
    assert model.velocity_limit[0] == np.inf and model.effort_limit[0] == np.inf
    path.write_text(SDF_1_6.format(version="1.7", upmf="<limit><lower>nan</lower></limit>"))
    with pytest.raises(dp.ModelError, match=r"'j' \(line 7\): a limit must be a number or ±inf, got 'nan'"):
        dp.load_sdf(path)


@pytest.mark.parametrize(
    ("parent", "child", "message"),
    [
        ("l", "k", "line 5.*the child 'k' of joint 'k' is fixed to the joint's own frame"),
        ("f", "k", "line 5.*the child 'k' of joint 'k' is fixed to the joint's own frame"),
        ("k", "l", "line 5.*joins link 'l' to itself"),  # its frame is on l, its child
    ],
)
def test_a_joint_fixed_to_its_own_frame_is_refused(tmp_path, parent, child, message):
    """A joint's frame is on its child link: naming it (or a frame on it) as the joint's own end names no link."""
    path = tmp_path / "m.sdf"
    path.write_text(SELF_JOINT.format(parent=parent, child=child))
    with pytest.raises(dp.ModelError, match=message):
        dp.load_sdf(path)


def test_a_joint_may_name_a_later_joints_frame(tmp_path):
    """An end that names another joint's frame takes that joint's child link, whatever order the file has."""
    path = tmp_path / "m.sdf"
    path.write_text(SELF_JOINT.format(parent="base", child="l").replace("<frame name='f' attached_to='k'/>", "")
                    .replace("<parent>base</parent><child>l</child>", "<parent>j2</parent><child>l</child>", 1)
                    .replace("</model>", "<link name='m2'><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy>"
                             "<izz>1</izz></inertia></inertial></link><joint name='j2' type='revolute'><parent>base"
                             "</parent><child>m2</child><axis><xyz>0 1 0</xyz></axis></joint></model>"))  # fmt: skip
    model = dp.load_sdf(path)
    assert model.parents[model.joint_id("k")] == model.joint_id("j2")


SELF_JOINT = """<sdf version="1.7"><model name="m">
  <link name="base"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
  <link name="l"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
  <frame name='f' attached_to='k'/>
  <joint name="k" type="revolute"><parent>{parent}</parent><child>{child}</child><axis><xyz>1 0 0</xyz></axis></joint>
</model></sdf>"""


# ---------------------------------------------------------------------------------------------------------------
# Cassie (example-robot-data): every file, the cuts chosen, closing, dynamics against 50 digits.
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "loops", "couplings"),
    [
        ("cassie_v2.sdf", {"spherical": 4}, 0),
        ("cassie.sdf", {"prismatic": 2, "revolute": 2, "spherical": 2}, 10),
        ("cassie_reduced.sdf", {"spherical": 4}, 0),
        ("cassie_simple.sdf", {"spherical": 4}, 0),
        ("cassie_wo_gearbox_spring.sdf", {"revolute": 2, "spherical": 2}, 0),
    ],
)
def test_every_cassie_file_loads_closed_with_its_cuts(name, loops, couplings):
    for root_joint in (None, "free-flyer"):
        model = cassie(name, root_joint)
        kinds = {t: sum(lp.type == t for lp in model.loops) for t in {lp.type for lp in model.loops}}
        assert kinds == loops
        assert len(model.couplings) == couplings
        assert np.abs(dp.loop_residual(model, dp.neutral(model))).max() < 1e-12  # the file's pose is closed
        assert model.frames[model.frame_id("left-foot")].type == "body"  # every link keeps its frame


def test_world_joints_are_kept_or_replaced_with_a_warning():
    with pytest.warns(dp.ModelWarning, match="'static'.*prismatic.*replaced by root_joint"):
        floating = dp.load_sdf(CASSIE / "cassie_reduced.sdf", root_joint="free-flyer")
    kept = cassie("cassie_reduced.sdf", None)
    assert kept.names[1] == "static" and JOINTS[int(kept.kinds[1])].name == "prismatic"
    assert floating.names[1] == "root_joint" and "static" not in floating.names


def test_cassie_gearboxes_are_couplings_with_the_specification_sign():
    model = cassie("cassie.sdf", None)
    c = next(c for c in model.couplings if c.name == "left-knee-joint")
    # rotor angle θ₁ (left-knee-ip) and output θ₂ (left-knee-op) about parallel axes: θ₂ = −0.0625 θ₁
    assert (c.joint, c.reference) == ("left-knee-op", "left-knee-ip")
    assert c.multiplier == pytest.approx(-0.0625)
    # the achilles rod's ball is its only parent joint: it stays in the tree, the spring's revolute joint is cut
    assert JOINTS[int(model.kinds[model.joint_id("left-pitch-rod-joint")])].name == "spherical"
    assert "left-achilles-spring-joint" in [lp.name for lp in model.loops]


def test_cuts_can_be_chosen_and_a_choice_that_leaves_a_loop_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        # the left foot hangs from its plantar rod by the ball, its own revolute joint cut instead
        cuts = ["left-foot-op", "left-pitch-rod-joint", "right-pitch-rod-joint", "right-plantar-foot-joint"]
        model = dp.load_sdf(CASSIE / "cassie_v2.sdf", cuts=cuts)
        assert [lp.type for lp in model.loops] == ["spherical", "revolute", "spherical", "spherical"]
        assert JOINTS[int(model.kinds[model.joint_id("left-plantar-foot-joint")])].name == "spherical"
        assert np.abs(dp.loop_residual(model, dp.neutral(model))).max() < 1e-12
        with pytest.raises(dp.ModelError, match="leave a loop"):
            dp.load_sdf(CASSIE / "cassie_v2.sdf", cuts=["left-pitch-rod-joint"])


@pytest.fixture(scope="module")
def cassie_states():
    """cassie_v2 with a free-flyer, closed at 4 states perturbed from the file's by up to 0.3 rad per joint."""
    model = cassie()
    rng = np.random.default_rng(7)
    states = []
    for _ in range(4):
        dv = rng.uniform(-0.3, 0.3, model.nv)
        guess = dp.integrate(model, dp.neutral(model), dv)
        q = dp.assemble(model, guess)
        states.append((q, guess))
    return model, states


def test_assemble_closes_cassie_from_perturbed_states(cassie_states):
    model, states = cassie_states
    for q, guess in states:
        r, J = dp.loop_residual(model, q), dp.loop_jacobian(model, q)
        U = independent_rows(J)
        assert U.shape[1] == 10  # 12 rows, 10 independent: one exactly redundant, one up to the file's rounding
        assert np.abs(U.T @ r).max() <= 1e-12
        assert np.abs(r).max() <= 1e-8  # what the rounding leaves along the near-redundant direction
        assert np.abs(dp.difference(model, guess, q)).max() < 1.0


def test_cassie_forward_dynamics_against_a_50_digit_solve_from_pinocchio(cassie_states):
    model, states = cassie_states
    twin, data = dp.to_pinocchio(model), model.create_data()
    rng = np.random.default_rng(1)
    for q, _ in states[:3]:
        J = dp.loop_jacobian(model, q)
        v = rng.uniform(-1, 1, model.nv)
        v -= np.linalg.pinv(J) @ (J @ v)
        tau = rng.uniform(-5, 5, model.nv)
        a, lam = dp.constrained_forward_dynamics(model, data, q, v, tau)
        a_hp, jtl_hp, Jw, mu = high_precision_constrained_dynamics(model, twin, q, v, tau)
        U = independent_rows(Jw)
        assert_close(a, a_hp, 1e-8)
        assert_close(J.T @ lam, jtl_hp, 1e-8)
        assert_close(U.T @ loop_reactions_in_world(model, q, lam), U.T @ mu, 1e-8)
        # and the dense KKT of the explicit DeNOC matrices agrees (a second route)
        assert_close(a, reference_constrained_dynamics(model, q, v, tau)[0], 1e-8)


def test_cassie_inverse_dynamics_with_the_motors_actuated():
    """Pelvis fixed: motor torques give q̈ (forward); inverse dynamics with the ten motors actuated finds those
    torques again, and forward dynamics turns them back into q̈."""
    model = cassie(root_joint=None)
    data = model.create_data()
    rng = np.random.default_rng(2)
    motors = np.array([int(model.idx_v[model.joint_id(m)]) for m in MOTORS])
    for _ in range(2):
        q = dp.assemble(model, dp.integrate(model, dp.neutral(model), rng.uniform(-0.2, 0.2, model.nv)))
        J = dp.loop_jacobian(model, q)
        v = rng.uniform(-1, 1, model.nv)
        v -= np.linalg.pinv(J) @ (J @ v)
        tau = np.zeros(model.nv)
        tau[motors] = rng.uniform(-5, 5, motors.size)
        a, _ = dp.constrained_forward_dynamics(model, data, q, v, tau)
        tau_id, _ = dp.constrained_inverse_dynamics(model, data, q, v, a, actuated=MOTORS)
        assert_close(tau_id, tau, 1e-9)
        assert_close(dp.constrained_forward_dynamics(model, data, q, v, tau_id)[0], a, 1e-9)


def test_cassie_legs_fall_closed_and_keep_their_energy():
    model = cassie(root_joint=None)  # the pelvis fixed
    traj = dp.simulate(model, dp.neutral(model), np.zeros(model.nv), 1.0, method="dop853", rtol=1e-10, atol=1e-12,
                       progress=False)  # fmt: skip
    for q in traj.q[::50]:
        r, U = dp.loop_residual(model, q), independent_rows(dp.loop_jacobian(model, q))
        assert np.abs(U @ (U.T @ r)).max() <= 1e-8
        assert np.abs(r).max() <= 1e-7  # the near-redundant direction, free to the file's rounding
    E = traj.energy
    assert E["kinetic"].max() > 1.0  # the legs did fall
    assert np.abs(E["total"] - E["total"][0]).max() <= 1e-6 * E["kinetic"].max()


def test_cassie_with_gearboxes_against_the_dense_kkt():
    checks = compare_loops(cassie("cassie.sdf", None), None, samples=2, seed=0)
    assert checks and all(c.passed for c in checks), [c for c in checks if not c.passed]


# ---------------------------------------------------------------------------------------------------------------
# Couplings, mimic joints, the front door, bad files.
# ---------------------------------------------------------------------------------------------------------------


def test_urdf_mimic_joints_become_couplings_on_request():
    from denoc_pin.loaders.robots import example_robot_urdf

    panda = example_robot_urdf("panda")
    assert dp.load_urdf(panda).couplings == ()
    model = dp.load_urdf(panda, mimic=True)
    (c,) = model.couplings
    assert (c.joint, c.reference, c.multiplier, c.offset) == ("panda_finger_joint2", "panda_finger_joint1", 1.0, 0.0)
    q = dp.neutral(model)
    q[model.idx_q[model.joint_id("panda_finger_joint1")]] = 0.02
    q = dp.assemble(model, q, fixed=["panda_finger_joint1"])
    assert q[model.idx_q[model.joint_id("panda_finger_joint2")]] == pytest.approx(0.02, abs=1e-12)
    data = model.create_data()
    v, tau = np.zeros(model.nv), np.random.default_rng(0).normal(size=model.nv)
    a, lam = dp.constrained_forward_dynamics(model, data, q, v, tau)
    a_ref, lam_ref = reference_constrained_dynamics(model, q, v, tau)
    assert_close(a, a_ref, 1e-9)
    assert_close(lam, lam_ref, 1e-9)
    i, j = (int(model.idx_v[model.joint_id(n)]) for n in ("panda_finger_joint2", "panda_finger_joint1"))
    assert a[i] == pytest.approx(a[j], abs=1e-12)


def test_load_picks_the_loader_by_extension(tmp_path):
    assert dp.load(CASSIE / "cassie_v2.sdf").loops
    with pytest.raises(dp.ModelError, match=r"unknown file type '\.xyz'.*\.urdf, \.sdf"):
        dp.load(tmp_path / "robot.xyz")


BAD = {
    "no_model": ("<sdf version='1.7'></sdf>", "no <model>"),
    "version": ("<sdf version='2.0'><model name='m'/></sdf>", "version '2.0'"),
    "include": ("<sdf version='1.7'><model name='m'><include><uri>x</uri></include></model></sdf>",
                r"<include> \(line 1\): 'x': no such file"),
    "model_uri": ("<sdf version='1.7'><world name='w'><include><uri>model://nowhere</uri></include></world></sdf>",
                  "no folder 'nowhere' in the model paths.*GZ_SIM_RESOURCE_PATH or SDF_PATH or GAZEBO_MODEL_PATH"),
    "cycle_include": ("<sdf version='1.7'><model name='m'><include><uri>cycle_include.sdf</uri></include>"
                      "</model></sdf>", "<include> cycle"),
    "static": ("<sdf version='1.7'><model name='m'><static>true</static><link name='a'/></model></sdf>",
               "is static: nothing in it moves"),
    "type": ("<sdf version='1.7'><model name='m'><link name='a'/><link name='b'/><joint name='j' type='screw'>"
             "<parent>a</parent><child>b</child></joint></model></sdf>", "type 'screw'"),
    "child": ("<sdf version='1.7'><model name='m'><link name='a'/><joint name='j' type='revolute'>"
              "<parent>a</parent><child>nope</child><axis><xyz>0 0 1</xyz></axis></joint></model></sdf>",
              "'nope' names no frame.*'a', 'j'"),
    "cycle": ("<sdf version='1.8'><model name='m'><frame name='f'><pose relative_to='g'/></frame>"
              "<frame name='g'><pose relative_to='f'/></frame><link name='a'><pose relative_to='f'/></link>"
              "</model></sdf>", "cycle"),
    "number": ("<sdf version='1.7'><model name='m'><link name='a'><pose>0 0 nan 0 0 0</pose></link></model></sdf>",
               r"line 1.*finite"),
    "roots": ("<sdf version='1.7'><model name='m'><link name='a'/><link name='b'/></model></sdf>",
              "2 links are no joint's child"),
    "axis": ("<sdf version='1.7'><model name='m'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
             "<parent>a</parent><child>b</child></joint></model></sdf>", "needs <axis>"),
    "gearbox": ("<sdf version='1.7'><model name='m'><link name='a'/><link name='b'/><link name='c'/>"
                "<joint name='j1' type='revolute'><parent>a</parent><child>b</child><axis><xyz>1 0 0</xyz></axis>"
                "</joint><joint name='j2' type='revolute'><parent>a</parent><child>c</child><axis><xyz>0 1 0</xyz>"
                "</axis></joint><joint name='g' type='gearbox'><parent>b</parent><child>c</child>"
                "<gearbox_reference_body>a</gearbox_reference_body><gearbox_ratio>2</gearbox_ratio>"
                "<axis><xyz>1 0 0</xyz></axis><axis2><xyz>1 0 0</xyz></axis2></joint></model></sdf>",
                "axis2> is not parallel"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_sdf_files_name_file_line_and_element(tmp_path, case):
    text, match = BAD[case]
    path = tmp_path / f"{case}.sdf"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        with pytest.raises(dp.ModelError, match=match) as e:
            dp.load_sdf(path)
    assert str(path) in str(e.value)


UNIVERSAL_BALL = """<sdf version="1.9"><model name="ub">
  <link name="base"/>
  <link name="a"><pose>0 0 -0.3 0 0 0</pose>{I}</link>
  <link name="b"><pose>0.2 0 -0.6 0.3 0 0</pose>{I}</link>
  <link name="c"><pose>0.4 0.1 -0.6 0 0.2 0</pose>{I}</link>
  <joint name="u" type="universal"><parent>base</parent><child>a</child><pose>0 0 0.3 0 0 0</pose>
    <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>
  <joint name="s" type="ball"><parent>a</parent><child>b</child><pose>-0.2 0 0.3 0 0 0</pose></joint>
  <joint name="r" type="revolute"><parent>b</parent><child>c</child><axis><xyz>0 0 1</xyz></axis></joint>
  <joint name="close" type="universal"><parent>base</parent><child>c</child><pose>0 0 0.2 0 0 0</pose>
    <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 0 1</xyz></axis2></joint>
</model></sdf>""".replace(
    "{I}",
    "<inertial><pose>0.05 0 0 0 0 0</pose><mass>1.2</mass><inertia><ixx>0.02</ixx><iyy>0.03</iyy>"
    "<izz>0.025</izz></inertia></inertial>",
)


def test_universal_and_ball_joints_in_the_tree_and_a_universal_cut(tmp_path):
    """Tree joints of every SDF kind the Pinocchio twin has, checked by validate's rows against it; the loop closed
    by a universal joint (a universal cut) against the dense KKT reference."""
    from denoc_pin.tools.validate import compare_with_pinocchio

    path = tmp_path / "ub.sdf"
    path.write_text(UNIVERSAL_BALL)
    with pytest.warns(dp.ModelWarning, match=r"link 'base' \(line 2\) has no <inertial>.*1 kg"):
        model = dp.load_sdf(path)  # the specification's default, said aloud
    assert [JOINTS[int(k)].name for k in model.kinds[1:]] == ["universal", "spherical", "revolute"]
    assert [(lp.name, lp.type) for lp in model.loops] == [("close", "universal")]
    assert np.abs(dp.loop_residual(model, dp.neutral(model))).max() < 1e-14
    checks = compare_with_pinocchio(model, dp.to_pinocchio(model), samples=3)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    loops = compare_loops(model, None, samples=2)
    assert all(c.passed for c in loops), [c for c in loops if not c.passed]


MIMIC_1_11 = """<sdf version="1.11"><model name="m">
  <link name="base"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
  <link name="a"><pose>0.1 0 0 0 0 0</pose>
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
  <link name="b"><pose>-0.1 0 0 0 0 0</pose>
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
  <joint name="leader" type="revolute"><parent>base</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>
  <joint name="follower" type="prismatic"><parent>base</parent><child>b</child>
    <axis><xyz>1 0 0</xyz>{mimic}</axis></joint>
</model></sdf>"""


@pytest.mark.parametrize("version", ["1.10", "1.11", "1.12"])
def test_sdf_1_10_to_1_12_and_the_axis_mimic(tmp_path, version):
    """The versions gz-sim writes today; 1.11's <axis><mimic> (follower = m (leader − reference) + offset) is a
    coupling θ_f = m θ_l + (offset − m reference); an automatic inertia (1.11) is refused, not guessed."""
    mimic = ("<mimic joint='leader' axis='axis'><multiplier>-0.5</multiplier><offset>0.2</offset>"
             "<reference>0.4</reference></mimic>")  # fmt: skip
    path = tmp_path / "m.sdf"
    path.write_text(MIMIC_1_11.format(mimic=mimic).replace('version="1.11"', f'version="{version}"'))
    model = dp.load_sdf(path)
    (c,) = model.couplings
    assert (c.joint, c.reference, c.multiplier) == ("follower", "leader", -0.5)
    assert c.offset == pytest.approx(0.2 + 0.5 * 0.4, abs=1e-15)
    q = np.zeros(model.nq)
    q[model.idx_q[model.joint_id("leader")]] = 1.0
    q[model.idx_q[model.joint_id("follower")]] = -0.5 * (1.0 - 0.4) + 0.2
    assert np.abs(dp.loop_residual(model, q)).max() < 1e-15
    path.write_text(MIMIC_1_11.format(mimic="").replace("<inertial>", "<inertial auto='true'>", 1))
    with pytest.raises(dp.ModelError, match=r"<inertial> of <link> 'base' \(line 2\): auto='true'.*is not read"):
        dp.load_sdf(path)
    path.write_text(MIMIC_1_11.format(mimic="<mimic joint='a'/>"))
    with pytest.raises(dp.ModelError, match="mimic joint 'a' names a link, not a joint"):
        dp.load_sdf(path)


GROUND = """<sdf version="1.6"><model name="ground_plane"><static>true</static><link name="link">
  <collision name="c"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision></link></model></sdf>"""


def _model_folder(root, name: str, text: str, version: str = "1.8"):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "model.sdf").write_text(text)
    (folder / "model.config").write_text(f"<?xml version='1.0'?><model><name>{name}</name>"
                                         f"<sdf version='1.4'>old.sdf</sdf><sdf version='{version}'>model.sdf</sdf>"
                                         "</model>")  # fmt: skip


def test_a_world_of_includes_loads_its_one_moving_model(tmp_path, monkeypatch):
    """A gz-sim world: a static ground plane and the arm, both by model:// in the model paths (model_paths= or
    GZ_SIM_RESOURCE_PATH), each folder's model.config naming its SDF; the include's <name> and <pose> override the
    model's.  The one model that is not static is loaded, with a warning naming it; it equals the arm's own file
    with that pose."""
    models = tmp_path / "models"
    _model_folder(models, "ground_plane", GROUND, "1.6")
    _model_folder(models, "arm", SDF_1_8)
    world = tmp_path / "world.sdf"
    world.write_text("<sdf version='1.9'><world name='w'><include><uri>model://ground_plane</uri></include>"
                     "<include><uri>model://arm</uri><name>left_arm</name><pose>1 0 0.5 0 0 0.5</pose></include>"
                     "</world></sdf>")  # fmt: skip
    direct = tmp_path / "direct.sdf"
    direct.write_text(SDF_1_8.replace('<model name="arm">', '<model name="left_arm"><pose>1 0 0.5 0 0 0.5</pose>'))
    twin = dp.load_sdf(direct)
    for kwargs in ({"model_paths": [models]}, {}):
        if not kwargs:
            monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", f"/nonexistent{os.pathsep}{models}")
        with pytest.warns(dp.ModelWarning, match="the one that is not static, 'left_arm', is loaded"):
            ours = dp.load_sdf(world, **kwargs)
        assert ours.name == "left_arm" and ours.names == twin.names
        d1, d2 = ours.create_data(), twin.create_data()
        q, v, a = dp.random_configuration(twin, np.random.default_rng(0)), np.ones(twin.nv), np.ones(twin.nv)
        assert_close(dp.inverse_dynamics(ours, d1, q, v, a), dp.inverse_dynamics(twin, d2, q, v, a), 1e-15)
        assert_close(dp.frame_placement(ours, d1, q, "wrist::tool"), dp.frame_placement(twin, d2, q, "wrist::tool"),
                     1e-15)  # fmt: skip
    monkeypatch.delenv("GZ_SIM_RESOURCE_PATH")
    with pytest.raises(dp.ModelError, match="model_name="):  # two that move: choose
        world.write_text(world.read_text().replace("</world>", "<include><uri>model://arm</uri></include></world>"))
        dp.load_sdf(world, model_paths=[models])
    assert dp.load_sdf(world, model_paths=[models], model_name="arm").names == twin.names


def test_an_included_sdf_1_4_model_keeps_its_axes_in_the_model_frame(tmp_path):
    """libsdformat converts an included 1.4 file to the including file's version, adding use_parent_model_frame
    true: its axes stay in the model frame."""
    (tmp_path / "old.sdf").write_text(SDF_1_6.format(version="1.4", upmf=""))
    (tmp_path / "top.sdf").write_text("<sdf version='1.7'><model name='top'><include><uri>old.sdf</uri>"
                                      "<name>inner</name></include></model></sdf>")  # fmt: skip
    model = dp.load_sdf(tmp_path / "top.sdf")
    assert model.names == ("universe", "inner::j")
    assert_close(model.axes[1], (0.0, -1.0, 0.0), 1e-15)


def test_an_error_inside_an_included_file_names_that_file(tmp_path):
    (tmp_path / "bad.sdf").write_text("<sdf version='1.7'><model name='b'><link name='a'>\n<pose>0 0 nan 0 0 0</pose>"
                                      "</link></model></sdf>")  # fmt: skip
    (tmp_path / "top.sdf").write_text("<sdf version='1.7'><model name='top'><include><uri>bad.sdf</uri></include>"
                                      "</model></sdf>")  # fmt: skip
    with pytest.raises(dp.ModelError, match=r"top.sdf, in .*bad.sdf: <pose> of <link> 'a' \(line 2\)"):
        dp.load_sdf(tmp_path / "top.sdf")


def test_sdf_1_3_reads_as_1_4_and_a_newer_model_inside_keeps_its_axes(tmp_path):
    """1.3 is 1.4 for a model (libsdformat's conversion moves world physics only): axes in the model frame.  A 1.5
    model included into a 1.4 file keeps its axis in its joint frame; a bare model name is looked up in the model
    paths."""
    old = tmp_path / "old.sdf"
    old.write_text(SDF_1_6.format(version="1.3", upmf=""))
    assert_close(dp.load_sdf(old).axes[1], (0.0, -1.0, 0.0), 1e-15)
    _model_folder(tmp_path / "models", "newer", SDF_1_6.format(version="1.5", upmf=""), "1.5")
    top = tmp_path / "top.sdf"
    top.write_text("<sdf version='1.4'><model name='top'><include><uri>newer</uri></include></model></sdf>")
    model = dp.load_sdf(top, model_paths=[tmp_path / "models"])
    assert_close(model.axes[1], (1.0, 0.0, 0.0), 1e-15)


def test_xml_defects_tinyxml_reads_past_are_read_past_with_a_warning(tmp_path):
    """gz-sim's undeclared gz: prefix and a comment holding -- (libsdformat's TinyXML reads both): loaded with a
    warning, refused under strict=True; other malformed XML stays refused."""
    path = tmp_path / "gz.sdf"
    defects = '<!-- a -- b --><plugin name="p" gz:policy="x"><gz:a>1</gz:a></plugin>'
    path.write_text(SDF_1_6.format(version="1.9", upmf="").replace('<model name="m">', f'<model name="m">{defects}'))
    with pytest.warns(dp.ModelWarning, match="a comment holding -- and a namespace prefix that is not declared"):
        model = dp.load_sdf(path)
    assert model.names == ("universe", "j")
    with pytest.raises(dp.ModelError, match="strict=True"):
        dp.load_sdf(path, strict=True)
    path.write_text(path.read_text().replace("</plugin>", "</plugin"))
    with pytest.raises(dp.ModelError, match="malformed XML"):
        dp.load_sdf(path)


COLLISIONS_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="two">
    <self_collide>{self_collide}</self_collide>
    <link name="base">
      <pose>0 0 1 0 0 0</pose>
      <inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      <collision name="hull">
        <pose>0.1 0 0 0 0 1.5707963267948966</pose>
        <geometry><box><size>0.4 0.2 0.1</size></box></geometry>
        <surface><contact><collide_bitmask>0x03</collide_bitmask></contact>
                 <friction><ode><mu>0.6</mu></ode></friction></surface>
      </collision>
      <collision name="floor"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
      <collision name="ghost"><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <surface><contact><collide_bitmask>0</collide_bitmask></contact></surface></collision>
    </link>
    <frame name="tip" attached_to="arm"><pose relative_to="arm">0 0 -0.5 0 0 0</pose></frame>
    <link name="arm">
      <pose relative_to="base">0.3 0 0 0 0 0</pose>
      <inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      <collision name="rod">
        <pose relative_to="tip">0 0 0.25 1.5707963267948966 0 0</pose>
        <geometry><capsule><radius>0.05</radius><length>0.5</length></capsule></geometry>
      </collision>
      <collision name="foot"><geometry><mesh><uri>foot.stl</uri><scale>1 1 0.5</scale></mesh></geometry></collision>
      <collision name="bad"><geometry><sphere><radius>-1</radius></sphere></geometry></collision>
      <collision name="odd"><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <surface><contact><collide_bitmask>zz</collide_bitmask></contact></surface></collision>
    </link>
    <joint name="hinge" type="revolute">
      <parent>base</parent><child>arm</child><axis><xyz>0 1 0</xyz></axis>
    </joint>
  </model>
</sdf>
"""


@pytest.mark.parametrize("self_collide", ["false", "true"])
def test_collisions_their_poses_bits_and_friction(tmp_path, self_collide):
    """<collision>: a box, capsule and mesh posed through relative_to frames (world poses composed by hand), a hex
    collide_bitmask, an ODE mu; which pairs touch follows self_collide; a plane, a bad radius and a bitmask that is
    not an integer are left out with a warning (refused when strict), a bitmask of 0 touches nothing and is not
    read."""
    import shutil

    from conftest import ROOT

    shutil.copy(ROOT / "tests" / "data" / "menagerie" / "wonik_allegro" / "assets" / "link_13.0.stl",
                tmp_path / "foot.stl")  # fmt: skip
    path = tmp_path / "two.sdf"
    path.write_text(COLLISIONS_SDF.format(self_collide=self_collide))
    with pytest.warns(dp.ModelWarning) as caught:
        model = dp.load_sdf(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "'base::floor'" in messages and "a <plane> is not a shape" in messages
    assert "'arm::bad'" in messages and "radius must be a positive number" in messages
    assert "'arm::odd'" in messages and "collide_bitmask 'zz' is not an integer" in messages
    with pytest.raises(dp.ModelError, match="is not a shape denoc_pin detects"):
        dp.load_sdf(path, strict=True)
    by = {c.name: c for c in model.collisions}
    assert list(by) == ["base::hull", "arm::rod", "arm::foot"]
    hull, rod, foot = by.values()
    assert hull.shape == dp.Box((0.4, 0.2, 0.1)) and hull.friction == 0.6 and rod.friction == 1.0
    assert rod.shape == dp.Capsule(0.05, 0.5) and foot.shape.scale == (1.0, 1.0, 0.5)
    assert foot.shape.path == str((tmp_path / "foot.stl").resolve())
    bits = (3, 3, 255, 255) if self_collide == "true" else (1, 0, 1, 0)
    assert (hull.group, hull.mask, rod.group, rod.mask) == bits
    data = model.create_data()
    q = np.array([0.7])
    dp.forward_kinematics(model, data, q)

    def world(c):
        return data.oR[c.body] @ c.rotation, data.oR[c.body] @ c.translation + data.op[c.body]

    Rz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert_close(world(hull)[0], Rz, 1e-12)
    assert_close(world(hull)[1], [0.1, 0.0, 0.0], 1e-12)  # the root link, the fixed base, is the world's frame
    Ry = pin.rpy.rpyToMatrix(0.0, 0.7, 0.0)  # the hinge turns the arm about y at (0.3, 0, 0)
    Rx = pin.rpy.rpyToMatrix(np.pi / 2, 0.0, 0.0)
    assert_close(world(rod)[0], Ry @ Rx, 1e-12)
    assert_close(world(rod)[1], np.array([0.3, 0.0, 0.0]) + Ry @ [0.0, 0.0, -0.25], 1e-12)
    assert_close(world(foot)[1], [0.3, 0.0, 0.0], 1e-12)


FLOATING_SDF = """<sdf version="1.9"><model name="m"><pose>1 2 3 0.3 0.2 0.1</pose>
<link name="base"><pose>0.1 0 0.5 0 0 0.4</pose><inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.2</iyy>
<izz>0.25</izz></inertia></inertial></link>
<link name="arm"><pose>0.4 0 0.5 0 0 0</pose><inertial><pose>0.1 0 0 0 0 0</pose><mass>0.5</mass><inertia>
<ixx>0.01</ixx><iyy>0.02</iyy><izz>0.02</izz></inertia></inertial></link>
<joint name="j" type="revolute"><parent>base</parent><child>arm</child><axis><xyz>0 1 0</xyz></axis></joint>
</model></sdf>"""


def test_a_floating_sdf_models_q_is_the_root_links_world_pose(tmp_path):
    """root_joint="free-flyer": q is the root link's pose in the world, as MuJoCo's and Drake's floating bases are
    (q = neutral puts it at the origin, as the fixed-base loader does); a pose copied from MuJoCo
    (dp.mujoco_state) or given to it (dp.to_mujoco_state) places the robot alike: the same model written as MJCF by
    hand, at the file's pose and a random state, has MuJoCo's body placements and kinetic energy."""
    import mujoco
    from scipy.spatial.transform import Rotation

    path = tmp_path / "floating.sdf"
    path.write_text(FLOATING_SDF)
    model = dp.load_sdf(path, root_joint="free-flyer")
    data = model.create_data()
    X = dp.frame_placement(model, data, dp.neutral(model), model.frame_id("base", type="body"))
    assert_close(X, np.eye(4), 1e-15)
    M = rpy_pose((1, 2, 3), (0.3, 0.2, 0.1))  # the model's pose, then each link's in it
    base, arm = M @ rpy_pose((0.1, 0, 0.5), (0, 0, 0.4)), M @ rpy_pose((0.4, 0, 0.5), (0, 0, 0))
    rel = np.linalg.inv(base) @ arm
    x, y, z, w = Rotation.from_matrix(rel[:3, :3]).as_quat()
    (tmp_path / "twin.xml").write_text(
        '<mujoco><compiler angle="radian"/><option gravity="0 0 -9.81"/><worldbody><body name="base"><freejoint/>'
        '<inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.25"/>'
        f'<body name="arm" pos="{rel[0, 3]} {rel[1, 3]} {rel[2, 3]}" quat="{w} {x} {y} {z}"><joint axis="0 1 0"/>'
        '<inertial pos="0.1 0 0" mass="0.5" diaginertia="0.01 0.02 0.02"/></body></body></worldbody>'
        "</mujoco>")  # fmt: skip
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "twin.xml"))
    d = mujoco.MjData(m)
    file_pose = np.r_[
        base[:3, 3], Rotation.from_matrix(base[:3, :3]).as_quat(), 0.0
    ]  # the file's pose as q: the base where the file puts it
    rng = np.random.default_rng(3)
    for q in (file_pose, dp.integrate(model, file_pose, rng.uniform(-1, 1, model.nv))):
        v = rng.uniform(-1, 1, model.nv)
        d.qpos[:], d.qvel[:] = dp.to_mujoco_state(model, q, v)
        mujoco.mj_forward(m, d)
        for name in ("base", "arm"):
            X = dp.frame_placement(model, data, q, model.frame_id(name, type="body"))
            assert_close(X[:3, 3], d.body(name).xpos, 1e-12)
            assert_close(X[:3, :3], d.body(name).xmat.reshape(3, 3), 1e-12)
        if q is file_pose:
            assert_close(dp.frame_placement(model, data, q, model.frame_id("arm", type="body")), arm, 1e-12)
        Mm = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, Mm)
        assert_close(v @ dp.gim(model, data, q) @ v, d.qvel @ Mm @ d.qvel, 1e-12)
        back_q, back_v = dp.mujoco_state(model, d.qpos, d.qvel)
        assert_close(back_q, q, 1e-15)
        assert_close(back_v, v, 1e-14)


def rpy_pose(xyz, rpy) -> np.ndarray:
    from denoc_pin.loaders.urdf import rpy_matrix

    T = np.eye(4)
    T[:3, :3], T[:3, 3] = rpy_matrix(rpy), xyz
    return T
