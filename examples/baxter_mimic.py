"""Baxter's grippers, whose second finger mirrors the first: Pinocchio 4's reduced mimic model, loaded by denoc_pin.

``dp.load_urdf(path, mimic="reduce")`` gives the layout of ``pin.buildModelFromUrdf(path, mimic=True)``: 17
coordinates instead of 19, each mimic finger following its reference (θ = −θ_ref).  Pinocchio computes rnea and crba
on that model but refuses aba; denoc_pin gives the forward dynamics too.  A third route checks it: the 19-coordinate
model with one coupling row per mimic joint (``mimic=True``), whose closed-loop dynamics must move the same way.

    python examples/baxter_mimic.py
"""

import numpy as np
import pinocchio as pin

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf


def main() -> dict:
    urdf = str(example_robot_urdf("baxter"))
    model = dp.load_urdf(urdf, mimic="reduce")
    print(model)
    for joint, reference, multiplier, offset in model.mimics:
        print(f"  {joint} = {multiplier:+g} · {reference} {offset:+g}")
    pm = pin.buildModelFromUrdf(urdf, mimic=True)
    data, pd = model.create_data(), pm.createData()

    rng = np.random.default_rng(7)
    q = dp.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    tau = dp.inverse_dynamics(model, data, q, v, a)
    rnea_gap = float(np.abs(tau - pin.rnea(pm, pd, q, v, a)).max() / np.abs(tau).max())
    print(f"inverse dynamics against pin.rnea: {rnea_gap:.1e} (relative)")

    qdd = dp.forward_dynamics(model, data, q, v, tau)  # pin.aba raises on this model
    fd_gap = float(np.abs(qdd - a).max() / np.abs(a).max())
    print(f"forward dynamics gives back q̈: {fd_gap:.1e}")

    # The same robot with the mimic fingers as coordinates held by coupling rows: on the closed configuration
    # model.expand_q(q), its dynamics give each finger pair the reduced model's motion.
    coupled = dp.load_urdf(urdf, mimic=True)
    tau_tree = np.zeros(coupled.nv)  # the motors drive the reference fingers; the mimic ones follow
    tau_tree[model.kept_v] = tau
    cdata = coupled.create_data()
    qdd_tree, _ = dp.constrained_forward_dynamics(coupled, cdata, model.expand_q(q), model.G @ v, tau_tree)
    coupled_gap = float(np.abs(qdd_tree - model.G @ qdd).max() / np.abs(qdd).max())
    print(f"against the coupled 19-coordinate model: {coupled_gap:.1e}")
    return {"rnea_gap": rnea_gap, "fd_gap": fd_gap, "coupled_gap": coupled_gap}


if __name__ == "__main__":
    main()
