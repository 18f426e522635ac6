"""The top floor: the MeshCat viewer, the command line, the papers' demonstrations and the validation reports."""

__all__: list[str] = []
