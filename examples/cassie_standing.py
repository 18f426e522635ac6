"""Cassie standing on its feet, its four closed loops solved together with the contacts at every step.

The robot is the MuJoCo Menagerie's ``agility_cassie/cassie.xml``: a free-flyer, and per leg two loops closed by
``connect`` equalities (the achilles rod on the heel spring, the plantar rod on the foot).  Its ``home`` keyframe is
closed by ``dp.assemble`` with the motors and springs held, the feet turned flat on the ground, and its ten motors
and four leaf springs held by joint PD about that stance, with the static torques as feed-forward (the weight on the
feet, found with the loops' and the contacts' forces by one least-squares solve).

    python examples/cassie_standing.py [PATH/TO/agility_cassie/cassie.xml] [--html FOLDER] [--seconds 2]

Without a path, run from the checkout, it takes the copy the checkout holds (``tests/data/menagerie``, with the
Menagerie's licence); elsewhere, give the file of a clone of https://github.com/google-deepmind/mujoco_menagerie.

Prints what a reader checks: how much the base moves, how far a foot slides, the deepest penetration, the largest loop
residual of any step, the share of contact solves that converged, and the weight the feet carry; then the numbers as
one JSON line.  With --html, writes the run as ``cassie.html``.
"""

import argparse
import dataclasses
import json
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

import denoc_pin as dp
from denoc_pin.contact import ContactStepper

SIDES = ("left", "right")
MOTORS = [f"{s}-{j}" for s in SIDES for j in ("hip-roll", "hip-yaw", "hip-pitch", "knee", "foot")]
SPRINGS = [f"{s}-{j}" for s in SIDES for j in ("shin", "heel-spring")]
GAINS = {"motor": (300.0, 1.0), "foot": (30.0, 0.1), "spring_kd": 0.1}  # K_p (N m/rad), K_d (N m s/rad)


def load(path: Path) -> dp.Model:
    """The model with its feet's capsules as its only collisions (they touch the ground, not each other): the file's
    other capsules keep the legs apart in MuJoCo, and standing never brings them together."""
    with warnings.catch_warnings():  # the Menagerie's meshes are visual only; their files may be absent
        warnings.simplefilter("ignore")
        model = dp.load_mjcf(path)
    feet = tuple(dataclasses.replace(c, group=1, mask=0) for c in model.collisions if c.link.endswith("-foot"))
    return dp.Model(**(model.fields() | {"collisions": feet}))


def _file(path: Path) -> tuple[np.ndarray, dict]:
    """The ``home`` keyframe's qpos and the joints' ``stiffness`` (the leaf springs), which dp.load_mjcf leaves out."""
    root = ET.parse(path).getroot()
    qpos = np.array(root.find("keyframe/key[@name='home']").get("qpos").split(), dtype=float)
    stiffness = {j.get("name"): float(j.get("stiffness")) for j in root.iter("joint") if j.get("stiffness")}
    return qpos, stiffness


def stance(model: dp.Model, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(q, τ_ff): the home keyframe with its loops closed and its feet flat on the ground, and the torques of the
    motors and springs that hold it still there."""
    qpos, _ = _file(path)
    home, _ = dp.mujoco_state(model, qpos)
    data = model.create_data()
    held = MOTORS + SPRINGS + [model.names[1]]
    # the contact detection itself: each foot capsule's two end caps, their heights above the ground ("depths"),
    # found within 1 m of it
    stepper = ContactStepper(model, dp.Ground(), dp.ContactSettings(margin=1.0), 1e-3)

    def turned(delta: float) -> np.ndarray:  # both feet turned by delta, the loops closed again
        q = home.copy()
        for s in SIDES:
            q[model.idx_q[model.joint_id(f"{s}-foot")]] += delta
        return dp.assemble(model, q, fixed=held)

    def tilt(delta: float) -> float:
        d = stepper.contacts(turned(delta))[3]
        return d[1] - d[0]

    q = turned(brentq(tilt, -0.05, 0.05, xtol=1e-12))  # the keyframe's feet are 0.3° off flat
    q[2] -= stepper.contacts(q)[3].min()  # the soles on the ground
    # statics: J_cᵀ f + J_rᵀ λ + Sᵀ τ = g(q), the least-squares split that keeps the feet's forces normal
    problem = stepper.problem(q, np.zeros(model.nv), np.zeros(model.nv))
    J, nc = problem["J"], problem["nc"]
    driven = [int(model.idx_v[model.joint_id(n)]) for n in MOTORS + SPRINGS]
    A = np.hstack([J.T, np.eye(model.nv)[:, driven]])
    weight = np.ones(A.shape[1])  # the cost of each unknown: tangential forces dear, the loops' forces free
    weight[: 3 * nc].reshape(nc, 3)[:, :2] = 1e3
    weight[3 * nc : len(J)] = 1e-3
    weight[len(J) :] = 1e-2
    x = np.linalg.lstsq(A / np.sqrt(weight), dp.nonlinear_effects(model, data, q, np.zeros(model.nv)), rcond=None)[0]
    tau_ff = np.zeros(model.nv)
    tau_ff[driven] = (x / np.sqrt(weight))[len(J) :]
    return q, tau_ff


def controller(model: dp.Model, q: np.ndarray, tau_ff: np.ndarray, path: Path) -> dp.JointPD:
    """Joint PD about q on the motors, and the leaf springs at the file's stiffness, τ_ff added."""
    _, stiffness = _file(path)
    kp, kd = np.zeros(model.nv), np.zeros(model.nv)
    for name in MOTORS:
        i = model.idx_v[model.joint_id(name)]
        kp[i], kd[i] = GAINS["foot" if name.endswith("-foot") else "motor"]
    for name in SPRINGS:
        i = model.idx_v[model.joint_id(name)]
        kp[i], kd[i] = stiffness[name], GAINS["spring_kd"]
    return dp.JointPD(model, kp, kd, q, tau_ff=tau_ff)


def stand(path: Path, seconds: float = 2.0, html: Path | None = None) -> dict:
    """Cassie (``path``: the Menagerie's cassie.xml) set on the ground in its stance, watched for ``seconds``."""
    model = load(path)
    q0, tau_ff = stance(model, path)
    pd = controller(model, q0, tau_ff, path)
    traj = dp.simulate(model, q0, np.zeros(model.nv), seconds, 1e-3, tau=pd, ground=dp.Ground(friction=0.9),
                       progress=False)  # fmt: skip
    if html is not None:
        dp.Viewer(model).save_html(html / "cassie.html", traj=traj)
    rows = traj.contacts[:-1]  # the last row: no step leaves it
    data = model.create_data()
    feet = []
    for q in traj.q:
        dp.forward_kinematics(model, data, q)
        feet.append([data.op[model.joint_id(f"{s}-foot")][:2].copy() for s in SIDES])
    feet = np.array(feet)
    after = traj.t >= traj.t[-1] / 2  # the second half: at rest
    out = {
        "mass_kg": float(model.masses.sum()),
        "base_height_m": float(traj.q[-1, 2]),
        "base_height_range_m": float(np.ptp(traj.q[after, 2])),
        "foot_slide_m": float(np.linalg.norm(feet - feet[0], axis=2).max()),  # over the whole run
        "penetration_m": float(max(0.0, -min((c["depths"].min() for c in rows if len(c["depths"])), default=0.0))),
        "loop_residual": float(max(np.abs(dp.loop_residual(model, q)).max() for q in traj.q)),
        "converged_share": float(np.mean([c["converged"] for c in rows])),
        "worst_residual": float(max(c["residual"] for c in rows)),
        "weight_carried": float(rows[-1]["forces"][:, 2].sum() / (model.masses.sum() * -model.gravity[2])),
        "contacts_at_rest": len(rows[-1]["points"]),
    }
    print(f"cassie ({out['mass_kg']:.2f} kg): base at {out['base_height_m']:.5f} m, moving "
          f"{out['base_height_range_m']:.2e} m over the last {seconds / 2:g} s; feet slide "
          f"{out['foot_slide_m']:.2e} m; "
          f"penetration {out['penetration_m']:.2e} m; loop residual <= {out['loop_residual']:.1e}; "
          f"{100 * out['converged_share']:.1f}% of solves converged (residual <= {out['worst_residual']:.1e}); the "
          f"{out['contacts_at_rest']} contacts carry {out['weight_carried']:.6f} m g")  # fmt: skip
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    checkout = Path("tests") / "data" / "menagerie" / "agility_cassie" / "cassie.xml"  # run from the checkout
    parser.add_argument("path", type=Path, nargs="?", default=checkout,
                        help="the Menagerie's agility_cassie/cassie.xml (default: the checkout's copy)")  # fmt: skip
    parser.add_argument("--html", type=Path, help="a folder to write the run's page in")
    parser.add_argument("--seconds", type=float, default=2.0, help="how long to watch it stand")
    args = parser.parse_args()
    if not args.path.is_file():
        parser.exit(2, f"no file {args.path}: give agility_cassie/cassie.xml of a clone of "
                       "https://github.com/google-deepmind/mujoco_menagerie\n")  # fmt: skip
    if args.html is not None:
        args.html.mkdir(parents=True, exist_ok=True)
    print(json.dumps(stand(args.path, args.seconds, args.html)))
