"""Frames and Jacobians driving an inverse-kinematics loop: panda's hand reaches a target pose by damped least
squares on the frame Jacobian, q ← q ⊕ ½ J⁺ e, e = log(M⁻¹ M*) the pose error in the hand's frame (the CLIK
iteration of Pinocchio's own inverse-kinematics example).

    python examples/panda_inverse_kinematics.py

Prints the error as it falls, then checks the reached placement with Pinocchio's forward kinematics.
"""

import warnings

import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

HAND = "panda_hand_tcp"


def main() -> dict:
    urdf = str(example_robot_urdf("panda"))  # the file installed by the example-robot-data package
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        model = dp.load_urdf(urdf)
    data = model.create_data()
    q = dp.neutral(model)
    target = dp.frame_placement(model, data, dp.random_configuration(model, 7), HAND)  # a reachable pose (4, 4)
    target_se3 = pin.SE3(target[:3, :3], target[:3, 3])
    hand = model.frame_id(HAND)
    for i in range(500):
        J = dp.frame_jacobian(model, data, q, hand, "local")  # (6, nv), rows [linear; angular], as log6's error
        M = dp.update_frame_placement(model, data, hand)  # the hand's placement at q, from the Jacobian's pass
        iMd = pin.SE3(M[:3, :3], M[:3, 3]).actInv(target_se3)  # the target seen from the hand
        error = pin.log6(iMd).vector  # [linear; angular], in the hand's frame
        if i % 10 == 0:
            print(f"iteration {i:3d}: |e| = {np.linalg.norm(error):.2e}")
        if np.linalg.norm(error) < 1e-9:
            break
        J = -pin.Jlog6(iMd.inverse()) @ J  # the error's Jacobian
        dq = -J.T @ np.linalg.solve(J @ J.T + 1e-8 * np.eye(6), error)  # damped least squares
        q = dp.integrate(model, q, dq, 0.5)  # half a step: q ⊕ 0.5 dq
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, q)
    reached = pd.oMf[pm.getFrameId(HAND)].homogeneous
    print(f"converged in {i} iterations; Pinocchio's placement of the reached q is {np.abs(reached - target).max():.1e}"
          " from the target")  # fmt: skip
    return {"iterations": i, "error": float(np.abs(reached - target).max())}


if __name__ == "__main__":
    main()
