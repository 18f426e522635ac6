"""Trajectory optimisation by iLQR on the exact Jacobians of one integrator step (``dp.step_derivatives``): the double
pendulum swings up in 2 s, panda's hand reaches a target point in 1 s, and — through contact with friction — a box is
pushed along the ground to stop 0.5 m away (``ContactStepper.derivatives``: the contact step's Jacobians, its corners
sliding, then sticking) and solo12 stands up 8 cm from a deep crouch on its four feet, each optimised motion replayed
in ``dp.simulate``.  Beside each, the same solver on
finite-difference Jacobians of the same step, which is what a user without analytical derivatives writes.

    python examples/ilqr.py [out_dir] [--quick]

Prints each task's iterations, final cost, goal error and time with both kinds of Jacobians, writes a MeshCat page of
each optimised motion (out_dir/ilqr_<task>.html), and ends with one JSON line of the numbers.

iLQR (Li & Todorov's iterative LQR, DDP with the dynamics' second derivatives left out) on x = (q, v), u = τ, with
state errors in the tangent space (``dp.difference``) so that a free-flyer or a continuous joint is handled as a
revolute one is: a backward pass of the Riccati recursion on A, B from ``dp.step_derivatives``, then a forward pass
with a line search, and Levenberg–Marquardt regularisation of Q_uu.
"""

import json
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf


@dataclass
class Task:
    name: str
    model: dp.Model
    q0: np.ndarray
    dt: float
    steps: int
    terminal: object  # terminal(q, v) -> (cost, gradient (2nv,), Gauss–Newton Hessian (2nv, 2nv)), tangent at q
    r: float  # control weight: ½ r |u − u_ref|² dt per step
    u_ref: np.ndarray  # (nu,)
    S: np.ndarray | None = None  # τ = S u (nv, nu); None: u = τ
    ground: dp.Ground | None = None  # a ground: the steps are contact steps
    u_init: np.ndarray | None = None  # (steps, nu) the first guess; None: u_ref throughout

    def __post_init__(self):
        self.S = np.eye(self.model.nv) if self.S is None else self.S
        self.stepper = None if self.ground is None else dp.ContactStepper(self.model, self.ground,
                                                                          dp.ContactSettings(), self.dt)  # fmt: skip

    def step(self, data, q, v, u):
        """(q⁺, v⁺) of one step under τ = S u: the integrator's, or the contact step's."""
        if self.stepper is None:
            return dp.step(self.model, data, q, v, self.S @ u, self.dt)
        return self.stepper.step(q, v, self.S @ u)[:2]

    def jacobians(self, data, q, v, u):
        """(A, B) of ``step``, B with respect to u."""
        if self.stepper is None:
            A, B = dp.step_derivatives(self.model, data, q, v, self.S @ u, self.dt)
        else:
            r = self.stepper.derivatives(q, v, self.S @ u)
            A, B = r.A, r.B
        return A, B @ self.S


def swing_up(quick: bool) -> Task:
    """The double pendulum (continuous joints: q = (cos, sin) pairs) from hanging to upright, at rest."""
    model = dp.load_urdf(example_robot_urdf("double_pendulum_continuous"))
    q0 = dp.neutral(model)  # hanging down
    up = dp.integrate(model, q0, np.array([np.pi, 0.0]))  # the first link turned half a turn: upright
    w_q, w_v = 1e3, 1e2

    def terminal(q, v):
        e = np.r_[dp.difference(model, up, q), v]  # the error, in the tangent space at `up`
        J = np.eye(2 * model.nv)
        J[: model.nv, : model.nv] = dp.difference_derivatives(model, up, q)[1]  # ∂e/∂q in the tangent space at q
        W = np.diag([w_q] * model.nv + [w_v] * model.nv)
        return 0.5 * e @ W @ e, J.T @ W @ e, J.T @ W @ J

    return Task("double_pendulum", model, q0, 0.02, 50 if quick else 100, terminal, 1e-2, np.zeros(model.nv))


def reach(quick: bool) -> Task:
    """panda's hand to a point 0.3 m away in 1 s, and at rest there; torques about those holding the start still."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        model = dp.load_urdf(example_robot_urdf("panda"))
    data = model.create_data()
    q0 = dp.neutral(model)
    q0[3], q0[5] = -1.5, 1.5  # elbow bent, hand forward
    hand = model.frame_id("panda_hand_tcp")
    target = dp.frame_placement(model, data, q0, hand)[:3, 3] + np.array([0.1, 0.2, 0.2])
    w_p, w_v = 1e4, 1e1

    def terminal(q, v):
        p = dp.frame_placement(model, data, q, hand)[:3, 3]
        Jp = dp.frame_jacobian(model, data, q, hand, "local_world_aligned")[:3]  # ∂p/∂q, tangent
        e = p - target
        g = np.r_[w_p * Jp.T @ e, w_v * v]
        H = np.zeros((2 * model.nv, 2 * model.nv))
        H[: model.nv, : model.nv] = w_p * Jp.T @ Jp
        H[model.nv :, model.nv :] = w_v * np.eye(model.nv)
        return 0.5 * w_p * e @ e + 0.5 * w_v * v @ v, g, H

    u_hold = dp.nonlinear_effects(model, data, q0, np.zeros(model.nv))  # gravity at the start
    return Task("panda", model, q0, 0.02, 25 if quick else 50, terminal, 1e-3, u_hold)


BOX_TARGET = 0.5  # [m] along x, where the pushed box must stop


def push(quick: bool) -> Task:
    """A 1 kg, 10 cm box at rest on the ground (μ = 0.5) pushed along x by a force u on its centre (τ = S u: the
    free flyer's x force), to stop 0.5 m away within 1 s.  The first guess, 8 N for 0.3 s, slides it 0.15 m: each
    corner slides, then sticks where the box stops (whose Jacobian with respect to u is then zero: friction holds)."""
    b = dp.ModelBuilder("box")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 2 * 0.01 / 12, link="box")
    b.add_collision("box", dp.Box((0.1, 0.1, 0.1)))
    model = b.build()
    q0 = dp.neutral(model)
    q0[2] = 0.05 - 1e-5  # resting on its face
    target = q0.copy()
    target[0] = BOX_TARGET
    W = np.diag([1e3, 1e3, 0, 0, 0, 0] + [1e1] * 6)  # x, y and the velocity; z and the tilt the ground holds

    def terminal(q, v):
        e = np.r_[dp.difference(model, target, q), v]
        J = np.eye(2 * model.nv)
        J[: model.nv, : model.nv] = dp.difference_derivatives(model, target, q)[1]
        return 0.5 * e @ W @ e, J.T @ W @ e, J.T @ W @ J

    steps = 100
    u_init = np.zeros((steps, 1))
    u_init[:30] = 8.0
    S = np.zeros((model.nv, 1))
    S[0, 0] = 1.0
    return Task("box_push", model, q0, 0.01, steps, terminal, 1e-4, np.zeros(1), S, dp.Ground(friction=0.5), u_init)


STAND_UP = 0.08  # [m] solo12's base rises by


def stand_up(quick: bool) -> Task:
    """solo12 (its URDF, mesh feet) from a deep crouch (hips 1.2 rad, knees 2.4 rad), settled on the ground under
    joint PD, raises its base 8 cm in 0.6 s and stops there, level, its feet on the ground: u the 12 joint torques
    (the base unactuated), the first guess the torques that hold the crouch."""
    model = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
    crouch = dp.neutral(model)
    crouch[7:] = [0, 1.2, -2.4, 0, 1.2, -2.4, 0, -1.2, 2.4, 0, -1.2, 2.4]
    data = model.create_data()
    dp.forward_kinematics(model, data, crouch)
    crouch[2] -= min(float((data.oR[c.body] @ (c.rotation @ c.shape.vertices.T + c.translation[:, None]))[2].min()
                           + data.op[c.body][2]) for c in model.collisions)  # the feet's lowest vertex  # fmt: skip
    ground, hold = dp.Ground(friction=0.9), dp.JointPD(model, 100.0, 0.5, crouch)
    settled = dp.simulate(model, crouch, np.zeros(model.nv), 0.5, 1e-3, tau=hold, ground=ground, progress=False)
    q0 = settled.q[-1]
    u_hold = hold(0.0, q0, np.zeros(model.nv))[6:]
    target = q0.copy()
    target[2] += STAND_UP
    W = np.diag([1e2, 1e2, 1e3, 1e2, 1e2, 1e2] + [0.0] * 12 + [1.0] * 18)  # the base's pose; every velocity

    def terminal(q, v):
        e = np.r_[dp.difference(model, target, q), v]
        J = np.eye(2 * model.nv)
        J[: model.nv, : model.nv] = dp.difference_derivatives(model, target, q)[1]
        return 0.5 * e @ W @ e, J.T @ W @ e, J.T @ W @ J

    S = np.zeros((model.nv, 12))
    S[6:] = np.eye(12)
    steps = 60
    return Task("solo12_stand_up", model, q0, 0.01, steps, terminal, 1e-3, u_hold, S, ground,
                np.tile(u_hold, (steps, 1)))  # fmt: skip


def replay(task: Task, result: dict) -> dp.Trajectory:
    """The optimised controls in ``dp.simulate`` from the same start, with iLQR's feedback gains about the optimised
    states (u_k + K_k (x ⊖ x̄_k), held over each step): an open-loop replay of a standing robot drifts off them."""
    U, K, Q, V = result["U"], result["K"], result["Q"], result["V"]

    def tau(t, q, v):
        k = min(int(round(t / task.dt)), task.steps - 1)
        return task.S @ (U[k] + K[k] @ np.r_[dp.difference(task.model, Q[k], q), v - V[k]])

    return dp.simulate(task.model, task.q0, np.zeros(task.model.nv), task.steps * task.dt, task.dt, tau=tau,
                       ground=task.ground, progress=False)  # fmt: skip


def finite_difference_jacobians(task, data, q, v, u, h=1e-6):
    """A, B by forward differences of the task's step in the tangent spaces: 2 nv + nu + 1 steps."""
    model, nv, nu = task.model, task.model.nv, len(u)
    q1, v1 = task.step(data, q, v, u)
    D = np.empty((2 * nv, 2 * nv + nu))
    for i in range(2 * nv + nu):
        e = np.zeros(2 * nv + nu)
        e[i] = h
        qa, va = task.step(data, dp.integrate(model, q, e[:nv]), v + e[nv : 2 * nv], u + e[2 * nv :])
        D[:, i] = np.r_[dp.difference(model, q1, qa), va - v1] / h
    return D[:, : 2 * nv], D[:, 2 * nv :]


def rollout(task, data, U):
    """The states from q0 at rest under the controls U, and the total cost."""
    Q, V = [task.q0], [np.zeros(task.model.nv)]
    cost = 0.0
    for u in U:
        cost += 0.5 * task.r * np.sum((u - task.u_ref) ** 2) * task.dt
        q, v = task.step(data, Q[-1], V[-1], u)
        Q.append(q)
        V.append(v)
    return np.array(Q), np.array(V), cost + task.terminal(Q[-1], V[-1])[0]


def forward_pass(task, data, Q, V, U, K, kff, alpha):
    """The controls u_k = ū_k + α k_k + K_k (x_k ⊖ x̄_k) from q0 at rest: the states and the cost."""
    model, nv = task.model, task.model.nv
    q, v, Un, cost = task.q0, np.zeros(nv), np.empty_like(U), 0.0
    Qn, Vn = [q], [v]
    with np.errstate(over="raise", invalid="raise"):
        for k in range(task.steps):
            dx = np.r_[dp.difference(model, Q[k], q), v - V[k]]
            Un[k] = U[k] + alpha * kff[k] + K[k] @ dx
            cost += 0.5 * task.r * np.sum((Un[k] - task.u_ref) ** 2) * task.dt
            q, v = task.step(data, q, v, Un[k])
            Qn.append(q)
            Vn.append(v)
        cost += task.terminal(q, v)[0]
    return Un, np.array(Qn), np.array(Vn), cost


def ilqr(task: Task, analytical: bool, iterations: int, tol: float = 1e-6) -> dict:
    model, nv, nu = task.model, task.model.nv, len(task.u_ref)
    data = model.create_data()
    U = np.tile(task.u_ref, (task.steps, 1)) if task.u_init is None else task.u_init.copy()
    Q, V, cost = rollout(task, data, U)
    mu, history = 1e-6, [cost]
    t0 = time.perf_counter()
    for _ in range(iterations):
        AB = [task.jacobians(data, Q[k], V[k], U[k]) if analytical
              else finite_difference_jacobians(task, data, Q[k], V[k], U[k])
              for k in range(task.steps)]  # fmt: skip
        _, Vx, Vxx = task.terminal(Q[-1], V[-1])
        K, kff = np.empty((task.steps, nu, 2 * nv)), np.empty((task.steps, nu))
        for k in range(task.steps - 1, -1, -1):  # the Riccati recursion
            A, B = AB[k]
            lu = task.r * (U[k] - task.u_ref) * task.dt
            Qx, Qu = A.T @ Vx, lu + B.T @ Vx
            Qxx, Qux = A.T @ Vxx @ A, B.T @ Vxx @ A
            Quu = task.r * task.dt * np.eye(nu) + B.T @ Vxx @ B + mu * np.eye(nu)
            K[k], kff[k] = -np.linalg.solve(Quu, Qux), -np.linalg.solve(Quu, Qu)
            Vx = Qx + K[k].T @ Quu @ kff[k] + K[k].T @ Qu + Qux.T @ kff[k]
            Vxx = Qxx + K[k].T @ Quu @ K[k] + K[k].T @ Qux + Qux.T @ K[k]
            Vxx = 0.5 * (Vxx + Vxx.T)
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03):  # the forward pass, with a line search
            try:
                Un, Qn, Vn, cn = forward_pass(task, data, Q, V, U, K, kff, alpha)
            except (ValueError, FloatingPointError):  # the step met a singular or non-finite state: too far
                cn = np.inf
            if cn < cost:
                break
        if cn >= cost:  # no decrease: more regularisation
            mu *= 10.0
            continue
        mu = max(mu / 10.0, 1e-9)
        converged = (cost - cn) < tol * cost
        U, Q, V, cost = Un, Qn, Vn, cn
        history.append(cost)
        if converged:
            break
    return {"U": U, "Q": Q, "V": V, "K": K, "cost": cost, "iterations": len(history) - 1,
            "seconds": time.perf_counter() - t0, "history": history}  # fmt: skip


def main(out_dir: Path, quick: bool = False) -> dict:
    results = {}
    for task in (swing_up(quick), reach(quick), push(quick), stand_up(quick)):
        iterations = 15 if quick else 60
        exact = ilqr(task, analytical=True, iterations=iterations)
        fd = ilqr(task, analytical=False, iterations=iterations)
        goal = task.terminal(exact["Q"][-1], exact["V"][-1])[0]
        print(f"{task.name}: {task.steps} steps of {task.dt} s")
        for label, r in (("step_derivatives", exact), ("finite differences", fd)):
            print(f"  {label:<19} {r['iterations']:3d} iterations, cost {r['cost']:.6g}, {r['seconds']:.2f} s")
        t = np.arange(task.steps + 1) * task.dt
        nv = task.model.nv
        tau = np.vstack([exact["U"], exact["U"][-1]]) @ task.S.T
        traj = dp.Trajectory(t, exact["Q"], exact["V"], np.zeros((len(t), nv)), tau, {}, task.model.name)
        page = None
        try:
            page = str(dp.Viewer(task.model).save_html(out_dir / f"ilqr_{task.name}.html", traj))
        except ImportError:  # meshcat not installed: the numbers still stand
            pass
        results[task.name] = {
            "iterations": exact["iterations"], "cost": exact["cost"], "seconds": exact["seconds"],
            "fd_iterations": fd["iterations"], "fd_cost": fd["cost"], "fd_seconds": fd["seconds"],
            "terminal_cost": goal, "initial_cost": exact["history"][0], "page": page,
        }  # fmt: skip
        if task.ground is not None:  # the optimised motion, replayed in dp.simulate
            again = replay(task, exact)
            rise = again.q[-1, 2] - task.q0[2]
            results[task.name] |= {
                "x_planned": float(exact["Q"][-1, 0]), "x_replayed": float(again.q[-1, 0]),
                "z_rise_planned": float(exact["Q"][-1, 2] - task.q0[2]), "z_rise_replayed": float(rise),
                "v_replayed": float(np.abs(again.v[-1]).max()), "peak_u": float(np.abs(exact["U"]).max()),
            }  # fmt: skip
            print(f"  replayed in dp.simulate: the base at x = {again.q[-1, 0]:.4f} m, risen {rise:.4f} m")
    return results


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = main(Path(args[0]) if args else Path("out"), quick="--quick" in sys.argv)
    print(json.dumps(out))
