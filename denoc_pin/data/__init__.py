"""The package's data: the bundled robot files (``urdf/``: the checkout's top-level urdf/, mapped here by
pyproject.toml's package-dir), found with importlib.resources (``dp.models.bundled_file``)."""

__all__: list[str] = []
