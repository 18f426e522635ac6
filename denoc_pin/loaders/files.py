"""One front door for robot files: ``load(path)`` reads a URDF or an SDF by its extension."""

from __future__ import annotations

from pathlib import Path

from ..model import Model, ModelError
from .mjcf import load_mjcf
from .sdf import load_sdf
from .urdf import load_urdf

__all__ = ["LOADERS", "load"]

LOADERS = {".urdf": load_urdf, ".sdf": load_sdf, ".xml": load_mjcf}
"""File extension -> loader."""


def load(path, **kw) -> Model:
    """A :class:`Model` from a robot file, by its extension: ``.urdf`` (``load_urdf``), ``.sdf`` (``load_sdf``),
    ``.xml`` (MJCF, ``load_mjcf``); keyword arguments go to that loader (``root_joint``, ``strict``, and for SDF
    ``model_name``, ``cuts``, ``model_paths``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in LOADERS:
        raise ModelError(f"{path}: unknown file type {suffix or '(no extension)'!r}; denoc_pin loads "
                         f"{', '.join(LOADERS)}")  # fmt: skip
    return LOADERS[suffix](path, **kw)
