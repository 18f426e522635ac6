"""The package's version: pyproject.toml's, read back from the installed package's metadata, so that it is written in
one place only."""

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__ = metadata.version("denoc-pin")
except metadata.PackageNotFoundError:  # a source tree put on sys.path without being installed
    __version__ = "0+unknown"
