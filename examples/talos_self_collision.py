"""A humanoid with self-collision on: talos (example-robot-data's URDF and collision meshes) dropped on the ground,
its legs and torso under joint PD, its arms, grippers and head limp, so that the arms fall against its body.

    python examples/talos_self_collision.py [--html FOLDER]

``dp.with_self_collision`` turns on the pairs of the robot's own links, less those its SRDF's
``<disable_collisions>`` leave out (adjacent links, pairs that never meet); each touches as the convex hull of its
mesh.  The SRDF also gives the start, ``half_sitting`` (read with Pinocchio's ``loadReferenceConfigurations``).
Prints which pairs of links touch at the end and the deepest overlap of any pair, then the numbers as one JSON line;
with --html, writes talos.html, which plays the drop with the contact points and their forces.
"""

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf, robots_dir

LIMP = ("arm_", "gripper_", "head_")  # joints left without torque


def scene(self_collision: bool = True) -> tuple[dp.Model, np.ndarray, dp.JointPD]:
    """(model, q0, pd): talos_reduced on a free flyer at the SRDF's half_sitting 3 cm above the ground; PD of
    1500 N m/rad and 15 N m s/rad on the legs and torso to that posture, none on the LIMP joints."""
    urdf, srdf = example_robot_urdf("talos_reduced"), robots_dir() / "talos_data" / "srdf" / "talos.srdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)  # the file's defects outside the dynamics, reported once
        model = dp.load_urdf(urdf, root_joint="free-flyer")
    if self_collision:
        model = dp.with_self_collision(model, srdf=srdf)
    reference = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(reference, str(srdf))
    q0 = reference.referenceConfigurations["half_sitting"].copy()  # the same joint order as ours
    q0[2] += 0.03
    kp, kd = np.zeros(model.nv), np.zeros(model.nv)
    for k in range(2, model.njoints):  # joint 1 is the free flyer: no motor drives it
        if not model.names[k].startswith(LIMP):
            kp[model.idx_v[k]], kd[model.idx_v[k]] = 1500.0, 15.0
    return model, q0, dp.JointPD(model, kp, kd, q0)


def main(html: Path | None = None, seconds: float = 1.0) -> dict:
    model, q0, pd = scene()
    traj = dp.simulate(model, q0, np.zeros(model.nv), seconds, 1e-3, tau=pd, ground=dp.Ground(friction=0.8),
                       progress=False)  # fmt: skip
    own = [(row, [i for i, pair in enumerate(row["collisions"]) if pair[0] != "ground"]) for row in traj.contacts[:-1]]
    touching = float(np.mean([bool(i) for _, i in own]))
    deepest = min((float(row["depths"][i].min()) for row, i in own if i), default=0.0)
    link = {c.name: c.link for c in model.collisions}
    last, i = own[-1]
    links = sorted({tuple(sorted(link[c] for c in last["collisions"][k])) for k in i})
    print(f"{len(model.excluded_collisions)} pairs left out by the SRDF; the robot's own links "
          f"touch in {touching:.0%} of the steps, the deepest {deepest * 1e3:.2f} mm; at the end: {links}")  # fmt: skip
    if html is not None:
        dp.Viewer(model, ground=traj.ground).save_html(html / "talos.html", traj=traj)
    return {"touching": touching, "deepest": deepest, "links": links, "model": model, "traj": traj}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="a folder to write the page in")
    out = main(parser.parse_args().html)
    print(json.dumps({k: out[k] for k in ("touching", "deepest", "links")}))
