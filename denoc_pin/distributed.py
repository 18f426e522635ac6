"""``dp.distributed``: sweeps, datasets and fleet validation on a Dask cluster (``tools/distributed.py``).

Loaded on first use of ``dp.distributed`` (or ``import denoc_pin.distributed``), so that ``import denoc_pin``
does not import Dask; it needs the ``[dask]`` extra.
"""

from .tools.distributed import (  # noqa: F401
    EDIT_KEYS,
    KernelsPlugin,
    apply_edits,
    client,
    dataset,
    format_rows,
    robot_files,
    simulate_many,
    validate_many,
    warm_kernels,
)

__all__ = [
    "EDIT_KEYS",
    "KernelsPlugin",
    "apply_edits",
    "client",
    "dataset",
    "format_rows",
    "robot_files",
    "simulate_many",
    "validate_many",
    "warm_kernels",
]
