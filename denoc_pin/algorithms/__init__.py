"""The DeNOC recursions, one compiled implementation of each next to the paper's table, and the public functions
that call them (``dynamics_api``)."""

from . import configuration, derivatives_api, dynamics_api, explicit, kinematics_api, parallel_scheme
from .configuration import *  # noqa: F403
from .derivatives_api import *  # noqa: F403
from .dynamics_api import *  # noqa: F403
from .energy import energy
from .explicit import *  # noqa: F403
from .kinematics_api import *  # noqa: F403

# Each module's __all__ is its list of public names; the package's is theirs, not typed again.
__all__ = [
    *dynamics_api.__all__,
    *kinematics_api.__all__,
    *derivatives_api.__all__,
    *configuration.__all__,
    *explicit.__all__,
    "energy",
    "parallel_scheme",
]
