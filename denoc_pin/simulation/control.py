"""Joint-space feedback: the PD law a legged robot stands and walks with, in a form the compiled contact run
evaluates inside its loop (``contact_run``) and any other run calls as ``tau(t, q, v)``."""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import difference
from ..core.joints import FREE_FLYER
from ..core.records import JointLaw
from ..model import Model, ModelError, configuration, vector

__all__ = ["JointPD", "run_inputs"]


class JointPD:
    """τ = τ_ff + K_p (q_ref ⊖ q) + K_d (v_ref − v), joint by joint (⊖: ``dp.difference``, so a rotation's error is
    its tangent vector).

    kp, kd: a number for every joint that is not a free-flyer (no motor drives a floating base: its six entries get
    0), or an (nv,) array taken as it is.  q_ref: (nq,); v_ref, tau_ff: (nv,), zero when None.  Pass it as
    ``dp.simulate(…, tau=dp.JointPD(…))``: a run with contacts evaluates it in compiled code, every other run calls
    it as ``tau(t, q, v)``."""

    def __init__(self, model: Model, kp, kd, q_ref, v_ref=None, tau_ff=None):
        if not isinstance(model, Model):
            raise ModelError(f"JointPD needs a denoc_pin.Model, got {type(model).__name__}")
        actuated = np.ones(model.nv)
        for k in range(1, model.njoints):
            if model.kinds[k] == FREE_FLYER:
                actuated[model.idx_v[k] : model.idx_v[k] + model.nvs[k]] = 0.0
        gains = []
        for name, k in (("kp", kp), ("kd", kd)):
            if np.ndim(k) == 0:
                try:
                    k = float(k)
                except (TypeError, ValueError):
                    raise ValueError(f"JointPD {name} must be a number or an ({model.nv},) array, got {k!r}") from None
                gain = np.full(model.nv, k)
            else:
                gain = np.array(vector(k, model.nv, f"JointPD {name}"), dtype=float)
            if not (np.isfinite(gain).all() and (gain >= 0).all()):
                raise ValueError(f"JointPD {name} must be finite and >= 0, got {k!r}")
            gains.append(gain * actuated if np.ndim(k) == 0 else gain)
        self.model = model
        self.kp, self.kd = gains
        # own copies, writable and C-contiguous: the compiled run takes them as they are
        self.q_ref = np.array(configuration(model, q_ref, "JointPD q_ref"), dtype=float)
        self.v_ref = np.zeros(model.nv) if v_ref is None else np.array(vector(v_ref, model.nv, "JointPD v_ref"))
        self.tau_ff = np.zeros(model.nv) if tau_ff is None else np.array(vector(tau_ff, model.nv, "JointPD tau_ff"))

    def law(self) -> JointLaw:
        """What the compiled run evaluates (``core.tables.JOINT_LAW``; feedback: a gain not zero)."""
        feedback = bool(self.kp.any() or self.kd.any())
        return JointLaw(self.kp, self.kd, self.q_ref, self.v_ref, self.tau_ff, feedback)

    def __call__(self, t: float, q, v) -> np.ndarray:
        """τ at (q, v) (t is not read: the law does not depend on time)."""
        return self.tau_ff + self.kp * difference(self.model, q, self.q_ref) + self.kd * (self.v_ref - np.asarray(v))

    def __repr__(self) -> str:
        return f"JointPD(model={self.model.name!r}, kp={self.kp}, kd={self.kd})"


def run_inputs(model: Model, q0s, v0s, tau, who: str) -> tuple[np.ndarray, np.ndarray, object]:
    """The initial states and τ of many runs, checked: q0s (B, nq) each a configuration, v0s (B, nv) finite (None:
    zeros), tau None, a constant (nv,) or a ``JointPD`` of ``model`` (a callable cannot leave Python).  ``who``: the
    caller's name for the messages."""
    q0s = np.atleast_2d(np.asarray(q0s, dtype=float))
    B = len(q0s)
    q0s = np.stack([configuration(model, q, f"q0s[{i}]") for i, q in enumerate(q0s)]) if B else q0s
    v0s = np.zeros((B, model.nv)) if v0s is None else np.atleast_2d(np.asarray(v0s, dtype=float))
    if v0s.shape != (B, model.nv) or not np.isfinite(v0s).all():
        raise ValueError(f"v0s must be finite and (B, nv) = ({B}, {model.nv}) like q0s, got {v0s.shape}")
    if callable(tau) and not isinstance(tau, JointPD):
        raise ValueError(f"{who} takes tau None, a constant (nv,) array or a dp.JointPD, not a callable")
    if isinstance(tau, JointPD) and tau.model is not model:
        raise ValueError(f"tau is a JointPD of model {tau.model.name!r}, not of the model run ({model.name!r})")
    if tau is not None and not isinstance(tau, JointPD):
        tau = vector(tau, model.nv, "tau")
    return np.ascontiguousarray(q0s), np.ascontiguousarray(v0s), tau
