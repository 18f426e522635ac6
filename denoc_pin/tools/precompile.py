"""Compile the package's kernels ahead of their first use, in worker processes (``denoc-pin compile``).

Each kernel compiles at its first use and is cached by numba next to the sources; later processes load it in about a
second.  A container image, a Dask worker image or a CI job can pay that once, in parallel: the kernels are grouped
into tasks (``TASKS``), each a first use on a small model, each run once, in a pool of worker processes (one per
core), a task only after the tasks whose kernels it calls (``after``), so that no two workers compile the same kernel
and every worker loads what another already wrote to numba's cache.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from numba.core import event
from tqdm.auto import tqdm

from ..algorithms.api import forward_dynamics, inverse_dynamics
from ..algorithms.compositions import ABA, CRBA, FACTOR, RNEA
from ..algorithms.configuration import difference, integrate, neutral, normalize
from ..algorithms.derivatives import DERIVATIVES
from ..algorithms.derivatives_api import inverse_dynamics_derivatives
from ..algorithms.energy import energy
from ..algorithms.forward import factor_step
from ..algorithms.frames import KINEMATICS, MATRIX_ENTRY, PLACEMENT_ENTRY
from ..algorithms.kinematics_api import frame_jacobian
from ..core.shapes import Collision, Ground, Sphere
from ..kernel_cache import NOTICE, compiled_groups, prepare, record_compiled
from ..loaders.models import chain, spatial_four_bar
from ..loops import assemble, constrained_forward_dynamics, constrained_forward_dynamics_derivatives
from ..loops.compositions import CFD
from ..loops.derivatives import CFD_DERIVATIVES
from ..model import Model
from ..simulation.simulate import simulate

__all__ = ["DEMO", "TASKS", "Task", "compile_kernels"]


@dataclass(frozen=True)
class Task:
    """What one first use compiles (``what``), the tasks it must follow (``after``), and the first use itself."""

    what: str
    after: tuple[str, ...]
    run: Callable[[], None]


def _four_bar():
    model = spatial_four_bar()
    return model, assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])


def _states(model, n: int = 2):
    """n states of ``model`` (neutral, at rest) and its data."""
    return model.create_data(), np.tile(neutral(model), (n, 1)), np.zeros((n, model.nv))


def _kinematics() -> None:
    for entry in (KINEMATICS, PLACEMENT_ENTRY, MATRIX_ENTRY):
        entry.prepare()


def _configuration() -> None:
    model = chain(2)
    q = neutral(model)
    difference(model, q, integrate(model, q, np.zeros(2)))
    normalize(model, q)


def _energy() -> None:
    model = chain(2)
    energy(model, model.create_data(), np.zeros(2), np.zeros(2))


def _batches() -> None:
    model = chain(2)
    data, Q, Z = _states(model)
    inverse_dynamics(model, data, Q, Z, Z)
    forward_dynamics(model, data, Q, Z, Z)


def _kinematics_batches() -> None:
    model = chain(2)
    data, Q, _ = _states(model)
    frame_jacobian(model, data, Q, len(model.frames) - 1)


def _derivative_batches() -> None:
    model = chain(2)
    data, Q, Z = _states(model)
    inverse_dynamics_derivatives(model, data, Q, Z, Z)


def _closed_loop_derivatives() -> None:
    model, q = _four_bar()
    Q, Z = np.tile(q, (2, 1)), np.zeros((2, model.nv))
    CFD_DERIVATIVES.prepare()
    constrained_forward_dynamics_derivatives(model, model.create_data(), Q, Z, Z)


def _cfd_batch() -> None:
    model, q = _four_bar()
    Q, Z = np.tile(q, (2, 1)), np.zeros((2, model.nv))
    constrained_forward_dynamics(model, model.create_data(), Q, Z, Z)


def _simulate(method: str, loops: bool = False) -> None:
    model, q = _four_bar() if loops else (chain(2), np.zeros(2))
    simulate(model, q, np.zeros(model.nv), 0.002, dt=1e-3, method=method, progress=False)


def _contacts(loops: bool = False) -> None:
    """A run on the ground in compiled code (``dp.simulate_batch`` runs the same) and one step a call (a callback
    τ), for a tree or a closed mechanism."""
    model, q = _four_bar() if loops else (chain(2), np.zeros(2))
    ball = Collision("ball", model.link_names[-1], model.njoints - 1, Sphere(0.05), np.eye(3), np.zeros(3))
    model = Model(**(model.fields() | {"collisions": (ball,)}))
    for tau in (None, lambda t, q, v: np.zeros(model.nv)):
        simulate(model, q, np.zeros(model.nv), 0.002, dt=1e-3, tau=tau, ground=Ground(height=-10.0), progress=False)


def _adaptive() -> None:
    for method in ("rk45", "dop853"):
        _simulate(method)


TASKS: dict[str, Task] = {
    "factorization": Task("the UDUᵀ factorization (Table 3)", (), lambda: prepare(factor_step)),
    "inverse_dynamics": Task("inverse dynamics (Table 1)", (), RNEA.prepare),
    "forward_dynamics": Task("forward dynamics", ("factorization",), ABA.prepare),
    "derivatives": Task("the dynamics' derivatives (Table 1 differentiated)", ("forward_dynamics", "inverse_dynamics"),
                        DERIVATIVES.prepare),
    "closed_loops": Task("the closed-loop dynamics (Schiehlen eq. 17-20)", ("forward_dynamics",), CFD.prepare),
    "closed_loop_derivatives": Task("the closed-loop derivatives and their batches (Schiehlen eq. 19-20 "
                                    "differentiated)", ("closed_loops", "derivatives"), _closed_loop_derivatives),
    "udut": Task("the UDUᵀ factors alone (udut, gim_inverse)", ("factorization",), FACTOR.prepare),
    "gim": Task("the generalized inertia matrix (eq. 16-17)", (), CRBA.prepare),
    "kinematics": Task("frames, Jacobians, centroidal quantities", (), _kinematics),
    "configuration": Task("integrate, difference, normalize", (), _configuration),
    "energy": Task("kinetic and potential energy", (), _energy),
    "batches": Task("batches of inverse and forward dynamics", ("forward_dynamics", "inverse_dynamics"), _batches),
    "kinematics_batches": Task("batches of frames and Jacobians", ("kinematics",), _kinematics_batches),
    "simulation": Task("the RK4 simulation loop", ("forward_dynamics",), lambda: _simulate("rk4")),
    "adaptive": Task("the adaptive Dormand-Prince integrators", ("forward_dynamics", "energy"), _adaptive),
    "derivative_batches": Task("batches of the dynamics' derivatives", ("derivatives",), _derivative_batches),
    "closed_loop_simulation": Task("the RK4 loop of a closed mechanism", ("closed_loops",),
                                   lambda: _simulate("rk4", loops=True)),
    "closed_loop_batches": Task("batches of closed-loop states", ("closed_loops",), _cfd_batch),
    "contacts": Task("the contact step and its compiled run (detection, Delassus, PGS, ADMM)",
                     ("forward_dynamics", "energy", "configuration"), _contacts),
    "closed_loop_contacts": Task("the contact step of a closed mechanism", ("closed_loops", "contacts"),
                                 lambda: _contacts(loops=True)),
}  # fmt: skip
"""The first uses ``denoc-pin compile`` runs, by name, the longest chain first (a worker takes the first task whose
``after`` are done): the factorization, forward dynamics, the derivatives and the closed loops lead to the closed-loop
derivatives, the longest compile, and the other groups fill the second worker beside them."""
DEMO = ("forward_dynamics", "inverse_dynamics", "batches", "simulation", "kinematics", "configuration")
"""What ``denoc-pin demo`` uses, compiled before it starts."""


def _needed(names: Iterable[str]) -> list[str]:
    """``names`` and every task they follow, each once, in an order that puts a task after those it follows."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name not in TASKS:
            raise ValueError(f"unknown kernel group {name!r}; the groups are: {', '.join(TASKS)}")
        for before in TASKS[name].after:
            visit(before)
        if name not in order:
            order.append(name)

    for name in names:
        visit(name)
    return order


def _run(name: str) -> tuple[str, float]:
    """One task, in a worker process: its first use, and how long it took (the progress bar says what compiles)."""
    with contextlib.suppress(ValueError):  # once per worker process
        event.unregister("numba:compile", NOTICE)
    t0 = time.perf_counter()
    TASKS[name].run()
    return name, time.perf_counter() - t0


def compile_kernels(names: Iterable[str] | None = None, workers: int | None = None, progress: bool = True,
                    force: bool = False) -> dict:  # fmt: skip
    """Run the tasks ``names`` (None: all of ``TASKS``) and those they follow in ``workers`` processes (default: one
    per core), each task once its ``after`` are done; tasks already compiled for these sources are skipped unless
    ``force``.  Returns {task: seconds it took in its worker}."""
    order = _needed(TASKS if names is None else names)
    compiled = set() if force else set(compiled_groups()) & set(order)
    order = [name for name in order if name not in compiled]  # a task may follow one compiled already
    if not order:
        return {}
    workers = max(1, min(workers or os.cpu_count() or 1, len(order)))
    done: dict[str, float] = {}
    bar = tqdm(total=len(order), desc="denoc_pin: compiling", unit="group", disable=not progress)
    # Fresh interpreters (spawn): a forked child would inherit the parent's threads and numba state.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        running: dict = {}
        while len(done) < len(order):
            for name in order:
                ready = all(b in done or b in compiled for b in TASKS[name].after)
                if ready and name not in done and name not in running.values() and len(running) < workers:
                    running[pool.submit(_run, name)] = name
            if not running:  # _needed puts every task after those it follows: unreachable, but never spin
                raise RuntimeError(f"no kernel group can start: {sorted(set(order) - set(done))}")
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                name, seconds = future.result()
                del running[future]
                done[name] = seconds
                bar.set_postfix_str(name)
                bar.update()
    bar.close()
    record_compiled(done)
    return done
