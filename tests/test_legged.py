"""Legged robots on the ground: solo12 and go2 standing (``examples/legged_standing.py``), and the same drops in MuJoCo
(``denoc_pin.tools.mujoco_twin``)."""

import runpy

import numpy as np
import pytest
from conftest import ROOT

import denoc_pin as dp

EXAMPLE = runpy.run_path(str(ROOT / "examples" / "legged_standing.py"), run_name="legged_standing")
CASSIE = runpy.run_path(str(ROOT / "examples" / "cassie_standing.py"), run_name="cassie_standing")
CASSIE_XML = ROOT / "tests" / "data" / "menagerie" / "agility_cassie" / "cassie.xml"
TOL = dp.ContactSettings().tol


@pytest.mark.parametrize("name", ["solo12", "go2"])
def test_a_quadruped_dropped_under_joint_pd_stands_still(name):
    """Dropped from 5 cm (μ 0.9), settled for 1 s, then for 5 s: the base height moves ≤ 1 mm, no foot slides more
    than 1 mm, no point sinks more than 1 mm at any step, every standing step's solve meets its tolerance, and the
    feet carry the weight (0.1%)."""
    out = EXAMPLE["stand"](name, 5.0)
    assert out["base_height_range_m"] <= 1e-3
    assert out["foot_slide_m"] <= 1e-3
    assert out["penetration_m"] <= 1e-3
    assert out["standing_residual"] <= TOL * (1 + 1e-9)
    assert out["converged_share"] >= 0.99  # the landing's few solves that stop at the cap
    assert abs(out["weight_carried"] - 1) <= 1e-3
    assert 4 <= out["contacts_at_rest"] <= 8  # a point or two a foot, not a foot's tessellation


@pytest.mark.parametrize("name", ["solo12", "go2"])
def test_the_mujoco_twin_has_the_same_dynamics(name):
    """Away from the ground, MuJoCo's q̈ of the twin (bodies, joints, the PD as actuators) is ours to 1e-9 at a
    random state: the comparison below is of the contacts, not of two different robots."""
    mujoco = pytest.importorskip("mujoco")
    from denoc_pin.tools.mujoco_twin import MujocoTwin

    model, q0, pd, ground = EXAMPLE["scene"](name)
    rng = np.random.default_rng(3)
    q = dp.integrate(model, q0, rng.normal(0, 0.3, model.nv))
    q[2] += 1.0  # far from the ground
    v = rng.normal(0, 1.0, model.nv)
    twin = MujocoTwin(model, ground, pd)
    twin.set_state(q, v)
    assert twin.data.ncon == 0
    q_back, v_back = twin.state()
    np.testing.assert_allclose(q_back, q, atol=1e-15)
    np.testing.assert_allclose(v_back, v, atol=1e-12)
    a = dp.forward_dynamics(model, model.create_data(), q, v, pd(0.0, q, v))
    twin.set_state(q, v)
    mujoco.mj_forward(twin.model, twin.data)
    assert [twin.model.joint(model.names[k]).qposadr[0] for k in range(1, model.njoints)] == list(model.idx_q[1:])
    _, a_mj = dp.mujoco_state(model, twin.data.qpos.copy(), twin.data.qacc.copy())  # the free joint's: Rᵀ a_world
    a_mj[:3] -= np.cross(v[3:6], v[:3])  # ours is d/dt of the body-frame velocity: Rᵀ a_world − ω × v_body
    assert np.abs(a - a_mj).max() <= 1e-9 * max(1.0, np.abs(a).max())


@pytest.mark.parametrize("name", ["solo12", "go2"])
def test_standing_beside_mujoco(name):
    """The same drop in both for 3 s: both sets of feet carry m g (0.1%) at rest; MuJoCo's soft feet sink into the
    ground (≤ 1 mm) and its base settles lower than ours by at least that much, the rest being the PD's give to the
    feet's tangential forces, which each engine's landing leaves different (four feet on the ground with friction are
    statically indeterminate)."""
    pytest.importorskip("mujoco")
    from denoc_pin.tools.mujoco_twin import side_by_side

    model, q0, pd, ground = EXAMPLE["scene"](name)
    r = side_by_side(model, q0, pd, ground, 3.0)
    weight = model.masses.sum() * -model.gravity[2]
    for engine in ("denoc_pin", "mujoco"):
        assert abs(r[engine]["fz"][-1] / weight - 1) <= 1e-3, engine
    sink = r["mujoco"]["penetration"]
    assert 1e-4 <= sink <= 1e-3
    dz = r["denoc_pin"]["z"][-1] - r["mujoco"]["z"][-1]
    assert sink <= dz <= 2.5 * sink


def test_the_example_writes_its_pages(tmp_path, capsys):
    """The program a user runs: both robots, a short watch, a page each that plays the run with its contacts."""
    from test_viewer import scene_commands

    out = EXAMPLE["main"](tmp_path, 0.2)
    assert set(out) == {"solo12", "go2"}
    for name in out:  # each page draws its ground and animates the contacts of its four feet
        commands = scene_commands((tmp_path / f"{name}.html").read_text())
        assert any(c["type"] == "set_object" and c["path"].endswith("denoc_pin/ground") for c in commands)
        tracks = [c for c in commands if c["type"] == "set_animation"][0]["animations"]
        assert any(t["path"].endswith("denoc_pin/contacts/3/shaft") for t in tracks)
    assert "solo12 (2.50 kg): base at" in capsys.readouterr().out


def test_cassie_stands_with_its_loops_closed(tmp_path):
    """Cassie (the Menagerie's cassie.xml: a free-flyer, 32 DOF, four connect loops) set on its feet under joint PD
    on its motors and springs, the static torques as feed-forward, for 2 s: every step's loop residual ≤ 1e-8 with
    the loops solved together with the contacts, no penetration beyond 1 mm, the feet and base at rest (≤ 1 mm),
    every solve within tol, the four ends of the two feet carrying m g (0.1%); and its page plays the contacts."""
    from test_viewer import scene_commands

    out = CASSIE["stand"](CASSIE_XML, 2.0, html=tmp_path)
    assert out["loop_residual"] <= 1e-8
    assert out["penetration_m"] <= 1e-3
    assert out["foot_slide_m"] <= 1e-3 and out["base_height_range_m"] <= 1e-3
    assert out["converged_share"] == 1.0 and out["worst_residual"] <= TOL * (1 + 1e-9)
    assert abs(out["weight_carried"] - 1) <= 1e-3 and out["contacts_at_rest"] == 4
    commands = scene_commands((tmp_path / "cassie.html").read_text())
    tracks = [c for c in commands if c["type"] == "set_animation"][0]["animations"]
    assert any(t["path"].endswith("denoc_pin/contacts/3/shaft") for t in tracks)


def test_the_cassie_twin_has_the_same_bodies_pd_and_loops():
    """MuJoCo's twin of Cassie: with its equalities off and away from the ground, its q̈ under the PD with τ_ff is
    our tree's (1e-12 relative); at the stance its connect sites coincide (1e-12 m): the loops are the same cuts."""
    mujoco = pytest.importorskip("mujoco")
    from denoc_pin.tools.mujoco_twin import MujocoTwin

    model = CASSIE["load"](CASSIE_XML)
    q0, tau_ff = CASSIE["stance"](model, CASSIE_XML)
    pd = CASSIE["controller"](model, q0, tau_ff, CASSIE_XML)
    assert np.abs(tau_ff).max() > 10.0  # the knees and springs carry the weight
    twin = MujocoTwin(model, dp.Ground(), pd)
    assert twin.model.neq == len(model.loops) == 4
    with pytest.raises(dp.ModelError, match="same model"):
        MujocoTwin(CASSIE["load"](CASSIE_XML), dp.Ground(), pd)
    twin.set_state(q0, np.zeros(model.nv))
    for i in range(twin.model.neq):
        a, b = twin.model.eq_obj1id[i], twin.model.eq_obj2id[i]
        assert np.linalg.norm(twin.data.site_xpos[a] - twin.data.site_xpos[b]) <= 1e-12
    rng = np.random.default_rng(3)
    q = dp.integrate(model, q0, rng.normal(0, 0.1, model.nv))
    q[2] += 1.0
    v = rng.normal(0, 1.0, model.nv)
    twin.model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EQUALITY
    twin.set_state(q, v)
    assert twin.data.ncon == 0
    a = dp.forward_dynamics(model, model.create_data(), q, v, pd(0.0, q, v))
    _, a_mj = dp.mujoco_state(model, twin.data.qpos.copy(), twin.data.qacc.copy())
    a_mj[:3] -= np.cross(v[3:6], v[:3])  # ours is d/dt of the body-frame velocity
    assert np.abs(a - a_mj).max() <= 1e-12 * np.abs(a).max()


def test_the_cassie_example_runs_as_it_stands_or_says_where_the_file_is(tmp_path):
    """Run as the README says (from the checkout, without a path), the example takes the checkout's copy of the
    Menagerie's file (its default) and prints its JSON line; a path that is not a file (or the default, run from
    elsewhere) gets one line saying where to get the file."""
    import json
    import subprocess
    import sys

    script = ROOT / "examples" / "cassie_standing.py"
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and "https://github.com/google-deepmind/mujoco_menagerie" in r.stderr
    assert r.stderr.count("\n") == 1
    r = subprocess.run([sys.executable, str(script), "--seconds", "0.02"], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["loop_residual"] < 1e-9 and out["converged_share"] == 1.0
