"""Pickling: Model, Data (alone, with its Model, fresh or used) and Trajectory come back bit-identical.

Process pools and Dask workers ship models and workspaces by pickle; a Data's fields are views of one
buffer, which a plain pickle would cut apart (forward dynamics then read a stale copy)."""

import pickle

import numpy as np
import pytest
from conftest import URDF_DIR, add_random_body

import denoc_pin as dp
from denoc_pin.core.joints import JOINTS


def _every_kind() -> dp.Model:
    rng = np.random.default_rng(7)
    b = dp.ModelBuilder("every_kind")
    parent = add_random_body(b, rng, 0, "free-flyer")
    for kind in (k.name for k in JOINTS.values() if k.name not in ("base", "free-flyer")):
        parent = add_random_body(b, rng, parent, kind, pitch=0.03 if kind == "helical" else None)
    return b.build()


MODELS = {
    "every_kind": _every_kind,
    "rope10": lambda: dp.models.rope(10),
    "four_bar_urdf": lambda: dp.load_urdf(URDF_DIR / "four_bar.urdf"),
    "spatial_four_bar": dp.models.spatial_four_bar,
}


def _state(m: dp.Model, seed: int):
    rng = np.random.default_rng(seed)
    q = dp.random_configuration(m, rng)
    if m.loops:
        q = dp.assemble(m, q)
    return q, rng.standard_normal(m.nv), rng.standard_normal(m.nv)


def _results(m: dp.Model, d: dp.Data, seed: int) -> list[np.ndarray]:
    q, v, x = _state(m, seed)
    out = [
        dp.inverse_dynamics(m, d, q, v, x),
        dp.forward_dynamics(m, d, q, v, x),
        d.ddq.copy(),  # the field, read through the Data's view
        dp.gim(m, d, q),
        dp.gim_inverse(m, d, q),
    ]
    if m.loops:
        out += list(dp.constrained_forward_dynamics(m, d, q, v, x))
    return out


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y), "results differ after pickling"


@pytest.fixture(params=list(MODELS), scope="module")
def model(request):
    return MODELS[request.param]()


def test_model_pickles(model):
    m2 = pickle.loads(pickle.dumps(model))
    assert m2.names == model.names and m2.passive == model.passive
    assert [repr(lp) for lp in m2.loops] == [repr(lp) for lp in model.loops]
    assert m2.mb.tobytes() == model.mb.tobytes() and not m2.mb.flags.writeable  # ints live in it too
    assert np.shares_memory(m2.axes, m2.mb) and np.shares_memory(m2.mi, m2.mb)  # views again, not copies
    for field in ("lower_position_limit", "upper_position_limit", "velocity_limit", "effort_limit"):
        assert np.array_equal(getattr(m2, field), getattr(model, field)) and not getattr(m2, field).flags.writeable
    _same(_results(model, model.create_data(), 1), _results(m2, m2.create_data(), 1))


@pytest.mark.parametrize("used", [False, True], ids=["fresh", "used"])
@pytest.mark.parametrize("together", [True, False], ids=["with_model", "alone"])
def test_data_pickles(model, used, together):
    d = model.create_data()
    if used:
        _results(model, d, 2)  # kinematics, the GIM and its factors left in the workspace
    if together:
        m2, d2 = pickle.loads(pickle.dumps((model, d)))
        assert d2.model is m2
    else:
        d2 = pickle.loads(pickle.dumps(d))
        m2 = d2.model
    assert d2.ws[1:].tobytes() == d.ws[1:].tobytes()  # the workspace is carried over (its stamp is renewed)
    assert np.shares_memory(d2.ddq, d2.ws) and np.shares_memory(d2.S, d2.ws)
    if used:
        assert d2.gim_ws is d2.dense("gim") and np.array_equal(d2.gim, d.gim)
    _same(_results(model, d, 3), _results(m2, d2, 3))


def test_trajectory_pickles():
    m = dp.models.rope(5)
    traj = dp.simulate(m, dp.neutral(m), np.ones(m.nv), 0.05, dt=1e-3, progress=False)
    t2 = pickle.loads(pickle.dumps(traj))
    for field in ("t", "q", "v", "a", "tau"):
        assert np.array_equal(getattr(t2, field), getattr(traj, field))
    assert t2.energy.keys() == traj.energy.keys()
    assert all(np.array_equal(t2.energy[k], traj.energy[k]) for k in traj.energy)
