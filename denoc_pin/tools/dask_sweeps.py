"""Beyond one machine, on Dask: Monte-Carlo sweeps, training datasets and fleet validation (``dp.distributed``).

Dask's ``distributed`` runs the tasks: a ``LocalCluster`` of worker processes by default, or any cluster
given its scheduler's address (dask-jobqueue on SLURM, Kubernetes, …).  ``zarr`` holds what they write.
Both come with the ``[dask]`` extra.  What this module settles for its users (``docs/scaling.md``):

- every worker imports denoc_pin and loads its kernels before its first task (``KernelsPlugin``), one process
  of a machine compiling at a time while the others wait for numba's cache (``kernel_cache.compiling_alone``);
- numba runs single-threaded inside a worker: Dask's processes are the parallelism, and numba's own threads
  inside Dask's threads oversubscribe the cores or abort;
- each task's result is a pure function of its inputs (a run, a chunk of a dataset), written to its own region
  of the store: a task rerun after a worker died writes the same numbers again, so the store ends complete and
  with nothing twice;
- the model goes to the workers once, scattered with ``hash=False`` (a hashed scatter can lose the model
  between two sweeps of the same model, as a ``FutureCancelledError``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
import uuid
from pathlib import Path

import numba
import numpy as np
from tqdm import tqdm  # the text bar: tqdm.auto warns in a notebook without ipywidgets

from ..algorithms.configuration import neutral, random_configuration
from ..algorithms.dynamics_api import forward_dynamics
from ..kernel_cache import compiling_alone
from ..loaders.edits import lock_joints, transfer_state, with_fields
from ..loaders.files import LOADERS, load
from ..loaders.models import chain
from ..loaders.pinocchio_bridge import to_pinocchio
from ..model import Model, ModelError
from ..simulation.control import JointPD, run_inputs
from ..simulation.simulate import simulate, to_original
from .validate import ATOL, RTOL, compare_loops, compare_with_pinocchio

try:  # the [dask] extra
    import distributed
    import zarr
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError as missing:  # pragma: no cover - the extra is part of the test extra
    distributed = zarr = None
    WorkerPlugin = object
    _MISSING = missing

__all__ = [
    "EDIT_KEYS",
    "KernelsPlugin",
    "apply_edits",
    "client",
    "completed",
    "dataset",
    "format_rows",
    "ground_for",
    "robot_files",
    "simulate_many",
    "validate_many",
    "warm_kernels",
]

EDIT_KEYS = ("payload", "lock", "mass_scale", "friction", "ground_height")
"""The keys of an edit spec (``apply_edits``; "friction" and "ground_height" edit the run's ``dp.Ground``)."""
GROUND_KEYS = {"friction": "friction", "ground_height": "height"}
TASKS_PER_WORKER = 4
"""A sweep's runs go to the workers in about this many tasks per worker thread, each a slice of consecutive runs."""
LOCK_PD = ("a JointPD cannot follow a lock edit (the run's model has other coordinates); give the locked runs a "
           "constant tau")  # fmt: skip


def _need_dask() -> None:
    if distributed is None:
        raise ImportError(f"denoc_pin.distributed needs Dask's distributed and zarr: pip install 'denoc-pin[dask]' "
                          f"({_MISSING})")  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Workers
# ---------------------------------------------------------------------------------------------------------------


def warm_kernels() -> float:
    """Load (or, the first time on a machine, compile) the kernels a sweep or a dataset calls: a model's singularity
    check, forward dynamics and its batch, and the RK4 loop, on a tiny chain; one process at a time.  Seconds
    taken."""
    start = time.perf_counter()
    numba.set_num_threads(1)
    with compiling_alone():
        m = chain(2)
        d = m.create_data()
        q, v = neutral(m), np.zeros(m.nv)
        forward_dynamics(m, d, np.tile(q, (2, 1)), np.zeros((2, m.nv)), np.zeros((2, m.nv)))
        simulate(m, q, v, 2e-3, progress=False)
    return time.perf_counter() - start


_KINDS_RUN: set = set()  # the kinds of task this process has run: their kernels are compiled or loaded


@contextlib.contextmanager
def _first_of_its_kind(kind: tuple):
    """The first task of a kind in a process runs under ``compiling_alone``: what it compiles beyond
    ``warm_kernels`` (closed loops, adaptive methods, the validation's kernels) is compiled by one worker of the
    machine while the others wait, then load it."""
    if kind in _KINDS_RUN:
        yield
        return
    with compiling_alone():
        yield
    _KINDS_RUN.add(kind)


class KernelsPlugin(WorkerPlugin):
    """Dask worker plugin: ``warm_kernels`` on every worker before its first task, also on a worker that joins or
    restarts later."""

    name = "denoc_pin-kernels"
    idempotent = True

    def setup(self, worker) -> None:
        worker.denoc_pin_warm_s = warm_kernels()


def client(address: str | None = None, n_workers: int | None = None, host: str = "127.0.0.1", **cluster_options):
    """A ``distributed.Client`` with the kernels loaded on every worker (``KernelsPlugin``).

    address None: a ``LocalCluster`` of ``n_workers`` processes (default: one per core), one thread each;
    ``cluster_options`` go to ``LocalCluster``.  Its scheduler, workers, nannies and dashboard listen on ``host``:
    127.0.0.1 by default, this machine only.  ``host="0.0.0.0"`` exposes them to every machine that reaches this
    one: the scheduler runs whatever code a client that connects sends it, and the dashboard shows the tasks,
    their names and their profiles.  Otherwise the scheduler at ``address`` (``tcp://host:8786``),
    whose workers best run one thread each.  Either way every task sets numba to one thread for itself
    (``numba.set_num_threads`` holds per thread; the ``NUMBA_NUM_THREADS`` variable cannot change once numba's
    threads run, and numba reads it again at each compile).  ``client.close()`` (or the end of a ``with`` block)
    closes a local cluster too.  A script that starts one needs the ``if __name__ == "__main__":`` guard: the
    workers are new Python processes.
    """
    _need_dask()
    if address is None:
        where = f"[{host}]" if ":" in host else host  # an IPv6 address in brackets before the port
        options = {"n_workers": n_workers or os.cpu_count() or 1, "threads_per_worker": 1, "processes": True,
                   "host": host, "dashboard_address": f"{where}:0"}  # fmt: skip
        c = distributed.Client(**(options | cluster_options))  # the client starts the cluster, and closes it
    else:
        if n_workers is not None or cluster_options or host != "127.0.0.1":
            raise ValueError("n_workers, host and cluster options are for a local cluster: the scheduler at "
                             f"{address!r} has its own workers")  # fmt: skip
        c = distributed.Client(address)
    c.register_plugin(KernelsPlugin())
    return c


def _client_or_local(c):
    """(client, whether it is ours to close): ``c``, or a local cluster for this call."""
    if c is not None:
        return c, False
    return client(), True


def _close(c, own: bool) -> None:
    if own:
        c.close()


def _gather(c, futures: dict, progress, what: str, sizes: dict | None = None):
    """Wait for every future (key → future) with a tqdm bar over completed items (``sizes``: key → the items its
    task holds, 1 each by default); {key: result}."""
    out = {}
    index = {f.key: k for k, f in futures.items()}
    sizes = sizes or dict.fromkeys(futures, 1)
    with tqdm(total=sum(sizes.values()), desc=what, disable=None if progress is None else not progress) as bar:
        for f in distributed.as_completed(list(futures.values())):
            out[index[f.key]] = f.result()
            bar.update(sizes[index[f.key]])
    return out


# ---------------------------------------------------------------------------------------------------------------
# Stores that resume
# ---------------------------------------------------------------------------------------------------------------

ARGUMENTS = "denoc_pin_arguments"
"""The store attribute recording the call and the arguments that wrote it (``_open_store``): a resume with other
arguments is refused."""


def _digest_into(h, x) -> None:
    """Feed ``x`` to the hash ``h`` by its contents: arrays by dtype, shape and bytes, containers item by item, other
    objects by their class and pickled state (a Model's arrays), so that equal arguments give equal digests in any
    process, also after a pickle round trip."""
    if isinstance(x, np.ndarray):
        h.update(f"a{x.dtype.str}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    elif isinstance(x, dict):
        h.update(f"d{len(x)}".encode())
        for k in sorted(x, key=repr):
            _digest_into(h, k)
            _digest_into(h, x[k])
    elif isinstance(x, list | tuple):
        h.update(f"l{len(x)}".encode())
        for y in x:
            _digest_into(h, y)
    elif isinstance(x, set | frozenset):
        _digest_into(h, sorted(x, key=repr))
    elif x is None or isinstance(x, str | bytes | bool | int | float | complex | np.generic):
        h.update(repr(x).encode())
    else:
        h.update(f"o{type(x).__module__}.{type(x).__qualname__}".encode())
        _digest_into(h, x.__getstate__())


def _digest(x) -> str:
    h = hashlib.sha256()
    _digest_into(h, x)
    return h.hexdigest()[:16]


def _open_store(out, arguments: dict, arrays: dict, done: int, resume: bool):
    """The Zarr group at ``out`` for a sweep or a dataset, and which of its ``done`` tasks are complete.

    resume False (or no store at ``out``): a new group, every earlier content gone: ``arrays`` {name: (shape, chunks)}
    float64 filled with NaN, a ``done`` array of ``done`` zeros (chunks of 1: each task marks its own) and the
    ``arguments``.  resume True: the group as it is, after its arguments are checked to be these."""
    out = str(out)
    if resume and os.path.exists(out):
        try:
            group = zarr.open_group(out, mode="r+")
        except Exception as e:  # zarr's own error types: not a store, a damaged one
            raise ValueError(f"{out}: cannot be resumed: not a Zarr group ({type(e).__name__}: {e})") from None
        stored = dict(group.attrs.get(ARGUMENTS, {}))
        if not stored or "done" not in group:
            raise ValueError(f"{out}: cannot be resumed: it was not written by denoc_pin's {arguments['by']} "
                             "(no record of its arguments or of its complete tasks)")  # fmt: skip
        if stored["by"] != arguments["by"]:
            raise ValueError(f"{out}: cannot be resumed by {arguments['by']}: it was written by {stored['by']}")
        differ = [f"{k} ({stored.get(k)!r} there, {v!r} here)" for k, v in arguments.items() if stored.get(k) != v]
        if differ:
            raise ValueError(f"{out}: written by other arguments, so it cannot be resumed: {'; '.join(differ)}. "
                             "Give the same arguments, or resume=False to write it anew")  # fmt: skip
        return group, np.asarray(group["done"][:], dtype=bool)
    group = zarr.open_group(out, mode="w")
    for name, (shape, chunks) in arrays.items():
        group.create_array(name, shape=shape, chunks=chunks, dtype="f8", fill_value=np.nan, compressors=None)
    group.create_array("done", shape=(done,), chunks=(1,), dtype="u1", fill_value=0, compressors=None)
    group.attrs[ARGUMENTS] = arguments
    return group, np.zeros(done, dtype=bool)


def completed(out) -> tuple[int, int]:
    """(tasks complete, tasks) of the sweep or dataset store at ``out``: runs, or chunks; (0, 0) where there is no
    store yet (an interruption before its creation)."""
    _need_dask()
    try:
        done = np.asarray(zarr.open_group(str(out), mode="r")["done"][:])
    except Exception:  # zarr's errors for a missing or foreign store  # noqa: BLE001
        return 0, 0
    return int(done.sum()), len(done)


def _slices(indices, per: int) -> list[list[int]]:
    """``indices`` in lists of ``per``, each of consecutive runs where they are."""
    return [list(indices[k : k + per]) for k in range(0, len(indices), per)]


# ---------------------------------------------------------------------------------------------------------------
# Edits of a run's model
# ---------------------------------------------------------------------------------------------------------------


def _link(model: Model, name: str) -> int:
    """The body index of a link (or of the joint that moves it)."""
    if name in model.link_names:
        return model.link_names.index(name)
    if name in model.names[1:]:
        return model.joint_id(name)
    raise ModelError(f"no link or joint {name!r} in model {model.name!r}; links are: {', '.join(model.link_names[1:])}")


def _check_spec(model: Model, spec, where: str) -> None:
    """A clear error for a spec that is not one of ``apply_edits``'s, before any task runs."""
    if spec is None:
        return
    if not isinstance(spec, dict) or set(spec) - set(EDIT_KEYS):
        keys = sorted(set(spec) - set(EDIT_KEYS)) if isinstance(spec, dict) else type(spec).__name__
        raise ValueError(f"{where}: an edit spec is a dict with keys among {', '.join(EDIT_KEYS)}; got {keys}")
    for p in _payloads(spec):
        if not isinstance(p, dict) or "link" not in p or "mass" not in p:
            raise ValueError(f"{where}: a payload is a dict with 'link', 'mass' and optionally 'offset'; got {p!r}")
        _link(model, p["link"])
        if not (np.isfinite(p["mass"]) and p["mass"] >= 0):
            raise ValueError(f"{where}: a payload's mass must be a finite number >= 0, got {p['mass']}")
        if np.shape(p.get("offset", np.zeros(3))) != (3,):
            raise ValueError(f"{where}: a payload's offset is (x, y, z) in the link frame, got {p.get('offset')}")
    for name in spec.get("lock", ()):
        model.joint_id(name)  # a ModelError listing the joints
    for name, factor in spec.get("mass_scale", {}).items():
        _link(model, name)
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"{where}: mass_scale[{name!r}] must be a finite number > 0, got {factor}")
    for key in GROUND_KEYS:
        if key in spec and not (isinstance(spec[key], int | float) and np.isfinite(spec[key])
                                and (key != "friction" or spec[key] >= 0)):  # fmt: skip
            raise ValueError(f"{where}: {key} must be a finite number{' >= 0' if key == 'friction' else ''}, got "
                             f"{spec[key]!r}")  # fmt: skip


def _payloads(spec: dict) -> list:
    p = spec.get("payload", [])
    return [p] if isinstance(p, dict) else list(p)


def apply_edits(model: Model, spec: dict | None, q0) -> Model:
    """The model of one run: ``spec`` None, or a dict with any of

    - ``"payload"``: ``{"link": name, "mass": kg, "offset": (x, y, z)}`` or a list of them: a point mass rigidly
      fixed in the link's frame at ``offset`` (default its origin); the link's mass, centre of mass and
      rotational inertia about the new centre of mass change by the parallel-axis theorem.
    - ``"mass_scale"``: ``{link name: factor}``: the link's mass and rotational inertia times ``factor`` (the
      same shape, denser), its centre of mass unchanged.
    - ``"lock"``: joint names, held rigid at their values in ``q0`` (``dp.lock_joints``); the run's trajectory
      keeps the original layout, a locked joint at its q0 value with zero rate.  A locked joint's rate in v0 stops
      as in ``dp.simulate``'s events (an inelastic impact that conserves the generalized momentum); at rest, the
      other rates start as given.

    The order is mass_scale, then payload, then lock.  ``"friction"`` (μ) and ``"ground_height"`` (m) edit the
    run's ground (``ground_for``), not the model."""
    if not spec:
        return model
    masses, coms, inertias = model.masses.copy(), model.coms.copy(), model.inertias.copy()
    for name, factor in spec.get("mass_scale", {}).items():
        k = _link(model, name)
        masses[k] *= factor
        inertias[k] *= factor
    for p in _payloads(spec):
        k, mp = _link(model, p["link"]), float(p["mass"])
        r = np.asarray(p.get("offset", np.zeros(3)), float)
        m = masses[k] + mp
        c = (masses[k] * coms[k] + mp * r) / m if m > 0 else coms[k]
        d1, d2 = coms[k] - c, r - c  # the parallel-axis theorem: both about the new centre of mass
        inertias[k] = (inertias[k] + masses[k] * (d1 @ d1 * np.eye(3) - np.outer(d1, d1))
                       + mp * (d2 @ d2 * np.eye(3) - np.outer(d2, d2)))  # fmt: skip
        masses[k], coms[k] = m, c
    edited = model
    if "mass_scale" in spec or "payload" in spec:
        edited = with_fields(model, masses=masses, coms=coms, inertias=inertias)
    if spec.get("lock"):
        edited = lock_joints(edited, spec["lock"], q0)
    return edited


def ground_for(ground, spec: dict | None):
    """The run's ``dp.Ground``: ``ground`` with the spec's "friction" and "ground_height" (None: no ground)."""
    changes = {field: float(spec[key]) for key, field in GROUND_KEYS.items() if spec and key in spec}
    if changes and ground is None:
        raise ValueError(f"an edit spec sets {', '.join(sorted(changes))} of the ground, but the sweep has none: "
                         "pass ground=dp.Ground(...)")  # fmt: skip
    return dataclasses.replace(ground, **changes) if changes else ground


def _pd_for(tau, run_model: Model):
    """A ``dp.JointPD`` bound to the run's model (an edit changed its masses, or the PD and the model travelled to
    the worker in different pickles; the same layout); None and constants pass."""
    if not isinstance(tau, JointPD) or tau.model is run_model:
        return tau
    if (run_model.nq, run_model.nv) != (tau.model.nq, tau.model.nv):
        raise ValueError(LOCK_PD)
    return JointPD(run_model, tau.kp, tau.kd, tau.q_ref, tau.v_ref, tau.tau_ff)


# ---------------------------------------------------------------------------------------------------------------
# Sweeps
# ---------------------------------------------------------------------------------------------------------------


def _one_run(model: Model, i: int, q0, v0, t_final, dt, method, tau, spec, options, out):
    """Run i of a sweep on a worker: its final state, energy drift and wall time; its trajectory into ``out``."""
    numba.set_num_threads(1)  # numba's threads stay out of Dask's
    with _first_of_its_kind(("run", method, bool(model.n_constraints), options.get("ground") is not None)):
        return _run(model, i, q0, v0, t_final, dt, method, tau, spec, options, out)


def _some_runs(model: Model, runs: list, q0s, v0s, t_final, dt, method, tau, specs, options, out) -> list:
    """Runs ``runs`` (indices) of a sweep on a worker, one after another: one task for several runs, so that the
    scheduler's cost per task (a few ms on a machine it shares with the workers) is spread over them."""
    return [_one_run(model, i, q0s[j], v0s[j], t_final, dt, method, tau, specs[j], options, out)
            for j, i in enumerate(runs)]  # fmt: skip


def _run(model: Model, i: int, q0, v0, t_final, dt, method, tau, spec, options, out):
    start = time.perf_counter()
    try:
        run_model = apply_edits(model, spec, q0)
        options = options | ({"ground": ground_for(options["ground"], spec)} if "ground" in options else {})
        if run_model is model:  # a JointPD came in its own pickle: bound again to the model the worker holds
            traj = simulate(model, q0, v0, t_final, dt, method, _pd_for(tau, model), progress=False, **options)
            Q, V = traj.q, traj.v
        else:  # in the run model's layout (dp.simulate's events carry the state), then back in the model's
            qr, vr, _ = transfer_state(model, run_model, q0, v0)
            run_cols, cols = to_original(model, run_model, q0[None], q0)[1]
            taur = _pd_for(tau, run_model) if isinstance(tau, JointPD) else (None if tau is None else tau[cols])
            traj = simulate(run_model, qr, vr, t_final, dt, method, taur, progress=False, **options)
            Q = to_original(model, run_model, traj.q, q0)[0]  # a locked joint held at its q0 value, at rest
            V = np.zeros((len(traj.t), model.nv))
            V[:, cols] = traj.v[:, run_cols]
    except ValueError as e:  # a run that blows up, or whose edit or start is refused: reported, the sweep goes on
        return {"i": i, "error": f"{type(e).__name__}: {e}", "wall": time.perf_counter() - start}
    E = traj.energy["total"]
    scale = float(np.abs(traj.energy["kinetic"]).max()) or max(abs(float(E[0])), 1.0)
    result = {"i": i, "q": Q[-1], "v": V[-1], "drift": float(np.abs(E - E[0]).max() / scale),
              "wall": time.perf_counter() - start}  # fmt: skip
    if out is not None:  # the trajectory, its numbers, and last the mark that run i is complete
        group = zarr.open_group(out, mode="r+")
        group["q"][i] = Q
        group["v"][i] = V
        group["drift"][i] = result["drift"]
        group["wall"][i] = result["wall"]
        group["done"][i] = 1
    return result


def _time_grid(t_final: float, dt: float, record_every: int) -> np.ndarray:
    """``dp.simulate``'s time grid."""
    if not (np.isfinite(dt) and dt > 0 and np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final and dt must be positive numbers, got {t_final} and {dt}")
    nsteps, stride = int(round(t_final / dt)), int(record_every)
    if nsteps < 1 or stride < 1:
        raise ValueError(f"t_final = {t_final} is shorter than one step dt = {dt}, or record_every < 1")
    return np.arange(nsteps // stride + 1) * stride * dt


def simulate_many(model: Model, q0s, v0s=None, t_final: float = 1.0, dt: float = 1e-3, method: str | None = None,
                  tau=None, edits=None, client=None, out=None, progress: bool | None = None, record_every: int = 1,
                  resume: bool = False, **options) -> dict:  # fmt: skip
    """One ``dp.simulate`` per row of ``q0s`` (N, nq) and ``v0s`` (N, nv; default zeros), on a Dask cluster.

    edits: None, one edit spec for every run, or a list of N (``apply_edits``: payloads, scaled link masses,
    locked joints, and with a ground its friction and height).  tau: None, a constant (nv,) or a ``dp.JointPD``
    (another callable would have to travel to the workers: not taken).
    options: as ``dp.simulate``'s: rtol, atol, baumgarte, and ground and contact for contact scenes (then each run
    is ``dp.simulate``'s compiled contact loop).
    client: a ``distributed.Client`` (``client()``); None starts a local cluster for this call and closes it.
    record_every, options: as ``dp.simulate``'s (rtol, atol, baumgarte).
    out: a path: a Zarr group with ``q`` (N, T, nq), ``v`` (N, T, nv) and ``t`` (T,), T being ``dp.simulate``'s
    time grid, run i at index i, chunks (1, T, ·); ``drift`` and ``wall`` (N,); ``done`` (N,), 1 once run i is
    complete.  The worker that ran it writes each run when it ends, ``done[i]`` last, so the store is readable
    while the sweep runs (a run not written yet reads NaN) and an interruption at any instant leaves no run marked
    complete that is not.  The path must be reachable from every worker (a shared file system on a cluster).
    resume: with ``out``, keep the runs the store marks complete and compute the others only; the store must
    have been written by the same arguments (model, q0s, v0s, t_final, dt, method, tau, edits, record_every,
    options), else a ValueError names those that differ.  A run that raised is not marked complete: a resume
    runs it again.

    Returns a dict: ``q`` (N, nq) and ``v`` (N, nv) the final states, ``drift`` (N,) the largest change of the
    total energy relative to the largest kinetic energy, ``wall`` (N,) seconds per run, ``errors`` {i:
    message} for the runs that raised (their rows NaN), and ``computed`` the indices of the runs this call ran
    (all of them, but for a resume).
    """
    _need_dask()
    q0s, v0s, tau = run_inputs(model, q0s, v0s, tau, "simulate_many")
    n = len(q0s)
    specs = list(edits) if isinstance(edits, list | tuple) else [edits] * n
    if len(specs) != n:
        raise ValueError(f"edits: one spec for all runs or a list of N = {n}, got {len(specs)}")
    for i, spec in enumerate(specs):
        _check_spec(model, spec, f"edits[{i}]")
        ground_for(options.get("ground"), spec)  # a ground edit without a ground: refused before any task runs
        if spec and spec.get("lock") and isinstance(tau, JointPD):  # a lock always removes coordinates
            raise ValueError(f"edits[{i}]: {LOCK_PD}")
    if resume and out is None:
        raise ValueError("resume=True needs out=, the store that holds the runs already complete")
    t = _time_grid(t_final, dt, record_every)
    options = options | {"record_every": int(record_every)}
    done = np.zeros(n, dtype=bool)
    group = None
    if out is not None:
        out = str(out)
        arguments = {
            "by": "simulate_many",
            "model": f"{model.name} ({_digest(model)})",
            "runs": n,
            "q0s": _digest(q0s),
            "v0s": _digest(v0s),
            "t_final": float(t_final),
            "dt": float(dt),
            "method": str(method),
            "tau": _digest(tau),
            "edits": _digest(specs),
            "options": _digest(options),
        }
        T = len(t)
        arrays = {"q": ((n, T, model.nq), (1, T, model.nq)), "v": ((n, T, model.nv), (1, T, model.nv)),
                  "drift": ((n,), (1,)), "wall": ((n,), (1,))}  # fmt: skip
        group, done = _open_store(out, arguments, arrays, n, resume)
        if "t" not in group:
            group.create_array("t", data=t)
            group.attrs.update({"model": model.name, "dt": dt, "method": method, "t_final": t_final})
    todo = np.flatnonzero(~done)
    results = {}
    if len(todo):
        c, own = _client_or_local(client)
        try:
            shared = c.scatter(model, broadcast=True, hash=False)
            tag = uuid.uuid4().hex[:8]
            per = max(1, len(todo) // (TASKS_PER_WORKER * max(1, sum(c.nthreads().values()))))
            slices = _slices(todo, per)
            futures = {runs[0]: c.submit(_some_runs, shared, runs, q0s[runs], v0s[runs], t_final, dt, method, tau,
                                         [specs[i] for i in runs], options, out, key=f"denoc-runs-{tag}-{runs[0]}",
                                         pure=False)
                       for runs in slices}  # fmt: skip
            sizes = {runs[0]: len(runs) for runs in slices}
            results = {r["i"]: r for rs in _gather(c, futures, progress, "runs", sizes).values() for r in rs}
        finally:
            _close(c, own)
    report = {"q": np.full((n, model.nq), np.nan), "v": np.full((n, model.nv), np.nan), "drift": np.full(n, np.nan),
              "wall": np.zeros(n), "errors": {}, "computed": np.array(sorted(results), dtype=int)}  # fmt: skip
    for i in np.flatnonzero(done):  # complete before this call: from the store
        report["q"][i], report["v"][i] = group["q"][i, -1], group["v"][i, -1]
        report["drift"][i], report["wall"][i] = group["drift"][i], group["wall"][i]
    for i, r in results.items():
        report["wall"][i] = r["wall"]
        if "error" in r:
            report["errors"][i] = r["error"]
        else:
            report["q"][i], report["v"][i], report["drift"][i] = r["q"], r["v"], r["drift"]
    return report


# ---------------------------------------------------------------------------------------------------------------
# Datasets
# ---------------------------------------------------------------------------------------------------------------

V_DEFAULT = 1.0  # rad/s or m/s where a joint has no velocity limit
TAU_DEFAULT = 10.0  # N·m or N where a joint has no effort limit


def _bounds(limit: np.ndarray, default: float) -> np.ndarray:
    """Symmetric bounds: the limit where finite and positive (below Pinocchio's 1.8e308 "none"), else default."""
    limit = np.asarray(limit, float)
    return np.where((limit > 0) & (limit < 1e300), limit, default)


def _chunk_rows(model: Model, seed: int, c: int, lo: int, hi: int):
    """Rows lo … hi−1 of a dataset: chunk c's own random stream (seed, c), so the numbers depend on the seed and
    the chunk size alone, not on which worker draws them or when."""
    numba.set_num_threads(1)
    rng = np.random.default_rng([seed, c])
    n = hi - lo
    q = random_configuration(model, rng, n=n)
    vb, tb = _bounds(model.velocity_limit, V_DEFAULT), _bounds(model.effort_limit, TAU_DEFAULT)
    v = rng.random((n, model.nv)) * (2 * vb) - vb  # uniform in [−vb, vb): faster than uniform() with array bounds
    tau = rng.random((n, model.nv)) * (2 * tb) - tb
    ddq = forward_dynamics(model, model.create_data(), q, v, tau)
    return q, v, tau, ddq


def _dataset_chunk(model: Model, seed: int, c: int, lo: int, hi: int, out: str) -> int:
    with _first_of_its_kind(("dataset",)):
        q, v, tau, ddq = _chunk_rows(model, seed, c, lo, hi)
    group = zarr.open_group(out, mode="r+")
    for name, x in (("q", q), ("v", v), ("tau", tau), ("ddq", ddq)):
        group[name][lo:hi] = x
    group["done"][c] = 1  # last: the chunk is complete
    return hi - lo


def dataset(model: Model, n_samples: int, seed: int, out, chunk: int = 100_000, client=None,
            progress: bool | None = None, resume: bool = False) -> dict:  # fmt: skip
    """Random states and their dynamics for learning, as a Zarr group at ``out`` with arrays ``q`` (N, nq),
    ``v``, ``tau`` and ``ddq`` (N, nv), chunked (chunk, ·), float64, uncompressed (random doubles do not
    compress), and ``done`` (chunks,): 1 once a chunk's rows are all written.

    Each row: q uniform within the position limits (``dp.random_configuration``), v and τ uniform within ±the
    velocity and effort limits (±1 and ±10 where a joint has none), and q̈ = FD(q, v, τ), so that τ = ID(q, v,
    q̈) too: one sample serves a learned forward and a learned inverse model.  Chunk c draws from
    ``numpy.random.default_rng([seed, c])``: the same seed and chunk give the same arrays whatever the number of
    workers.  resume: keep the chunks the store at ``out`` marks complete and compute the others (the same model,
    n_samples, seed and chunk, else a ValueError names those that differ).  Returns {"samples", "chunks",
    "computed" (chunks computed by this call), "wall_s", "rate"} (rate in samples/s, of the samples computed).
    """
    _need_dask()
    n, chunk = int(n_samples), int(chunk)
    if n < 1 or chunk < 1:
        raise ValueError(f"n_samples and chunk must be at least 1, got {n_samples} and {chunk}")
    if model.n_constraints:
        raise ValueError(f"model {model.name!r} has loops: random states would not close them; dataset takes trees")
    out = str(out)
    starts = list(range(0, n, chunk))
    arguments = {"by": "dataset", "model": f"{model.name} ({_digest(model)})", "samples": n, "seed": int(seed),
                 "chunk": chunk}  # fmt: skip
    arrays = {name: ((n, width), (chunk, width)) for name, width in
              (("q", model.nq), ("v", model.nv), ("tau", model.nv), ("ddq", model.nv))}  # fmt: skip
    group, done = _open_store(out, arguments, arrays, len(starts), resume)
    group.attrs.update({"model": model.name, "seed": int(seed), "chunk": chunk,
                        "velocity_bound": list(_bounds(model.velocity_limit, V_DEFAULT)),
                        "effort_bound": list(_bounds(model.effort_limit, TAU_DEFAULT))})  # fmt: skip
    todo = [i for i in range(len(starts)) if not done[i]]
    start = time.perf_counter()
    if todo:
        c, own = _client_or_local(client)
        try:
            shared = c.scatter(model, broadcast=True, hash=False)
            tag = uuid.uuid4().hex[:8]
            futures = {i: c.submit(_dataset_chunk, shared, int(seed), i, starts[i], min(starts[i] + chunk, n), out,
                                   key=f"denoc-chunk-{tag}-{i}", pure=False)  # fmt: skip
                       for i in todo}  # fmt: skip
            _gather(c, futures, progress, "chunks")
        finally:
            _close(c, own)
    wall = time.perf_counter() - start
    computed = sum(min(starts[i] + chunk, n) - starts[i] for i in todo)
    return {"samples": n, "chunks": len(starts), "computed": len(todo), "wall_s": wall,
            "rate": computed / wall if wall > 0 else float("nan")}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Fleet validation
# ---------------------------------------------------------------------------------------------------------------


def robot_files(paths) -> list[Path]:
    """The files among ``paths`` and inside the folders among them (recursively) that ``dp.load`` reads."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            found += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in LOADERS)
        else:
            found.append(p)
    return found


def _validate_one(path: str, samples: int, seed: int) -> dict:
    numba.set_num_threads(1)
    with _first_of_its_kind(("validate", Path(path).suffix.lower())):
        return _validate(path, samples, seed)


def _validate(path: str, samples: int, seed: int) -> dict:
    row = {"file": path, "nq": None, "nv": None, "checks": 0, "passed": False, "worst": "", "rel": np.nan,
           "error": ""}  # fmt: skip
    try:
        model = load(path)
        row["nq"], row["nv"] = model.nq, model.nv
        import pinocchio as pin  # here, as in the CLI's validate: the other commands start without it

        p = Path(path)
        pin_model = pin.buildModelFromUrdf(str(p)) if p.suffix.lower() == ".urdf" else to_pinocchio(model)
        checks = compare_with_pinocchio(model, pin_model, samples=samples, seed=seed)
        if model.n_constraints:
            checks += compare_loops(model, pin_model, samples=samples, seed=seed)
    except (ModelError, ValueError, OSError) as e:
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    # The worst check: a failed one, else the largest relative error among the checks whose worst sample a relative
    # error judges, that sample's (the others are zero to rounding: an absolute error of at most ATOL against a
    # reference that vanishes, as a two-link arm's velocity terms; their relative error means nothing).
    judged = [ch for ch in checks if not ch.info and (not ch.passed or ch.worst_tol > ATOL)] or checks
    worst = max(judged, key=lambda ch: (not ch.passed, ch.worst_abs / (ch.worst_tol / RTOL)))
    row.update(checks=len(checks), passed=all(ch.passed for ch in checks), rel=worst.worst_abs * RTOL / worst.worst_tol,
               worst=f"{worst.algorithm} vs {worst.reference}")  # fmt: skip
    return row


def validate_many(paths, samples: int = 10, seed: int = 0, client=None, progress: bool | None = None) -> list:
    """``denoc-pin validate`` on many files (folders are searched for robot files), one task per file; one row
    per file: file, nq, nv, the number of checks, whether all passed, the worst check and its relative error,
    and the error that stopped the file from loading (empty if none).  ``format_rows`` prints the table."""
    _need_dask()
    files = [str(f) for f in robot_files(paths)]
    if not files:
        raise ValueError(f"no robot files ({', '.join(sorted(LOADERS))}) in {', '.join(map(str, paths))}")
    c, own = _client_or_local(client)
    try:
        tag = uuid.uuid4().hex[:8]
        futures = {i: c.submit(_validate_one, f, samples, seed, key=f"denoc-validate-{tag}-{i}", pure=False)
                   for i, f in enumerate(files)}  # fmt: skip
        results = _gather(c, futures, progress, "files")
    finally:
        _close(c, own)
    return [results[i] for i in range(len(files))]


def format_rows(rows: list) -> str:
    """validate_many's rows as a table, and a last line counting the files that passed."""
    width = max(len("file"), *(len(r["file"]) for r in rows))
    lines = [f"{'file':<{width}} {'nq':>4} {'nv':>4} {'checks':>6}  {'result':<6} worst (relative error)"]
    for r in rows:
        if r["error"]:
            lines.append(f"{r['file']:<{width}} {'':>4} {'':>4} {'':>6}  {'ERROR':<6} {r['error']}")
        else:
            lines.append(f"{r['file']:<{width}} {r['nq']:>4} {r['nv']:>4} {r['checks']:>6}  "
                         f"{'ok' if r['passed'] else 'FAIL':<6} {r['worst']} ({r['rel']:.1e})")  # fmt: skip
    ok = sum(r["passed"] for r in rows)
    lines.append(f"{ok} of {len(rows)} files passed every check")
    return "\n".join(lines)
