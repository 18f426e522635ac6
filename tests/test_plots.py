"""``dp.plot``: each figure's axes, labels and units, and its curves equal to the trajectory's arrays; bad requests
refused by name."""

from __future__ import annotations

import runpy

import numpy as np
import pytest
from conftest import ROOT

import denoc_pin as dp


def _lines(fig, axis: int = 0) -> dict:
    return {line.get_label(): line for line in fig.axes[axis].get_lines()}


def test_coordinates_by_joint_name_and_unit():
    model = dp.models.bundled("gripper")
    traj = dp.simulate(model, dp.neutral(model), np.zeros(model.nv), 0.2, progress=False, record_every=10)
    for what, values, unit in (("q", traj.q, "rad"), ("v", traj.v, "rad/s"), ("a", traj.a, "rad/s²"),
                               ("tau", traj.tau, "N m")):  # fmt: skip
        fig = dp.plot(traj, model, what)
        ax = fig.axes[0]
        assert ax.get_xlabel() == "time [s]" and ax.get_ylabel().endswith(f"[{unit}]")
        lines = _lines(fig)
        assert list(lines) == [f"{n} [{unit}]" for n in model.names[1:]]
        for k, line in enumerate(lines.values()):
            assert np.array_equal(line.get_xdata(), traj.t) and np.array_equal(line.get_ydata(), values[:, k])
    fig = dp.plot(traj, model, "q", joints=["joint_1_2"])
    assert list(_lines(fig)) == ["joint_1_2 [rad]"]
    assert np.array_equal(_lines(fig)["joint_1_2 [rad]"].get_ydata(), traj.q[:, 1])
    fig = dp.plot(traj, None, "v")  # without the model: numbered
    assert list(_lines(fig)) == [f"v[{i}]" for i in range(model.nv)]


def test_a_free_flyer_and_a_continuous_joint():
    b = dp.ModelBuilder("flyer")
    b.add_body(0, "free-flyer", mass=1.0, inertia=np.eye(3), name="root_joint", link="base")
    b.add_body(1, "continuous", axis=(0, 0, 1), mass=0.5, inertia=np.eye(3) * 0.1, name="wheel", link="wheel")
    model = b.build()
    q0 = dp.neutral(model)
    traj = dp.simulate(model, q0, np.r_[0, 0, 0, 0, 0, 0, 2.0], 0.3, progress=False, record_every=10)
    fig = dp.plot(traj, model, "q")
    labels = list(_lines(fig))
    assert labels == ["root_joint.x [m]", "root_joint.y [m]", "root_joint.z [m]", "root_joint.qx", "root_joint.qy",
                      "root_joint.qz", "root_joint.qw", "wheel [rad]"]  # fmt: skip
    wheel = _lines(fig)["wheel [rad]"].get_ydata()  # the angle of (cos, sin)
    assert np.allclose(wheel, np.arctan2(traj.q[:, 8], traj.q[:, 7]))
    assert fig.axes[0].get_ylabel() == "positions [m, rad]"
    v_labels = list(_lines(dp.plot(traj, model, "v")))
    assert v_labels[:6] == ["root_joint.vx [m/s]", "root_joint.vy [m/s]", "root_joint.vz [m/s]",
                            "root_joint.ωx [rad/s]", "root_joint.ωy [rad/s]", "root_joint.ωz [rad/s]"]  # fmt: skip


def test_energy_and_loops_and_axes_of_ones_own():
    from matplotlib.figure import Figure

    model = dp.models.bundled("four_bar")
    traj = dp.simulate(model, dp.assemble(model, dp.neutral(model)), np.zeros(model.nv), 0.3, progress=False,
                       record_every=10)  # fmt: skip
    fig = dp.plot(traj, model, "energy")
    lines = _lines(fig)
    assert fig.axes[0].get_ylabel() == "energy [J]"
    assert np.array_equal(lines["kinetic T"].get_ydata(), traj.energy["kinetic"])
    total = next(line for label, line in lines.items() if label.startswith("T + V − W"))
    assert np.array_equal(total.get_ydata(), traj.energy["total"])
    mine = Figure()
    ax = mine.subplots()
    assert dp.plot(traj, model, "loops", ax=ax) is mine
    residual = ax.get_lines()[0].get_ydata()
    expected = [np.abs(dp.loop_residual(model, q)).max() for q in traj.q]
    assert np.allclose(residual, np.maximum(expected, 1e-17), rtol=0, atol=1e-18)
    assert ax.get_ylabel() == "loop residual [m, rad]" and ax.get_yscale() == "log"


def test_contacts_and_the_solver():
    scene = runpy.run_path(str(ROOT / "examples" / "legged_standing.py"), run_name="legged_standing")["scene"]
    model, q0, pd, ground = scene("solo12")
    traj = dp.simulate(model, q0, np.zeros(model.nv), 0.2, 1e-3, tau=pd, ground=ground, progress=False,
                       record_every=10)  # fmt: skip
    fig = dp.plot(traj, model, "contacts")
    normal, tangential = _lines(fig, 0), _lines(fig, 1)
    feet = sorted({pair[1] for row in traj.contacts for pair in row["collisions"]})
    assert list(normal) == feet == list(tangential) and len(feet) == 4
    assert fig.axes[0].get_ylabel() == "normal force [N]" and fig.axes[1].get_ylabel() == "tangential force [N]"
    for i, row in enumerate(traj.contacts):  # each curve: the row's forces on that shape, split along its normals
        for foot in feet:
            mine = [(f, n) for (_, c), f, n in zip(row["collisions"], row["forces"], row["normals"], strict=True)
                    if c == foot]  # fmt: skip
            fn = sum(float(f @ n) for f, n in mine)
            ft = sum(float(np.linalg.norm(f - (f @ n) * n)) for f, n in mine)
            assert np.isclose(normal[foot].get_ydata()[i], fn) and np.isclose(tangential[foot].get_ydata()[i], ft)
    assert max(line.get_ydata().max() for line in normal.values()) > 0  # it landed
    fig = dp.plot(traj, model, "solver")
    assert np.array_equal(fig.axes[1].get_lines()[0].get_ydata(), [r["iterations"] for r in traj.contacts])


def test_bad_requests_are_named():
    model = dp.models.bundled("gripper")
    traj = dp.simulate(model, dp.neutral(model), np.zeros(model.nv), 0.05, progress=False)
    with pytest.raises(ValueError, match="what must be one of 'q', 'v', 'a', 'tau', 'energy', 'loops'"):
        dp.plot(traj, model, "angles")
    with pytest.raises(ValueError, match="needs the closed model"):
        dp.plot(traj, model, "loops")
    with pytest.raises(ValueError, match="needs a contact run"):
        dp.plot(traj, model, "contacts")
    with pytest.raises(dp.ModelError, match="no joint 'elbow' in model 'gripper'; joints are: joint_1_1"):
        dp.plot(traj, model, "q", joints=["elbow"])
    with pytest.raises(ValueError, match="not its trajectory"):
        dp.plot(traj, dp.models.bundled("four_bar"), "q")
    with pytest.raises(TypeError, match="traj must be a dp.Trajectory"):
        dp.plot(traj.q, model)
    with pytest.raises(ValueError, match="joints= selects by name and needs the model"):
        dp.plot(traj, None, "q", joints=["joint_1_1"])
