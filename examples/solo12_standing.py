"""solo12 standing on its four feet: the joint torques and ground forces that hold it still, a port of Pinocchio's
static contact dynamics example.

Each foot is held where it stands by ``dp.contact_3d`` (Pinocchio's CONTACT_3D to the world); the closed-loop inverse
dynamics then gives the twelve motor torques and the feet's reactions together, the minimum-norm pair (the four feet
over-determine the forces).  Pinocchio's route, run beside it: the generalized gravity g(q) balanced by the motors and
the contact forces, Sᵀ τ + J_cᵀ f = g, solved by least squares with the feet's Jacobians.

    python examples/solo12_standing.py
"""

import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def main() -> dict:
    urdf = str(example_robot_urdf("solo12"))
    robot = dp.load_urdf(urdf, "free-flyer")
    q = dp.neutral(robot)
    q[2] = 0.24  # the base 24 cm up, legs bent: hip 0, thigh 0.8 rad, knee −1.6 rad
    q[7:] = np.tile([0.0, 0.8, -1.6], 4)
    standing = robot
    for foot in FEET:
        standing = dp.with_loop(standing, dp.contact_3d(robot, foot, q))
    legs = list(robot.names[2:])  # the twelve motors; the free-flyer is passive
    zero = np.zeros(robot.nv)
    tau, lam = dp.constrained_inverse_dynamics(standing, standing.create_data(), q, zero, zero, actuated=legs)
    print("motor torques [N m]:", np.round(tau[6:], 3))
    data = standing.create_data()
    dp.forward_kinematics(standing, data, q)
    forces = []
    for i, foot in enumerate(FEET):  # λ: each foot's push on the ground, in the foot's frame; the ground pushes back
        R = data.oMf[standing.frame_id(foot)][:3, :3]
        forces.append(-R @ lam[3 * i : 3 * i + 3])
        print(f"{foot}: ground force {np.round(forces[-1], 3)} N (world)")
    total = np.sum(forces, axis=0)
    weight = sum(robot.masses) * 9.81
    print(f"total vertical force {total[2]:.4f} N against a weight of {weight:.4f} N")

    # Pinocchio: Sᵀ τ + J_cᵀ f = g(q), minimum norm
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pd = pm.createData()
    g = pin.computeGeneralizedGravity(pm, pd, q)
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    Jc = np.vstack([pin.getFrameJacobian(pm, pd, pm.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3] for f in FEET])
    S = np.hstack([np.zeros((12, 6)), np.eye(12)])
    tau_f = np.linalg.pinv(np.hstack([S.T, Jc.T])) @ g
    pin_tau, pin_f = tau_f[:12], tau_f[12:].reshape(4, 3)
    tau_gap = float(np.abs(tau[6:] - pin_tau).max() / np.abs(pin_tau).max())
    force_gap = float(np.abs(np.array(forces) - pin_f).max() / np.abs(pin_f).max())
    print(f"against Pinocchio: torques {tau_gap:.1e}, forces {force_gap:.1e} (relative)")
    return {"tau_gap": tau_gap, "force_gap": force_gap, "weight_gap": float(abs(total[2] - weight) / weight)}


if __name__ == "__main__":
    main()
