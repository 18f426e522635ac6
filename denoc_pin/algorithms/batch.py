"""Batches of states over all cores: one threaded loop for inverse and forward dynamics."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..layout import data_views
from .forward import aba_entry
from .inverse import rnea_entry


@njit(cache=True, parallel=True)
def run_batch(forward, nchunks, mi, mf, ws0, Q, V, X, out):
    """Table 1 (forward=False: X = q̈, out = τ) or Table 3 (forward=True: X = τ, out = q̈) for
    every row, the batch cut into ``nchunks`` pieces, each with its own copy of the workspace."""
    B = Q.shape[0]
    status = np.zeros(nchunks, dtype=np.int64)
    for c in numba.prange(nchunks):
        ws = ws0.copy()
        views = data_views(ws, mi)
        result = views[18] if forward else views[16]  # ddq or tau
        for i in range(c * B // nchunks, (c + 1) * B // nchunks):
            s = aba_entry(mi, mf, ws, Q[i], V[i], X[i]) if forward else rnea_entry(mi, mf, ws, Q[i], V[i], X[i])
            if s:
                status[c] = s
            out[i, :] = result
    return status.max()


def batch(forward: bool, model, data, Q, V, X) -> tuple[np.ndarray, int]:
    """(B, nv) results and the worst kernel status."""
    out = np.empty((Q.shape[0], model.nv))
    nchunks = max(1, min(Q.shape[0], 4 * numba.get_num_threads()))
    return out, run_batch(forward, nchunks, model._mi, model._mf, data._ws, Q, V, X, out)
