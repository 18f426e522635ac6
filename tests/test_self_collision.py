"""A humanoid with self-collision on: example-robot-data's talos (its collision meshes, the SRDF's pairs left out)
dropped on the ground with its arms limp, so that they fall against its body; coal, on the same hulls, is the
referee of every pair's distance."""

import warnings

import coal
import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.contact.detection import PairDetector, coal_geometry
from denoc_pin.loaders.robots import example_robot_urdf, robots_dir

SRDF = "talos_data/srdf/talos.srdf"
LIMP = ("arm_", "gripper_", "head_")


def talos_drop(self_collision: bool, seconds: float = 1.0):
    """(model, trajectory): talos_reduced on a free flyer at the SRDF's half_sitting 3 cm above the ground, its legs
    and torso under joint PD (1500 N m/rad, 15 N m s/rad), its arms, grippers and head limp, at 1 ms."""
    urdf, srdf = example_robot_urdf("talos_reduced"), robots_dir() / SRDF
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        model = dp.load_urdf(urdf, root_joint="free-flyer")
        if self_collision:
            model = dp.with_self_collision(model, srdf=srdf)
    pm = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(pm, str(srdf))
    assert list(pm.names[1:]) == list(model.names[1:])
    q0 = pm.referenceConfigurations["half_sitting"].copy()
    q0[2] += 0.03
    kp, kd = np.full(model.nv, 1500.0), np.full(model.nv, 15.0)
    for k in range(1, model.njoints):
        if model.names[k].startswith(LIMP) or k == 1:
            kp[model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = 0.0
            kd[model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = 0.0
    pd = dp.JointPD(model, kp, kd, q0)
    traj = dp.simulate(model, q0, np.zeros(model.nv), seconds, 1e-3, tau=pd, ground=dp.Ground(friction=0.8),
                       progress=False)  # fmt: skip
    return model, traj


def deepest_by_coal(model, pairs, qs) -> tuple[float, tuple]:
    """The smallest signed distance coal finds between the pairs' hulls over the configurations qs, and its pair."""
    data = model.create_data()
    shapes = {i: coal_geometry(c.shape) for i, c in enumerate(model.collisions)}
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    creq = coal.CollisionRequest()
    worst, where = np.inf, None
    for q in qs:
        dp.forward_kinematics(model, data, q)
        X = np.asarray(data.oMi)
        T = {}
        for i, c in enumerate(model.collisions):
            R = X[c.body, :3, :3] @ c.rotation
            T[i] = coal.Transform3s(R, X[c.body, :3, :3] @ c.translation + X[c.body, :3, 3])
        for i, j in pairs:
            res.clear()
            d = coal.distance(shapes[i], T[i], shapes[j], T[j], req, res)
            if d <= 0:
                cres = coal.CollisionResult()
                coal.collide(shapes[i], T[i], shapes[j], T[j], creq, cres)
                d = cres.getContact(0).penetration_depth if cres.isCollision() else 0.0
            if d < worst:
                worst, where = d, (model.collisions[i].name, model.collisions[j].name)
    return worst, where


def test_a_humanoid_with_self_collision_keeps_its_links_apart():
    """With self-collision on, the limp arms come to rest against the torso: pairs of its own links touch for most of
    the second, and coal finds no pair of hulls (883 pairs, every 5th step) more than 2 mm into each other.  The same
    drop without self-collision lets the arms sink into the body (coal: more than 2 cm), so the pairs are what holds
    them."""
    model, traj = talos_drop(True)
    pairs = PairDetector(model, 1e-3).compiled
    assert len(pairs) == 883
    touching = [any(c[0] != "ground" for c in row["collisions"]) for row in traj.contacts[:-1]]
    assert np.mean(touching) > 0.5, np.mean(touching)
    assert all(row["converged"] for row in traj.contacts[:-1])
    assert np.isfinite(traj.q).all() and abs(traj.q[-1, 2] - traj.q[0, 2]) < 0.1  # it stands
    worst, where = deepest_by_coal(model, pairs, traj.q[::5])
    assert worst > -2e-3, (worst, where)

    bare, loose = talos_drop(False)
    worst, where = deepest_by_coal(bare, pairs, loose.q[::20])
    assert worst < -2e-2, (worst, where)
