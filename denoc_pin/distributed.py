"""``dp.distributed``: sweeps, datasets and fleet validation on a Dask cluster (``tools/dask_sweeps.py``).

Loaded on first use of ``dp.distributed`` (or ``import denoc_pin.distributed``), so that ``import denoc_pin``
does not import Dask; it needs the ``[dask]`` extra.
"""

from .tools import dask_sweeps as _impl
from .tools.dask_sweeps import *  # noqa: F403

__all__ = _impl.__all__
