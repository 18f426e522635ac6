"""neutral / integrate / difference / normalize against Pinocchio, on every joint kind."""

import numpy as np
import pinocchio as pin
import pytest

import denoc_pin as dp
from denoc_pin.core.joints import CONTINUOUS, FREE_FLYER, PLANAR, SPHERICAL
from denoc_pin.loaders.robots import example_robot_urdf


def mixed_pinocchio_model():
    """Every joint kind denoc_pin supports, in one tree with random placements."""
    pin.seed(0)
    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "ff")
    u = pm.addJoint(j, pin.JointModelUniversal(np.array([0.0, 0, 1]), np.array([1.0, 0, 0])), pin.SE3.Random(), "u")
    pm.addJoint(u, pin.JointModelSpherical(), pin.SE3.Random(), "s")
    p = pm.addJoint(j, pin.JointModelPlanar(), pin.SE3.Random(), "p")
    c = pm.addJoint(p, pin.JointModelRUBY(), pin.SE3.Random(), "c")
    x = pm.addJoint(c, pin.JointModelPrismaticUnaligned(np.array([0.6, 0.0, 0.8])), pin.SE3.Random(), "x")
    pm.addJoint(x, pin.JointModelRevoluteUnaligned(np.array([0.0, 0.6, 0.8])), pin.SE3.Random(), "r")
    for k in range(1, pm.njoints):
        pm.appendBodyToJoint(k, pin.Inertia.Random(), pin.SE3.Identity())
    return pm


@pytest.fixture(scope="module")
def mixed():
    pm = mixed_pinocchio_model()
    return dp.from_pinocchio(pm), pm


def test_neutral(mixed):
    model, pm = mixed
    np.testing.assert_array_equal(dp.neutral(model), pin.neutral(pm))


@pytest.mark.parametrize("scale", [1e-10, 1e-4, 1.0, 4.0])
def test_integrate_matches_pinocchio(mixed, scale):
    model, pm = mixed
    rng = np.random.default_rng(int(scale * 1e4) % 97)
    for _ in range(20):
        q = dp.random_configuration(model, rng)
        v = rng.standard_normal(model.nv) * scale
        dt = rng.uniform(0.01, 1.0)
        qi = dp.integrate(model, q, v, dt)
        # Compare on the manifold: quaternions q and -q are the same rotation.
        assert np.abs(pin.difference(pm, pin.integrate(pm, q, v * dt), qi)).max() < 1e-12
        for k in range(1, model.njoints):
            i, kind = model.idx_q[k], model.kinds[k]
            unit = {SPHERICAL: slice(i, i + 4), FREE_FLYER: slice(i + 3, i + 7), CONTINUOUS: slice(i, i + 2)}
            unit[PLANAR] = slice(i + 2, i + 4)
            if kind in unit:
                assert abs(np.linalg.norm(qi[unit[kind]]) - 1) < 1e-14


def test_difference_matches_pinocchio_and_inverts_integrate(mixed):
    model, pm = mixed
    rng = np.random.default_rng(5)
    for _ in range(50):
        q0, q1 = dp.random_configuration(model, rng), dp.random_configuration(model, rng)
        np.testing.assert_allclose(dp.difference(model, q0, q1), pin.difference(pm, q0, q1), atol=1e-10)
        v = rng.uniform(-1, 1, model.nv)
        np.testing.assert_allclose(dp.difference(model, q0, dp.integrate(model, q0, v, 0.5)), 0.5 * v, atol=1e-12)
    for scale in (1e-2, 3e-3, 1e-7, 0.0):  # small rotations: the series side of V(ω)⁻¹ (θ < 1e-2) and its edge
        q0 = dp.random_configuration(model, rng)
        v = rng.uniform(-1, 1, model.nv) * scale
        q1 = dp.integrate(model, q0, v)
        np.testing.assert_allclose(dp.difference(model, q0, q1), v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(dp.difference(model, q0, q1), pin.difference(pm, q0, q1), rtol=0, atol=1e-12)


def test_normalize_and_random_configuration(mixed):
    model, pm = mixed
    q = dp.random_configuration(model, 3) * 1.3
    expected = pin.normalize(pm, q)
    np.testing.assert_allclose(dp.normalize(model, q), expected, atol=1e-15)
    q = dp.random_configuration(model, 4)
    np.testing.assert_allclose(dp.normalize(model, q), q, atol=1e-15)


def test_integrate_checks_shapes(mixed):
    model, _ = mixed
    with pytest.raises(ValueError, match=r"v must have shape \(17,\)"):
        dp.integrate(model, dp.neutral(model), np.zeros(3), 0.1)
    with pytest.raises(ValueError, match=r"q1 has non-finite"):
        dp.difference(model, dp.neutral(model), np.full(model.nq, np.nan))


def test_random_configurations_in_one_call(mixed):
    """random_configuration(model, rng, n): n rows drawn at once, each a configuration Pinocchio takes as one
    (normalize leaves it unchanged: unit quaternions and (cos, sin) pairs), within the limits where there are any."""
    model, pm = mixed
    Q = dp.random_configuration(model, 5, n=400)
    assert Q.shape == (400, model.nq)
    for q in Q[::40]:
        np.testing.assert_allclose(pin.normalize(pm, q), q, atol=1e-15)
    assert len(np.unique(Q, axis=0)) == 400
    panda = dp.load_urdf(example_robot_urdf("panda"))
    Q = dp.random_configuration(panda, 6, n=2000)
    lo, hi = panda.lower_position_limit, panda.upper_position_limit
    assert (Q >= lo).all() and (Q <= hi).all()
    assert (Q.min(axis=0) < lo + 0.05 * (hi - lo)).all() and (Q.max(axis=0) > hi - 0.05 * (hi - lo)).all()
    for kind, s in [(k, slice(model.idx_q[j], model.idx_q[j] + model.nqs[j])) for j, k in enumerate(model.kinds)][1:]:
        if kind in (SPHERICAL, FREE_FLYER):  # unit quaternions, uniformly random: every sign of every entry
            quat = dp.random_configuration(model, 7, n=400)[:, s][:, -4:]
            assert (quat.min(axis=0) < -0.5).all() and (quat.max(axis=0) > 0.5).all()


def test_each_joint_kind_lives_on_pinocchios_lie_group():
    """Every kind's configuration space (``joints.GROUPS``) is the Lie group Pinocchio gives its joint: the same
    sizes and the same neutral element; and the loaders' type tables are the spellings of ``JOINTS``."""
    from denoc_pin.core import joints as jk
    from denoc_pin.core.lie_groups import neutral_q

    pin_groups = {jk.SO2: pin.liegroups.SO2(), jk.SO3: pin.liegroups.SO3(), jk.SE2: pin.liegroups.SE2(),
                  jk.SE3: pin.liegroups.SE3()}  # fmt: skip
    for code, kind in jk.JOINTS.items():
        if code == jk.BASE:
            continue
        ref = pin_groups.get(kind.group) or pin.liegroups.Rn(kind.nq)
        assert (kind.nq, kind.nv) == (ref.nq, ref.nv), kind.name
        np.testing.assert_array_equal(neutral_q(code), ref.neutral, err_msg=kind.name)
        assert jk.GROUP_OF[code] == kind.group
    from denoc_pin.loaders import mjcf, sdf, urdf

    assert sdf.SDF_JOINT_TYPES == {"revolute": jk.REVOLUTE, "continuous": jk.CONTINUOUS, "prismatic": jk.PRISMATIC,
                                   "ball": jk.SPHERICAL, "universal": jk.UNIVERSAL, "fixed": None,
                                   "gearbox": "gearbox"}  # fmt: skip
    assert mjcf.MJCF_JOINT_TYPES == {"hinge": jk.REVOLUTE, "slide": jk.PRISMATIC, "ball": jk.SPHERICAL,
                                     "free": jk.FREE_FLYER}  # fmt: skip
    assert urdf.SUPPORTED_JOINT_TYPES == {"revolute": jk.REVOLUTE, "continuous": jk.CONTINUOUS,
                                          "prismatic": jk.PRISMATIC, "fixed": None}  # fmt: skip
    assert jk.ROOT_JOINTS == {None: None, "free-flyer": jk.FREE_FLYER, "planar": jk.PLANAR}
    assert set(jk.ONE_DOF) == {jk.REVOLUTE, jk.CONTINUOUS, jk.PRISMATIC, jk.HELICAL}
