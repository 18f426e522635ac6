"""``dp.distributed``: sweeps, datasets and fleet validation on a Dask cluster (``tools/distributed.py``).

Loaded on first use of ``dp.distributed`` (or ``import denoc_pin.distributed``), so that ``import denoc_pin``
does not import Dask; it needs the ``[dask]`` extra.
"""

from .tools import distributed as _impl
from .tools.distributed import *  # noqa: F403

__all__ = _impl.__all__
