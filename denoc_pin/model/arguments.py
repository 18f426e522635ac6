"""Argument checks shared by the algorithms: cheap on the good path, explicit on the bad one."""

from __future__ import annotations

import numpy as np

from ..core.joints import JOINTS
from ..core.spatial import from_pinocchio_order
from .data import Data
from .mimic import MimicModel
from .model import Model, ModelError

__all__ = ["check_data", "column", "configuration", "external_forces", "vector"]


def check_data(model: Model, data: Data) -> None:
    if type(model) is MimicModel:
        raise ModelError(model.refusal("such function"))
    if not isinstance(data, Data) or data.model is not model:
        other = getattr(getattr(data, "model", None), "name", None)
        raise ValueError(
            f"data was not created by this model ({model.name!r})"
            + (f" but by model {other!r}" if other is not None else f" (got {type(data).__name__})")
            + "; use data = model.create_data()"
        )


def column(a: np.ndarray, n: int) -> np.ndarray:
    """An (n, 1) column (Pinocchio's examples write ``np.random.rand(model.nv, 1)``) as the (n,) vector it is."""
    return a[:, 0] if a.shape == (n, 1) else a


def vector(x, n: int, what: str) -> np.ndarray:
    """x, (n,) or an (n, 1) column, as a float64 (n,) array, or a ValueError naming the expected shape and any
    non-finite entry."""
    a = column(np.asarray(x, dtype=np.float64), n)
    if a.shape != (n,):
        if a.ndim == 2 and a.shape[0] == n:
            raise ValueError(f"{what} must have shape ({n},) or ({n}, 1), got {a.shape}: a batch of B states is "
                             f"(B, {n}), one state a row; for B states in columns pass {what}.T")  # fmt: skip
        raise ValueError(f"{what} must have shape ({n},), got {a.shape} (wrong argument size: expected {n}, got "
                         f"{a.size})")  # fmt: skip
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a))
        raise ValueError(f"{what} has non-finite entries (NaN or inf) at indices {bad.tolist()}")
    return a


def configuration(model: Model, q, what: str = "q") -> np.ndarray:
    """q as a float64 (nq,) array; a q that lacks a floating root's entries is named as such."""
    a = column(np.asarray(q, dtype=np.float64), model.nq)
    if a.shape != (model.nq,) and model.njoints > 1 and JOINTS[int(model.kinds[1])].root:
        root = int(model.kinds[1])
        if a.ndim == 1 and a.shape[0] == model.nq - model.nqs[1]:
            raise ValueError(
                f"{what} must have shape ({model.nq},), got {a.shape}: this model has a {JOINTS[root].name} root "
                f"joint {model.names[1]!r}, so {what} starts with its {model.nqs[1]} entries {JOINTS[root].q_layout}; "
                f"{a.shape[0]} is the size of a fixed-base {what}"
            )
    return vector(a, model.nq, what)


def external_forces(model: Model, fext) -> np.ndarray:
    """Pinocchio-style fext (one spatial force per joint, joint frame, [linear; angular] or
    pinocchio.Force) as an (njoints, 6) array in DeNOC order [n; f]."""
    if isinstance(fext, np.ndarray) and fext.dtype != object:
        F = np.asarray(fext, dtype=np.float64)
    else:
        items = list(fext)
        rows = []
        for f in items:
            if hasattr(f, "linear") and hasattr(f, "angular"):
                rows.append(np.concatenate([np.asarray(f.linear, float), np.asarray(f.angular, float)]))
            else:
                rows.append(np.asarray(f, dtype=float))
        try:
            F = np.array(rows, dtype=np.float64)
        except ValueError:
            raise ValueError("fext must be (njoints, 6) [linear, angular] or a list of pinocchio.Force") from None
    if F.shape != (model.njoints, 6):
        raise ValueError(
            f"fext must have shape ({model.njoints}, 6) (one [linear, angular] force per joint, index 0 = universe),"
            f" got {F.shape}"
        )
    if not np.isfinite(F).all():
        raise ValueError("fext has non-finite entries (NaN or inf)")
    return np.ascontiguousarray(from_pinocchio_order(F))
