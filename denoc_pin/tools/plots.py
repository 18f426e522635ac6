"""A trajectory plotted in one call: ``dp.plot(traj, model, what)`` returns a matplotlib ``Figure`` (Jupyter shows
it inline), or draws into the user's axes with ``ax=``.

what: ``"q"``, ``"v"``, ``"a"``, ``"tau"`` (per coordinate, labelled by joint name, a continuous joint's (cos, sin)
as its angle), ``"energy"`` (kinetic, potential, the torques' work and the balance kinetic + potential − work, whose
drift is the integrator's), ``"loops"`` (a closed model's largest loop residual at each instant), ``"contacts"`` (a
contact run's normal and tangential force on each touching shape: the one on the ground, or a pair's second, which
``Trajectory.contacts``' forces act on) and ``"solver"`` (the contact solver's residual and iterations).
matplotlib is imported at the first call, not with the package.
"""

from __future__ import annotations

import numpy as np

from ..core.joints import CONTINUOUS, FREE_FLYER, JOINTS, PLANAR, PRISMATIC, SPHERICAL
from ..loops import loop_residual
from ..model import Model, ModelError
from ..simulation import Trajectory

__all__ = ["PLOTS", "coordinate_labels", "plot"]

PLOTS = ("q", "v", "a", "tau", "energy", "loops", "contacts", "solver")
"""What ``plot`` draws."""

_TITLES = {"q": "joint positions", "v": "joint velocities", "a": "joint accelerations", "tau": "joint torques"}
_LINEAR = {"q": "m", "v": "m/s", "a": "m/s²", "tau": "N"}
_ANGULAR = {"q": "rad", "v": "rad/s", "a": "rad/s²", "tau": "N m"}


def coordinate_labels(model: Model, what: str = "v") -> list[tuple[str, str, str]]:
    """(joint, label, unit) of each coordinate of v (what = "v", "a", "tau") or of q as ``plot`` draws it (what =
    "q": a continuous joint's (cos, sin) is one angle, a quaternion's four entries are its four, unitless)."""
    out = []
    for k in range(1, model.njoints):
        kind, name = int(model.kinds[k]), model.names[k]
        nv = JOINTS[kind].nv
        if kind == FREE_FLYER or kind == PLANAR:
            lin = ("x", "y", "z")[: 3 if kind == FREE_FLYER else 2]
            if what == "q":
                rot = ("qx", "qy", "qz", "qw") if kind == FREE_FLYER else ("θ",)
                out += [(name, f"{name}.{c}", _LINEAR["q"]) for c in lin]
                out += [(name, f"{name}.{c}", "" if kind == FREE_FLYER else "rad") for c in rot]
            else:
                ang = ("ωx", "ωy", "ωz") if kind == FREE_FLYER else ("ω",)
                out += [(name, f"{name}.v{c}", _LINEAR[what]) for c in lin]
                out += [(name, f"{name}.{c}", _ANGULAR[what]) for c in ang]
        elif kind == SPHERICAL and what == "q":
            out += [(name, f"{name}.{c}", "") for c in ("qx", "qy", "qz", "qw")]
        elif kind == CONTINUOUS and what == "q":
            out.append((name, name, "rad"))
        else:
            unit = (_LINEAR if kind == PRISMATIC else _ANGULAR)[what]
            out += [(name, name if nv == 1 else f"{name}[{i}]", unit) for i in range(nv)]
    return out


def _positions(model: Model, q: np.ndarray) -> np.ndarray:
    """q as ``coordinate_labels(model, "q")`` lists it: a continuous joint's angle atan2(sin, cos), a planar
    joint's θ likewise, every other entry as it is."""
    cols = []
    for k in range(1, model.njoints):
        kind, i = int(model.kinds[k]), int(model.idx_q[k])
        if kind == CONTINUOUS:
            cols.append(np.arctan2(q[:, i + 1], q[:, i])[:, None])
        elif kind == PLANAR:
            cols.append(np.column_stack([q[:, i], q[:, i + 1], np.arctan2(q[:, i + 3], q[:, i + 2])]))
        else:
            cols.append(q[:, i : i + int(model.nqs[k])])
    return np.concatenate(cols, axis=1) if cols else np.zeros((len(q), 0))


def _axes(ax, rows: int = 1):
    """(figure, axes): the user's, or a new Figure's (no pyplot: nothing global is touched)."""
    if ax is not None:
        return ax.figure, [ax] if rows == 1 else list(np.atleast_1d(ax))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 2.6 + 1.6 * rows), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True)
    return fig, list(np.atleast_1d(axes))


def _check(traj, model, what: str, joints) -> None:
    if not isinstance(traj, Trajectory):
        raise TypeError(f"plot: traj must be a dp.Trajectory (what dp.simulate returns), got {type(traj).__name__}")
    if what not in PLOTS:
        raise ValueError(f"plot: what must be one of {', '.join(map(repr, PLOTS))}, got {what!r}")
    if model is not None and not isinstance(model, Model):
        raise TypeError(f"plot: model must be a dp.Model, got {type(model).__name__}")
    if model is not None and (traj.q.shape[1], traj.v.shape[1]) != (model.nq, model.nv):
        raise ValueError(f"plot: the trajectory has nq = {traj.q.shape[1]}, nv = {traj.v.shape[1]}, model "
                         f"{model.name!r} nq = {model.nq}, nv = {model.nv}: not its trajectory")  # fmt: skip
    if joints is not None and model is None:
        raise ValueError("plot: joints= selects by name and needs the model")
    if what == "loops" and (model is None or not model.loops):
        raise ValueError("plot: what='loops' needs the closed model the trajectory was simulated with")
    if what in ("contacts", "solver") and not traj.contacts:
        raise ValueError(f"plot: what={what!r} needs a contact run's trajectory (dp.simulate(..., ground=...))")


def plot(traj: Trajectory, model: Model | None = None, what: str = "q", joints=None, ax=None):
    """A matplotlib ``Figure`` of ``traj`` over time (``PLOTS``: "q", "v", "a", "tau", "energy", "loops",
    "contacts", "solver"); with ``ax=`` (an Axes, or two for "contacts" and "solver") drawn there and its figure
    returned.  model: the model ``traj`` was simulated with, for joint names and units (without it the coordinates
    are numbered) and needed for "loops"; joints: the names of the joints to draw (default: all)."""
    _check(traj, model, what, joints)
    t = np.asarray(traj.t)
    if what in _TITLES:
        return _coordinates(traj, model, what, joints, ax, t)
    if what == "energy":
        fig, (a0,) = _axes(ax)
        e = traj.energy
        for key, label in (("kinetic", "kinetic T"), ("potential", "potential V"), ("work", "work of τ W")):
            a0.plot(t, e[key], label=label)
        a0.plot(t, e["total"], "k--", label=f"T + V − W (drift {np.ptp(e['total']):.2e} J)")
        return _finish(fig, a0, "time [s]", "energy [J]", "energy balance")
    if what == "loops":
        fig, (a0,) = _axes(ax)
        res = np.array([np.abs(loop_residual(model, q)).max() for q in traj.q])
        a0.semilogy(t, np.maximum(res, 1e-17), label="max |r(q)|")
        return _finish(fig, a0, "time [s]", "loop residual [m, rad]", f"{model.name}: loop closure")
    rows = traj.contacts
    if what == "solver":
        fig, (a0, a1) = _axes(ax, 2)
        a0.semilogy(t, np.maximum([r["residual"] for r in rows], 1e-17), label="residual")
        a1.plot(t, [r["iterations"] for r in rows], drawstyle="steps-post", label="iterations")
        _finish(fig, a0, "", "residual", "contact solver")
        return _finish(fig, a1, "time [s]", "iterations", "")
    fig, (a0, a1) = _axes(ax, 2)
    names = sorted({pair[1] for r in rows for pair in r["collisions"]})
    normal, tangential = np.zeros((len(rows), len(names))), np.zeros((len(rows), len(names)))
    column = {n: i for i, n in enumerate(names)}
    for i, r in enumerate(rows):
        for (_, shape), f, nrm in zip(r["collisions"], r["forces"], r["normals"], strict=True):
            fn = float(f @ nrm)
            normal[i, column[shape]] += fn
            tangential[i, column[shape]] += float(np.linalg.norm(f - fn * nrm))
    for j, name in enumerate(names):
        a0.plot(t, normal[:, j], label=name)
        a1.plot(t, tangential[:, j], label=name)
    _finish(fig, a0, "", "normal force [N]", "contact forces on each shape")
    return _finish(fig, a1, "time [s]", "tangential force [N]", "")


def _coordinates(traj, model, what: str, joints, ax, t):
    fig, (a0,) = _axes(ax)
    values = {"q": traj.q, "v": traj.v, "a": traj.a, "tau": traj.tau}[what]
    if model is None:
        n = values.shape[1]
        labels = [(str(i), f"{what}[{i}]", "") for i in range(n)]
    else:
        labels = coordinate_labels(model, what)
        values = _positions(model, values) if what == "q" else values
    if joints is not None:
        wanted = [joints] if isinstance(joints, str) else list(joints)
        unknown = [j for j in wanted if j not in model.names[1:]]
        if unknown:
            raise ModelError(f"plot: no joint {unknown[0]!r} in model {model.name!r}; joints are: "
                             f"{', '.join(model.names[1:])}")  # fmt: skip
    units = set()
    for i, (joint, label, unit) in enumerate(labels):
        if joints is None or joint in wanted:
            a0.plot(t, values[:, i], label=label + (f" [{unit}]" if unit and model is not None else ""))
            units.add(unit)
    shown = sorted(u for u in units if u)
    ylabel = _TITLES[what].split()[1] + (f" [{', '.join(shown)}]" if shown else "")
    title = _TITLES[what] + (f" of {model.name}" if model is not None else "")
    return _finish(fig, a0, "time [s]", ylabel, title)


def _finish(fig, ax, xlabel: str, ylabel: str, title: str):
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize="small", ncol=1 + len(handles) // 8, loc="best")
    return fig
