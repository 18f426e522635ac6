"""Shared test cases: bundled URDFs, example-robot-data robots and seeded random trees."""

from __future__ import annotations

import string
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import denoc_pin as dp
from denoc_pin.core.layout import HEADER, LW_M, LW_ND, loop_workspace_size
from denoc_pin.loaders.mjcf import mujoco_state
from denoc_pin.loaders.robots import example_robot_urdf
from denoc_pin.tools.validate import errors

COMPILED: dict = {"groups": {}, "record": None}  # what this session compiled (the summary's last lines)


def pytest_sessionstart(session) -> None:
    """Compile every kernel group first, in one worker process per core (``denoc-pin compile``; nothing to do when
    the machine's kernel cache holds them for these sources): the tests would otherwise compile them one after
    another as each first uses them.  DENOC_PIN_TEST_NO_PRECOMPILE=1 skips it.  Then count the package's kernels
    this process compiles (numba's compile event fires on a cache miss)."""
    import os

    from numba.core import event

    from denoc_pin.kernel_cache import CompileRecord

    if os.environ.get("DENOC_PIN_TEST_NO_PRECOMPILE") != "1":
        from denoc_pin.tools.precompile import compile_kernels

        COMPILED["groups"] = compile_kernels(progress=False)

    COMPILED["record"] = CompileRecord()
    event.register("numba:compile", COMPILED["record"])


def pytest_terminal_summary(terminalreporter) -> None:
    from denoc_pin.kernel_cache import cache_root

    groups, kernels = COMPILED["groups"], COMPILED["record"].kernels
    terminalreporter.write_line(
        f"kernel cache {cache_root()}: {len(groups)} groups compiled ahead ({sum(groups.values()):.0f} s in their "
        f"workers), {len(kernels)} kernels compiled by the tests' own process (0 and 0: everything was cached)"
    )


ROOT = Path(__file__).resolve().parents[1]  # the checkout (or unpacked sdist): examples/, docs/, README.md
URDF_DIR = dp.models.bundled_file("gripper").parent  # the bundled URDFs, inside the installed package
BUNDLED = sorted((URDF_DIR).glob("*.urdf"))
# Fixed-base robots from example-robot-data: arms, a hand and a humanoid (branched trees),
# and robots with continuous joints (double pendulum, baxter).
EXAMPLE_ROBOTS = [
    "panda",
    "ur5",
    "ur10",
    "talos_left_arm",
    "talos_reduced",
    "allegro",
    "double_pendulum_continuous",
    "baxter",
    "kinova",
    "xarm7",
]
N_RANDOM_TREES = 50
RTOL = 1e-9


def assert_close(x, y, rtol: float = RTOL, atol: float = 1e-12, what: str = "") -> None:
    """‖x − y‖∞ ≤ rtol ‖y‖∞, or ≤ atol when y vanishes; the message gives both errors."""
    err, rel = errors(x, y)
    assert rel <= rtol or err <= atol, f"{what}: abs error {err:.3e}, rel error {rel:.3e}"


# ----------------------------------------------------------------------------------------
# Seeded random trees, written as URDF text so that the loader is exercised too.
# ----------------------------------------------------------------------------------------


LOOP_ROUTES = ["factored", "sweeps"]  # the closed-loop solves on GIM = Lᵀ L, or on Table 3's UDUᵀ recursions


def loop_data(model: dp.Model, route: str) -> dp.Data:
    """A Data for ``model`` whose loop workspace holds room for the GIM's factor ("factored": the closed-loop solves
    run on GIM = Lᵀ L) or none ("sweeps": Table 3's UDUᵀ recursions), whichever ``layout.factor_pays`` chooses."""
    data = model.create_data()
    nd = model.nv if route == "factored" else 0
    if int(data.lw[LW_ND]) != nd:
        m = model.n_constraints
        data.lw = np.zeros(loop_workspace_size(model.mi[:HEADER], m, nd))
        data.lw[LW_M], data.lw[LW_ND] = m, nd
        data._set_loop_views()
    return data


def mujoco_references(mujoco, m, d, model) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """At MuJoCo's state in d (qpos, qvel, qacc set): (q, v, q̈) in our layout and MuJoCo's mass matrix, with
    d.qfrc_bias and d.qfrc_inverse filled (mj_forward, mj_fullM, mj_inverse) — the referee of an MJCF test."""
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    q, v = mujoco_state(model, d.qpos, d.qvel)
    a = d.qacc.copy()
    mujoco.mj_inverse(m, d)
    return q, v, a, M


def box_on_table() -> tuple[dp.Model, np.ndarray]:
    """(model, q): a 1 kg, 10 cm box resting on a 1 x 1 x 0.2 m table fixed to the world (its top at z = 0): a
    shape pair without a ground, face on face."""
    b = dp.ModelBuilder("box on a table")
    b.add_collision(0, dp.Box((1.0, 1.0, 0.2)), placement=(np.eye(3), np.array([0.0, 0.0, -0.1])))
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.01, link="box")
    b.add_collision("box", dp.Box((0.1, 0.1, 0.1)))
    model = b.build()
    q = dp.neutral(model)
    q[2] = 0.05
    return model, q


def _random_rotation(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def _random_inertia(rng, m: float) -> np.ndarray:
    """Rotated principal moments that satisfy the triangle inequality."""
    a, b = rng.uniform(0.2, 1.0, 2) * m * 0.01
    c = rng.uniform(abs(a - b), a + b) if rng.random() < 0.9 else a + b  # sometimes on the boundary (a lamina)
    Q = _random_rotation(rng)
    return Q @ np.diag([a, b, c]) @ Q.T


def add_random_body(b: dp.ModelBuilder, rng, parent: int, kind: str, pitch: float | None = None) -> int:
    """A body through a joint of ``kind`` with a random axis (an orthogonal pair for a universal joint), placement,
    mass, centre of mass and inertia, for the random ModelBuilder trees."""
    if kind == "universal":
        R = pin.exp3(rng.standard_normal(3))
        axis = (R[:, 0], R[:, 1])
    else:
        axis = rng.standard_normal(3)
    L = rng.standard_normal((3, 3))
    m = float(rng.uniform(0.1, 2.0))
    return b.add_body(
        parent,
        joint=kind,
        axis=axis,
        pitch=pitch,
        placement=(pin.exp3(rng.standard_normal(3)), rng.uniform(-0.3, 0.3, 3)),
        mass=m,
        com=rng.uniform(-0.1, 0.1, 3),
        inertia=0.01 * m * (L @ L.T / 3 + np.eye(3)),
    )


def _fmt(*xs) -> str:
    return " ".join(f"{float(x):.17g}" for x in xs)


def _name(rng, used: set) -> str:
    while True:
        s = "".join(rng.choice(list(string.ascii_letters + string.digits + "_"), size=rng.integers(1, 8)))
        if s not in used:
            used.add(s)
            return s


def random_tree_urdf(seed: int, n_links: int | None = None) -> str:
    """A random tree: revolute/continuous/prismatic/fixed joints, random axes (not always unit),
    origins and inertias, random branching and random names (Pinocchio orders siblings by name)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 16)) if n_links is None else n_links
    used: set = set()
    links = ["root_" + _name(rng, used)]
    parts = [f'<robot name="random_{seed}">', f'<link name="{links[0]}"/>']
    joint_parent = {}
    kinds = []
    for i in range(n):
        parent = links[int(rng.integers(0, len(links)))] if rng.random() < 0.6 else links[-1]
        child = "l_" + _name(rng, used)
        kind = rng.choice(["revolute", "continuous", "prismatic", "fixed"], p=[0.45, 0.2, 0.2, 0.15])
        if i == 0 and kind == "fixed":
            kind = "revolute"
        kinds.append(kind)
        joint_parent[child] = parent
        xyz = rng.uniform(-0.3, 0.3, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        axis = rng.standard_normal(3) * (1.0 if rng.random() < 0.5 else rng.uniform(0.1, 3.0))
        j = f'<joint name="j_{_name(rng, used)}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        j += f'<origin xyz="{_fmt(*xyz)}" rpy="{_fmt(*rpy)}"/>'
        if kind != "fixed":
            j += f'<axis xyz="{_fmt(*axis)}"/>'
        if kind in ("revolute", "prismatic"):
            j += '<limit lower="-3" upper="3" effort="10" velocity="10"/>'
        parts.append(j + "</joint>")
        links.append(child)
    has_child = set(joint_parent.values())
    for link in links[1:]:
        # Inner links may be massless; leaves always carry mass, so the GIM stays regular.
        if link in has_child and rng.random() < 0.15:
            parts.append(f'<link name="{link}"/>')
            continue
        m = float(rng.uniform(0.05, 3.0))
        I = _random_inertia(rng, m)
        c = rng.uniform(-0.2, 0.2, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        parts.append(
            f'<link name="{link}"><inertial><origin xyz="{_fmt(*c)}" rpy="{_fmt(*rpy)}"/>'
            f'<mass value="{_fmt(m)}"/><inertia ixx="{_fmt(I[0, 0])}" ixy="{_fmt(I[0, 1])}" ixz="{_fmt(I[0, 2])}" '
            f'iyy="{_fmt(I[1, 1])}" iyz="{_fmt(I[1, 2])}" izz="{_fmt(I[2, 2])}"/></inertial></link>'
        )
    parts.append("</robot>")
    return "\n".join(parts)


@pytest.fixture(scope="session")
def random_tree_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("random_trees")
    for seed in range(N_RANDOM_TREES):
        (d / f"tree_{seed:02d}.urdf").write_text(random_tree_urdf(seed))
    return d


@cache
def load_pair(path: Path) -> tuple[dp.Model, pin.Model]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.InertiaWarning)  # standard URDFs with CAD inertias
        model = dp.load_urdf(path)
    return model, pin.buildModelFromUrdf(str(path))


CASES = (
    [pytest.param(("bundled", p.name), id=p.stem) for p in BUNDLED]
    + [pytest.param(("robot", r), id=r) for r in EXAMPLE_ROBOTS]
    + [pytest.param(("random", s), id=f"random{s:02d}") for s in range(N_RANDOM_TREES)]
)


@pytest.fixture(params=CASES)
def case(request, random_tree_dir) -> tuple[dp.Model, pin.Model]:
    """(denoc_pin model, pinocchio model) of one URDF."""
    kind, name = request.param
    if kind == "bundled":
        path = URDF_DIR / name
    elif kind == "robot":
        path = example_robot_urdf(name)
    else:
        path = random_tree_dir / f"tree_{name:02d}.urdf"
    return load_pair(path)
