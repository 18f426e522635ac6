"""Model/Data: immutability, names, and the data workspace."""

import numpy as np
import pytest
from conftest import URDF_DIR

import denoc_pin as dp


@pytest.fixture(scope="module")
def gripper():
    return dp.load_urdf(URDF_DIR / "gripper.urdf")


def test_model_is_immutable_and_algorithms_do_not_touch_it(gripper):
    with pytest.raises(AttributeError, match="immutable"):
        gripper.nq = 3
    with pytest.raises(ValueError, match="read-only"):
        gripper.M[1, 0, 0] = 1.0
    before = {k: v.copy() for k, v in vars(gripper).items() if isinstance(v, np.ndarray)}
    data = gripper.create_data()
    q = np.array([0.1, -0.2, 0.3, 0.4])
    dp.forward_dynamics(gripper, data, q, np.ones(4), np.ones(4))
    dp.gim_inverse(gripper, data, q)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(gripper, k), v)


def test_fields(gripper):
    assert (gripper.nq, gripper.nv, gripper.njoints) == (4, 4, 5)
    assert gripper.names[0] == "universe" and gripper.link_names[0] == "base"
    assert gripper.link_names[1:] == ("link_1_1", "link_1_2", "link_2_2", "link_1_3")
    np.testing.assert_allclose(gripper.masses[1:], [0.4, 0.2, 0.2, 0.2])
    np.testing.assert_allclose(gripper.coms[1], [0.05, 0, 0])
    np.testing.assert_allclose(gripper.gravity, [0, 0, -9.81])
    assert "gripper" in repr(gripper) and "3 modules" in repr(gripper)


def test_joint_id_lists_valid_names(gripper):
    assert gripper.joint_id("joint_2_2") == 3
    with pytest.raises(dp.ModelError, match="no joint 'elbow' in model 'gripper'; joints are: joint_1_1, joint_1_2"):
        gripper.joint_id("elbow")


def test_results_are_copies(gripper):
    data = gripper.create_data()
    z = np.zeros(4)
    t1 = dp.inverse_dynamics(gripper, data, z, z, np.ones(4))
    t2 = dp.inverse_dynamics(gripper, data, z, z, np.zeros(4))
    assert not np.array_equal(t1, t2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rotation": np.diag([1.0, 1.0, -1.0])}, "is not a rotation matrix"),  # a reflection
        ({"rotation": 1.01 * np.eye(3)}, "is not a rotation matrix"),
        ({"translation": np.array([np.nan, 0.0, 0.0])}, "must be a finite"),
        ({"translation": np.array([1e300, 0.0, 0.0])}, "has a magnitude beyond 1e\\+12"),
        ({"rotation": np.eye(2)}, "must be a finite"),
    ],
)
def test_a_frame_with_a_bad_placement_is_refused_by_name(change, message):
    """Every frame's placement is checked (all frames at once): the first bad one is named with its defect; a
    rotation off by rounding (1e-7) passes."""
    import dataclasses

    m = dp.models.chain(3)
    frames = list(m.frames)
    frames[2] = dataclasses.replace(frames[2], **change)
    with pytest.raises(dp.ModelError, match=f"frame {frames[2].name!r}: its .*{message}"):
        dp.Model(**(m.fields() | {"frames": tuple(frames)}))
    frames[2] = dataclasses.replace(m.frames[2], rotation=np.eye(3) + 1e-7)
    dp.Model(**(m.fields() | {"frames": tuple(frames)}))
