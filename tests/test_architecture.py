"""The package's layers (docs/architecture.md): each module imports only from its own floor or below, at module
level, imports no private name of another module, and declares its public names; the kernels' statuses are declared
in one module, each code once.  Read from the sources with ``ast``, so nothing is imported to check it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import ROOT

import denoc_pin as dp

PACKAGE = Path(dp.__file__).resolve().parent
# Floors, bottom up.  A module is on the floor of its longest listed prefix.
FLOORS = {
    "denoc_pin.kernel_cache": 0,
    "denoc_pin.version": 0,
    "denoc_pin.data": 0,  # the bundled robot files (a data package: no code)
    "denoc_pin.core": 1,
    "denoc_pin.model": 2,
    "denoc_pin.algorithms": 3,
    "denoc_pin.loops": 4,
    "denoc_pin.contact": 4,
    "denoc_pin.simulation": 5,
    "denoc_pin.loaders": 5,
    "denoc_pin.tools": 6,
    "denoc_pin": 7,  # the public API imports from every floor
    "denoc_pin.distributed": 7,  # dp.distributed, loaded on first use (Dask is an optional extra)
}


def floor(module: str) -> int:
    prefix = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len)
    return FLOORS[prefix]


def module_name(path: Path) -> str:
    parts = ("denoc_pin", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.ImportFrom | ast.Import, module: str, is_package: bool) -> list[str]:
    """The denoc_pin modules (or packages) an import statement reads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "denoc_pin"]
    if node.level == 0:
        return [node.module] if node.module and node.module.split(".")[0] == "denoc_pin" else []
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    target = ".".join(base + ([node.module] if node.module else []))
    # `from . import demo` reads the submodule demo, not the package
    return [f"{target}.{a.name}" for a in node.names] if not node.module else [target]


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """What breaks the rules in one module's source: an import from a floor above, an import of a private name
    (``_x``: a module's own) or of a private module from another module, an import of the package inside a function
    (to break a cycle), a missing ``__all__``."""
    tree = ast.parse(source)
    found = []
    own = floor(module)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            for target in imported(node, module, is_package):
                if floor(target) > own:
                    found.append(f"{module} (floor {own}) imports {target} (floor {floor(target)}), line {node.lineno}")
                if any(map(private, target.split("."))):
                    found.append(f"{module} imports the private module {target}, line {node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module != "__future__" and imported(node, module, is_package):
                for alias in node.names:
                    if private(alias.name):
                        found.append(f"{module} imports the private name {alias.name}, line {node.lineno}")
    type_checking = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            type_checking.update(id(n) for n in ast.walk(node))
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom | ast.Import) and id(node) not in type_checking:
                    if imported(node, module, is_package):
                        found.append(f"{module} imports {imported(node, module, is_package)} inside {fn.name}()")
    if not any(
        isinstance(n, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == "__all__"
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        )
        for n in tree.body
    ):
        found.append(f"{module} has no __all__")
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_floors(path):
    assert not violations(path.read_text(), module_name(path), path.name == "__init__.py")


def test_every_module_is_on_a_floor():
    """A new folder must be given its floor here (and in docs/architecture.md)."""
    for path in SOURCES:
        module = module_name(path)
        assert module in FLOORS or floor(module) < FLOORS["denoc_pin"], f"{module} is on no floor"


def test_the_checker_sees_what_it_forbids():
    """The rules above can fail: an upward import, a function-level import and a missing __all__ are each caught."""
    up = "from ..loops import assemble\n__all__ = []\n"
    assert violations(up, "denoc_pin.model.model") == [
        "denoc_pin.model.model (floor 2) imports denoc_pin.loops (floor 4), line 1"
    ]
    inside = "__all__ = []\ndef f():\n    from .forward import udut_solve\n"
    assert violations(inside, "denoc_pin.algorithms.dynamics_api")[0].endswith("inside f()")
    assert violations("import numpy\n", "denoc_pin.core.spatial") == ["denoc_pin.core.spatial has no __all__"]
    assert violations("from ..tools import viewer\n__all__ = []\n", "denoc_pin.loaders", is_package=True) == [
        "denoc_pin.loaders (floor 5) imports denoc_pin.tools (floor 6), line 1"
    ]
    assert not violations("from .joints import JOINTS\n__all__ = []\n", "denoc_pin.core.layout")
    assert violations("from ..simulation.simulate import _to_original\n__all__ = []\n", "denoc_pin.tools.cli") == [
        "denoc_pin.tools.cli imports the private name _to_original, line 1"
    ]
    private = "from ..algorithms._plumbing import aba_entry\n__all__ = []\n"
    assert violations(private, "denoc_pin.loops.loop_kinematics") == [
        "denoc_pin.loops.loop_kinematics imports the private module denoc_pin.algorithms._plumbing, line 1"
    ]
    assert not violations("import numpy as _np\n__all__ = []\n", "denoc_pin.core.spatial")  # not the package's


def test_the_public_api_is_what_all_lists():
    """``import denoc_pin`` offers the names of its __all__, and each of them exists."""
    for name in dp.__all__:
        assert hasattr(dp, name), name
    public = {n for n in vars(dp) if not n.startswith("_")}
    subpackages = {
        "algorithms",
        "contact",
        "core",
        "loaders",
        "loops",
        "model",
        "simulation",
        "tools",
        "distributed",
        "kernel_cache",
        "version",
        "data",
    }
    assert public - set(dp.__all__) - subpackages == set()


def test_the_readme_api_table_is_the_public_api():
    """The public names are the README's API table: each name of ``dp.__all__`` is in the table, and each
    ``dp.X`` the table names exists."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## API") : readme.index("## Command line")]
    named = set(re.findall(r"\bdp\.([A-Za-z_]\w*)", table))
    assert set(dp.__all__) - named == set()
    assert {n for n in named if not hasattr(dp, n)} == set()


STATUS_NAMES = ("OK", "NOT_FINITE", "SINGULAR", "BAD_LENGTH", "NOT_STAMPED", "NOT_READY", "NO_MASS", "BAD_FRAME",
                "TOO_SMALL_STEP", "BAD_GAINS", "TOO_MANY_CONTACTS")  # fmt: skip


def test_statuses_are_declared_once_each_code_unique():
    """Every status a kernel returns is declared in ``model/status.py`` and nowhere else, each with its own code;
    ``declare`` refuses a table with a code or a name twice, or a code in the range SINGULAR reserves."""
    from denoc_pin.model import status

    assert set(STATUS_NAMES) == {s.name for s in status.STATUSES}
    assert status.declare(status.STATUSES) == {s.name: s.code for s in status.STATUSES}
    twice = (*status.STATUSES, status.Status("BAD_SPEED", status.NO_MASS, "a duplicate code"))
    with pytest.raises(ValueError, match="'BAD_SPEED' has code -4, which 'NO_MASS' has already"):
        status.declare(twice)
    with pytest.raises(ValueError, match="'OK' is declared twice"):
        status.declare((*status.STATUSES, status.Status("OK", 7, "")))
    with pytest.raises(ValueError, match="which 'SINGULAR' has already"):
        status.declare((*status.STATUSES, status.Status("LATE", 5, "")))
    for path in SOURCES:
        if module_name(path) == "denoc_pin.model.status":
            continue
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            assert not names & set(STATUS_NAMES), f"{module_name(path)} defines a status: {names & set(STATUS_NAMES)}"
