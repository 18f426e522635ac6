"""Quadrupeds on the ground: solo12 and go2 (example-robot-data, free-flyer, their feet's collision meshes) dropped from
5 cm under joint PD, settling into their crouch and standing still.

    python examples/legged_standing.py [--html FOLDER] [--seconds 5]

Prints, per robot, what a reader checks once it has settled (1 s): how much the base height moves over the next
seconds, how far a foot slides, the deepest penetration, the share of the contact solves that converged and their
largest residual, and the weight the feet carry; then the numbers as one JSON line.  With --html, writes each run as a
page (solo12.html, go2.html) that plays it with the ground, the contact points and their forces.
"""

import argparse
import json
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf

CROUCH = {"solo12": [0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6], "go2": [0, 0.8, -1.5] * 4}
GAINS = {"solo12": (100.0, 0.5), "go2": (300.0, 4.0)}  # K_p (N m/rad), K_d (N m s/rad)
FEET = {"solo12": ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"), "go2": ("FL_foot", "FR_foot", "RL_foot", "RR_foot")}
SETTLE = 1.0  # s


def scene(name: str, drop: float = 0.05):
    """(model, q0, pd, ground): the robot in its crouch with its lowest point ``drop`` above the ground, the PD that
    holds the crouch, and ground of friction 0.9."""
    model = dp.load_urdf(example_robot_urdf(name), root_joint="free-flyer")
    q0 = dp.neutral(model)
    q0[7:] = CROUCH[name]
    data = model.create_data()
    dp.forward_kinematics(model, data, q0)
    low = min(float((data.oR[c.body] @ (c.rotation @ c.shape.vertices.T + c.translation[:, None]))[2].min()
                    + data.op[c.body][2]) for c in model.collisions)  # the meshes' lowest vertex, world  # fmt: skip
    q0[2] += drop - low
    kp, kd = GAINS[name]
    return model, q0, dp.JointPD(model, kp, kd, q0), dp.Ground(friction=0.9)


def stand(name: str, seconds: float = 5.0, html: Path | None = None) -> dict:
    """Drops the robot, lets it settle for SETTLE s, then measures the next ``seconds``."""
    model, q0, pd, ground = scene(name)
    traj = dp.simulate(model, q0, np.zeros(model.nv), SETTLE + seconds, 1e-3, tau=pd, ground=ground, progress=False)
    if html is not None:
        dp.Viewer(model).save_html(html / f"{name}.html", traj=traj)
    after = traj.t >= SETTLE
    data = model.create_data()
    feet = [c for c in model.collisions if c.name in {f"{f}_collision_0" for f in FEET[name]}]
    foot_xy = []  # the feet's mesh origins on the ground plane
    for q in traj.q[after]:
        dp.forward_kinematics(model, data, q)
        foot_xy.append([(data.oR[c.body] @ c.translation + data.op[c.body])[:2] for c in feet])
    foot_xy = np.array(foot_xy)
    rows = traj.contacts[:-1]  # the last row: no step leaves it
    weight = model.masses.sum() * -model.gravity[2]
    out = {
        "robot": name,
        "mass_kg": float(model.masses.sum()),
        "base_height_m": float(traj.q[-1, 2]),
        "base_height_range_m": float(np.ptp(traj.q[after, 2])),
        "foot_slide_m": float(np.linalg.norm(foot_xy - foot_xy[0], axis=2).max()),
        "penetration_m": float(max(0.0, -min((c["depths"].min() for c in rows if len(c["depths"])), default=0.0))),
        "converged_share": float(np.mean([c["converged"] for c in rows])),
        "worst_residual": float(max(c["residual"] for c in rows)),
        "standing_residual": float(max(c["residual"] for c, t in zip(rows, traj.t[:-1], strict=True) if t >= SETTLE)),
        "weight_carried": float(rows[-1]["forces"][:, 2].sum() / weight),
        "contacts_at_rest": len(rows[-1]["points"]),
    }
    print(f"{name} ({out['mass_kg']:.2f} kg): base at {out['base_height_m']:.5f} m, moving "
          f"{out['base_height_range_m']:.2e} m over {seconds:g} s; feet slide {out['foot_slide_m']:.2e} m; "
          f"penetration {out['penetration_m']:.2e} m; "
          f"{100 * out['converged_share']:.1f}% of solves converged (standing: residual <= "
          f"{out['standing_residual']:.1e}); the {out['contacts_at_rest']} contacts carry "
          f"{out['weight_carried']:.6f} m g")  # fmt: skip
    return out


def main(html: Path | None = None, seconds: float = 5.0) -> dict:
    if html is not None:
        html.mkdir(parents=True, exist_ok=True)
    return {name: stand(name, seconds, html) for name in ("solo12", "go2")}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="a folder to write the runs' pages in")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to watch it stand after settling")
    args = parser.parse_args()
    print(json.dumps(main(args.html, args.seconds)))
