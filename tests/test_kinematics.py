"""Frames, placements, velocities, accelerations, Jacobians and their time variation, the centre of mass and the
centroidal quantities against Pinocchio, in every reference frame; the time variations also against finite
differences (Pinocchio's own ``computeCentroidalMapTimeVariation`` is not used as a referee: see
docs/kinematics.md)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close
from test_builder import random_builder_tree
from test_floating_base import FLOATING, pair
from test_helical import helical_tree

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

REFS = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def states(pm: pin.Model, seed: int, n: int = 2):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = pin.randomConfiguration(pm, -np.pi * np.ones(pm.nq), np.pi * np.ones(pm.nq))
        yield pin.normalize(pm, q), rng.standard_normal(pm.nv), rng.standard_normal(pm.nv)


def check_frames_are_pinocchios(model: dp.Model, pm: pin.Model) -> None:
    assert len(model.frames) == len(pm.frames)
    for f, g in zip(model.frames, pm.frames, strict=True):
        assert (f.name, f.type, f.body) == (g.name, str(g.type.name).lower(), g.parentJoint)
        assert_close(np.asarray(f.rotation), g.placement.rotation, what=f"frame {f.name} rotation")
        assert_close(np.asarray(f.translation), g.placement.translation, what=f"frame {f.name} translation")


def mat(x, rows: int) -> np.ndarray:
    """Pinocchio's binding returns a one-column matrix as a vector."""
    return np.reshape(x, (rows, -1))


def check_kinematics(model: dp.Model, pm: pin.Model, q, v, a, frames=None) -> None:
    """Every kinematic quantity of denoc_pin against Pinocchio's at (q, v, a), for ``frames`` (default: all)."""
    d, pd = model.create_data(), pm.createData()
    frames = range(len(pm.frames)) if frames is None else frames
    pin.forwardKinematics(pm, pd, q, v, a)
    pin.updateFramePlacements(pm, pd)
    dp.forward_kinematics(model, d, q, v, a)
    for k in range(1, pm.njoints):
        assert_close(d.oR[k], pd.oMi[k].rotation, what=f"oR {k}")
        assert_close(d.op[k], pd.oMi[k].translation, what=f"op {k}")
        assert_close(d.t[k], dp.core.spatial.from_pinocchio_order(pd.v[k].vector), what=f"t {k}")
    P = dp.frame_placements(model, d, q)
    dp.forward_kinematics(model, d, q)  # every body's placement held: every frame's follows
    assert_close(np.stack([dp.update_frame_placement(model, d, f) for f in range(len(pm.frames))]), P)
    for f in frames:
        assert_close(P[f], pd.oMf[f].homogeneous, what=f"placement of frame {f}")
        g = pm.frames[f]
        by_name = dp.frame_placement(model, d, q, model.frame_id(g.name, str(g.type.name).lower()))
        assert_close(by_name, pd.oMf[pm.getFrameId(g.name, g.type)].homogeneous, what="placement by name")
        for name, ref in REFS.items():
            what = f"frame {pm.frames[f].name} {name}"
            assert_close(dp.frame_velocity(model, d, q, v, f, name), pin.getFrameVelocity(pm, pd, f, ref).vector,
                         what=f"velocity {what}")  # fmt: skip
            assert_close(dp.frame_acceleration(model, d, q, v, a, f, name),
                         pin.getFrameAcceleration(pm, pd, f, ref).vector, what=f"acceleration {what}")  # fmt: skip
            classical = pin.getFrameClassicalAcceleration(pm, pd, f, ref).vector
            assert_close(dp.frame_acceleration(model, d, q, v, a, f, name, classical=True), classical,
                         what=f"classical {what}")  # fmt: skip
    # the first column of a universal joint turns in its body (R2ᵀ e1): Pinocchio 4.1's dJ leaves that out
    universal = dp.core.joints.UNIVERSAL
    turning = np.array([model.idx_v[k] for k in range(1, model.njoints) if model.kinds[k] == universal], dtype=int)
    other = np.setdiff1d(np.arange(model.nv), turning)
    pin.computeJointJacobians(pm, pd, q)
    assert_close(dp.joint_jacobians(model, d, q), mat(pd.J, 6), what="joint Jacobians")
    pin.computeJointJacobiansTimeVariation(pm, pd, q, v)
    pin.updateFramePlacements(pm, pd)
    for f in frames:
        for name, ref in REFS.items():
            what = f"frame {pm.frames[f].name} {name}"
            J = pin.computeFrameJacobian(pm, pm.createData(), q, f, ref)
            assert_close(dp.frame_jacobian(model, d, q, f, name), mat(J, 6), what=f"Jacobian {what}")
            # the placement it left in d: Pinocchio's computeFrameJacobian + updateFramePlacement
            assert_close(dp.update_frame_placement(model, d, f), pd.oMf[f].homogeneous, what=f"held placement {what}")
            dJ = mat(pin.getFrameJacobianTimeVariation(pm, pd, f, ref), 6)
            ours = dp.frame_jacobian_time_variation(model, d, q, v, f, name)
            assert_close(ours[:, other], dJ[:, other], what=f"dJ {what}")
            if turning.size:  # Pinocchio leaves out ṗ there: finite differences referee
                fd = finite_difference(lambda x, f=f, name=name: dp.frame_jacobian(model, d, x, f, name), pm, q, v)
                assert_close(ours[:, turning], fd[:, turning], rtol=1e-6, atol=1e-7, what=f"dJ {what}, universal")
    pin.centerOfMass(pm, pd, q, v, a)
    com, vcom, acom = dp.center_of_mass(model, d, q, v, a)
    for ours, theirs, what in ((com, pd.com[0], "com"), (vcom, pd.vcom[0], "vcom"), (acom, pd.acom[0], "acom")):
        assert_close(ours, theirs, what=what)
    assert_close(dp.center_of_mass(model, d, q), pd.com[0], what="com from q")
    assert_close(dp.com_jacobian(model, d, q), mat(pin.jacobianCenterOfMass(pm, pm.createData(), q), 3), what="J_com")
    assert_close(dp.centroidal_map(model, d, q), mat(pin.computeCentroidalMap(pm, pm.createData(), q), 6), what="A_G")
    pin.computeCentroidalMomentum(pm, pd, q, v)
    assert_close(dp.centroidal_momentum(model, d, q, v), pd.hg.vector, what="h_G")
    pin.dccrba(pm, pd, q, v)
    ours = dp.centroidal_map_time_variation(model, d, q, v)
    assert_close(ours[:, other], mat(pd.dAg, 6)[:, other], what="dA_G")
    if turning.size:
        fd = finite_difference(lambda x: dp.centroidal_map(model, d, x), pm, q, v)
        assert_close(ours[:, turning], fd[:, turning], rtol=1e-6, atol=1e-7, what="dA_G, universal")


def test_bundled_robots_and_random_trees(case):
    """The bundled URDFs, 10 example-robot-data robots and 50 random trees, every frame, every reference."""
    model, pm = case
    check_frames_are_pinocchios(model, pm)
    for q, v, a in states(pm, seed=model.nv, n=2):
        check_kinematics(model, pm, q, v, a)


@pytest.mark.parametrize("name", FLOATING)
def test_floating_base_robots(name):
    model, pm = pair(name, "free-flyer")
    check_frames_are_pinocchios(model, pm)
    for q, v, a in states(pm, seed=1):
        check_kinematics(model, pm, q, v, a)


@pytest.mark.parametrize("name", ["solo12", "double_pendulum"])
def test_planar_root(name):
    model, pm = pair(name, "planar")
    for q, v, a in states(pm, seed=2):
        check_kinematics(model, pm, q, v, a)


@pytest.mark.parametrize("seed", range(10))
def test_every_joint_kind(seed):
    """Random ModelBuilder trees of every joint kind (universal, spherical, planar, helical, …) against their
    Pinocchio twins."""
    for model in (random_builder_tree(seed), helical_tree(seed)):
        pm = dp.to_pinocchio(model)
        check_frames_are_pinocchios(model, pm)
        for q, v, a in states(pm, seed=seed, n=1):
            check_kinematics(model, pm, q, v, a)


def finite_difference(f, pm: pin.Model, q, v, h: float = 1e-6) -> np.ndarray:
    """d/dt f(q(t)) at t = 0 along q(t) = q ⊕ t v, central, O(h²)."""
    return (f(pin.integrate(pm, q, h * v)) - f(pin.integrate(pm, q, -h * v))) / (2 * h)


@pytest.mark.parametrize("seed", range(6))
def test_time_variations_are_the_derivatives(seed):
    """dJ/dt of every reference and dA_G/dt against central differences of J and A_G (rtol 1e-6: the
    differences' own error is O(h²) plus rounding over h)."""
    model = random_builder_tree(seed)
    pm = dp.to_pinocchio(model)
    d = model.create_data()
    for q, v, _ in states(pm, seed=seed, n=1):
        for name in REFS:
            for f in range(0, len(model.frames), 3):
                fd = finite_difference(lambda x, f=f, name=name: dp.frame_jacobian(model, d, x, f, name), pm, q, v)
                assert_close(dp.frame_jacobian_time_variation(model, d, q, v, f, name), fd, rtol=1e-6, atol=1e-7,
                             what=f"dJ frame {f} {name}")  # fmt: skip
        fd = finite_difference(lambda x: dp.centroidal_map(model, d, x), pm, q, v)
        assert_close(dp.centroidal_map_time_variation(model, d, q, v), fd, rtol=1e-6, atol=1e-7, what="dA_G")
        fd = finite_difference(lambda x: dp.frame_placement(model, d, x, len(model.frames) - 1), pm, q, v)
        V = dp.frame_velocity(model, d, q, v, len(model.frames) - 1, "local_world_aligned")
        assert_close(fd[:3, 3], V[:3], rtol=1e-6, atol=1e-7, what="velocity of the frame's origin")


def test_jacobian_times_v_is_the_velocity():
    model, pm = pair("talos_reduced", "free-flyer")
    d = model.create_data()
    for q, v, _ in states(pm, seed=3):
        for f in range(0, len(model.frames), 7):
            for name in REFS:
                assert_close(dp.frame_jacobian(model, d, q, f, name) @ v, dp.frame_velocity(model, d, q, v, f, name))
        assert_close(dp.com_jacobian(model, d, q) @ v, dp.center_of_mass(model, d, q, v)[1])
        assert_close(dp.centroidal_map(model, d, q) @ v, dp.centroidal_momentum(model, d, q, v))
        # the centroidal momentum's linear part is the total mass times the velocity of the centre of mass
        assert_close(dp.centroidal_momentum(model, d, q, v)[:3], model.masses[1:].sum() * dp.center_of_mass(
            model, d, q, v)[1])  # fmt: skip


def test_batches_give_each_state_a_leading_axis():
    model, pm = pair("solo12", "free-flyer")
    d = model.create_data()
    rng = np.random.default_rng(4)
    Q = np.array([dp.random_configuration(model, rng=rng) for _ in range(7)])
    V, A = rng.standard_normal((7, model.nv)), rng.standard_normal((7, model.nv))
    f = model.frame_id("FL_FOOT")
    calls = {
        "placement": (lambda q: dp.frame_placement(model, d, q, f), (Q,)),
        "placements": (lambda q: dp.frame_placements(model, d, q), (Q,)),
        "jacobian": (lambda q: dp.frame_jacobian(model, d, q, f, "world"), (Q,)),
        "joint_jacobians": (lambda q: dp.joint_jacobians(model, d, q), (Q,)),
        "velocity": (lambda q, v: dp.frame_velocity(model, d, q, v, f), (Q, V)),
        "acceleration": (lambda q, v, a: dp.frame_acceleration(model, d, q, v, a, f, classical=True), (Q, V, A)),
        "dJ": (lambda q, v: dp.frame_jacobian_time_variation(model, d, q, v, f, "local_world_aligned"), (Q, V)),
        "com": (lambda q, v, a: np.concatenate(dp.center_of_mass(model, d, q, v, a), axis=-1), (Q, V, A)),
        "com_jacobian": (lambda q: dp.com_jacobian(model, d, q), (Q,)),
        "momentum": (lambda q, v: dp.centroidal_momentum(model, d, q, v), (Q, V)),
        "map": (lambda q: dp.centroidal_map(model, d, q), (Q,)),
        "map_dot": (lambda q, v: dp.centroidal_map_time_variation(model, d, q, v), (Q, V)),
    }
    for what, (call, args) in calls.items():
        batch = call(*args)
        assert batch.shape[0] == 7, what
        for i in range(7):
            np.testing.assert_array_equal(batch[i], call(*(x[i] for x in args)), err_msg=what)
    assert dp.center_of_mass(model, d, Q).shape == (7, 3)


def test_frames_of_a_urdf_are_pinocchios_in_order():
    """Links merged by fixed joints, fixed joints' frames, joints' frames: the same indices as Pinocchio's."""
    path = example_robot_urdf("panda")
    model, pm = dp.load_urdf(path), pin.buildModelFromUrdf(str(path))
    check_frames_are_pinocchios(model, pm)
    assert model.frame_id("panda_hand_tcp") == pm.getFrameId("panda_hand_tcp")
    assert model.frames[model.frame_id("panda_joint8")].type == "fixed_joint"
    assert model.frame_id("panda_joint1", "joint") == pm.getFrameId("panda_joint1", pin.FrameType.JOINT)
    with pytest.raises(dp.ModelError, match=r"no frame 'panda_tcp'.*frames are: universe, panda_link0"):
        model.frame_id("panda_tcp")
    with pytest.raises(dp.ModelError, match="frame types are"):
        model.frame_id("panda_link1", "link")
    with pytest.raises(dp.ModelError, match="out of range"):
        dp.frame_placement(model, model.create_data(), np.zeros(model.nq), len(model.frames))


def test_user_frames_from_the_model_and_the_builder():
    path = example_robot_urdf("ur5")
    model = dp.load_urdf(path)
    R, p = pin.exp3(np.array([0.3, -0.2, 0.5])), np.array([0.01, 0.02, 0.15])
    tool = model.add_frame("tool", "wrist_3_link", (R, p))
    tip = tool.add_frame("tip", "tool", (np.eye(3), np.array([0.0, 0.0, 0.05])))
    assert len(model.frames) + 2 == len(tip.frames) and tip.frames[-1].type == "op_frame"
    pm = pin.buildModelFromUrdf(str(path))
    parent = pm.frames[pm.getFrameId("wrist_3_link")]
    fid = pm.addFrame(pin.Frame("tool", parent.parentJoint, pm.getFrameId("wrist_3_link"),
                                parent.placement * pin.SE3(R, p), pin.FrameType.OP_FRAME))  # fmt: skip
    pm.addFrame(pin.Frame("tip", parent.parentJoint, fid, pm.frames[fid].placement * pin.SE3(np.eye(3),
                np.array([0.0, 0.0, 0.05])), pin.FrameType.OP_FRAME))  # fmt: skip
    check_frames_are_pinocchios(tip, pm)
    for q, v, a in states(pm, seed=5, n=1):
        check_kinematics(tip, pm, q, v, a, frames=[len(pm.frames) - 2, len(pm.frames) - 1])
    # the same frame through dp.to_pinocchio, from_pinocchio, pickling and an edit
    check_frames_are_pinocchios(tip, dp.to_pinocchio(tip))
    assert [f.name for f in dp.from_pinocchio(pm).frames] == [f.name for f in tip.frames]
    assert pickle.loads(pickle.dumps(tip)).frames[-1].name == "tip"
    locked = dp.lock_joints(tip, ["shoulder_pan_joint"], np.zeros(tip.nq))
    q = np.zeros(locked.nq)
    assert_close(dp.frame_placement(locked, locked.create_data(), q, "tip"),
                 dp.frame_placement(tip, tip.create_data(), np.zeros(tip.nq), "tip"))  # fmt: skip
    with pytest.raises(dp.ModelError, match="has a op_frame frame named 'tool' already"):
        tool.add_frame("tool", "wrist_3_link")
    with pytest.raises(dp.ModelError, match="no frame 'wrist_4_link'"):
        model.add_frame("x", "wrist_4_link")
    with pytest.raises(dp.ModelError, match="not a rotation matrix"):
        model.add_frame("x", "wrist_3_link", (2 * np.eye(3), np.zeros(3)))
    b = dp.ModelBuilder("arm")
    b.add_body(0, "revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2, link="l1")
    b.add_frame("sensor", "l1", (np.eye(3), np.array([0.2, 0.0, 0.0])), type="sensor")
    b.add_body("sensor", "revolute", axis=(0, 1, 0), mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2)
    built = b.build()
    assert built.frames[built.frame_id("sensor")].type == "sensor"
    check_frames_are_pinocchios(built, dp.to_pinocchio(built))
    assert_close(dp.frame_placement(built, built.create_data(), np.zeros(2), "sensor")[:3, 3], [0.2, 0, 0])


def test_default_frames_of_a_model_built_from_arrays():
    model = dp.models.chain(4)
    assert [f.type for f in model.frames[:4]] == ["fixed_joint", "body", "joint", "body"]
    assert model.frame_id("j3") == 6 and model.frame_id("link3") == 7


def test_bad_input_gets_a_clear_error():
    model = dp.load_urdf(example_robot_urdf("panda"))
    d = model.create_data()
    q, v = np.zeros(model.nq), np.zeros(model.nv)
    with pytest.raises(ValueError, match="reference must be one of 'world', 'local', 'local_world_aligned'"):
        dp.frame_jacobian(model, d, q, "panda_hand", "global")
    with pytest.raises(ValueError, match="needs the velocity"):
        dp.center_of_mass(model, d, q, None, v)
    with pytest.raises(ValueError, match=r"q has non-finite entries .* \[3\]"):
        dp.frame_placement(model, d, np.r_[0, 0, 0, np.nan, 0, 0, 0, 0, 0], "panda_hand")
    with pytest.raises(ValueError, match="v must have shape"):
        dp.frame_velocity(model, d, q, np.zeros(3), "panda_hand")
    with pytest.raises(ValueError, match=r"needs v of shape \(2, 9\)"):
        dp.frame_velocity(model, d, np.zeros((2, 9)), np.zeros((3, 9)), "panda_hand")
    with pytest.raises(ValueError, match="data was not created by this model"):
        dp.frame_placement(model, dp.models.chain(3).create_data(), q, 0)
    with pytest.raises(dp.ModelError, match="a frame is a name or an index"):
        dp.frame_placement(model, d, q, 2.0)
    with pytest.raises(ValueError, match="data was not created by this model"):
        dp.update_frame_placement(model, dp.models.chain(3).create_data(), 0)
    for bad, message in (
        (2.0, "a frame is a name or an index"),
        (True, "a frame is a name or an index"),
        (26, r"frame index 26 is out of range .* \(26 frames\)"),
        ("hand", "no frame 'hand'"),
    ):
        with pytest.raises(dp.ModelError, match=message):
            dp.update_frame_placement(model, d, bad)
    calls = (
        lambda m: dp.update_frame_placement(m, d, 0),
        lambda m: dp.frame_jacobian(m, d, q, 0),
        lambda m: dp.frame_jacobian(m, d, q, "panda_hand"),
        lambda m: dp.joint_jacobians(m, d, q),
        lambda m: dp.frame_placement(m, d, q, "panda_hand"),
        lambda m: dp.center_of_mass(m, d, q),
    )
    for call in calls:
        with pytest.raises(TypeError, match="model must be a denoc_pin.Model, got NoneType"):
            call(None)
    with pytest.raises(ValueError, match="one state"):
        dp.forward_kinematics(model, d, np.zeros((2, 9)))
    with pytest.raises(ValueError, match="needs the velocity"):
        dp.forward_kinematics(model, d, q, None, v)
    # a pinocchio.ReferenceFrame is accepted for a reference
    assert_close(dp.frame_jacobian(model, d, q, "panda_hand", pin.WORLD), dp.frame_jacobian(model, d, q,
                 "panda_hand", "world"))  # fmt: skip
    b = dp.ModelBuilder("rotor")
    b.add_body(0, "revolute", inertia=np.eye(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rotor = b.build()
    with pytest.raises(dp.ModelError, match="has no mass: its centre of mass is undefined"):
        dp.center_of_mass(rotor, rotor.create_data(), np.zeros(1))
