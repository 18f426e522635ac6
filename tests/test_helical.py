"""The helical joint (Pinocchio's JointModelHX/HY/HZ and HelicalUnaligned): rotation θ about an axis e with
translation pitch·θ along it.  Added through core/joints.py and the spelling tables only; checked like every
other kind against Pinocchio (every algorithm, the configuration space, both bridges) and against a closed form."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import add_random_body, assert_close

import denoc_pin as dp
from denoc_pin.core.joints import HELICAL
from denoc_pin.tools.validate import compare_with_pinocchio

OTHERS = ["revolute", "continuous", "prismatic", "spherical", "universal", "planar", "fixed"]


def helical_tree(seed: int) -> dp.Model:
    """A random depth-first tree in which about half the joints are helical, the rest of every other kind."""
    rng = np.random.default_rng(seed)
    b = dp.ModelBuilder(f"helical{seed}")
    path = [0]
    for i in range(int(rng.integers(3, 9))):
        kind = "helical" if i == 0 or rng.random() < 0.5 else str(rng.choice(OTHERS))
        if len(path) > 1 and rng.random() < 0.4:
            del path[int(rng.integers(1, len(path))) :]
        pitch = float(rng.uniform(-0.3, 0.3)) if kind == "helical" else None
        k = add_random_body(b, rng, path[-1], kind, pitch)
        if kind != "fixed":
            path.append(k)
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_helical_trees_match_their_pinocchio_twin(seed):
    """Every algorithm (ID with and without fext, FD, GIM, GIM⁻¹, h, UDUᵀ, the explicit N, M matrices) against
    Pinocchio on the model's twin made by to_pinocchio, at relative error ≤ 1e-9."""
    model = helical_tree(seed)
    assert HELICAL in model.kinds
    pm = dp.to_pinocchio(model)
    assert {pm.joints[int(k)].shortname() for k in np.flatnonzero(model.kinds == HELICAL)} <= {
        "JointModelHX", "JointModelHY", "JointModelHZ", "JointModelHelicalUnaligned",
    }  # fmt: skip
    checks = compare_with_pinocchio(model, pm, samples=3, seed=seed)
    # 11 dynamics rows, 9 derivative rows (and, with a universal joint, Pinocchio's derivatives as an info row:
    # judged against central differences) and 19 kinematics rows, of which the four time variations only without a
    # universal joint
    assert len(checks) == (36 if dp.core.joints.UNIVERSAL in model.kinds else 39)
    failed = [(c.algorithm, c.max_rel) for c in checks if not c.passed]
    assert not failed, failed


def _pinocchio_helical_chain() -> pin.Model:
    pm = pin.Model()
    rng = np.random.default_rng(7)
    e = np.array([0.3, -0.4, 0.5]) / np.linalg.norm([0.3, -0.4, 0.5])
    joints = [pin.JointModelHX(0.05), pin.JointModelHelicalUnaligned(e, -0.12), pin.JointModelHY(0.2),
              pin.JointModelRY(), pin.JointModelHZ(-0.07)]  # fmt: skip
    parent = 0
    for i, j in enumerate(joints):
        parent = pm.addJoint(
            parent, j, pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3) * 0.2), f"j{i}"
        )
        pm.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    return pm


def test_from_pinocchio_reads_axis_and_pitch():
    pm = _pinocchio_helical_chain()
    model = dp.from_pinocchio(pm)
    assert list(model.kinds[1:]) == [HELICAL, HELICAL, HELICAL, 1, HELICAL]
    np.testing.assert_allclose(model.pitches, [0.0, 0.05, -0.12, 0.2, 0.0, -0.07], atol=0)
    np.testing.assert_allclose(model.axes[1], [1, 0, 0]) and np.testing.assert_allclose(model.axes[3], [0, 1, 0])
    np.testing.assert_allclose(model.axes[2], pm.joints[2].extract().axis, atol=1e-15)
    failed = [(c.algorithm, c.max_rel) for c in compare_with_pinocchio(model, pm, samples=4) if not c.passed]
    assert not failed, failed
    back = dp.to_pinocchio(model)  # and back: the same joints
    assert [j.shortname() for j in back.joints] == [j.shortname() for j in pm.joints]
    assert [float(back.joints[k].extract().pitch) for k in (1, 2, 3, 5)] == [0.05, -0.12, 0.2, -0.07]


def test_configuration_space_matches_pinocchio():
    pm = _pinocchio_helical_chain()
    model = dp.from_pinocchio(pm)
    rng = np.random.default_rng(3)
    q0, q1 = dp.random_configuration(model, rng), dp.random_configuration(model, rng)
    v = rng.uniform(-1, 1, model.nv)
    np.testing.assert_array_equal(dp.neutral(model), pin.neutral(pm))
    assert_close(dp.integrate(model, q0, v, 0.3), pin.integrate(pm, q0, 0.3 * v))
    assert_close(dp.difference(model, q0, q1), pin.difference(pm, q0, q1))
    assert_close(dp.normalize(model, q0), q0)


def test_single_screw_closed_form():
    """One helical joint about the vertical z, the body's centre of mass on the axis: a screw of pitch p lifts
    the mass by p θ, so T = ½ (J + m p²) θ̇² and V = m g p θ give τ = (J + m p²) θ̈ + m g p, with no velocity
    term; and the world twist of the body is (θ̇ e, p θ̇ e)."""
    m, J, p, g = 1.7, 0.013, 0.04, 9.81
    b = dp.ModelBuilder("screw")
    b.add_body(0, joint="helical", axis=(0, 0, 1), pitch=p, mass=m, com=(0, 0, 0.1), inertia=np.diag([0.2, 0.3, J]))
    model = b.build()
    data = model.create_data()
    for th, thd, thdd in [(0.3, 0.0, 0.0), (-1.1, 2.0, 0.5), (4.0, -3.0, -1.5)]:
        tau = dp.inverse_dynamics(model, data, np.array([th]), np.array([thd]), np.array([thdd]))
        assert_close(tau, [(J + m * p * p) * thdd + m * g * p], what="τ")
        assert_close(dp.gim(model, data, np.array([th])), [[J + m * p * p]], what="GIM")
        mats = dp.denoc_matrices(model, np.array([th]), np.array([thd]))
        assert_close(mats.t, [0, 0, thd, 0, 0, p * thd], what="world twist")


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"joint": "helical"}, r"a helical joint takes pitch=…"),
        ({"joint": "revolute", "pitch": 0.1}, r"and only a helical joint does; got joint 'revolute' with pitch=0.1"),
        ({"joint": "helical", "pitch": float("nan")}, r"joint 'joint_1' has a non-finite pitch"),
        ({"joint": "helical", "pitch": 0.1, "axis": (0, 0, 0)}, r"joint 'joint_1' has a zero or non-finite axis"),
    ],
)
def test_builder_errors(kwargs, pattern):
    b = dp.ModelBuilder()
    with pytest.raises(dp.ModelError, match=pattern):
        b.add_body(0, mass=1.0, inertia=np.eye(3) * 0.01, **kwargs)
        b.build()
