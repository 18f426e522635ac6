"""The bundled robot files (``dp.models.bundled``): this folder travels in the wheel as ``denoc_pin/data/urdf/``
(pyproject.toml's package-dir); the module only makes it a package that importlib.resources finds."""

__all__: list[str] = []
