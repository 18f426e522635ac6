"""Every algorithm against Pinocchio on random states: the engine of ``denoc-pin validate``.

Error measure per sample: abs = ‖x − y‖∞ and rel = abs / ‖y‖∞ with y Pinocchio's result.
A check passes when rel ≤ ``RTOL`` (1e-9) or, for a reference that is zero to rounding,
abs ≤ ``ATOL`` (1e-12).  The table reports the worst sample.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .algorithms import explicit as _dm
from .algorithms import forward_dynamics, gim, gim_inverse, inverse_dynamics, nonlinear_effects, udut
from .configuration import random_configuration
from .model import Model

RTOL = 1e-9
ATOL = 1e-12


def errors(x, y) -> tuple[float, float]:
    """(‖x − y‖∞, ‖x − y‖∞ / ‖y‖∞); the relative error is 0 when both vanish, inf when only y does."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    err = float(np.max(np.abs(x - y))) if x.size else 0.0
    scale = float(np.max(np.abs(y))) if y.size else 0.0
    if scale == 0.0:
        return err, (0.0 if err == 0.0 else float("inf"))
    return err, err / scale


@dataclass
class Check:
    algorithm: str
    reference: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    passed: bool = True

    def add(self, x, y) -> None:
        a, r = errors(x, y)
        self.max_abs = max(self.max_abs, a)
        self.max_rel = max(self.max_rel, r)
        self.passed = self.passed and (r <= RTOL or a <= ATOL)


def pinocchio_world_twists(pin_model, pin_data, q, v) -> np.ndarray:
    """Pinocchio's body twists turned into the paper's t: [ω; ȯ] per body, world frame, stacked."""
    import pinocchio as pin

    pin.forwardKinematics(pin_model, pin_data, q, v)
    out = []
    for k in range(1, pin_model.njoints):
        R = pin_data.oMi[k].rotation
        out.append(np.concatenate([R @ pin_data.v[k].angular, R @ pin_data.v[k].linear]))
    return np.concatenate(out)


def compare_with_pinocchio(model: Model, pin_model, samples: int = 10, seed: int = 0) -> list[Check]:
    """Run every algorithm of denoc_pin and its Pinocchio counterpart on ``samples`` random states."""
    import pinocchio as pin

    if model.nq != pin_model.nq or model.nv != pin_model.nv or list(model.names) != list(pin_model.names):
        raise ValueError(
            f"the models differ: denoc_pin nq={model.nq}, nv={model.nv}, joints {list(model.names[1:])}; "
            f"pinocchio nq={pin_model.nq}, nv={pin_model.nv}, joints {list(pin_model.names[1:])}"
        )
    rng = np.random.default_rng(seed)
    data, pdata = model.create_data(), pin_model.createData()
    checks = {
        "id": Check("inverse_dynamics", "rnea"),
        "id_fext": Check("inverse_dynamics (fext)", "rnea"),
        "fd": Check("forward_dynamics", "aba"),
        "fd_fext": Check("forward_dynamics (fext)", "aba"),
        "gim": Check("gim", "crba"),
        "minv": Check("gim_inverse", "computeMinverse"),
        "nle": Check("nonlinear_effects", "nonLinearEffects"),
        "udut": Check("udut (U D Uᵀ)", "crba"),
    }
    explicit = model.njoints - 1 <= _dm.MAX_BODIES
    if explicit:
        checks["dm_gim"] = Check("denoc_matrices gim = NᵀMN", "crba")
        checks["dm_mci"] = Check("denoc_matrices C v + g", "nonLinearEffects")
        checks["dm_t"] = Check("denoc_matrices t = N v", "forwardKinematics v")
    for _ in range(samples):
        q = random_configuration(model, rng)
        v, a, tau = rng.uniform(-1.0, 1.0, (3, model.nv))
        fext = rng.uniform(-1.0, 1.0, (model.njoints, 6))
        fext[0] = 0.0
        pin_fext = [pin.Force(f) for f in fext]
        checks["id"].add(inverse_dynamics(model, data, q, v, a), pin.rnea(pin_model, pdata, q, v, a))
        checks["id_fext"].add(
            inverse_dynamics(model, data, q, v, a, fext), pin.rnea(pin_model, pdata, q, v, a, pin_fext)
        )
        checks["fd"].add(forward_dynamics(model, data, q, v, tau), pin.aba(pin_model, pdata, q, v, tau))
        checks["fd_fext"].add(
            forward_dynamics(model, data, q, v, tau, fext), pin.aba(pin_model, pdata, q, v, tau, pin_fext)
        )
        M_ref = pin.crba(pin_model, pdata, q).copy()
        M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T  # full symmetric in every Pinocchio version
        checks["gim"].add(gim(model, data, q), M_ref)
        Minv_ref = pin.computeMinverse(pin_model, pdata, q).copy()
        Minv_ref = np.triu(Minv_ref) + np.triu(Minv_ref, 1).T
        checks["minv"].add(gim_inverse(model, data, q), Minv_ref)
        h_ref = pin.nonLinearEffects(pin_model, pdata, q, v).copy()
        checks["nle"].add(nonlinear_effects(model, data, q, v), h_ref)
        U, D = udut(model, data, q)
        checks["udut"].add(U @ D @ U.T, M_ref)
        if explicit:
            mats = _dm.denoc_matrices(model, q, v)
            checks["dm_gim"].add(mats.gim, M_ref)
            checks["dm_mci"].add(mats.mci @ v + mats.gravity, h_ref)
            checks["dm_t"].add(mats.t, pinocchio_world_twists(pin_model, pdata, q, v))
    return list(checks.values())


def format_table(checks: list[Check], title: str) -> str:
    rows = [f"{title}", f"{'algorithm':<32} {'pinocchio':<20} {'max abs err':>12} {'max rel err':>12}  result"]
    for c in checks:
        rows.append(
            f"{c.algorithm:<32} {c.reference:<20} {c.max_abs:12.2e} {c.max_rel:12.2e}  {'pass' if c.passed else 'FAIL'}"
        )
    return "\n".join(rows)


def as_json(checks: list[Check]) -> list[dict]:
    return [asdict(c) for c in checks]
