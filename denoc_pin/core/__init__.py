"""The ground floor: spatial algebra, joint kinds, cut-joint kinds, kinematic modules and the flat-buffer layout.

Nothing here imports from the rest of the package."""

__all__: list[str] = []
