"""Load a standard robot (example-robot-data's panda) and check denoc_pin against Pinocchio on it: inverse and
forward dynamics, the generalized inertia matrix and its inverse, a frame's placement and Jacobian, at random states.

    python examples/validate_robot.py [ROBOT]

ROBOT is an example-robot-data name (panda, ur5, talos_left_arm, …).  Prints the largest relative error of each.
"""

import sys
import warnings

import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf


def main(name: str = "panda") -> dict:
    urdf = str(example_robot_urdf(name))  # the file installed by the example-robot-data package
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # the file's defects that leave the dynamics untouched
        model = dp.load_urdf(urdf)  # the same joint order and q/v layout as pin.buildModelFromUrdf
    pm = pin.buildModelFromUrdf(urdf)
    data, pd = model.create_data(), pm.createData()
    frame = model.frames[-1].name  # the last frame of the file (panda: its hand's TCP)
    f = pm.getFrameId(frame)
    worst = dict.fromkeys(["rnea", "aba", "crba", "computeMinverse", "frame placement", "frame Jacobian"], 0.0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q = dp.random_configuration(model, rng)
        v, a = rng.uniform(-1, 1, (2, model.nv))
        pairs = {
            "rnea": (dp.inverse_dynamics(model, data, q, v, a), pin.rnea(pm, pd, q, v, a)),
            "aba": (dp.forward_dynamics(model, data, q, v, a), pin.aba(pm, pd, q, v, a)),
            "crba": (dp.gim(model, data, q), pin.crba(pm, pd, q)),
            "computeMinverse": (dp.gim_inverse(model, data, q), pin.computeMinverse(pm, pd, q)),
        }
        pin.framesForwardKinematics(pm, pd, q)
        pairs["frame placement"] = (dp.frame_placement(model, data, q, frame), pd.oMf[f].homogeneous)
        pairs["frame Jacobian"] = (dp.frame_jacobian(model, data, q, frame, "local_world_aligned"),
                                   pin.computeFrameJacobian(pm, pd, q, f, pin.LOCAL_WORLD_ALIGNED))  # fmt: skip
        for key, (ours, theirs) in pairs.items():
            theirs = np.triu(theirs) + np.triu(theirs, 1).T if key == "crba" else theirs  # crba fills the upper half
            worst[key] = max(worst[key], float(np.abs(ours - theirs).max() / max(np.abs(theirs).max(), 1e-300)))
    print(f"{name}: nq = {model.nq}, nv = {model.nv}, {len(model.modules)} kinematic modules; frame {frame!r}")
    for key, error in worst.items():
        print(f"  {key:<16} largest relative error {error:.1e}")
    return worst


if __name__ == "__main__":
    main(*sys.argv[1:2])
