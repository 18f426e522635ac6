"""The statuses a compiled entry returns, and the error each one becomes: declared once, every code unique.

A kernel returns an int64 status rather than raising (numba's exceptions cost a Python object per call and cannot
carry the model's names); the public functions turn a status into the error the user sees (``raise_for_status``).
``SINGULAR`` is a range: 2 + k means the articulated inertia Î_k of joint k is not positive definite.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .model import ModelError, SingularConfigurationError

__all__ = [
    "BAD_FRAME",
    "BAD_GAINS",
    "BAD_LENGTH",
    "NOT_FINITE",
    "NOT_READY",
    "NOT_STAMPED",
    "NO_MASS",
    "OK",
    "SINGULAR",
    "STATUSES",
    "TOO_MANY_CONTACTS",
    "TOO_SMALL_STEP",
    "Status",
    "declare",
    "raise_for_status",
]


class Status(NamedTuple):
    name: str
    code: int
    meaning: str


def declare(table: tuple[Status, ...]) -> dict[str, int]:
    """{name: code} of a status table; a ValueError if two statuses share a name or a code, or a code falls in
    the range ``SINGULAR`` reserves (every code ≥ 2)."""
    names, codes = {}, {}
    for s in table:
        if s.name in names:
            raise ValueError(f"status {s.name!r} is declared twice")
        clash = codes.get(s.code) or (s.name != "SINGULAR" and s.code >= 2 and "SINGULAR")
        if clash:
            raise ValueError(f"status {s.name!r} has code {s.code}, which {clash!r} has already")
        names[s.name], codes[s.code] = s.code, s.name
    return names


STATUSES = (
    Status("OK", 0, "the result is in the workspace or the output array"),
    Status("NOT_FINITE", 1, "an input array has a NaN or an infinite entry"),
    Status("SINGULAR", 2, "2 + k: joint k moves no mass here (Î_k of Table 3 is not positive definite)"),
    Status("BAD_LENGTH", -1, "q, v or a third state array has the wrong length for the model"),
    Status("NOT_STAMPED", -2, "a workspace made for another model (or loop workspace for other constraints)"),
    Status("NOT_READY", -3, "the fast path refused an argument not in the kernels' form: take the checked path"),
    Status("NO_MASS", -4, "the model has no mass: its centre of mass is undefined"),
    Status("BAD_FRAME", -5, "a frame index out of range"),
    Status("TOO_SMALL_STEP", -6, "an adaptive integrator's step fell below 10 ulp of t"),
    Status("BAD_GAINS", -7, "Baumgarte gains or an rcond that are not finite and non-negative"),
    Status("TOO_MANY_CONTACTS", -8, "a step's shape pairs gave more contact points than the scene holds"),
)
_CODES = declare(STATUSES)
OK, NOT_FINITE, SINGULAR = _CODES["OK"], _CODES["NOT_FINITE"], _CODES["SINGULAR"]
BAD_LENGTH, NOT_STAMPED, NOT_READY = _CODES["BAD_LENGTH"], _CODES["NOT_STAMPED"], _CODES["NOT_READY"]
NO_MASS, BAD_FRAME = _CODES["NO_MASS"], _CODES["BAD_FRAME"]
TOO_SMALL_STEP, BAD_GAINS = _CODES["TOO_SMALL_STEP"], _CODES["BAD_GAINS"]
TOO_MANY_CONTACTS = _CODES["TOO_MANY_CONTACTS"]


def raise_for_status(model, status: int, q, v, x, xname: str) -> None:
    """Turn a kernel's status into the error the user should see; nothing for ``OK``.  q, v, x: the arrays the
    kernel was given (x named ``xname``; v or x None when not given)."""
    if status == OK:
        return
    if status == NOT_FINITE:
        for arr, name in ((q, "q"), (v, "v"), (x, xname)):
            if arr is None:
                continue
            bad = ~np.isfinite(arr)
            if bad.any():
                where = np.argwhere(bad).tolist() if np.ndim(arr) > 1 else np.flatnonzero(bad).tolist()
                raise ValueError(f"{name} has non-finite entries (NaN or inf) at indices {where[:10]}")
        raise ValueError("non-finite input")
    if status >= SINGULAR:
        raise SingularConfigurationError(
            f"the generalized inertia matrix is singular at this configuration: joint {model.names[status - 2]!r} "
            "moves no mass (articulated inertia Î_k is not positive definite)"
        )
    if status == NO_MASS:
        raise ModelError(f"model {model.name!r} has no mass: its centre of mass is undefined")
    if status == BAD_LENGTH:
        raise ValueError(f"q, v or {xname} of the wrong length for model {model.name!r} (nq={model.nq}, nv={model.nv})")
    if status == BAD_GAINS:
        raise ValueError("the Baumgarte gains and rcond must be finite and non-negative")
    if status == TOO_MANY_CONTACTS:
        raise ValueError(
            f"model {model.name!r}: the shape pairs touching in one step gave more contact points than "
            "ContactSettings.pair_contacts holds; raise it (each touching pair gives up to 4)"
        )
    name = next((s.name for s in STATUSES if s.code == status), "unknown")
    raise RuntimeError(f"a compiled entry returned status {status} ({name}) where the checked path rules it out")
