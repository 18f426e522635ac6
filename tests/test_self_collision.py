"""A humanoid with self-collision on (examples/talos_self_collision.py): talos's arms fall limp against its body;
coal, on the same hulls, is the referee of every pair's distance."""

import runpy

import coal
import numpy as np
from conftest import ROOT
from test_convex_pairs import coal_signed_distance

import denoc_pin as dp
from denoc_pin.contact.detection import pairs_that_may_touch


def deepest_by_coal(model, pairs, qs) -> tuple[float, tuple]:
    """The smallest signed distance coal finds between the pairs' hulls over the configurations qs, and its pair."""
    data = model.create_data()
    worst, where = np.inf, None
    for q in qs:
        dp.forward_kinematics(model, data, q)
        X = np.asarray(data.oMi)
        T = [coal.Transform3s(X[c.body, :3, :3] @ c.rotation, X[c.body, :3, :3] @ c.translation + X[c.body, :3, 3])
             for c in model.collisions]  # fmt: skip
        for i, j in pairs:
            d = coal_signed_distance(model.collisions[i].shape, T[i], model.collisions[j].shape, T[j])[0]
            if d < worst:
                worst, where = d, (model.collisions[i].name, model.collisions[j].name)
    return worst, where


def test_a_humanoid_with_self_collision_keeps_its_links_apart(tmp_path):
    """With self-collision on, the limp arms come to rest against the body: pairs of its own links touch in most
    steps, every step's solve converges, it stands, and coal finds no pair of hulls (883 pairs, every 5th step) more
    than 2 mm into each other.  The same drop without self-collision lets the arms sink into the body (coal: more
    than 2 cm), so the pairs are what holds them.  The page animates the drop."""
    ex = runpy.run_path(str(ROOT / "examples" / "talos_self_collision.py"), run_name="talos")
    out = ex["main"](tmp_path)
    model, traj = out["model"], out["traj"]
    pairs = pairs_that_may_touch(model)
    assert len(pairs) == 883 and out["touching"] > 0.5 and out["links"], out
    assert all(row["converged"] for row in traj.contacts[:-1])
    assert np.isfinite(traj.q).all() and abs(traj.q[-1, 2] - traj.q[0, 2]) < 0.1  # it stands
    worst, where = deepest_by_coal(model, pairs, traj.q[::5])
    assert worst > -2e-3, (worst, where)
    assert (tmp_path / "talos.html").stat().st_size > 100_000

    bare, q0, pd = ex["scene"](self_collision=False)
    loose = dp.simulate(bare, q0, np.zeros(bare.nv), 1.0, 1e-3, tau=pd, ground=dp.Ground(friction=0.8), progress=False)
    worst, where = deepest_by_coal(bare, pairs, loose.q[::20])
    assert worst < -2e-2, (worst, where)
