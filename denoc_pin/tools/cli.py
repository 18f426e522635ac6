"""The ``denoc-pin`` command line: ``info``, ``validate``, ``simulate``, ``view``, ``models``, ``demo``, ``compile``,
``cache``, and on Dask ``sweep`` and ``dataset`` (``validate`` takes many files there too).  A robot is a file (URDF,
SDF, MJCF) or a name: a bundled model's, or an example-robot-data robot's.

Exit codes: 0 success, 1 a check failed, 2 the model could not be loaded (the message says why).
"""

from __future__ import annotations

import argparse
import difflib
import json
import shlex
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np
import pinocchio

from .. import kernel_cache
from ..algorithms.configuration import neutral, random_configuration
from ..algorithms.parallel_scheme import connectivity_matrix
from ..core.joints import JOINTS
from ..loaders.files import LOADERS, load
from ..loaders.models import BUNDLED, bundled_file
from ..loaders.pinocchio_bridge import to_pinocchio
from ..loaders.robots import example_robot_names, example_robot_urdf
from ..loops import assemble, loop_residual
from ..model import ModelError, ModelWarning
from ..simulation.simulate import Trajectory, simulate
from ..version import __version__
from . import dask_sweeps as dist
from . import demo
from .precompile import DEMO, TASKS, compile_kernels
from .validate import as_json, compare_loops, compare_with_pinocchio, format_table
from .viewer import Viewer

__all__ = ["main"]


def _resolve(path: str) -> Path:
    """A robot file's path, or a name: a bundled model's (``gripper``, ``four_bar``, …: ``denoc-pin models``), else
    an example-robot-data robot's (``panda``, ``ur5``, …)."""
    p = Path(path)
    if p.exists():
        return p
    if p.suffix.lower() in LOADERS or "/" in path:  # a path (a name may hold a dot: alexander_v1.lowerBodyOnly)
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path in BUNDLED:
        return bundled_file(path)
    try:
        return example_robot_urdf(path)
    except FileNotFoundError:
        robots = example_robot_names()
        near = difflib.get_close_matches(path, [*BUNDLED, *robots], n=5)
        raise FileNotFoundError(
            f"{path!r} is neither a file nor a model's name"
            + (f"; did you mean {', '.join(near)}?" if near else "")
            + f" bundled: {', '.join(BUNDLED)}; example-robot-data: "
            + (f"{len(robots)} robots (denoc-pin models lists them)" if robots else "not installed")
        ) from None


def _load(args):

    return load(_resolve(args.urdf), root_joint=args.root_joint, strict=args.strict)


def cmd_info(args) -> int:
    model = _load(args)
    print(model)
    print()
    print(f"{'joint':<28} {'kind':<11} {'parent':<28} {'module':>6} {'idx_q':>5} {'idx_v':>5}")

    for k in range(1, model.njoints):
        print(
            f"{model.names[k]:<28} {JOINTS[int(model.kinds[k])].name:<11} {model.names[model.parents[k]]:<28} "
            f"{'M' + str(model.body_module[k] + 1):>6} {model.idx_q[k]:>5} {model.idx_v[k]:>5}"
        )
    print(f"\ntotal mass (moving bodies): {model.masses[1:].sum():.6g} kg")
    if args.frames:
        print(f"\n{'frame':>5} {'name':<32} {'type':<12} {'joint':<28} placement in the joint frame (xyz, rpy)")
        for i, f in enumerate(model.frames):
            R = np.asarray(f.rotation)
            rpy = (np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(np.clip(R[2, 0], -1, 1)), np.arctan2(R[1, 0], R[0, 0]))
            where = " ".join(f"{x:+.4f}" for x in (*f.translation, *rpy))
            print(f"{i:>5} {f.name:<32} {f.type:<12} {model.names[f.body]:<28} {where}")
    if args.connectivity:
        print("\nconnectivity (Isobe & Yagi, Fig. 3): row j, column k is 1 when joint j supports link k")
        for j, row in enumerate(connectivity_matrix(model), start=1):
            print(f"{model.names[j]:>28} " + " ".join(str(x) for x in row))
    return 0


def _cluster(args):
    """A Dask client for --scheduler / --workers (``distributed.client``)."""
    if args.scheduler:
        return dist.client(args.scheduler)
    return dist.client(n_workers=args.workers, host=args.host)


def cmd_validate(args) -> int:
    import pinocchio as pin

    names = args.urdf
    if len(names) > 1 or args.scheduler or args.workers or Path(names[0]).is_dir():
        return _validate_many(args)
    args.urdf = names[0]
    path = _resolve(args.urdf)
    model = _load(args)
    root = {None: None, "free-flyer": pin.JointModelFreeFlyer, "planar": pin.JointModelPlanar}[args.root_joint]
    if path.suffix.lower() != ".urdf":  # Pinocchio's pip wheel reads no SDF: its twin of our tree is the referee
        pin_model = to_pinocchio(model)
    elif root is None:
        pin_model = pin.buildModelFromUrdf(str(path))
    else:
        pin_model = pin.buildModelFromUrdf(str(path), root())
    checks = compare_with_pinocchio(model, pin_model, samples=args.samples, seed=args.seed)
    if model.n_constraints:
        checks += compare_loops(model, pin_model, samples=args.samples, seed=args.seed)
    ok = all(c.passed for c in checks)
    if args.json:
        print(
            json.dumps(
                {
                    "urdf": str(path),
                    "nq": model.nq,
                    "nv": model.nv,
                    "modules": len(model.modules),
                    "samples": args.samples,
                    "seed": args.seed,
                    "passed": ok,
                    "checks": as_json(checks),
                },
                indent=2,
            )  # fmt: skip
        )
    else:
        title = (
            f"{path}: {model.name!r}, nq={model.nq}, nv={model.nv}, {len(model.modules)} modules, "
            f"{args.samples} random states (seed {args.seed})"
        )
        print(format_table(checks, title))
        print(f"\n{'PASS' if ok else 'FAIL'}: error = ‖ours − Pinocchio's‖∞ ≤ tolerance = max(1e-9 ‖Pinocchio's‖∞, "
              "1e-12) on every sample")  # fmt: skip
    return 0 if ok else 1


def _validate_many(args) -> int:
    paths = [_resolve(p) for p in args.urdf]
    c = _cluster(args)
    try:
        rows = dist.validate_many(paths, samples=args.samples, seed=args.seed, client=c)
    finally:
        c.close()
    if args.json:
        print(json.dumps([r | {"rel": None if np.isnan(r["rel"]) else r["rel"]} for r in rows], indent=2))
    else:
        print(dist.format_rows(rows))
    return 0 if all(r["passed"] for r in rows) else 1


def _interrupted(args, group_path: str, what: str) -> int:
    """After a Ctrl-C: how much of the store is complete, and the command that completes it."""
    done, total = dist.completed(group_path)
    command = [a for a in (args.argv or []) if a != "--resume"]
    print(f"\ninterrupted: {done} of {total} {what} complete in {group_path}; the others are computed by\n  "
          f"denoc-pin {shlex.join(command)} --resume", file=sys.stderr)  # fmt: skip
    return 130


def cmd_sweep(args) -> int:
    if args.resume and not args.out:
        raise ValueError("--resume needs --out, the store that holds the runs already complete")
    model = _load(args)
    q0s = random_configuration(model, args.seed, n=args.runs)
    if model.n_constraints:  # random joint angles do not close the loops
        q0s = np.stack([assemble(model, q, seed=args.seed) for q in q0s])
    c = _cluster(args)
    try:
        r = dist.simulate_many(model, q0s, None, args.t, args.dt, args.method, client=c, out=args.out,
                               resume=args.resume)  # fmt: skip
    except KeyboardInterrupt:
        c.close()  # before the message: the workers stop writing
        if not args.out:
            print("\ninterrupted: no store (--out) holds the runs done", file=sys.stderr)
            return 130
        return _interrupted(args, args.out, "runs")
    finally:
        c.close()
    ok = ~np.isnan(r["drift"])
    print(f"{args.runs} runs of {args.t} s ({args.method}, dt = {args.dt}) from random q0 (seed {args.seed}), at rest: "
          f"{r['wall'].sum():.2f} s of simulation on the workers, median energy drift "
          f"{np.median(r['drift'][ok]) if ok.any() else float('nan'):.1e}")  # fmt: skip
    if args.resume:
        print(f"resumed: {len(r['computed'])} runs computed, {args.runs - len(r['computed'])} were complete")
    for i, message in sorted(r["errors"].items()):
        print(f"run {i}: {message}", file=sys.stderr)
    if args.out:
        print(f"trajectories -> {args.out} (q, v: runs x {int(round(args.t / args.dt)) + 1} instants x nq, nv; t)")
    return 0 if not r["errors"] else 1


def cmd_dataset(args) -> int:
    model = _load(args)
    c = _cluster(args)
    try:
        r = dist.dataset(model, args.samples, args.seed, args.out, chunk=args.chunk, client=c, resume=args.resume)
    except KeyboardInterrupt:
        c.close()
        return _interrupted(args, args.out, "chunks")
    finally:
        c.close()
    print(f"{r['samples']} samples of {model.name!r} (q, v, tau, ddq) in {r['chunks']} chunks, {r['wall_s']:.2f} s "
          f"({r['rate']:.0f} samples/s) -> {args.out}")  # fmt: skip
    if args.resume:
        print(f"resumed: {r['computed']} chunks computed, {r['chunks'] - r['computed']} were complete")
    return 0


def _state(values, default):
    """A q0/v0 from the command line (a list of numbers), or ``default``; simulate checks its size."""
    import numpy as np

    return default if values is None else np.asarray(values, dtype=float)


def cmd_simulate(args) -> int:
    import time

    import numpy as np

    model = _load(args)
    q0 = _state(args.q0, neutral(model))
    v0 = _state(args.v0, np.zeros(model.nv))
    if model.n_constraints:
        if q0.shape == (model.nq,) and np.abs(loop_residual(model, q0)).max() > 1e-6:
            q0 = assemble(model, q0)
            print(f"q0 did not close the loops; assembled to q0 = {np.array2string(q0, precision=6)}")
    t0 = time.perf_counter()
    traj = simulate(model, q0, v0, args.t, dt=args.dt, method=args.method, progress=None if args.progress else False,
                    record_every=args.record_every, rtol=args.rtol, atol=args.atol)  # fmt: skip
    wall = time.perf_counter() - t0
    E = traj.energy["total"]
    drift = float(np.abs(E - E[0]).max() / max(np.abs(traj.energy["kinetic"]).max(), 1e-300))
    steps = f"{traj.stats['steps']} adaptive steps" if traj.stats else f"{round(args.t / args.dt)} steps"
    print(f"{model.name}: {args.method}, {args.t} s simulated in {wall:.3f} s ({steps}, {len(traj.t)} samples); "
          f"energy balance drift {drift:.2e} of the peak kinetic energy")  # fmt: skip
    if args.out:
        if str(args.out).endswith(".csv"):
            traj.to_csv(args.out)
        else:
            traj.save(args.out)
        print(f"trajectory -> {args.out}")
    if args.plot:
        curves = {f"{model.names[k]} [rad or m]": traj.q[:, model.idx_q[k]] for k in range(1, min(model.njoints, 9))}
        demo.line_plot(
            Path(args.plot), traj.t, curves, "time [s]", "q (first entry per joint)", f"{model.name}: {args.method}"
        )
        print(f"plot -> {args.plot}")
    if args.html:
        Viewer(model).save_html(args.html, traj=traj)
        print(f"viewer -> {args.html}")
    return 0


def cmd_view(args) -> int:
    import time

    model = _load(args)
    traj = None
    if args.traj:  # checked before the live server starts: an error must not leave it running
        traj = Trajectory.load(args.traj)
        if traj.q.shape[1] != model.nq:
            raise ValueError(f"{args.traj} holds q of size {traj.q.shape[1]}, the model has nq = {model.nq}")
    viewer = Viewer(model, live=True, host=args.host)
    print(f"MeshCat viewer: {viewer.url}")
    try:
        if args.no_wait:
            if traj is not None:
                viewer.play(traj, speed=args.speed)
            return 0
        print("Ctrl-C to stop")
        while True:
            if traj is not None:
                viewer.play(traj, speed=args.speed)
            time.sleep(1.0)
    except KeyboardInterrupt:
        return 0
    finally:
        viewer.close()


def cmd_compile(args) -> int:
    t0 = time.perf_counter()
    done = compile_kernels(None if args.all or not args.names else args.names, args.workers, force=args.force)
    for name, seconds in done.items():
        print(f"{name:<24} {seconds:6.1f} s  {TASKS[name].what}")
    print(f"{len(done)} groups compiled in {time.perf_counter() - t0:.1f} s" if done else "already compiled")
    return 0


def _bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


def cmd_cache(args) -> int:
    if args.clear:
        held = kernel_cache.clear()
        print(f"cleared {kernel_cache.cache_root()} ({_bytes(held)})")
        return 0
    held = kernel_cache.contents()
    print(f"kernel cache: {held['root']}")
    print(f"size: {_bytes(held['bytes'])} of at most {_bytes(held['limit'])} (DENOC_PIN_CACHE_SIZE)")
    if not held["toolchains"]:
        print("empty: each kernel compiles at its first use (denoc-pin compile: all of them now)")
    for tool, t in sorted(held["toolchains"].items()):
        mark = "  (this one)" if tool == held["toolchain"] else ""
        print(f"{tool}{mark}: {t['folders']} module folders ({t['current']} of the installed sources), "
              f"{t['kernels']} kernels, {t['compiled']} compiled signatures, {_bytes(t['bytes'])}")  # fmt: skip
    groups = held["groups"]
    print(f"groups compiled ahead for these sources: {', '.join(groups) if groups else 'none'}")
    return 0


def cmd_models(args) -> int:
    print("bundled (inside the package; dp.models.bundled(name)):")
    for name, what in BUNDLED.items():
        print(f"  {name:<16} {what}")
    robots = example_robot_names()
    print("example-robot-data: " + (", ".join(robots) if robots else "not installed (pip install example-robot-data)"))
    return 0


def version() -> str:
    """denoc_pin's version and those of the libraries its numbers depend on."""
    return (f"denoc-pin {__version__} (pinocchio {pinocchio.__version__}, numba {numba.__version__}, "
            f"numpy {np.__version__}, Python {sys.version.split()[0]})")  # fmt: skip


def cmd_demo(args) -> int:
    compile_kernels(DEMO)  # in parallel worker processes, once after an install
    results = demo.run(args.out, quick=args.quick)
    g, f, r = results["gripper_inverse_dynamics"], results["gripper_fall"], results["rope_fall"]
    print(f"1. gripper inverse dynamics (Fig. 5): {g['samples']} samples in {g['wall_s'] * 1e3:.2f} ms, "
          f"max rel. error vs pinocchio.rnea {g['max_rel_error_vs_rnea']:.1e} -> {g['figure']}")  # fmt: skip
    print(f"2. gripper fall (Fig. 6): {f['steps']} RK4 steps in {f['wall_s'] * 1e3:.1f} ms, "
          f"energy drift {f['energy_drift_rel']:.1e} -> {f['figure']}")  # fmt: skip
    line = (
        f"3. rope fall (Fig. 7): {r['steps']} RK4 steps in {r['wall_s']:.2f} s (paper: {r['paper_wall_s']} s in MATLAB)"
    )
    if "pinocchio_loop_wall_s" in r:
        line += (
            f", same loop on pinocchio.aba {r['pinocchio_loop_wall_s']:.2f} s,"
            f" states agree to {r['final_state_rel_diff']:.0e}"
        )
    print(line + f", energy drift {r['energy_drift_rel']:.1e} -> {r['figure']}, {r['viewer']}")
    ok = g["max_rel_error_vs_rnea"] <= 1e-9 and r.get("final_state_rel_diff", 0.0) <= 1e-9
    return 0 if ok else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="denoc-pin", description="DeNOC recursive dynamics, checked against Pinocchio"
    )
    parser.add_argument("--version", action="version", version=version())
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_ in [
        ("info", "model summary and its kinematic-module tree"),
        ("validate", "every algorithm vs Pinocchio"),
        ("simulate", "simulate a robot file (RK4 or adaptive): trajectory, plot and HTML viewer outputs"),
        ("view", "show a robot file (and a saved trajectory) in a live MeshCat viewer"),
        ("sweep", "Monte-Carlo simulations from random initial states on a Dask cluster, into a Zarr store"),
        ("dataset", "random states with their tau and ddq for learning, on a Dask cluster, into a Zarr store"),
    ]:
        p = sub.add_parser(name, help=help_)
        if name == "validate":
            p.add_argument("urdf", nargs="+", help="robot files or folders (many: one table, on Dask), or names: "
                           "bundled (gripper, four_bar, …) or example-robot-data (panda, ur5, …): "
                           "denoc-pin models")  # fmt: skip
        else:
            p.add_argument("urdf", help="URDF, SDF or MJCF file, or a name: bundled (gripper, four_bar, …) or "
                           "example-robot-data (panda, ur5, …): denoc-pin models")  # fmt: skip
        p.add_argument(
            "--strict", action="store_true",
            help="refuse what loads with a warning: defects outside the dynamics, inconsistent inertias",
        )  # fmt: skip
        p.add_argument(
            "--root-joint", choices=["free-flyer", "planar"], default=None, help="floating base (default: fixed base)"
        )
        if name == "info":
            p.add_argument("--connectivity", action="store_true", help="print the connectivity matrix")
            p.add_argument("--frames", action="store_true", help="list the frames (model.frames) and where they sit")
        if name == "validate":
            p.add_argument("--samples", type=int, default=10, help="random states (default 10)")
            p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
            p.add_argument("--json", action="store_true", help="machine-readable output")
        if name == "simulate":
            p.add_argument("--t", type=float, default=1.0, help="simulated time [s] (default 1)")
            p.add_argument("--dt", type=float, default=1e-3, help="RK4 step / sampling of the adaptive methods")
            p.add_argument("--q0", type=float, nargs="+", help="initial configuration (nq numbers; default neutral)")
            p.add_argument("--v0", type=float, nargs="+", help="initial velocity (nv numbers; default 0)")
            p.add_argument("--method", choices=["rk4", "rk45", "dop853"], default="rk4")
            p.add_argument("--rtol", type=float, default=1e-8, help="adaptive methods (default 1e-8)")
            p.add_argument("--atol", type=float, default=1e-10, help="adaptive methods (default 1e-10)")
            p.add_argument("--record-every", type=int, default=1, help="keep every k-th sample")
            p.add_argument("--out", help="trajectory file (.npz, or .csv)")
            p.add_argument("--plot", help="PNG of q(t)")
            p.add_argument("--html", help="self-contained HTML viewer playing the motion")
            p.add_argument("--progress", action="store_true", help="progress bar")
        if name in ("validate", "sweep", "dataset"):
            p.add_argument("--scheduler", help="a Dask scheduler's address (default: a local cluster)")
            p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
        if name in ("validate", "sweep", "dataset", "view"):
            p.add_argument(
                "--host",
                default="127.0.0.1",
                help="the address the local cluster or the live viewer "
                "listens on (default 127.0.0.1, this machine only; 0.0.0.0 exposes it to the network)",
            )
        if name == "sweep":
            p.add_argument("--runs", type=int, required=True, help="number of runs")
            p.add_argument("--t", type=float, default=1.0, help="simulated time per run [s] (default 1)")
            p.add_argument("--dt", type=float, default=1e-3, help="RK4 step / sampling (default 1e-3)")
            p.add_argument("--method", choices=["rk4", "rk45", "dop853"], default="rk4")
            p.add_argument("--seed", type=int, default=0, help="random initial configurations' seed (default 0)")
            p.add_argument("--out", help="Zarr store of the trajectories (a folder, e.g. runs.zarr)")
        if name in ("sweep", "dataset"):
            p.add_argument(
                "--resume",
                action="store_true",
                help="keep the runs or chunks --out holds complete and compute the others (the same arguments)",
            )
        if name == "dataset":
            p.add_argument("--samples", type=int, required=True, help="number of samples")
            p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
            p.add_argument("--chunk", type=int, default=100_000, help="rows per chunk and task (default 100000)")
            p.add_argument("--out", required=True, help="Zarr store (a folder, e.g. data.zarr)")
        if name == "view":
            p.add_argument("--traj", help="a trajectory saved by simulate --out (.npz)")
            p.add_argument("--speed", type=float, default=1.0, help="playback speed (default 1)")
            p.add_argument("--no-wait", action="store_true", help="play once and exit (default: until Ctrl-C)")
    sub.add_parser("models", help="the bundled models and the example-robot-data names the commands accept")
    c = sub.add_parser("compile", help="compile the kernels ahead of their first use, in parallel processes "
                       "(container images, Dask workers, CI)")  # fmt: skip
    c.add_argument("names", nargs="*", help=f"kernel groups (default: all): {', '.join(TASKS)}")
    c.add_argument("--all", action="store_true", help="every group (the default)")
    c.add_argument("--workers", type=int, help="processes (default: one per core)")
    c.add_argument("--force", action="store_true", help="also the groups already compiled for these sources")
    k = sub.add_parser("cache", help="the machine's kernel cache: where it is, its size and what it holds")
    k.add_argument("--clear", action="store_true", help="empty it (every kernel then compiles again at first use)")
    d = sub.add_parser("demo", help="the seed papers' examples 1-3, checked against Pinocchio, figures in --out")
    d.add_argument("--out", default="out", help="folder for the figures (default out/)")
    d.add_argument("--quick", action="store_true", help="shortened runs")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # a resume line repeats it
    if getattr(args, "samples", 1) < 1:
        parser.error("--samples must be at least 1")
    if getattr(args, "runs", 1) < 1 or (getattr(args, "workers", None) or 1) < 1:
        parser.error("--runs and --workers must be at least 1")

    def show(message, category, filename, lineno, file=None, line=None):
        # A model file's defects are the user's, not a line of this package: one "warning:" line each.
        if issubclass(category, ModelWarning):
            print(f"denoc-pin: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            shown, warnings.showwarning = warnings.showwarning, show
            commands = {"info": cmd_info, "validate": cmd_validate, "simulate": cmd_simulate, "view": cmd_view,
                        "demo": cmd_demo, "compile": cmd_compile, "cache": cmd_cache, "models": cmd_models,
                        "sweep": cmd_sweep, "dataset": cmd_dataset}  # fmt: skip
            return commands[args.command](args)
    except ModelError as e:
        print(f"denoc-pin: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:  # bad states, step sizes, files: the message says which
        print(f"denoc-pin: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
