"""Where the standard robots of example-robot-data live, by short name (``panda``, ``ur5``, …)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

__all__ = ["example_robot_names", "example_robot_urdf", "mesh_file", "mesh_folders", "robots_dir"]

# Short names for files whose stem is not the name people use.
ALIASES = {
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "anymal": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_b": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "allegro": "allegro_hand_description/urdf/allegro_right_hand.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "romeo": "romeo_description/urdf/romeo_small.urdf",
}


@lru_cache(maxsize=1)
def robots_dir() -> Path | None:
    """The ``robots`` folder of the installed example-robot-data package, or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    return path if path.is_dir() else None


def example_robot_names() -> list[str]:
    """Every short name :func:`example_robot_urdf` accepts."""
    root = robots_dir()
    if root is None:
        return []
    stems = {p.stem for p in root.glob("*/*/*.urdf")}
    return sorted(stems | set(ALIASES))


def example_robot_urdf(name: str) -> Path:
    """Path of an example-robot-data URDF: an alias (``ur5``, ``anymal``) or a file stem (``panda``)."""
    root = robots_dir()
    if root is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install example-robot-data)")
    if name in ALIASES:
        return root / ALIASES[name]
    found = sorted(root.glob(f"*/*/{name}.urdf"))
    if not found:
        raise FileNotFoundError(f"no example-robot-data robot {name!r}; known: {', '.join(example_robot_names())}")
    return found[0]


def mesh_folders(source, extra=()) -> list[Path]:
    """Where a robot file's ``package://`` (and relative) mesh URIs may point: the caller's folders, the file's folder
    and its ancestors, example-robot-data's robots and share folders."""
    dirs = [Path(d) for d in (extra or [])]
    if source:
        src = Path(source).resolve().parent
        dirs += [src, *list(src.parents)[:4]]
    erd = robots_dir()
    if erd is not None:
        dirs += [erd, erd.parent.parent]
    return dirs


def mesh_file(filename: str, folders) -> Path | None:
    """Where a ``<mesh filename>`` is (``package://``, ``model://``, ``file://``, absolute, or relative to one of
    ``folders``), or None."""
    if filename.startswith(("package://", "model://")):  # model://: an SDF's, relative to a models folder
        filename = filename.split("://", 1)[1]
    elif filename.startswith("file://"):
        filename = filename[len("file://") :]
    path = Path(filename)
    for p in [path] if path.is_absolute() else [Path(d) / path for d in folders]:
        if p.is_file():
            return p.resolve()
    return None
