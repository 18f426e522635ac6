"""Pinocchio 4's reduced mimic models (``load_urdf(path, mimic="reduce")``) against ``buildModelFromUrdf(path,
mimic=True)``: layouts, dynamics, kinematics, configuration space; forward dynamics and the derivatives, which
Pinocchio 4.1 refuses on a mimic model, against dense solves of its own matrices and central differences."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_tree_urdf

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf


def _random_mimic_urdf(seed: int) -> tuple[str, list[tuple[str, str, float, float]]]:
    """A random tree (conftest's) with two or three of its revolute/prismatic joints made mimics of others, with
    random multipliers and offsets: (URDF text, the rules)."""
    rng = np.random.default_rng(1000 + seed)
    text = random_tree_urdf(seed, n_links=12)
    root = ET.fromstring(text)
    order = list(pin.buildModelFromXML(text).names)  # Pinocchio's parser needs a reference before its mimic
    joints = sorted((j for j in root.iter("joint") if j.get("type") in ("revolute", "prismatic")),
                    key=lambda j: order.index(j.get("name")))  # fmt: skip
    n = min(len(joints) // 2, int(rng.integers(2, 4)))
    picked = sorted(rng.choice(len(joints), size=2 * n, replace=False))
    references, mimics = [joints[i] for i in picked[:n]], [joints[i] for i in picked[n:]]
    rng.shuffle(references)
    rules = []
    for j, r in zip(mimics, references, strict=True):
        m, o = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 2.0)), float(rng.uniform(-0.2, 0.2))
        ET.SubElement(j, "mimic", joint=r.get("name"), multiplier=repr(m), offset=repr(o))
        rules.append((j.get("name"), r.get("name"), m, o))
    return ET.tostring(root, encoding="unicode"), rules


def _pair(path) -> tuple[dp.MimicModel, pin.Model, str]:
    return dp.load_urdf(path, mimic="reduce"), pin.buildModelFromUrdf(str(path), mimic=True), str(path)


@pytest.fixture(params=["panda", "baxter", "random0", "random1", "random2"])
def mimic_pair(request, tmp_path):
    if request.param.startswith("random"):
        text, _ = _random_mimic_urdf(int(request.param[-1]))
        path = tmp_path / "mimic.urdf"
        path.write_text(text)
    else:
        path = example_robot_urdf(request.param)
    return _pair(path)


def test_the_layout_is_pinocchios(mimic_pair):
    model, pm, _ = mimic_pair
    assert (model.nq, model.nv, model.njoints) == (pm.nq, pm.nv, pm.njoints)
    assert list(model.names) == list(pm.names)
    for mine, theirs in ((model.idx_q, pm.idx_qs), (model.idx_v, pm.idx_vs), (model.nqs, pm.nqs),
                         (model.nvs, pm.nvs)):  # fmt: skip
        assert list(mine) == list(theirs)
    assert [f.name for f in model.frames] == [f.name for f in pm.frames]
    for mine, theirs in ((model.lower_position_limit, pm.lowerPositionLimit), (model.upper_position_limit,
                         pm.upperPositionLimit), (model.velocity_limit, pm.velocityLimit), (model.effort_limit,
                         pm.effortLimit)):  # fmt: skip
        assert np.array_equal(mine, theirs)


def test_dynamics_and_kinematics_equal_pinocchios(mimic_pair):
    model, pm, _ = mimic_pair
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = pin.randomConfiguration(pm)
        v, a = rng.normal(size=(2, model.nv))
        tau = pin.rnea(pm, pd, q, v, a)
        assert_close(dp.inverse_dynamics(model, data, q, v, a), tau, what="rnea")
        assert_close(dp.nonlinear_effects(model, data, q, v), pin.nonLinearEffects(pm, pd, q, v), what="nle")
        # The GIM's columns from Pinocchio's rnea (linear in q̈); its crba on mimic models depends on the Data's
        # previous contents and is off on some trees (docs/from-pinocchio.md), so it referees only with a fresh Data
        # on the robots, where it agrees.
        zero = np.zeros(model.nv)
        h = pin.rnea(pm, pd, q, zero, zero)
        M = np.array([pin.rnea(pm, pd, q, zero, e) - h for e in np.eye(model.nv)]).T
        assert_close(dp.gim(model, data, q), M, what="GIM")
        if not model.name.startswith("random"):
            C = pin.crba(pm, pm.createData(), q)
            assert_close(dp.gim(model, data, q), np.triu(C) + np.triu(C, 1).T, what="crba")
        # Pinocchio's aba and computeMinverse refuse mimic models: its own matrices, solved, are the referee.
        assert_close(dp.forward_dynamics(model, data, q, v, tau), a, what="fd")
        assert_close(dp.gim_inverse(model, data, q), np.linalg.inv(M), what="Minv")
        pin.forwardKinematics(pm, pd, q, v, a)
        pin.updateFramePlacements(pm, pd)
        dp.forward_kinematics(model, data, q, v, a)
        for i in range(pm.njoints):
            assert_close(data.oMi[i], pd.oMi[i].homogeneous, what=f"oMi {i}")
            assert_close(data.v[i], pd.v[i].vector, what=f"v {i}")
        for f in range(pm.nframes):
            assert_close(dp.frame_placement(model, data, q, f), pd.oMf[f].homogeneous, what=f"oMf {f}")
        assert_close(dp.frame_placements(model, data, q), np.array([x.homogeneous for x in pd.oMf]))
        pin.computeJointJacobians(pm, pd, q)
        assert_close(dp.joint_jacobians(model, data, q), pd.J, what="data.J")
        for f in range(1, pm.nframes, 3):
            for ref, pref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned",
                                                                           pin.LOCAL_WORLD_ALIGNED)):  # fmt: skip
                assert_close(dp.frame_jacobian(model, data, q, f, ref), pin.getFrameJacobian(pm, pd, f, pref))
                assert_close(dp.frame_velocity(model, data, q, v, f, ref),
                             pin.getFrameVelocity(pm, pd, f, pref).vector)  # fmt: skip
        for j in range(1, pm.njoints):
            assert_close(dp.joint_jacobian(model, data, q, j), pin.getJointJacobian(pm, pd, j, pin.LOCAL))
        for f in range(1, pm.nframes, 5):
            pin.forwardKinematics(pm, pd, q, v, a)
            pin.updateFramePlacements(pm, pd)
            assert_close(dp.frame_acceleration(model, data, q, v, a, f, "world"),
                         pin.getFrameAcceleration(pm, pd, f, pin.WORLD).vector)  # fmt: skip
            # Pinocchio 4.1's getFrameJacobianTimeVariation is off on mimic models (by 1.25 on baxter's fingers and
            # the joints after them): central differences of its own frame Jacobian are the referee.
            J = [pin.computeFrameJacobian(pm, pd, pin.integrate(pm, q, s * 1e-6 * v), f, pin.LOCAL) for s in (1, -1)]
            assert_close(dp.frame_jacobian_time_variation(model, data, q, v, f, "local"), (J[0] - J[1]) / 2e-6, 1e-7)
        pin.computeCentroidalMomentum(pm, pd, q, v)
        assert_close(dp.centroidal_momentum(model, data, q, v), pd.hg.vector)
        assert_close(dp.center_of_mass(model, data, q), pin.centerOfMass(pm, pd, q))
        assert_close(dp.com_jacobian(model, data, q), pin.jacobianCenterOfMass(pm, pd, q))
        assert_close(dp.centroidal_map(model, data, q), pin.computeCentroidalMap(pm, pd, q))


def test_configuration_space_equals_pinocchios(mimic_pair):
    model, pm, _ = mimic_pair
    rng = np.random.default_rng(1)
    assert_close(dp.neutral(model), pin.neutral(pm), 0.0)
    q0, q1 = pin.randomConfiguration(pm), pin.randomConfiguration(pm)
    v = rng.normal(size=model.nv)
    assert_close(dp.integrate(model, q0, v), pin.integrate(pm, q0, v))
    assert_close(dp.difference(model, q0, q1), pin.difference(pm, q0, q1))
    assert_close(dp.normalize(model, q0), pin.normalize(pm, q0))
    Q = dp.random_configuration(model, 3, n=50)
    assert Q.shape == (50, model.nq)
    assert (Q >= pm.lowerPositionLimit - 1e-12).all() and (Q <= pm.upperPositionLimit + 1e-12).all()


def test_batches_equal_one_state_at_a_time(mimic_pair):
    model, pm, _ = mimic_pair
    data = model.create_data()
    rng = np.random.default_rng(2)
    Q = np.array([pin.randomConfiguration(pm) for _ in range(4)])
    V, A = rng.normal(size=(2, 4, model.nv))
    T = dp.inverse_dynamics(model, data, Q, V, A)
    assert T.shape == (4, model.nv)
    for i in range(4):
        assert_close(T[i], dp.inverse_dynamics(model, data, Q[i], V[i], A[i]))
    assert_close(dp.forward_dynamics(model, data, Q, V, T), A)
    dq, _, _ = dp.inverse_dynamics_derivatives(model, data, Q, V, A)
    assert dq.shape == (4, model.nv, model.nv)
    assert_close(dq[2], dp.inverse_dynamics_derivatives(model, data, Q[2], V[2], A[2])[0])


def _mimic_G(model: dp.MimicModel, pm_tree: pin.Model) -> np.ndarray:
    """q̇_tree = G q̇, written from the mimic rules alone (the test's own map, not the model's)."""
    G = np.zeros((pm_tree.nv, model.nv))
    for k in range(1, pm_tree.njoints):
        name = pm_tree.names[k]
        rule = [r for r in model.mimics if r[0] == name]
        ref, m = (rule[0][1], rule[0][2]) if rule else (name, 1.0)
        G[pm_tree.idx_vs[k], model.idx_v[model.joint_id(ref)]] = m
    return G


def test_derivatives_against_pinocchios_tree_and_central_differences(mimic_pair):
    """Pinocchio 4.1 refuses computeRNEADerivatives on a mimic model: the referees are its derivatives on the
    unreduced tree, mapped by the rules' G, and central differences of its own mimic rnea."""
    model, pm, path = mimic_pair
    tree = pin.buildModelFromUrdf(path)
    data, pd, td = model.create_data(), pm.createData(), tree.createData()
    rng = np.random.default_rng(3)
    q = pin.randomConfiguration(pm)
    v, a = rng.normal(size=(2, model.nv))
    G = _mimic_G(model, tree)
    dq, dv, da = dp.inverse_dynamics_derivatives(model, data, q, v, a)
    pin.computeRNEADerivatives(tree, td, model.expand_q(q), G @ v, G @ a)
    for mine, theirs in ((dq, td.dtau_dq), (dv, td.dtau_dv), (da, np.triu(td.M) + np.triu(td.M, 1).T)):
        assert_close(mine, G.T @ theirs @ G)
    h, E = 1e-6, np.eye(model.nv)
    central = np.array([pin.rnea(pm, pd, pin.integrate(pm, q, h * e), v, a) - pin.rnea(pm, pd, pin.integrate(pm, q,
                        -h * e), v, a) for e in E]).T / (2 * h)  # fmt: skip
    assert_close(dq, central, 1e-6)
    tau = pin.rnea(pm, pd, q, v, a)
    aq, av, at = dp.forward_dynamics_derivatives(model, data, q, v, tau)
    M = G.T @ (np.triu(td.M) + np.triu(td.M, 1).T) @ G
    assert_close(at, np.linalg.inv(M))
    assert_close(-M @ aq, G.T @ td.dtau_dq @ G)  # at q̈ = a, τ(q, v, q̈) = tau: ∂q̈/∂q = −M⁻¹ ∂τ/∂q
    assert_close(-M @ av, G.T @ td.dtau_dv @ G)


def test_a_mimic_of_a_mimic_follows_the_chain(tmp_path):
    text, _ = _random_mimic_urdf(5)
    root = ET.fromstring(text)
    free = [j for j in root.iter("joint") if j.get("type") in ("revolute", "prismatic") and j.find("mimic") is None]
    a, b, c = free[:3]
    ET.SubElement(a, "mimic", joint=b.get("name"), multiplier="2.0", offset="0.1")
    ET.SubElement(b, "mimic", joint=c.get("name"), multiplier="-0.5", offset="0.3")
    chained = tmp_path / "chained.urdf"
    chained.write_text(ET.tostring(root, encoding="unicode"))
    a.remove(a.find("mimic"))  # θ_a = 2 (−0.5 θ_c + 0.3) + 0.1 = −θ_c + 0.7, written directly
    ET.SubElement(a, "mimic", joint=c.get("name"), multiplier="-1.0", offset="0.7")
    flat = tmp_path / "flat.urdf"
    flat.write_text(ET.tostring(root, encoding="unicode"))
    m1, m2 = dp.load_urdf(chained, mimic="reduce"), dp.load_urdf(flat, mimic="reduce")
    assert (a.get("name"), c.get("name"), -1.0, pytest.approx(0.7)) in [tuple(r) for r in m1.mimics]
    q = dp.random_configuration(m1, 0)
    assert_close(m1.expand_q(q), m2.expand_q(q), 1e-15)
    v = np.random.default_rng(0).normal(size=m1.nv)
    assert_close(dp.inverse_dynamics(m1, m1.create_data(), q, v, v), dp.inverse_dynamics(m2, m2.create_data(), q, v, v))


def test_what_a_mimic_model_refuses_names_what_takes_it():
    model = dp.load_urdf(example_robot_urdf("panda"), mimic="reduce")
    data = model.create_data()
    q, v = dp.neutral(model), np.zeros(model.nv)
    with pytest.raises(dp.ModelError, match="reduced mimic model.*inverse_dynamics, .*mimic=True"):
        dp.energy(model, data, q, v)
    with pytest.raises(AttributeError, match="has no 'mb'.*forward_dynamics"):
        _ = model.mb
    with pytest.raises(ValueError, match=r"q must have shape \(8,\).*got \(9,\)"):
        dp.inverse_dynamics(model, data, np.zeros(9), v, v)
    with pytest.raises(ValueError, match="mimic must be False, True"):
        dp.load_urdf(example_robot_urdf("panda"), mimic="yes")
    with pytest.raises(AttributeError):
        model.nq = 3


def test_forward_dynamics_under_a_users_constraints_and_pickling():
    """pin.forwardDynamics(model, data, q, v, tau, J, γ) refuses mimic models: the referee is the dense KKT system
    on the GIM from Pinocchio's rnea columns."""
    import pickle

    path = example_robot_urdf("baxter")
    model, pm = dp.load_urdf(path, mimic="reduce"), pin.buildModelFromUrdf(str(path), mimic=True)
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(4)
    q = pin.randomConfiguration(pm)
    v, tau = rng.normal(size=(2, model.nv))
    J, gamma = rng.normal(size=(3, model.nv)), rng.normal(size=3)
    zero = np.zeros(model.nv)
    h = pin.rnea(pm, pd, q, v, zero)
    M = np.array([pin.rnea(pm, pd, q, zero, e) for e in np.eye(model.nv)]).T - pin.rnea(pm, pd, q, zero, zero)[:, None]
    kkt = np.block([[M, -J.T], [J, np.zeros((3, 3))]])
    x = np.linalg.solve(kkt, np.r_[tau - h, -gamma])
    a, lam = dp.forward_dynamics(model, data, q, v, tau, constraint_jacobian=J, constraint_drift=gamma)
    assert_close(a, x[: model.nv])
    assert_close(lam, x[model.nv :])
    again = pickle.loads(pickle.dumps(model))
    assert again.mimics == model.mimics and again.nq == model.nq
    assert_close(
        dp.inverse_dynamics(again, again.create_data(), q, v, tau), dp.inverse_dynamics(model, data, q, v, tau)
    )


def test_from_pinocchio_reads_a_mimic_model_into_the_same_layout():
    path = example_robot_urdf("baxter")
    pm = pin.buildModelFromUrdf(str(path), mimic=True)
    model, loaded = dp.from_pinocchio(pm), dp.load_urdf(path, mimic="reduce")
    assert isinstance(model, dp.MimicModel) and model.mimics == loaded.mimics
    assert (model.nq, model.nv, list(model.idx_q)) == (pm.nq, pm.nv, list(pm.idx_qs))
    for mine, theirs in ((model.lower_position_limit, pm.lowerPositionLimit), (model.effort_limit, pm.effortLimit)):
        assert np.array_equal(mine, theirs)
    pd, data = pm.createData(), model.create_data()
    rng = np.random.default_rng(5)
    q = pin.randomConfiguration(pm)
    v, a = rng.normal(size=(2, model.nv))
    assert_close(dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a))
    pin.computeJointJacobians(pm, pd, q)
    assert_close(dp.joint_jacobians(model, data, q), pd.J)
