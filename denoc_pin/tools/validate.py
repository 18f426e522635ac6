"""Every algorithm against Pinocchio on random states: the engine of ``denoc-pin validate``.

Error measure per sample: abs = ‖x − y‖∞ and rel = abs / ‖y‖∞ with y Pinocchio's result.  A sample passes when
abs ≤ tol = max(``RTOL`` ‖y‖∞, ``ATOL``) (RTOL = 1e-9, ATOL = 1e-12: a relative error ≤ 1e-9, or an absolute one
≤ 1e-12, the floor of rounding where y is zero or tiny); a check passes when every sample does.  The table prints
the judged quantity: the worst sample's abs, its tol, and their ratio (≤ 1 passes); the JSON adds the maxima of abs
and rel over the samples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..algorithms import (
    center_of_mass,
    centroidal_map,
    centroidal_map_time_variation,
    centroidal_momentum,
    com_jacobian,
    difference_derivatives,
    forward_dynamics,
    forward_dynamics_derivatives,
    frame_acceleration,
    frame_jacobian,
    frame_jacobian_time_variation,
    frame_placements,
    frame_velocity,
    gim,
    gim_inverse,
    integrate_derivatives,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    joint_jacobians,
    nonlinear_effects,
    udut,
)
from ..algorithms import explicit as _dm
from ..algorithms.configuration import integrate, neutral, random_configuration
from ..algorithms.kinematics_api import forward_kinematics
from ..core.joints import UNIVERSAL
from ..loaders.pinocchio_bridge import to_pinocchio_constraints
from ..loops import (
    AssemblyError,
    assemble,
    constrained_forward_dynamics,
    constrained_forward_dynamics_derivatives,
    constrained_inverse_dynamics,
    loop_jacobian,
    loop_residual,
)
from ..loops.loop_kinematics import independent_rows
from ..model import Model
from .referee import Referee

__all__ = [
    "ATOL",
    "RTOL",
    "Check",
    "as_json",
    "central_differences",
    "closed_configurations",
    "compare_derivatives",
    "dynamics_differences",
    "compare_loops",
    "compare_with_pinocchio",
    "errors",
    "format_table",
    "high_precision_constrained_dynamics",
    "independent_rows",
    "loop_reactions_in_world",
    "pinocchio_constrained_dynamics",
    "pinocchio_loop_constraints",
    "pinocchio_world_twists",
    "reference_constrained_dynamics",
    "reference_coupling_rows",
    "reference_loop_bias",
    "reference_loop_jacobian",
]

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
    worst_abs: float = 0.0  # the sample with the largest abs / tol: its abs,
    worst_tol: float = ATOL  # its tol = max(RTOL ‖y‖∞, ATOL),
    worst_ratio: float = 0.0  # and abs / tol, the quantity judged: ≤ 1 passes
    passed: bool = True
    info: bool = False  # shown, not judged: a peer's error against a reference it is known to miss

    def add(self, x, y) -> None:
        a, r = errors(x, y)
        tol = max(RTOL * float(np.max(np.abs(y), initial=0.0)), ATOL)
        self.max_abs = max(self.max_abs, a)
        self.max_rel = max(self.max_rel, r)
        ratio = a / tol
        if not ratio <= self.worst_ratio and not np.isnan(self.worst_ratio):  # a NaN is the worst, and stays
            self.worst_abs, self.worst_tol, self.worst_ratio = a, tol, ratio
        self.passed = self.passed and (self.info or ratio <= 1.0)


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
    derivatives = compare_derivatives(model, pin_model, samples, seed)
    return list(checks.values()) + derivatives + compare_kinematics(model, pin_model, samples, seed)


def central_differences(f, n: int, h: float = 2e-3) -> np.ndarray:
    """The Jacobian of f: ℝⁿ → ℝᵐ at 0 by sixth-order central differences, (45 (f(h) − f(−h)) − 9 (f(2h) − f(−2h))
    + (f(3h) − f(−3h))) / 60h column by column: truncation O(h⁶), rounding about 1.5 ε ‖f‖ / h, below 1e-12
    relative at h = 2e-3 for the dynamics (the reference where Pinocchio has none, or a wrong one)."""
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        d1, d2, d3 = f(e) - f(-e), f(2.0 * e) - f(-2.0 * e), f(3.0 * e) - f(-3.0 * e)
        cols.append((45.0 * d1 - 9.0 * d2 + d3) / (60.0 * h))
    return np.array(cols).T


def dynamics_differences(model: Model, data, forward: bool, q, v, x, fext=None) -> list[np.ndarray]:
    """[∂/∂q (tangent), ∂/∂v] of inverse (x = q̈) or forward (x = τ) dynamics by ``central_differences``."""
    f = forward_dynamics if forward else inverse_dynamics
    return [
        central_differences(lambda d: f(model, data, integrate(model, q, d), v, x, fext), model.nv),
        central_differences(lambda d: f(model, data, q, v + d, x, fext), model.nv),
    ]


def compare_derivatives(model: Model, pin_model, samples: int = 10, seed: int = 0) -> list[Check]:
    """The derivative rows: inverse and forward dynamics (with and without fext) against computeRNEADerivatives and
    computeABADerivatives, integrate and difference against dIntegrate and dDifference.  On a model with a universal
    joint, whose ∂/∂q and ∂/∂q̇ Pinocchio 4.1 gets wrong (it omits the turning first axis, as in its dJ:
    docs/derivatives.md), those are judged against sixth-order central differences of the dynamics
    (``central_differences``) and Pinocchio's error is shown as an info row."""
    import pinocchio as pin

    universal = UNIVERSAL in set(model.kinds.tolist())
    ref = "central differences" if universal else None
    rng = np.random.default_rng(seed + 2)
    data, pdata = model.create_data(), pin_model.createData()
    checks = {
        "id_dq": Check("inverse_dyn._derivatives ∂τ/∂q", ref or "computeRNEADerivatives"),
        "id_dv": Check("inverse_dyn._derivatives ∂τ/∂v", ref or "computeRNEADerivatives"),
        "id_fext": Check("inverse_dyn._derivatives (fext)", ref or "computeRNEADerivatives"),
        "fd_dq": Check("forward_dyn._derivatives ∂q̈/∂q", ref or "computeABADerivatives"),
        "fd_dv": Check("forward_dyn._derivatives ∂q̈/∂v", ref or "computeABADerivatives"),
        "fd_dtau": Check("forward_dyn._derivatives ∂q̈/∂τ", "computeABADerivatives"),
        "fd_fext": Check("forward_dyn._derivatives (fext)", ref or "computeABADerivatives"),
        "dint": Check("integrate_derivatives", "dIntegrate"),
        "ddiff": Check("difference_derivatives", "dDifference"),
    }
    if universal:
        checks["pin"] = Check("computeRNEA/ABADerivatives", "central differences", info=True)
    arg = pin.ArgumentPosition
    for _ in range(samples):
        q, q1 = random_configuration(model, rng), random_configuration(model, rng)
        v, a, tau = rng.uniform(-1.0, 1.0, (3, model.nv))
        fext = rng.uniform(-1.0, 1.0, (model.njoints, 6))
        fext[0] = 0.0
        pin_fext = [pin.Force(f) for f in fext]
        ours = {
            "id": inverse_dynamics_derivatives(model, data, q, v, a),
            "id_fext": inverse_dynamics_derivatives(model, data, q, v, a, fext),
            "fd": forward_dynamics_derivatives(model, data, q, v, tau),
            "fd_fext": forward_dynamics_derivatives(model, data, q, v, tau, fext),
        }
        theirs = {
            "id": [x.copy() for x in pin.computeRNEADerivatives(pin_model, pdata, q, v, a)],
            "id_fext": [x.copy() for x in pin.computeRNEADerivatives(pin_model, pdata, q, v, a, pin_fext)],
            "fd": [x.copy() for x in pin.computeABADerivatives(pin_model, pdata, q, v, tau)],
            "fd_fext": [x.copy() for x in pin.computeABADerivatives(pin_model, pdata, q, v, tau, pin_fext)],
        }
        checks["fd_dtau"].add(ours["fd"][2], theirs["fd"][2])
        if universal:
            pinocchio = theirs
            theirs = {
                "id": dynamics_differences(model, data, False, q, v, a),
                "id_fext": dynamics_differences(model, data, False, q, v, a, fext),
                "fd": dynamics_differences(model, data, True, q, v, tau),
                "fd_fext": dynamics_differences(model, data, True, q, v, tau, fext),
            }
            for key in theirs:
                checks["pin"].add(np.hstack(pinocchio[key][:2]), np.hstack(theirs[key]))
        checks["id_dq"].add(ours["id"][0], theirs["id"][0])
        checks["id_dv"].add(ours["id"][1], theirs["id"][1])
        checks["id_fext"].add(np.hstack(ours["id_fext"][:2]), np.hstack(theirs["id_fext"][:2]))
        checks["fd_dq"].add(ours["fd"][0], theirs["fd"][0])
        checks["fd_dv"].add(ours["fd"][1], theirs["fd"][1])
        checks["fd_fext"].add(np.hstack(ours["fd_fext"][:2]), np.hstack(theirs["fd_fext"][:2]))
        dv = rng.uniform(-2.0, 2.0, model.nv)
        pin_dint = [pin.dIntegrate(pin_model, q, dv, arg.ARG0), pin.dIntegrate(pin_model, q, dv, arg.ARG1)]
        checks["dint"].add(np.hstack(integrate_derivatives(model, q, dv)), np.hstack(pin_dint))
        pin_ddiff = [pin.dDifference(pin_model, q, q1, arg.ARG0), pin.dDifference(pin_model, q, q1, arg.ARG1)]
        checks["ddiff"].add(np.hstack(difference_derivatives(model, q, q1)), np.hstack(pin_ddiff))
    return list(checks.values())


def compare_kinematics(model: Model, pin_model, samples: int = 10, seed: int = 0) -> list[Check]:
    """The kinematics rows: every frame's placement, velocity, classical acceleration and Jacobian in the three
    references, the joint Jacobians, the centre of mass and the centroidal quantities.  The frame rows need the
    same frames as Pinocchio's (a URDF's); the time variations leave out models with a universal joint, whose
    turning first axis Pinocchio 4.1's dJ and dccrba omit (docs/kinematics.md)."""
    import pinocchio as pin

    refs = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    same_frames = [(f.name, f.body) for f in model.frames] == [(f.name, f.parentJoint) for f in pin_model.frames]
    exact_rates = UNIVERSAL not in set(model.kinds.tolist())
    rng = np.random.default_rng(seed + 1)
    data, pdata = model.create_data(), pin_model.createData()
    checks = {"J": Check("joint_jacobians", "computeJointJacobians")}
    if same_frames:
        checks["oMf"] = Check("frame_placements", "updateFramePlacements")
        for name in refs:
            short = {"local_world_aligned": "lwa"}.get(name, name)
            checks["Jf " + name] = Check(f"frame_jacobian {short}", "computeFrameJacobian")
            checks["v " + name] = Check(f"frame_velocity {short}", "getFrameVelocity")
            checks["a " + name] = Check(f"frame_acceleration {short} classical", "getFrameClassicalAcc.")
            if exact_rates:
                checks["dJ " + name] = Check(f"frame_jacobian_time_var. {short}", "getFrameJacobianTimeVar.")
    checks |= {
        "com": Check("center_of_mass (c, ċ, c̈)", "centerOfMass"),
        "Jcom": Check("com_jacobian", "jacobianCenterOfMass"),
        "hg": Check("centroidal_momentum", "computeCentroidalMomentum"),
        "Ag": Check("centroidal_map", "computeCentroidalMap"),
    }
    if exact_rates:
        checks["dAg"] = Check("centroidal_map_time_variation", "dccrba")
    for _ in range(samples):
        q = random_configuration(model, rng)
        v, a = rng.uniform(-1.0, 1.0, (2, model.nv))
        pin.computeJointJacobians(pin_model, pdata, q)
        checks["J"].add(joint_jacobians(model, data, q), pdata.J.reshape(6, -1))
        if same_frames:
            pin.forwardKinematics(pin_model, pdata, q, v, a)
            pin.updateFramePlacements(pin_model, pdata)
            P = frame_placements(model, data, q)
            for f in range(len(model.frames)):
                checks["oMf"].add(P[f], pdata.oMf[f].homogeneous)
                for name, ref in refs.items():
                    checks["v " + name].add(frame_velocity(model, data, q, v, f, name),
                                            pin.getFrameVelocity(pin_model, pdata, f, ref).vector)  # fmt: skip
                    classical = pin.getFrameClassicalAcceleration(pin_model, pdata, f, ref).vector
                    checks["a " + name].add(
                        frame_acceleration(model, data, q, v, a, f, name, classical=True), classical
                    )
            pin.computeJointJacobiansTimeVariation(pin_model, pdata, q, v)
            pin.updateFramePlacements(pin_model, pdata)
            for f in range(len(model.frames)):
                for name, ref in refs.items():
                    J = pin.getFrameJacobian(pin_model, pdata, f, ref)
                    checks["Jf " + name].add(frame_jacobian(model, data, q, f, name), J.reshape(6, -1))
                    if exact_rates:
                        dJ = pin.getFrameJacobianTimeVariation(pin_model, pdata, f, ref)
                        checks["dJ " + name].add(frame_jacobian_time_variation(model, data, q, v, f, name),
                                                 dJ.reshape(6, -1))  # fmt: skip
        pin.centerOfMass(pin_model, pdata, q, v, a)
        ours = np.concatenate(center_of_mass(model, data, q, v, a))
        checks["com"].add(ours, np.concatenate([pdata.com[0], pdata.vcom[0], pdata.acom[0]]))
        checks["Jcom"].add(com_jacobian(model, data, q), pin.jacobianCenterOfMass(pin_model, pdata, q).reshape(3, -1))
        checks["Ag"].add(centroidal_map(model, data, q), pin.computeCentroidalMap(pin_model, pdata, q).reshape(6, -1))
        pin.computeCentroidalMomentum(pin_model, pdata, q, v)
        checks["hg"].add(centroidal_momentum(model, data, q, v), pdata.hg.vector)
        if exact_rates:
            pin.dccrba(pin_model, pdata, q, v)
            checks["dAg"].add(centroidal_map_time_variation(model, data, q, v), pdata.dAg.reshape(6, -1))
    return list(checks.values())


def format_table(checks: list[Check], title: str) -> str:
    """One row per check: the worst sample's error, its tolerance and their ratio, which decides (≤ 1 passes)."""
    rows = [f"{title}", f"{'algorithm':<34} {'pinocchio':<26} {'error':>9} {'tolerance':>9} {'err/tol':>8}  result"]
    for c in checks:
        rows.append(
            f"{c.algorithm:<34} {c.reference:<26} {c.worst_abs:9.1e} {c.worst_tol:9.1e} {c.worst_ratio:8.2g}  "
            f"{'info' if c.info else 'pass' if c.passed else 'FAIL'}"
        )
    return "\n".join(rows)


def as_json(checks: list[Check]) -> list[dict]:
    return [asdict(c) for c in checks]


# ---------------------------------------------------------------------------------------
# Closed loops: against Pinocchio's constraintDynamics (spherical = CONTACT_3D, fixed = CONTACT_6D)
# and, for every cut type, a dense KKT reference built from the explicit DeNOC matrices.
# ---------------------------------------------------------------------------------------


def reference_loop_jacobian(model: Model, q) -> np.ndarray:
    """J from the explicit matrices (world frame): body twists t = N q̇ moved to the cut points and
    expressed in C1.  Shares with loops.py only the definition of the constrained directions."""
    dm = _dm.denoc_matrices(model, q, np.zeros(model.nv))
    R, o, _, _ = _dm.world_poses(model, q)
    rows = []
    for cut in model.cuts:
        frames, blocks = [], []
        for body, Rc, pc in ((cut.body1, cut.R1, cut.p1), (cut.body2, cut.R2, cut.p2)):
            if body:
                Rw, pw = R[body] @ Rc, o[body] + R[body] @ pc
                Nw, No = dm.N[6 * (body - 1) : 6 * body - 3], dm.N[6 * body - 3 : 6 * body]
                Nv = No + np.cross(Nw.T, pw - o[body]).T  # ṗ = ȯ + ω × (p − o)
            else:
                Rw, pw, Nw, Nv = Rc, pc, np.zeros((3, model.nv)), np.zeros((3, model.nv))
            frames.append((Rw, pw))
            blocks.append((Nw, Nv))
        Rc1 = frames[0][0]
        delta = np.vstack([Rc1.T @ (blocks[1][0] - blocks[0][0]), Rc1.T @ (blocks[1][1] - blocks[0][1])])
        sel = cut.rows.copy()
        if cut.loop.type == "universal":
            sel[0, :3] = np.cross(Rc1.T @ frames[1][0] @ cut.axis2, cut.axis)
        rows.append(sel @ delta)
    return np.vstack([*rows, reference_coupling_rows(model)])


def reference_coupling_rows(model: Model) -> np.ndarray:
    """(n_couplings, nv): the rows of θ − m θ_ref, e_k − m e_ref, one per coupling (after the cuts' rows)."""
    rows = np.zeros((len(model.coupled), model.nv))
    for i, c in enumerate(model.coupled):
        rows[i, model.idx_v[c.body]] += 1.0
        rows[i, model.idx_v[c.reference]] -= c.multiplier
    return rows


def reference_loop_bias(model: Model, q, v, h: float = 1e-3) -> np.ndarray:
    """J̇ q̇ = d/dt [J(q(t))] q̇ along q(t) = q ⊕ t q̇ (constant q̇), 4th-order central differences."""

    def Jv(s):
        return reference_loop_jacobian(model, integrate(model, q, v, s)) @ v

    return (-Jv(2 * h) + 8 * Jv(h) - 8 * Jv(-h) + Jv(-2 * h)) / (12 * h)


def reference_constrained_dynamics(model: Model, q, v, tau, baumgarte=(0.0, 0.0)):
    """(q̈, λ) from the dense KKT system [[GIM, −Jᵀ], [J, 0]] [q̈; λ] = [τ − C q̇ − g; γ], GIM and C
    from ``denoc_matrices``; redundant constraints (``independent_rows``) left out, λ = U_r μ_r."""

    dm = _dm.denoc_matrices(model, q, v)
    J = reference_loop_jacobian(model, q)
    kp, kd = baumgarte
    gamma = -reference_loop_bias(model, q, v) - 2 * kd * (J @ v) - kp**2 * loop_residual(model, q)
    U = independent_rows(J)
    Jr, r = U.T @ J, U.shape[1]
    K = np.block([[dm.gim, -Jr.T], [Jr, np.zeros((r, r))]])
    x = np.linalg.solve(K, np.r_[tau - dm.mci @ v - dm.gravity, U.T @ gamma])
    return x[: model.nv], U @ x[model.nv :]


def high_precision_constrained_dynamics(model: Model, pin_model, q, v, tau, digits: int = 50):
    """(q̈, Jᵀλ, J, λ_world) of the closed mechanism from Pinocchio's own ingredients, solved in ``digits``
    decimal digits (mpmath): the mass matrix (crba), the bias forces (nonLinearEffects), and for each cut the
    world Jacobians and classical accelerations (q̈ = 0) of its two points C1, C2 (frames added to the twin):
    J = J₂ − J₁ and γ = −(a₂ − a₁) in world axes, linear rows for a spherical cut and angular ones too for a
    fixed cut; a coupling's row e_k − m e_ref, γ = 0.  Redundant rows are removed (``independent_rows``)
    before the exact solve of the KKT system.  Cuts of other types are not supported (ValueError)."""
    import mpmath
    import pinocchio as pin

    bad = [c.loop.name for c in model.cuts if c.loop.type not in ("spherical", "fixed")]
    if bad:
        raise ValueError(f"high_precision_constrained_dynamics: cuts {bad} are not spherical or fixed")
    pm = pin_model.copy()
    ids = []
    for c in model.cuts:
        ends = enumerate(((c.body1, c.R1, c.p1), (c.body2, c.R2, c.p2)), start=1)
        ids.append([pm.addFrame(pin.Frame(f"{c.loop.name}_C{i}", int(b), pin.SE3(R, p), pin.FrameType.OP_FRAME))
                    for i, (b, R, p) in ends])  # fmt: skip
    pd = pm.createData()
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(pm, pd, q, v)
    pin.computeJointJacobians(pm, pd, q)
    pin.forwardKinematics(pm, pd, q, v, np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    rows, gamma = [], []
    for c, (f1, f2) in zip(model.cuts, ids, strict=True):
        Jd = pin.getFrameJacobian(pm, pd, f2, world) - pin.getFrameJacobian(pm, pd, f1, world)
        ad = (pin.getFrameClassicalAcceleration(pm, pd, f2, world).vector
              - pin.getFrameClassicalAcceleration(pm, pd, f1, world).vector)  # fmt: skip
        keep = slice(0, 3) if c.loop.type == "spherical" else slice(0, 6)
        rows.append(Jd[keep])
        gamma.append(-ad[keep])
    rows.append(reference_coupling_rows(model))  # J̇ q̇ = 0 for them
    gamma.append(np.zeros(len(model.coupled)))
    J, g = np.vstack(rows), np.concatenate(gamma)
    U = independent_rows(J)
    Jr, gr, r, n = U.T @ J, U.T @ g, U.shape[1], model.nv
    K = np.block([[M, -Jr.T], [Jr, np.zeros((r, r))]])
    with mpmath.workdps(digits):
        x = mpmath.lu_solve(mpmath.matrix(K.tolist()), mpmath.matrix(np.r_[tau - h, gr].tolist()))
        a = np.array([float(x[i]) for i in range(n)])
        mu = np.array([float(x[n + i]) for i in range(r)])
        JTmu = np.array([float(sum(mpmath.mpf(Jr[i, k]) * x[n + i] for i in range(r))) for k in range(n)])
    return a, JTmu, J, U @ mu


def loop_reactions_in_world(model: Model, q, lam: np.ndarray) -> np.ndarray:
    """λ of spherical or fixed cuts (C1 components, [angular; linear] rows) in the world-axis layout of
    ``high_precision_constrained_dynamics`` (linear, then angular for a fixed cut); couplings as they are."""
    data = model.create_data()
    forward_kinematics(model, data, q)
    out, i = [], 0
    for c in model.cuts:
        Rc1 = data.oR[c.body1] @ c.R1
        n = c.n_constraints
        part = lam[i : i + n]
        out.append(Rc1 @ part if n == 3 else np.r_[Rc1 @ part[3:], Rc1 @ part[:3]])
        i += n
    out.append(lam[i:])
    return np.concatenate(out)


def pinocchio_loop_constraints(model: Model, pin_model):
    """Pinocchio's data and constraint models/datas for the cuts of ``model``, all spherical
    (CONTACT_3D) or fixed (CONTACT_6D), initialised for ``pin.constraintDynamics``: in Pinocchio's own containers
    (``StdVec_RigidConstraintModel``/``Data``), which it would otherwise convert from Python lists on every call."""
    import pinocchio as pin

    pd = pin_model.createData()
    cms = pin.StdVec_RigidConstraintModel(to_pinocchio_constraints(model, pin_model))
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pin.initConstraintDynamics(pin_model, pd, cms, cds)
    return pd, cms, cds


def pinocchio_constrained_dynamics(model: Model, pin_model, q, v, tau):
    """Pinocchio's constraintDynamics for a model whose cuts are all spherical or fixed, with λ in
    denoc_pin's convention (Pinocchio's λ acts on link1 as [linear; angular]; ours on link2 as
    [angular; linear])."""
    import pinocchio as pin

    pd, cms, cds = pinocchio_loop_constraints(model, pin_model)
    a = pin.constraintDynamics(pin_model, pd, q, v, tau, cms, cds, pin.ProximalSettings(1e-14, 1e-12, 100)).copy()
    lam, i = [], 0
    for c in model.cuts:
        f = -np.array(pd.lambda_c[i : i + c.loop.n_constraints])
        lam.append(f if c.loop.type == "spherical" else np.r_[f[3:], f[:3]])
        i += c.loop.n_constraints
    return a, np.concatenate(lam)


def closed_configurations(model: Model, samples: int, seed: int = 0) -> list[np.ndarray]:
    """Configurations that close the loops: the first of q = neutral and random guesses that
    assembles, then random ones near it.  AssemblyError if none of 30 guesses closes the loops."""

    rng = np.random.default_rng(seed)
    base = None
    for guess in [neutral(model)] + [random_configuration(model, rng) for _ in range(29)]:
        try:
            base = assemble(model, guess)
            break
        except AssemblyError as e:
            error = e
    if base is None:
        raise error
    out = [base]
    tries = 0
    while len(out) < samples and tries < 20 * samples:
        tries += 1
        try:
            out.append(assemble(model, integrate(model, base, rng.uniform(-0.3, 0.3, model.nv))))
        except AssemblyError:
            continue
    return out


def _loop_derivative_rows(model: Model, pin_model, q, rng, checks: dict) -> None:
    """``constrained_forward_dynamics_derivatives`` (Baumgarte (5, 3), velocities off the manifold) along a random
    direction in q, in v and in τ, against central differences of the 50-digit referee (``tools.referee``) solving
    on the same basis of J's range; where Pinocchio's constraint is ours, ∂q̈/∂τ against its
    ``computeConstraintDynamicsDerivatives`` at a consistent velocity (off the manifold the two constraints differ)."""
    import pinocchio as pin

    data = model.create_data()
    nv, z, bg = model.nv, np.zeros(model.nv), (5.0, 3.0)
    v, tau = rng.uniform(-1.0, 1.0, (2, nv))
    out = constrained_forward_dynamics_derivatives(model, data, q, v, tau, baumgarte=bg)
    dirs = [(rng.standard_normal(nv), z, z), (z, rng.standard_normal(nv), z), (z, z, rng.standard_normal(nv))]
    ref = Referee(model, q, baumgarte=bg, basis=data.reaction_basis)
    for w, (da, dl) in enumerate(ref.derivatives(v, tau, dirs)):
        checks["d_hp"].add(out[w] @ dirs[w][w], da)
        checks["dl_hp"].add(out[3 + w] @ dirs[w][w], dl)
    if "d_pin" in checks:
        J = loop_jacobian(model, q, data)
        v = v - np.linalg.pinv(J) @ (J @ v)
        pd, cms, cds = pinocchio_loop_constraints(model, pin_model)
        prox = pin.ProximalSettings(1e-14, 1e-12, 100)
        pin.constraintDynamics(pin_model, pd, q, v, tau, cms, cds, prox)
        pin.computeConstraintDynamicsDerivatives(pin_model, pd, cms, cds, prox)
        checks["d_pin"].add(constrained_forward_dynamics_derivatives(model, data, q, v, tau)[2], pd.ddq_dtau)


def compare_loops(model: Model, pin_model, samples: int = 10, seed: int = 0) -> list[Check]:
    """The closed-loop algorithms on ``samples`` closed states (``closed_configurations``): always against the
    dense KKT reference (redundant rows out); where every cut is spherical or fixed, against the 50-digit solve
    from Pinocchio's own mass matrix, bias forces and constraint Jacobian, and beside it Pinocchio's
    ``constraintDynamics`` (judged where the constraints are independent, shown only where they are redundant:
    its proximal iterations do not converge there); closed-loop inverse dynamics (every joint actuated) fed back
    into forward dynamics."""

    checks = {
        "fd_ref": Check("constrained_fd q̈", "dense KKT (denoc_matrices)"),
        "lam_ref": Check("constrained_fd λ", "dense KKT (denoc_matrices)"),  # "(independent)" when redundant
        "jac": Check("loop_jacobian", "N of denoc_matrices"),
        "id": Check("constrained_id → constrained_fd", "prescribed q̈"),
    }
    pin_ok = all(c.loop.type in ("spherical", "fixed") for c in model.cuts)
    try:
        qs = closed_configurations(model, samples, seed)
    except AssemblyError:
        return [Check("assemble (closing the loops)", "loop_residual = 0", float("inf"), float("inf"), False)]
    redundant = any(independent_rows(loop_jacobian(model, q)).shape[1] < model.n_constraints for q in qs)
    if redundant:
        checks["lam_ref"].algorithm = "constrained_fd λ (independent)"
    if pin_ok:
        checks["fd_hp"] = Check("constrained_fd q̈", "50 digits (pin M, h, J)")
        checks["JTl_hp"] = Check("constrained_fd Jᵀλ", "50 digits (pin M, h, J)")
        checks["lam_hp"] = Check("constrained_fd λ (independent)", "50 digits (pin M, h, J)")
        checks["fd_pin"] = Check(
            "constraintDynamics q̈" if redundant else "constrained_fd q̈",
            "50 digits (pin M, h, J)" if redundant else "constraintDynamics",
            info=redundant,
        )
        if not redundant:
            checks["lam_pin"] = Check("constrained_fd λ", "constraintDynamics")
    checks["d_hp"] = Check("constrained_fd derivatives q̈", "50-digit differences (referee)")
    checks["dl_hp"] = Check("constrained_fd derivatives λ", "50-digit differences (referee)")
    if pin_ok and not redundant and not model.coupled:
        checks["d_pin"] = Check("constrained_fd derivatives ∂q̈/∂τ", "computeConstraintDynamicsDerivatives")
    rng = np.random.default_rng(seed)
    data = model.create_data()
    for i, q in enumerate(qs):
        if i == 0:  # the derivatives on the first state, three random directions (q, v, τ), with their own draws
            _loop_derivative_rows(model, pin_model, q, np.random.default_rng(seed + 1), checks)
        J = loop_jacobian(model, q, data)
        v = rng.uniform(-1.0, 1.0, model.nv)
        v = v - np.linalg.pinv(J) @ (J @ v)
        tau = rng.uniform(-1.0, 1.0, model.nv)
        a, lam = constrained_forward_dynamics(model, data, q, v, tau)
        a_ref, lam_ref = reference_constrained_dynamics(model, q, v, tau)
        checks["fd_ref"].add(a, a_ref)
        if redundant:  # λ along redundant directions is statically indeterminate: each solve picks its own
            U = independent_rows(J)
            checks["lam_ref"].add(U.T @ lam, U.T @ lam_ref)
        else:
            checks["lam_ref"].add(lam, lam_ref)
        checks["jac"].add(J, reference_loop_jacobian(model, q))
        tau_id, _ = constrained_inverse_dynamics(model, data, q, v, a, actuated=model.names[1:])
        checks["id"].add(constrained_forward_dynamics(model, data, q, v, tau_id)[0], a)
        if pin_ok:
            a_hp, jtl_hp, Jw, mu = high_precision_constrained_dynamics(model, pin_model, q, v, tau)
            U = independent_rows(Jw)
            checks["fd_hp"].add(a, a_hp)
            checks["JTl_hp"].add(J.T @ lam, jtl_hp)
            checks["lam_hp"].add(U.T @ loop_reactions_in_world(model, q, lam), U.T @ mu)
            if model.coupled:
                continue  # Pinocchio's constraint models have no coupling
            a_pin, lam_pin = pinocchio_constrained_dynamics(model, pin_model, q, v, tau)
            if redundant:
                checks["fd_pin"].add(a_pin, a_hp)
            else:
                checks["fd_pin"].add(a, a_pin)
                checks["lam_pin"].add(lam, lam_pin)
    return list(checks.values())
