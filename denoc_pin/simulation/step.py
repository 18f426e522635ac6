"""One integrator step and its exact Jacobians: what an iLQR or DDP solver, or an MPC's linearisation, asks for.

``step`` is one step of ``simulate``'s RK4 (Munthe-Kaas' RKMK on the configuration space, ``simulate``'s module
docstring) or of semi-implicit Euler (v⁺ = v + dt q̈(q, v, τ), q⁺ = q ⊕ dt v⁺, the step of Crocoddyl's
``IntegratedActionModelEuler``).  ``step_derivatives`` differentiates the same arithmetic by the chain rule through
its stages: the analytical forward-dynamics derivatives at each stage point (``forward_dynamics_derivatives``; a
model with loops or couplings: ``constrained_forward_dynamics_derivatives``, with simulate's Baumgarte terms), the
integrate derivatives of each stage point and of the end (``integrate_derivatives``), and the derivative of the
RKMK correction K = J_r(δ)⁻¹ v (``joints.dexp_inv_derivatives_kernel``).  No finite differences.

Perturbations of q are tangent (q ⊕ δq), at the step's start for the inputs and at q⁺ for the output, so A is
2nv x 2nv as Crocoddyl's Fx: rows (δq⁺, δv⁺), columns (δq, δv).
"""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import dexp_inv, integrate
from ..algorithms.derivatives_api import forward_dynamics_derivatives, integrate_derivatives
from ..algorithms.dynamics_api import forward_dynamics
from ..contact import ContactSettings, ContactStepper
from ..core.lie_groups import dexp_inv_derivatives_kernel
from ..loops import constrained_forward_dynamics, constrained_forward_dynamics_derivatives
from ..loops.types import baumgarte_gains
from ..model import Data, Model, configuration, vector

__all__ = ["STEP_METHODS", "step", "step_derivatives"]

STEP_METHODS = ("rk4", "euler")
BAUMGARTE = (50.0, 50.0)  # simulate's default (kp, kd) for a model with loops
_C = (0.5, 0.5, 1.0)  # RK4's stage offsets c_i of the next stage point
_W = (1.0, 2.0, 2.0, 1.0)  # and its weights


def _check(model: Model, data: Data, q, v, tau, dt, method: str, what: str, baumgarte):
    if method not in STEP_METHODS:
        raise ValueError(f"{what}: method must be one of {', '.join(STEP_METHODS)}; got {method!r}")
    baumgarte_gains(baumgarte)
    dt = float(dt)
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"{what}: dt must be a positive number, got {dt}")
    q = np.ascontiguousarray(configuration(model, q))
    v = np.ascontiguousarray(vector(v, model.nv, "v"))
    tau = np.zeros(model.nv) if tau is None else np.ascontiguousarray(vector(tau, model.nv, "tau"))
    return q, v, tau, dt


def _accel(model: Model, data: Data, q, v, tau, baumgarte) -> np.ndarray:
    """q̈ of a stage: the tree's forward dynamics, or the closed loops' (Schiehlen eq. 19–20, Baumgarte's terms)."""
    if model.n_constraints:
        return constrained_forward_dynamics(model, data, q, v, tau, baumgarte=baumgarte)[0]
    return forward_dynamics(model, data, q, v, tau)


def step(
    model: Model, data: Data, q, v, tau, dt: float, method: str = "rk4", baumgarte=BAUMGARTE
) -> tuple[np.ndarray, np.ndarray]:
    """(q⁺, v⁺) after one step of ``dt`` under a constant τ (None: unactuated): ``method`` "rk4" (``simulate``'s step,
    to rounding) or "euler" (semi-implicit).  A model with loops or couplings steps its constrained dynamics with
    ``baumgarte`` = (kp, kd), ``simulate``'s default."""
    q, v, tau, dt = _check(model, data, q, v, tau, dt, method, "step", baumgarte)
    if method == "euler":
        v1 = v + dt * _accel(model, data, q, v, tau, baumgarte)
        return integrate(model, q, v1, dt), v1
    x, vs = np.zeros(model.nv), v
    Ks, As = np.zeros(model.nv), np.zeros(model.nv)
    for i in range(4):
        a = _accel(model, data, integrate(model, q, x), vs, tau, baumgarte)
        K = dexp_inv(model, x, vs)
        Ks += _W[i] * K
        As += _W[i] * a
        if i < 3:
            x, vs = _C[i] * dt * K, v + _C[i] * dt * a
    return integrate(model, q, Ks / 6.0, dt), v + dt * As / 6.0


def step_derivatives(
    model: Model, data: Data, q, v, tau, dt: float, method: str | None = None, baumgarte=BAUMGARTE, ground=None,
    contact=None, wrt=("q", "v", "tau"), masses=(),
):  # fmt: skip
    """(A, B): the Jacobians of one ``step`` — A = ∂(q⁺, v⁺)/∂(q, v) (2nv, 2nv) and B = ∂(q⁺, v⁺)/∂τ (2nv, nv), in
    the tangent spaces at q and q⁺ — exact through the stages (chain rule; module docstring); a closed-loop model's
    through ``constrained_forward_dynamics_derivatives`` at each stage.

    method: "rk4" (the default) or "euler"; with ``ground`` or ``contact`` (a ``dp.Ground``, ``dp.ContactSettings``)
    "semi-implicit" (the default, and the only one: any other is refused): the contact step ``simulate`` takes
    (its loops solved with the contacts) and its Jacobians by implicit differentiation at the solution,
    as a ``ContactStepJacobians`` (A, B, each contact's mode and whether it sits at a switch, the step's result;
    ``contact.derivatives``), with respect to ``wrt`` and to the masses of the bodies named in ``masses``;
    ``ContactStepper(model, ground, contact, dt).derivatives``
    does the same without building the stepper each call."""
    if ground is not None or contact is not None:
        if method not in (None, "semi-implicit"):
            raise ValueError(f"step_derivatives: with contacts (ground= or contact=) the step is semi-implicit Euler: "
                             f"method must be semi-implicit (the default); got {method!r}")  # fmt: skip
        q, v, tau, dt = _check(model, data, q, v, tau, dt, "euler", "step_derivatives", baumgarte)
        return ContactStepper(model, ground, contact or ContactSettings(), dt).derivatives(q, v, tau, wrt, masses)
    method = "rk4" if method is None else method
    q, v, tau, dt = _check(model, data, q, v, tau, dt, method, "step_derivatives", baumgarte)
    nv = model.nv
    eye = np.eye(nv)
    Dq = np.hstack([eye, np.zeros((nv, 2 * nv))])  # d(q, v, τ) of the inputs: columns (δq, δv, δτ)
    Dv = np.hstack([np.zeros((nv, nv)), eye, np.zeros((nv, nv))])
    Dtau = np.hstack([np.zeros((nv, 2 * nv)), eye])

    def accel(qi, Dqi, vi, Dvi):
        """q̈ at (qi, vi, τ) and its derivative D q̈ = ∂q̈/∂q Dqi + ∂q̈/∂v Dvi + ∂q̈/∂τ Dτ."""
        if model.n_constraints:
            fq, fv, ft = constrained_forward_dynamics_derivatives(model, data, qi, vi, tau, baumgarte=baumgarte)[:3]
        else:
            fq, fv, ft = forward_dynamics_derivatives(model, data, qi, vi, tau)
        return data.ddq.copy(), fq @ Dqi + fv @ Dvi + ft @ Dtau

    def end(x, Dx):
        """q ⊕ x and its tangent derivative Ad(exp x)⁻¹ Dq + J_r(x) Dx."""
        jq, jx = integrate_derivatives(model, q, x)
        return integrate(model, q, x), jq @ Dq + jx @ Dx

    if method == "euler":
        a, Da = accel(q, Dq, v, Dv)
        v1, Dv1 = v + dt * a, Dv + dt * Da
        q1, Dq1 = end(dt * v1, dt * Dv1)
    else:
        x, Dx = np.zeros(nv), np.zeros((nv, 3 * nv))
        vs, Dvs = v, Dv
        Ks, DKs = np.zeros(nv), np.zeros((nv, 3 * nv))
        As, DAs = np.zeros(nv), np.zeros((nv, 3 * nv))
        kx, kv = np.empty((nv, nv)), np.empty((nv, nv))
        for i in range(4):
            qi, Dqi = end(x, Dx)
            a, Da = accel(qi, Dqi, vs, Dvs)
            # K_i = J_r(δ_i)⁻¹ v_i and its derivative
            dexp_inv_derivatives_kernel(model.kinds, model.idx_v, model.nvs, x, vs, kx, kv)
            K, DK = dexp_inv(model, x, vs), kx @ Dx + kv @ Dvs
            Ks, DKs = Ks + _W[i] * K, DKs + _W[i] * DK
            As, DAs = As + _W[i] * a, DAs + _W[i] * Da
            if i < 3:
                h = _C[i] * dt
                x, Dx = h * K, h * DK
                vs, Dvs = v + h * a, Dv + h * Da
        q1, Dq1 = end(dt * Ks / 6.0, dt * DKs / 6.0)
        Dv1 = Dv + dt * DAs / 6.0
    D = np.vstack([Dq1, Dv1])
    return D[:, : 2 * nv].copy(), D[:, 2 * nv :].copy()
