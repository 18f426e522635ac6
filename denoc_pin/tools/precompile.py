"""Compile the package's kernels ahead of their first use, in worker processes (``denoc-pin compile``).

Each kernel compiles at its first use and is cached in the machine's kernel cache; later processes load it.  A
container image, a Dask worker image or a CI job can pay that once, in parallel.  The kernels come in groups
(``TASKS``), and each entry of the call protocol (``algorithms.protocol.Entry``) names the group that compiles it
(its ``group``, and its rows' ``rows_group``): a group's task compiles its entries' declared signatures, or for an
entry compiled for its caller's buffers (the simulation and contact loops) runs a first use on a small model
(``FIRST_USES``).  The tasks run once each, in a pool of worker processes (one per core), a task only after the tasks
whose kernels it calls (from the entries' ``after``), the longest chain first, so that no two workers compile the
same kernel and every worker loads what another already wrote to the cache.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from numba.core import event
from tqdm import tqdm  # the text bar: tqdm.auto warns in a notebook without ipywidgets

from ..algorithms.protocol import ENTRIES
from ..contact import derivatives as _contact_derivative_entries  # noqa: F401 (declares the step's Jacobians)
from ..contact import pipeline as _contact_entries  # noqa: F401 (declares the contact step and run)
from ..contact.stepping import ContactSettings, ContactStepper
from ..core.shapes import Collision, Ground, Sphere
from ..kernel_cache import NOTICE, compiled_groups, record_compiled
from ..loaders.models import chain, spatial_four_bar
from ..loops import assemble
from ..loops import loop_derivatives as _loop_derivative_entries  # noqa: F401 (declares the closed-loop derivatives)
from ..model import Model
from ..simulation.simulate import simulate

__all__ = ["DEMO", "FIRST_USES", "TASKS", "Task", "compile_kernels"]


@dataclass(frozen=True)
class Task:
    """What one group compiles (``what``), the groups it must follow (``after``), and its first use (``run``)."""

    what: str
    after: tuple[str, ...]
    run: Callable[[], None]


def _four_bar():
    model = spatial_four_bar()
    return model, assemble(model, np.r_[0.4, 0.0, 0.3, 0.0, 1.0, 0.8], fixed=["crank"])


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


def _contact_derivatives() -> None:
    """One step with its Jacobians (``ContactStepper.derivatives``) of a tree and of a closed mechanism with a
    collision."""
    for model, q in ((chain(2), np.zeros(2)), _four_bar()):
        ball = Collision("ball", model.link_names[-1], model.njoints - 1, Sphere(0.05), np.eye(3), np.zeros(3))
        model = Model(**(model.fields() | {"collisions": (ball,)}))
        stepper = ContactStepper(model, Ground(height=-10.0), ContactSettings(), 1e-3)
        stepper.derivatives(q, np.zeros(model.nv), np.zeros(model.nv))


FIRST_USES: dict[str, Callable[[], None]] = {
    "simulation": lambda: _simulate("rk4"),
    "adaptive": lambda: [_simulate(method) for method in ("rk45", "dop853")],
    "closed_loop_simulation": lambda: _simulate("rk4", loops=True),
    "contacts": _contacts,
    "closed_loop_contacts": lambda: _contacts(loops=True),
    "contact_derivatives": _contact_derivatives,
}
"""The first uses of the groups whose entries compile for their caller's buffers (no declared signature)."""


def _group_of(kernel) -> str | None:
    """The group that compiles ``kernel``: the first entry that declares it, or else that lists it in ``after``."""
    for entry in ENTRIES:
        if kernel in entry.kernels:
            return entry.rows_group if kernel is entry.rows else entry.group
    return next((entry.group for entry in ENTRIES if kernel in entry.after), None)


def _run_group(name: str) -> None:
    for entry in ENTRIES:
        if entry.group == name:
            entry.prepare()
        if entry.rows_group == name:
            entry.prepare(rows=True)
    if name in FIRST_USES:
        FIRST_USES[name]()


def _tasks() -> dict[str, Task]:
    """One task a group named by the entries, ordered by the longest chain of groups (their ``seconds``) that starts
    with it: a worker takes the first task whose ``after`` are done, and the longest chain decides the wall time."""
    groups: dict[str, list[tuple[str, int]]] = {}  # group: (what, seconds) of what it compiles
    after: dict[str, set[str]] = {}
    for entry in ENTRIES:
        if entry.kernel is not None and entry.signature is None and entry.group not in FIRST_USES:
            raise ValueError(f"entry {entry.name} compiles for its caller's buffers: group {entry.group!r} needs a "
                             "first use in FIRST_USES")  # fmt: skip
        declared = [(entry.group, entry.what, entry.after)]
        if entry.rows is not None and entry.rows_group != entry.group:
            declared.append((entry.rows_group, f"batches of {entry.what}", (entry.kernel,)))
        for name, what, deps in declared:
            if (what, entry.seconds) not in groups.setdefault(name, []):
                groups[name].append((what, entry.seconds))
            after.setdefault(name, set()).update(g for g in map(_group_of, deps) if g not in (None, name))

    @functools.cache
    def chain(name: str) -> int:  # the seconds of the longest chain of groups from this one to the last
        followers = [g for g in groups if name in after[g]]
        return sum(s for _, s in groups[name]) + max(map(chain, followers), default=0)

    order = sorted(groups, key=lambda g: -chain(g))
    return {g: Task("; ".join(dict.fromkeys(w for w, _ in groups[g])), tuple(sorted(after[g], key=order.index)),
                    functools.partial(_run_group, g)) for g in order}  # fmt: skip


TASKS: dict[str, Task] = _tasks()
"""The groups ``denoc-pin compile`` runs, by name, the longest chain first (a worker takes the first task whose
``after`` are done): from the entries' declarations."""
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
