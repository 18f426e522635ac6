"""Joint limits: Pinocchio's names, layouts and values, from URDF, the builder and the bridge, kept by the edits,
and the range of random_configuration."""

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR

import denoc_pin as dp
from denoc_pin.loaders.pinocchio_bridge import LIMITS
from denoc_pin.loaders.robots import example_robot_urdf

ROBOTS = ["panda", "ur5", "solo12", "talos_reduced", "double_pendulum_continuous", "anymal", "tiago", "pr2"]
CASES = [(str(p), None) for p in sorted((URDF_DIR).glob("*.urdf"))] + [
    (name, root) for name in ROBOTS for root in (None, "free-flyer")
]


def _same_limits(model: dp.Model, pm) -> None:
    for ours, theirs in LIMITS.items():
        assert np.array_equal(getattr(model, ours), np.asarray(getattr(pm, theirs))), ours


@pytest.mark.parametrize(("source", "root"), CASES, ids=[f"{s.split('/')[-1]}-{r}" for s, r in CASES])
def test_urdf_limits_are_pinocchios(source, root):
    path = source if source.endswith(".urdf") else str(example_robot_urdf(source))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.InertiaWarning)
        model = dp.load_urdf(path, root_joint=root)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if root else pin.buildModelFromUrdf(path)
    _same_limits(model, pm)  # bit for bit, the continuous joints' ±1.01 and the root's ±1.8e308 included
    _same_limits(model, dp.to_pinocchio(model))
    _same_limits(dp.from_pinocchio(pm), pm)


def test_builder_limits_default_to_pinocchios_and_are_checked():
    b = dp.ModelBuilder("limits")
    b.add_body(0, "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01, lower=-1, upper=2, velocity=3,
               effort=4)  # fmt: skip
    b.add_body(1, "spherical", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_body(2, "planar", mass=1.0, inertia=np.eye(3) * 0.01, lower=[-1, -2, -1.01, -1.01], upper=1.5)
    m = b.build()
    pm = pin.Model()  # the same joints through addJoint, Pinocchio's defaults where the builder was given none
    inf = np.finfo(float).max
    j = pm.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "a", np.array([4.0]), np.array([3.0]),
                    np.array([-1.0]), np.array([2.0]))  # fmt: skip
    j = pm.addJoint(j, pin.JointModelSpherical(), pin.SE3.Identity(), "b")
    pm.addJoint(j, pin.JointModelPlanar(), pin.SE3.Identity(), "c", np.full(3, inf), np.full(3, inf),
                np.array([-1.0, -2.0, -1.01, -1.01]), np.full(4, 1.5))  # fmt: skip
    _same_limits(m, pm)
    with pytest.raises(dp.ModelError, match=r"joint 'joint_1': lower= takes one number or 4 \(the joint's nq\), got 2"):
        dp.ModelBuilder().add_body(0, "spherical", mass=1.0, inertia=np.eye(3), lower=[0, 1])
    with pytest.raises(dp.ModelError, match="a fixed joint has no limits"):
        dp.ModelBuilder().add_body(0, "fixed", effort=1.0)
    with pytest.raises(dp.ModelError, match=r"joint 'joint_1': lower \[1.0\] is above upper \[0.0\]"):
        dp.ModelBuilder().add_body(0, "revolute", mass=1.0, inertia=np.eye(3) * 0.01, lower=1.0, upper=0.0)


def test_edits_keep_the_limits_of_the_joints_that_remain():
    model = dp.load_urdf(example_robot_urdf("panda"))
    locked = dp.lock_joints(model, ["panda_joint3"], dp.neutral(model))
    keep = [k for k in range(1, model.njoints) if model.names[k] != "panda_joint3"]
    q = np.concatenate([np.arange(model.idx_q[k], model.idx_q[k] + model.nqs[k]) for k in keep])
    assert np.array_equal(locked.lower_position_limit, model.lower_position_limit[q])
    assert np.array_equal(locked.effort_limit, model.effort_limit[q])  # nq = nv for panda's joints
    assert np.array_equal(dp.with_passive(model, ["panda_joint1"]).velocity_limit, model.velocity_limit)


def test_random_configuration_stays_within_the_limits():
    model = dp.load_urdf(example_robot_urdf("panda"))
    rng = np.random.default_rng(4)
    qs = np.array([dp.random_configuration(model, rng) for _ in range(200)])
    lo, hi = model.lower_position_limit, model.upper_position_limit
    assert (qs >= lo).all() and (qs <= hi).all()
    assert (qs.min(axis=0) < lo + 0.1 * (hi - lo)).all() and (qs.max(axis=0) > hi - 0.1 * (hi - lo)).all()
    rope = dp.models.rope(5)  # no limits: angles over [-π, π]
    qs = np.array([dp.random_configuration(rope, rng) for _ in range(200)])
    assert qs.min() < -2.5 and qs.max() > 2.5
