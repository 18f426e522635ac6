"""The examples run and agree with Pinocchio."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

import denoc_pin as dp


def _row(out: str, label: str) -> np.ndarray:
    line = next(line for line in out.splitlines() if line.startswith(label))
    return np.array(line.split(":", 1)[1].strip(" []").split(), dtype=float)


def test_quickstart(capsys):
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "M2 [2 dof]: joint_1_2 → joint_2_2" in out
    np.testing.assert_allclose(_row(out, "tau"), _row(out, "pinocchio"), rtol=1e-9)
    assert np.abs(_row(out, "FD(ID(a)) - a")).max() < 1e-10


@pytest.mark.parametrize(
    "name",
    ["gripper_inverse_dynamics", "gripper_fall", "rope_fall", "schiehlen_open", "isobe_multibranch", "cassie_legs"],
)
def test_paper_example_scripts_write_their_figures(name, tmp_path):
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{name}.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])  # the numbers, after what the program shows a reader
    assert Path(out["figure"]).stat().st_size > 10_000
    if name == "gripper_inverse_dynamics":
        assert out["max_rel_error_vs_rnea"] <= 1e-9 and abs(out["peak_torque_Nm"] - 0.981) < 1e-9
    if name == "schiehlen_open":  # eq. (21) and the triangular eq. (22) = D Uᵀ, to the URDF's 10 digits
        assert out["eq21_max_rel_error"] <= 1e-10 and out["eq22_max_rel_error"] <= 1e-10
    if name == "isobe_multibranch":  # Table 1, τ = L T P and rnea against the hand-derived Lagrangian form
        for route in ("denoc", "parallel", "rnea"):
            assert out[f"{route}_vs_lagrange_max_rel"] <= 1e-12
        assert out["peak_torques_Nm"][0] > 1.0  # the motion is not trivial
    if name == "rope_fall":
        assert out["steps"] == 1750 and out["final_state_rel_diff"] <= 1e-9 and out["energy_drift_rel"] <= 1e-4


def _example(name: str):
    """An example program's functions, loaded as a module is (its ``__main__`` block not run)."""
    return runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name=name)


def test_validate_robot_example(capsys):
    worst = _example("validate_robot")["main"]("panda")
    assert set(worst) == {"rnea", "aba", "crba", "computeMinverse", "frame placement", "frame Jacobian"}
    assert max(worst.values()) <= 1e-9, worst
    assert "frame Jacobian   largest relative error" in capsys.readouterr().out


def test_panda_inverse_kinematics_example():
    out = _example("panda_inverse_kinematics")["main"]()
    assert out["iterations"] < 500 and out["error"] <= 1e-8


def test_solo12_standing_example():
    """The port of Pinocchio's static contact dynamics: the same torques and ground forces, which carry the weight."""
    out = _example("solo12_standing")["main"]()
    assert out["tau_gap"] <= 1e-10 and out["force_gap"] <= 1e-10 and out["weight_gap"] <= 1e-12


def test_baxter_mimic_example():
    """The port of Pinocchio's mimic dynamics: rnea's torques, and forward dynamics (which Pinocchio refuses on the
    reduced model) against its own inverse and against the coupled 19-coordinate model."""
    out = _example("baxter_mimic")["main"]()
    assert out["rnea_gap"] <= 1e-12 and out["fd_gap"] <= 1e-10 and out["coupled_gap"] <= 1e-9


def test_pendulum_simulation_example():
    """The port of Pinocchio's pendulum simulation: the same steps on aba agree to rounding while the chaos has not
    yet grown it (the first quarter)."""
    out = _example("pendulum_simulation")["main"](10, 1.0)
    assert out["steps"] == 1000 and out["gaps"][0] <= 1e-12


def test_mjcf_four_bar_example(tmp_path):
    out = _example("mjcf_four_bar")["main"](tmp_path)
    assert out["fd_vs_pinocchio"] <= 1e-9 and out["loop_residual_max"] <= 1e-6 and out["energy_drift_rel"] <= 1e-4


def test_dask_sweep_example(tmp_path):
    pytest.importorskip("distributed")
    out = _example("dask_sweep")["main"](tmp_path)
    assert out["runs"] == 16 and out["shape"] == [16, 501, 4] and out["drift_max"] <= 1e-4


def test_every_example_is_a_program_on_the_public_api():
    """No example calls into denoc_pin.tools (the demo's engine): each is written out for a reader."""
    for path in sorted((ROOT / "examples").glob("*.py")):
        assert "denoc_pin.tools" not in path.read_text(), path.name


def test_demo_quick(tmp_path, capsys):
    from denoc_pin.tools import cli

    assert cli.main(["demo", "--quick", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "1. gripper inverse dynamics (Fig. 5)" in text and "3. rope fall (Fig. 7)" in text
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {"gripper_torques.png", "gripper_fall.png", "rope_fall.png", "rope_fall.html"}


def test_huge_chains_example_small(tmp_path):
    from denoc_pin.tools import demo

    out = demo.huge_chains(tmp_path, sizes=(100, 1000))
    assert Path(out["figure"]).stat().st_size > 10_000
    assert len(out["runs"]) == 4
    for run in out["runs"]:
        assert run["energy_drift_rel"] <= 1e-6 and run["wall_per_sim_s"] > 0


@pytest.mark.parametrize("name", ["schiehlen_closed", "four_bar", "slider_crank", "rrr_parallel", "isobe_five_bar"])
def test_closed_loop_examples(name, tmp_path):
    """The closed-loop examples: Schiehlen's closed form, loop closure and energy, FD(ID) round trips."""
    from denoc_pin.tools import demo

    short = {"schiehlen_closed": {"t_final": 0.5}, "four_bar": {"t_final": 0.5}, "slider_crank": {"samples": 51},
             "rrr_parallel": {"samples": 41}, "isobe_five_bar": {"samples": 41}}[name]  # fmt: skip
    out = getattr(demo, name)(tmp_path, **short)
    assert Path(out["figure"]).stat().st_size > 10_000
    if name == "schiehlen_closed":
        assert out["F_max_rel_error"] <= 1e-9 and out["alpha_dd_max_rel_error"] <= 1e-9
        assert out["closing_condition_max"] <= 1e-8
    elif name == "four_bar":
        assert out["loop_residual_max"] <= 1e-8 and out["energy_drift_rel"] <= 1e-6
    else:
        assert out["fd_of_id_max_rel_error"] <= 1e-9 and out["passive_torque_max"] == 0.0


def test_isobe_lagrangian_form_is_sensitive_to_the_model():
    """The closed form is an independent check: a 1% change of the tip mass is seen at once."""
    from denoc_pin.loaders.models import isobe_multibranch
    from denoc_pin.tools import demo

    t = np.linspace(0, 1, 11)
    q, v, a = demo.eq15(t, np.zeros(3), np.pi / 2 * np.array([1.0, 1.0, -1.0]), 1.0)
    tau = dp.inverse_dynamics_trajectory(isobe_multibranch(tip_mass=0.505), t, q, v, a)
    lagrange = demo.isobe_lagrange(q, v, a)
    assert np.abs(tau - lagrange).max() > 1e-3 * np.abs(lagrange).max()
    np.testing.assert_allclose(demo.isobe_lagrange(q, v, a, tip_mass=0.505), tau, rtol=1e-12, atol=1e-12)


def test_isobe_structure_varying(tmp_path):
    """Three configurations by model edits follow one sway; their torques reproduce the motion through
    closed-loop FD; in the fall, the lock stops joint4, the impact's loss enters the energy balance."""
    from denoc_pin.tools import demo

    out = demo.isobe_structure_varying(tmp_path, samples=41, t_fall=0.6)
    assert Path(out["figure"]).stat().st_size > 10_000
    configs = out["configurations"]
    assert configs["A: 4-joint closed loop"]["joints"] == ["joint1", "joint2", "joint5"]
    assert configs["B: 5-joint multibranch"]["passive"] == ["joint2", "joint4"]
    assert configs["C: passive joint moved"]["actuated"] == ["joint2", "joint5"]
    for c in configs.values():
        assert c["fd_of_id_max_rel_error"] <= 1e-9
        assert all(peak > 1e-3 for peak in c["peak_torques_Nm"].values())
    fall = out["fall"]
    assert fall["joint4_after_lock_max_rate"] == 0.0 and fall["events"][0]["kinetic_lost_J"] > 0
    assert fall["events"][1]["kinetic_lost_J"] == 0.0  # opening a loop takes nothing
    assert fall["energy_balance_drift_J"] <= 1e-5 * fall["peak_kinetic_J"]


def test_ilqr_example(tmp_path):
    """iLQR on step_derivatives: the double pendulum near upright at rest, panda's hand near its target; through
    contact with friction, a box pushed to stop 0.5 m away (replayed in dp.simulate: within 1 cm, at rest) and solo12
    standing up 8 cm from a crouch on its feet (replayed with iLQR's gains: within 5 mm); the cost down by orders of
    magnitude, a MeshCat page of each; the finite-difference run beside it also descends."""
    out = _example("ilqr")["main"](tmp_path, quick=True)
    for name, r in out.items():
        assert r["cost"] < 1e-3 * r["initial_cost"], (name, r)
        assert r["fd_cost"] < r["initial_cost"], (name, r)
        assert Path(r["page"]).stat().st_size > 10_000
    assert out["double_pendulum"]["terminal_cost"] < 1e-2  # ½ 1e3 |angle error|²: within 5 mrad of upright
    assert out["panda"]["terminal_cost"] < 0.1  # ½ 1e4 |hand error|²: within 5 mm of the target
    box = out["box_push"]
    assert abs(box["x_replayed"] - 0.5) <= 0.01 and box["v_replayed"] <= 1e-3 and box["iterations"] <= 20
    assert abs(box["x_replayed"] - box["x_planned"]) <= 1e-4  # simulate takes the step the optimiser took
    solo = out["solo12_stand_up"]  # through its feet's contacts: risen 8 cm, at rest, in simulate too
    assert abs(solo["z_rise_planned"] - 0.08) <= 1e-3 and abs(solo["z_rise_replayed"] - 0.08) <= 5e-3
    assert solo["v_replayed"] <= 0.05 and solo["iterations"] <= 30


def test_contact_scenes_meet_their_closed_forms(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["contact_scenes.py", "--html", str(tmp_path)])
    runpy.run_path(str(ROOT / "examples" / "contact_scenes.py"), run_name="__main__")
    from test_viewer import scene_commands

    for page in ("ball", "cube"):  # each page draws its ground and animates its contacts
        commands = scene_commands((tmp_path / f"{page}.html").read_text())
        assert any(c["type"] == "set_object" and c["path"].endswith("denoc_pin/ground") for c in commands)
        tracks = [c for c in commands if c["type"] == "set_animation"][0]["animations"]
        assert any(t["path"].endswith("denoc_pin/contacts/0/shaft") for t in tracks)
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    np.testing.assert_allclose(out["apexes"], [0.25, 0.0625, 0.015625], rtol=0.01)
    assert abs(out["slid"] / (1 / (2 * 0.4 * 9.81)) - 1) < 0.01
    assert abs(out["support"] / 9.81 - 1) < 1e-6


def test_gripper_grasps_and_lifts_a_box(tmp_path):
    """The paper's gripper closes on a box under PD and lifts it: the box rises ≥ 10 cm, slips ≤ 1 mm in either
    finger's frame over the 2 s lift, hangs on the fingers alone at the end (their forces carry its weight), and the
    page animates the pair contacts; MuJoCo, given the same scene (``tools.mujoco_twin``), lifts it too, its box's
    centre within 1 cm of ours (its contacts are soft: the fingers sink into the box)."""
    import mujoco
    from test_viewer import scene_commands

    from denoc_pin.tools.mujoco_twin import MujocoTwin

    ex = _example("gripper_grasp")
    out = ex["main"](tmp_path)
    assert out["raised"] >= 0.10 and out["slip"] <= 1e-3, out
    held = out["lift"].contacts[-2]
    assert all("ground" not in pair for pair in held["collisions"]) and len(held["collisions"]) >= 2
    assert abs(out["carried"] / (ex["BOX_MASS"] * 9.81) - 1) < 1e-3
    commands = scene_commands((tmp_path / "grasp.html").read_text())
    tracks = [c for c in commands if c["type"] == "set_animation"][0]["animations"]
    assert any(t["path"].endswith("denoc_pin/contacts/5/shaft") for t in tracks)  # the ground's 4 and the fingers' 2

    model, q0 = ex["scene"]()
    close, lift = ex["laws"](model, q0)
    twin = MujocoTwin(model, dp.Ground(friction=0.8), close, dt=1e-3)
    twin.set_state(q0, np.zeros(model.nv))
    mujoco.mj_step(twin.model, twin.data, nstep=500)
    twin.data.actuator(model.names[1]).ctrl = lift.q_ref[0]  # the slide's reference up
    mujoco.mj_step(twin.model, twin.data, nstep=2000)
    theirs = twin.state()[0][5:8]
    assert theirs[2] - q0[7] >= 0.10
    assert np.linalg.norm(theirs - out["lift"].q[-1, 5:8]) < 0.01, (theirs, out["lift"].q[-1, 5:8])


def test_identification_recovers_the_cubes_mu_and_solo12s_payload():
    """From a recorded slide (0.5 mm of noise), Gauss–Newton on the contact step's μ-Jacobians recovers the true μ
    = 0.42 from a start at 0.7 to 1% (the noise leaves a few parts in a million); from a recorded landing of solo12
    (0.5 mm and 1 mrad of noise), its base's 0.4 kg payload from the nominal mass to 1%, both within 10 iterations."""
    out = _example("identification")["main"]()
    assert out["relative_error"] <= 0.01 and out["iterations"] <= 10 and out["slide_m"] > 0.3
    assert out["payload_error"] <= 0.01 and out["payload_iterations"] <= 10
