"""from_pinocchio: any pinocchio.Model with supported joints, same layout and dynamics."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import ROOT, URDF_DIR, assert_close

import denoc_pin as dp
from denoc_pin.algorithms.configuration import random_configuration
from denoc_pin.loaders.robots import example_robot_urdf


@pytest.mark.parametrize("name", ["panda", "talos_reduced", "double_pendulum_continuous"])
def test_from_pinocchio_equals_load_urdf(name):
    path = example_robot_urdf(name)
    pm = pin.buildModelFromUrdf(str(path))
    a, b = dp.from_pinocchio(pm), dp.load_urdf(path)
    assert a.names == b.names and list(a.parents) == list(b.parents) and list(a.kinds) == list(b.kinds)
    np.testing.assert_allclose(a.axes, b.axes, atol=1e-15)
    np.testing.assert_allclose(a.M, b.M, atol=1e-12)
    q = random_configuration(a, np.random.default_rng(0))
    v = np.linspace(-1, 1, a.nv)
    assert_close(dp.forward_dynamics(a, a.create_data(), q, v, v), pin.aba(pm, pm.createData(), q, v, v))


def test_hand_built_pinocchio_model_with_unaligned_joints():
    pm = pin.Model()
    rng = np.random.default_rng(1)
    parent = 0
    joints = [
        pin.JointModelRevoluteUnaligned(np.array([0.3, -0.4, 0.5]) / np.linalg.norm([0.3, -0.4, 0.5])),
        pin.JointModelPrismaticUnaligned(np.array([0.0, 0.6, 0.8])),
        pin.JointModelRUBY(),
        pin.JointModelPZ(),
    ]
    for i, j in enumerate(joints):
        parent = pm.addJoint(
            parent, j, pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3) * 0.2), f"j{i}"
        )
        pm.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    model = dp.from_pinocchio(pm)
    pd, data = pm.createData(), model.create_data()
    q = random_configuration(model, rng)
    v, a = rng.uniform(-1, 1, (2, model.nv))
    assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close(dp.forward_dynamics(model, data, q, v, a), pin.aba(pm, pd, q, v, a))


def test_unsupported_joint_lists_the_supported_ones():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "ball")
    with pytest.raises(
        dp.ModelError, match="joint 'ball' is a JointModelSphericalZYX, .* supported: JointModelFreeFlyer"
    ):
        dp.from_pinocchio(pm)
    with pytest.raises(dp.ModelError, match="expects a pinocchio.Model, got str"):
        dp.from_pinocchio("panda.urdf")


def test_from_pinocchio_names_a_singular_model():
    pm = pin.buildModelFromUrdf(str(URDF_DIR / "gripper.urdf"))
    pm.inertias[4] = pin.Inertia.Zero()  # finger 1^3 becomes massless
    with pytest.warns(dp.ModelWarning, match="joint 'joint_1_3' moves only massless links"):
        dp.from_pinocchio(pm)


def _unit(x):
    return x / np.linalg.norm(x)


def _one_joint_model(joint) -> "pin.Model":
    pm = pin.Model()
    j = pm.addJoint(0, joint, pin.SE3(pin.exp3(np.array([0.2, -0.1, 0.4])), np.array([0.1, 0.2, -0.3])), "j")
    pm.appendBodyToJoint(
        j, pin.Inertia(1.3, np.array([0.1, -0.2, 0.05]), np.diag([0.2, 0.3, 0.25])), pin.SE3.Identity()
    )
    return pm


@pytest.mark.parametrize(
    "joint",
    [
        lambda e: pin.JointModelRevoluteUnaligned(e),
        lambda e: pin.JointModelPrismaticUnaligned(e),
        lambda e: pin.JointModelHelicalUnaligned(e, 0.05),
        lambda e: pin.JointModelUniversal(_unit(np.cross(e, [0.0, 0.0, 1.0])), e),  # axes orthogonal
    ],
    ids=["revolute", "prismatic", "helical", "universal"],
)
def test_non_unit_axis_is_refused_and_a_unit_one_reproduces_pinocchio(joint):
    # Pinocchio uses an unaligned axis as given: with (2, 0, 0) its rnea differs from the unit axis's.
    pm = _one_joint_model(joint(np.array([2.0, 0.0, 0.0])))
    with pytest.raises(dp.ModelError, match=r"joint 'j' .*non-unit axis \[2\.0, 0\.0, 0\.0\]"):
        dp.from_pinocchio(pm)
    # An axis unit to rounding (as Pinocchio's URDF parser leaves it) loads and gives Pinocchio's numbers.
    e = np.array([0.3, -0.4, 0.5])
    pm = _one_joint_model(joint(e / np.linalg.norm(e)))
    m = dp.from_pinocchio(pm)
    q = random_configuration(m, np.random.default_rng(3))
    v, a = np.linspace(-1, 1, m.nv), np.linspace(0.5, -0.7, m.nv)
    assert_close(dp.inverse_dynamics(m, m.create_data(), q, v, a), pin.rnea(pm, pm.createData(), q, v, a))


def test_absurd_inertia_is_refused():
    # An inertia of 1e300 would turn into NaNs inside the recursions: the policy's 1e12 bound refuses it.
    pm = _one_joint_model(pin.JointModelRZ())
    pm.inertias[1] = pin.Inertia(1e300, np.zeros(3), np.eye(3))
    with pytest.raises(dp.ModelError, match=r"joint 'j': its mass 1e\+300 is not finite or has a magnitude beyond"):
        dp.from_pinocchio(pm)


def _cassie():
    import warnings

    from denoc_pin.loaders.robots import robots_dir

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        return dp.load_sdf(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf", "free-flyer")


@pytest.mark.parametrize("which", ["spatial_four_bar", "cassie", "welded"])
def test_constraint_models_round_trip_with_identical_dynamics(which):
    """Cuts → Pinocchio's RigidConstraintModels → cuts: the same loops, the same constrained dynamics; and
    Pinocchio's constraintDynamics on those models agrees with ours where the loops are independent."""
    if which == "cassie":
        model = _cassie()
    elif which == "welded":  # a 9-DOF chain's tip welded to the world (CONTACT_6D), its gear coupling left out
        from denoc_pin.loaders.edits import with_fields

        model = with_fields(dp.load_mjcf(ROOT / "tests" / "mjcf" / "chain_weld.xml"), couplings=())
    else:
        model = dp.models.spatial_four_bar()
    pm = dp.to_pinocchio(model)
    cms = dp.to_pinocchio_constraints(model, pm)
    assert [cm.name for cm in cms] == [lp.name for lp in model.loops]
    back = dp.from_pinocchio(pm, cms)
    assert [(c.loop.name, c.loop.type, c.body1, c.body2) for c in back.cuts] == [
        (c.loop.name, c.loop.type, c.body1, c.body2) for c in model.cuts
    ]
    rng = np.random.default_rng(4)
    q = dp.neutral(model) if which != "spatial_four_bar" else dp.assemble(model, np.r_[0.4, 0, 0.3, 0, 1, 0.8])
    if which == "welded":
        q = dp.neutral(model)
    J = dp.loop_jacobian(model, q)
    v = rng.uniform(-1, 1, model.nv)
    v -= np.linalg.pinv(J) @ (J @ v) if J.size else 0
    tau = rng.uniform(-1, 1, model.nv)
    a, lam = dp.constrained_forward_dynamics(model, model.create_data(), q, v, tau)
    a2, lam2 = dp.constrained_forward_dynamics(back, back.create_data(), q, v, tau)
    assert_close(a2, a, 1e-12)
    assert_close(lam2, lam, 1e-12)
    if which != "cassie":  # Cassie's loops are redundant: Pinocchio's iterations do not converge (docs/sdf.md)
        pd = pm.createData()
        cds = [cm.createData() for cm in cms]
        pin.initConstraintDynamics(pm, pd, cms, cds)
        a_pin = pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, pin.ProximalSettings(1e-14, 1e-12, 100))
        assert_close(a, a_pin, 1e-9)


def test_constraint_models_that_have_no_cut_equivalent_are_refused():
    rrr = dp.load_urdf(URDF_DIR / "rrr_3.urdf")
    with pytest.raises(dp.ModelError, match="revolute.*only spherical and fixed cuts"):
        dp.to_pinocchio_constraints(rrr)
    pm = dp.to_pinocchio(dp.models.spatial_four_bar())
    with pytest.raises(dp.ModelError, match="constraint_models\\[0\\] is a str"):
        dp.from_pinocchio(pm, ["ball"])
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, 3, pin.SE3.Identity(), 3, pin.SE3.Identity(),
                                  pin.ReferenceFrame.LOCAL)  # fmt: skip
    with pytest.raises(dp.ModelError, match="closes no loop"):
        dp.from_pinocchio(pm, [cm])
