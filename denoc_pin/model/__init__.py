"""The ground floor above the core: the immutable :class:`Model`, its :class:`Data` workspace, argument checks."""

from .arguments import check_data, configuration, external_forces, vector
from .data import Data
from .mimic import MimicModel
from .model import (
    FRAME_TYPES,
    LIMIT_FIELDS,
    MAX_MAGNITUDE,
    UNBOUNDED,
    Frame,
    Model,
    ModelError,
    ModelWarning,
    SingularConfigurationError,
    default_frames,
    placement_pair,
)

__all__ = [
    "FRAME_TYPES",
    "LIMIT_FIELDS",
    "MAX_MAGNITUDE",
    "UNBOUNDED",
    "Data",
    "Frame",
    "MimicModel",
    "Model",
    "ModelError",
    "ModelWarning",
    "SingularConfigurationError",
    "check_data",
    "configuration",
    "default_frames",
    "external_forces",
    "placement_pair",
    "vector",
]
