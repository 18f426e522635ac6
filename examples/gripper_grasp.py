"""The gripper of Shah, Saha & Dutt grasps a box and lifts it 12 cm: contact between bodies under joint PD.

    python examples/gripper_grasp.py [--html FOLDER]

The bundled gripper (its cylinders are its collision shapes) hangs from a carriage on a vertical slide, palm down; a
2 × 2 × 4.5 cm box of 30 g stands on the ground between its fingers.  The two-phalanx finger presses the box's left
face with its distal phalanx, the one-phalanx finger its right face with its tip.  Phase 1 (0.5 s):
the fingers close under PD, the slide held.  Phase 2 (2 s): the slide's reference rises 12 cm.  Prints the box's lift
and its slip relative to the fingers holding it, then the numbers as one JSON line; with --html, writes grasp.html,
which plays both phases with the ground, the contact points and their forces.
"""

import argparse
import json
from pathlib import Path

import numpy as np

import denoc_pin as dp

BOX = (0.02, 0.02, 0.045)  # box size [m]
BOX_MASS = 0.03  # [kg]
HINGE = 0.085  # the fingers' hinge above the ground at the start [m]; the box's top is 4 cm below it
FRICTION = 1.0  # μ between the fingers and the box (a pair takes the larger of its two)


def scene() -> tuple[dp.Model, np.ndarray]:
    """(model, q0): slide, gripper and box; q = [slide, θ11, θ12, θ22, θ13, box's free flyer]."""
    b = dp.ModelBuilder("grasp")
    b.add_body(0, joint="prismatic", axis=(0, 0, 1), mass=0.5, inertia=np.eye(3) * 1e-3, link="carriage",
               placement=(np.eye(3), np.array([0.0, 0.0, HINGE + 0.1])))  # fmt: skip
    x, y, z = BOX
    b.add_body(0, joint="free-flyer", mass=BOX_MASS, link="box",
               inertia=BOX_MASS / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y]))  # fmt: skip
    b.add_collision("box", dp.Box(BOX), friction=FRICTION)
    rig = b.build()
    palm_down = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # R_y(90°): the palm's x axis along −z
    model = dp.attach(rig, "carriage", dp.models.bundled("gripper"), placement=(palm_down, np.zeros(3)))
    q0 = dp.neutral(model)
    # open: finger 2's first phalanx 62° out, its distal phalanx vertical; finger 3 10° to the right
    q0[1:5] = np.deg2rad([0.0, 62.0, -62.0, -10.0])
    q0[5:8] = [-0.0236, 0.0, z / 2]  # the box's centre: between the fingers, on the ground
    return model, q0


def laws(model: dp.Model, q0: np.ndarray) -> tuple[dp.JointPD, dp.JointPD]:
    """(close, lift): PD on the slide (the whole weight fed forward) and on the gripper's joints, to the fingers closed
    past the box's faces (so that they squeeze it) with the slide held, then with the slide's reference 12 cm up.
    The box's free flyer is not driven."""
    m_total = float(model.masses.sum())  # carriage, gripper and box
    kp = np.r_[100.0, 5.0, 2.0, 2.0, 2.0, np.zeros(6)]
    kd = np.r_[2 * np.sqrt(100.0 * m_total), 0.1, 0.04, 0.02, 0.04, np.zeros(6)]
    tau_ff = np.r_[m_total * 9.81, np.zeros(model.nv - 1)]
    closed = q0.copy()
    closed[1:5] = np.deg2rad([0.0, 47.0, -47.0, 14.0])
    up = closed.copy()
    up[0] += 0.12
    return dp.JointPD(model, kp, kd, closed, tau_ff=tau_ff), dp.JointPD(model, kp, kd, up, tau_ff=tau_ff)


def joined(a: dp.Trajectory, b: dp.Trajectory) -> dp.Trajectory:
    """Run b, which starts where run a ends, after a: one trajectory (b's first row, a's last, once)."""
    rows = {k: np.concatenate([getattr(a, k), getattr(b, k)[1:]]) for k in ("q", "v", "a", "tau")}
    energy = {k: np.concatenate([a.energy[k], b.energy[k][1:]]) for k in a.energy}
    return dp.Trajectory(np.concatenate([a.t, b.t[1:] + a.t[-1]]), energy=energy, model_name=a.model_name,
                         contacts=a.contacts + b.contacts[1:], ground=a.ground, **rows)  # fmt: skip


def main(html: Path | None = None, dt: float = 1e-3) -> dict:
    model, q0 = scene()
    ground, contact = dp.Ground(friction=0.8), dp.ContactSettings(tol=1e-9)
    close, lift = laws(model, q0)
    grasp = dp.simulate(model, q0, np.zeros(model.nv), 0.5, dt, tau=close, ground=ground, contact=contact,
                        progress=False)  # fmt: skip
    lifted = dp.simulate(model, grasp.q[-1], grasp.v[-1], 2.0, dt, tau=lift, ground=ground, contact=contact,
                         progress=False)  # fmt: skip

    # slip: how far the box's centre moves in the frame of each finger during the lift
    data = model.create_data()

    def box_in(finger: str, q) -> np.ndarray:
        F, B = dp.frame_placement(model, data, q, finger), dp.frame_placement(model, data, q, "box")
        return F[:3, :3].T @ (B[:3, 3] - F[:3, 3])

    slip = max(float(np.linalg.norm(box_in(f, q) - box_in(f, lifted.q[0]))) for f in ("link_2_2", "link_1_3")
               for q in lifted.q)  # fmt: skip
    raised = float(lifted.q[-1, 7] - q0[7])
    held = lifted.contacts[-2]
    # each force acts on its pair's second shape: the box takes f where it is second, −f where it is first
    sign = np.array([1.0 if pair[1] == "box_collision_0" else -1.0 for pair in held["collisions"]])
    on_box = float(sign @ held["forces"][:, 2])
    print(f"box raised {raised * 100:.2f} cm; its slip relative to the fingers over {lifted.t[-1]:.1f} s: "
          f"{slip * 1e3:.3f} mm; {len(held['depths'])} contact points carry {on_box:.4f} N up "
          f"(its weight {BOX_MASS * 9.81:.4f} N)")  # fmt: skip
    if html is not None:
        dp.Viewer(model, ground=ground).save_html(html / "grasp.html", traj=joined(grasp, lifted))
    return {"raised": raised, "slip": slip, "points": len(held["depths"]), "carried": on_box, "model": model,
            "grasp": grasp, "lift": lifted}  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="a folder to write the page in")
    out = main(parser.parse_args().html)
    print(json.dumps({k: out[k] for k in ("raised", "slip", "points", "carried")}))
