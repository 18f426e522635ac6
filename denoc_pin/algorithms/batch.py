"""Batches of states over all cores: one threaded loop for inverse and forward dynamics."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..layout import data_views, model_views
from .forward import aba_core
from .inverse import rnea_core


@njit(cache=True, parallel=True)
def run_batch(forward, nchunks, mi, mf, ws0, Q, V, X, out):
    """Table 1 (forward=False: X = q̈, out = τ) or Table 3 (forward=True: X = τ, out = q̈) for
    every row, the batch cut into ``nchunks`` pieces, each with its own copy of the workspace."""
    B = Q.shape[0]
    status = np.zeros(nchunks, dtype=np.int64)
    mv = model_views(mi, mf)  # views built once per batch (model) and once per chunk (workspace)
    for c in numba.prange(nchunks):
        ws = ws0.copy()
        dv = data_views(ws, mi)
        result = dv[18] if forward else dv[16]  # ddq or tau
        for i in range(c * B // nchunks, (c + 1) * B // nchunks):
            s = aba_core(mv, dv, Q[i], V[i], X[i]) if forward else rnea_core(mv, dv, Q[i], V[i], X[i])
            if s:
                status[c] = s
            out[i, :] = result
    return status.max()


def batch(forward: bool, model, data, Q, V, X) -> tuple[np.ndarray, int]:
    """(B, nv) results and the worst kernel status."""
    out = np.empty((Q.shape[0], model.nv))
    nchunks = max(1, min(Q.shape[0], 4 * numba.get_num_threads()))
    return out, run_batch(forward, nchunks, model._mi, model._mf, data._ws, Q, V, X, out)
