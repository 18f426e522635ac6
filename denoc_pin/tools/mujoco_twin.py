"""The same contact scene in MuJoCo: a model's bodies, collision shapes, ground and joint PD built with ``MjSpec``, so
that a run of ``dp.simulate(…, ground=…, tau=dp.JointPD(…))`` can be set beside MuJoCo's ``mj_step`` on the same
bodies (``benchmarks/compare.py --contacts``, ``docs/contacts.md``).

What is the same: the tree (a body per joint, named as the joint, its inertia about its centre of mass), the joints
(free, hinge, slide, ball), gravity, the collision shapes (a mesh as the vertices of its convex hull, which MuJoCo
hulls again), which pairs touch (``group``/``mask`` as ``contype``/``conaffinity``, ``excluded_collisions`` as
``exclude``, or every pair as a ``<pair>`` when they leave out part of two bodies' pairs), the ground's plane and
Coulomb friction (an elliptic cone, ``condim`` 3; a pair of shapes takes the larger of their two, the ground its own
by its ``priority``), dt, the PD: an actuator per driven 1-DOF joint,
τ = K_p (q_ref − q) + K_d (v_ref − v) + τ_ff (gain K_p on the control q_ref, bias τ_ff + K_d v_ref − K_p q − K_d v),
and the closed loops: a spherical cut joint as a ``connect`` equality between two sites at its frames.  What is
MuJoCo's own: its contacts and equalities are soft (``solref``, ``solimp`` defaults), so a body at rest sinks until
the contact's spring carries it and a loop opens until the equality's spring holds it, and its solver is its Newton
method.

MuJoCo is a test dependency of denoc_pin (``pip install mujoco``), imported when a twin is built.
"""

from __future__ import annotations

import numpy as np

from ..contact.detection import pair_friction, pairs_that_may_touch
from ..core.joints import FREE_FLYER, JOINTS, PRISMATIC, REVOLUTE, SPHERICAL
from ..core.shapes import Box, Capsule, Cylinder, Ground, Mesh, Sphere, touches_ground
from ..loaders.mjcf import mujoco_state
from ..loops.loop_kinematics import loop_residual
from ..model import Model, ModelError
from ..simulation.control import JointPD
from ..simulation.simulate import simulate

__all__ = ["MujocoTwin"]


def _quat(mujoco, R) -> np.ndarray:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(R, dtype=float).ravel())
    return quat


class MujocoTwin:
    """``model``'s scene in MuJoCo: ``.model`` (``MjModel``), ``.data`` (``MjData``), and the conversions of a state
    between Pinocchio's layout (ours) and MuJoCo's (``set_state``, ``state``).

    ground: a flat ``dp.Ground`` (MuJoCo's plane, its normal z); pd: a ``dp.JointPD`` of ``model`` (its gains,
    v_ref and τ_ff on 1-DOF joints only), or None; dt: MuJoCo's timestep (Euler, semi-implicit like ours).  The
    model's loops must be spherical cut joints (an MJCF ``connect``); equality_timeconst: their ``solref`` time
    constant (s), None for MuJoCo's default (0.02 s)."""

    def __init__(self, model: Model, ground: Ground, pd: JointPD | None = None, dt: float = 1e-3,
                 equality_timeconst: float | None = None):  # fmt: skip
        try:
            import mujoco
        except ImportError as e:  # pragma: no cover - mujoco is in the test extra
            raise ImportError(f"MujocoTwin needs MuJoCo: pip install mujoco ({e})") from None
        if not np.allclose(ground.normal, (0.0, 0.0, 1.0)):
            raise ModelError(f"MujocoTwin builds a flat ground (normal (0, 0, 1)); got normal {ground.normal}")
        if pd is not None and pd.model is not model:
            raise ModelError("MujocoTwin's PD is a dp.JointPD of the same model")
        if pd is not None:
            multi = [
                k
                for k in range(1, model.njoints)
                if model.nvs[k] != 1
                and any(
                    x[model.idx_v[k] : model.idx_v[k] + model.nvs[k]].any() for x in (pd.kp, pd.kd, pd.v_ref, pd.tau_ff)
                )
            ]
            if multi:
                raise ModelError(f"MujocoTwin drives 1-DOF joints; the PD drives {model.names[multi[0]]!r}")
        other = [lp for lp in model.loops if lp.type != "spherical"] + list(model.couplings)
        if other:
            raise ModelError(f"MujocoTwin closes spherical loops (MJCF connect) only; {other[0]!r} is not one")
        self._mj = mujoco
        spec = mujoco.MjSpec()
        spec.modelname = model.name
        o = spec.option
        o.gravity, o.timestep = model.gravity, dt
        o.integrator = mujoco.mjtIntegrator.mjINT_EULER
        o.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1],
                                pos=[0, 0, ground.height], contype=1, conaffinity=1, condim=3,
                                friction=[ground.friction, 0, 0], priority=1)  # fmt: skip
        bodies = [spec.worldbody]
        self.joints = []  # (our joint k, MuJoCo joint name)
        for k in range(1, model.njoints):
            m, c = float(model.masses[k]), model.coms[k]
            I = model.inertias_origin[k] - m * (c @ c * np.eye(3) - np.outer(c, c))  # about the centre of mass
            body = bodies[model.parents[k]].add_body(name=model.names[k], pos=model.placement_translation[k],
                                                     quat=_quat(mujoco, model.placement_rotation[k]), mass=max(m, 1e-9),
                                                     ipos=c, fullinertia=[I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2],
                                                                          I[1, 2]])  # fmt: skip
            body.explicitinertial = True
            kind = int(model.kinds[k])
            if kind == FREE_FLYER:
                body.add_freejoint(name=model.names[k])
            elif kind == REVOLUTE:
                body.add_joint(name=model.names[k], type=mujoco.mjtJoint.mjJNT_HINGE, axis=model.axes[k])
            elif kind == PRISMATIC:
                body.add_joint(name=model.names[k], type=mujoco.mjtJoint.mjJNT_SLIDE, axis=model.axes[k])
            elif kind == SPHERICAL:
                body.add_joint(name=model.names[k], type=mujoco.mjtJoint.mjJNT_BALL)
            else:
                raise ModelError(f"MujocoTwin: joint {model.names[k]!r} is {JOINTS[kind].name}; the twin builds "
                                 "free-flyer, revolute, prismatic and spherical joints")  # fmt: skip
            self.joints.append(k)
            bodies.append(body)
        for c in model.collisions:
            self._geom(spec, bodies[c.body], c)
        excluded = _excluded_bodies(model)
        if excluded is None or model.collision_pairs or any(c.ground for c in model.collisions):
            # some pairs between two bodies left out, others not, or pairs given whatever the bits: MuJoCo's
            # explicit pairs
            self._explicit_pairs(spec, model, ground)
        else:
            for b1, b2 in excluded:
                spec.add_exclude(bodyname1=bodies[b1].name, bodyname2=bodies[b2].name)
        if pd is not None:
            for k in range(1, model.njoints):
                iv = int(model.idx_v[k])
                if model.nvs[k] != 1 or not (pd.kp[iv] or pd.kd[iv] or pd.tau_ff[iv]):
                    continue
                bias = pd.tau_ff[iv] + pd.kd[iv] * pd.v_ref[iv]
                spec.add_actuator(name=model.names[k], target=model.names[k], trntype=mujoco.mjtTrn.mjTRN_JOINT,
                                  gaintype=mujoco.mjtGain.mjGAIN_FIXED, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
                                  gainprm=[pd.kp[iv]] + [0] * 9,
                                  biasprm=[bias, -pd.kp[iv], -pd.kd[iv]] + [0] * 7)  # fmt: skip
        for cut in model.cuts:  # the cut joint's two frames' origins (in their bodies' frames) held together
            name = cut.loop.name
            bodies[cut.body1].add_site(name=f"{name}/1", pos=cut.p1)
            bodies[cut.body2].add_site(name=f"{name}/2", pos=cut.p2)
            eq = spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_CONNECT, objtype=mujoco.mjtObj.mjOBJ_SITE,
                                   name1=f"{name}/1", name2=f"{name}/2")  # fmt: skip
            if equality_timeconst is not None:
                eq.solref = [equality_timeconst, 1.0]
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self._ours = model
        if pd is not None:
            qref = self._qpos(pd.q_ref)
            self.data.ctrl[:] = [qref[self.model.jnt_qposadr[self.model.actuator_trnid[a, 0]]]
                                 for a in range(self.model.nu)]  # fmt: skip

    def _geom(self, spec, body, c) -> None:
        mujoco, g, s = self._mj, self._mj.mjtGeom, c.shape
        kw = {"name": c.name, "pos": c.translation, "quat": _quat(mujoco, c.rotation), "contype": int(c.group),
              "conaffinity": int(c.mask), "condim": 3, "friction": [c.friction, 0, 0]}  # fmt: skip
        if isinstance(s, Sphere):
            body.add_geom(type=g.mjGEOM_SPHERE, size=[s.radius, 0, 0], **kw)
        elif isinstance(s, Box):
            body.add_geom(type=g.mjGEOM_BOX, size=np.asarray(s.size) / 2, **kw)
        elif isinstance(s, Capsule):
            body.add_geom(type=g.mjGEOM_CAPSULE, size=[s.radius, s.length / 2, 0], **kw)
        elif isinstance(s, Cylinder):
            body.add_geom(type=g.mjGEOM_CYLINDER, size=[s.radius, s.length / 2, 0], **kw)
        elif isinstance(s, Mesh):
            spec.add_mesh(name=c.name, uservert=np.ravel(s.vertices))
            body.add_geom(type=g.mjGEOM_MESH, meshname=c.name, **kw)
        else:  # pragma: no cover - every shape is one of the above
            raise ModelError(f"MujocoTwin: collision {c.name!r} has a shape the twin does not build")

    @staticmethod
    def _explicit_pairs(spec, model: Model, ground: Ground) -> None:
        """Every pair that may touch (``pairs_that_may_touch``) and every shape that touches the ground
        (``touches_ground``) against it as a ``<pair>``, each with its friction, and no pair by
        ``contype``/``conaffinity``."""
        for g in spec.geoms:
            g.contype = g.conaffinity = 0
        cols = model.collisions
        for c in cols:
            if touches_ground(c):
                spec.add_pair(geomname1="ground", geomname2=c.name, condim=3, friction=[ground.friction] * 2 + [0] * 3)
        pairs = pairs_that_may_touch(model)
        for (i, j), mu in zip(pairs, pair_friction(model, pairs), strict=True):
            spec.add_pair(geomname1=cols[i].name, geomname2=cols[j].name, condim=3, friction=[mu, mu, 0, 0, 0])

    def _qpos(self, q) -> np.ndarray:
        """MuJoCo's qpos of our q: a quaternion (x, y, z, w) → (w, x, y, z)."""
        model, m = self._ours, self.model
        qpos = np.zeros(m.nq)
        for k in self.joints:
            a, i, nq = int(m.jnt_qposadr[m.joint(model.names[k]).id]), int(model.idx_q[k]), int(model.nqs[k])
            x = np.asarray(q[i : i + nq], dtype=float)
            if model.kinds[k] == FREE_FLYER:
                x = np.r_[x[:3], x[6], x[3:6]]
            elif model.kinds[k] == SPHERICAL:
                x = np.r_[x[3], x[:3]]
            qpos[a : a + nq] = x
        return qpos

    def set_state(self, q, v) -> None:
        """Sets ``data``'s qpos and qvel from our (q, v) (a free joint's velocity: ours (v_body, ω_body), MuJoCo's
        (v_world, ω_body)) and clears the warm start and time."""
        mujoco, model, m, d = self._mj, self._ours, self.model, self.data
        ctrl = d.ctrl.copy()
        mujoco.mj_resetData(m, d)
        d.qpos[:] = self._qpos(q)
        for k in self.joints:
            a, i, nv = int(m.jnt_dofadr[m.joint(model.names[k]).id]), int(model.idx_v[k]), int(model.nvs[k])
            x = np.asarray(v[i : i + nv], dtype=float).copy()
            if model.kinds[k] == FREE_FLYER:
                quat = np.asarray(q[model.idx_q[k] + 3 : model.idx_q[k] + 7])
                R = np.empty(9)
                mujoco.mju_quat2Mat(R, np.r_[quat[3], quat[:3]])
                x[:3] = R.reshape(3, 3) @ x[:3]
            d.qvel[a : a + nv] = x
        d.ctrl[:] = ctrl
        mujoco.mj_forward(m, d)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) in our layout from ``data``."""
        model, m, d = self._ours, self.model, self.data
        qpos, qvel = np.zeros(model.nq), np.zeros(model.nv)
        for k in self.joints:
            j = m.joint(model.names[k]).id
            a, nq, b, nv = int(m.jnt_qposadr[j]), int(model.nqs[k]), int(m.jnt_dofadr[j]), int(model.nvs[k])
            qpos[model.idx_q[k] : model.idx_q[k] + nq] = d.qpos[a : a + nq]
            qvel[model.idx_v[k] : model.idx_v[k] + nv] = d.qvel[b : b + nv]
        return mujoco_state(model, qpos, qvel)

    def vertical_force(self) -> float:
        """Σ f_z of the ground on the model at ``data``'s contacts (N)."""
        mujoco, m, d = self._mj, self.model, self.data
        f, total = np.zeros(6), 0.0
        for i in range(d.ncon):
            mujoco.mj_contactForce(m, d, i, f)
            total += float(d.contact[i].frame.reshape(3, 3)[:, 2] @ f[:3])  # frame's rows: n, t₁, t₂
        return total


def _excluded_bodies(model: Model) -> list[tuple[int, int]] | None:
    """The pairs of bodies (b1 < b2) whose collisions ``model.excluded_collisions`` excludes, as MuJoCo's ``exclude``
    (which names bodies); None when it excludes some pairs between two bodies and not others."""
    body = {c.name: c.body for c in model.collisions}
    excluded = {tuple(sorted(p)) for p in model.excluded_collisions}
    out = sorted({tuple(sorted((body[a], body[b]))) for a, b in excluded})
    for b1, b2 in out:
        between = [(a.name, b.name) for a in model.collisions for b in model.collisions
                   if (a.body, b.body) == (b1, b2) or (a.body, b.body) == (b2, b1)]  # fmt: skip
        if any(tuple(sorted(p)) not in excluded for p in between):
            return None
    return out


def side_by_side(model: Model, q0, pd: JointPD, ground: Ground, seconds: float, dt: float = 1e-3,
                 contact=None, equality_timeconst: float | None = None) -> dict:  # fmt: skip
    """The same drop in denoc_pin (``dp.simulate``) and in MuJoCo (``MujocoTwin``, ``mj_step``) from (q0, 0):
    "t", and per engine ("denoc_pin", "mujoco") the base height "z" (the first joint's q[2]) and the total vertical
    contact force "fz" at each step (N), the final state "q", the largest loop residual of any step "loop" (m or rad;
    0 without loops), and MuJoCo's deepest penetration "penetration" over the last tenth of the run (m)."""
    import mujoco

    n = int(round(seconds / dt))
    v0 = np.zeros(model.nv)
    tr = simulate(model, q0, v0, n * dt, dt, tau=pd, ground=ground, contact=contact, progress=False)

    def loop(q) -> float:
        return float(np.abs(loop_residual(model, q)).max()) if model.n_constraints else 0.0

    ours = {"z": tr.q[:, 2].copy(), "fz": np.array([c["forces"][:, 2].sum() for c in tr.contacts]), "q": tr.q[-1],
            "loop": max(loop(q) for q in tr.q)}  # fmt: skip
    ours["fz"][-1] = ours["fz"][-2]  # the last row: no step leaves it
    twin = MujocoTwin(model, ground, pd, dt, equality_timeconst)
    twin.set_state(q0, v0)
    z, fz, deepest, opened = np.empty(n + 1), np.empty(n + 1), 0.0, 0.0
    for i in range(n + 1):
        if i:
            mujoco.mj_step(twin.model, twin.data)
            mujoco.mj_forward(twin.model, twin.data)  # the contact forces of this state, as ours are of the next step
        z[i], fz[i] = twin.data.qpos[2], twin.vertical_force()
        if model.n_constraints:
            opened = max(opened, loop(twin.state()[0]))
        if i >= 0.9 * n and twin.data.ncon:
            deepest = max(deepest, -min(c.dist for c in twin.data.contact))
    theirs = {"z": z, "fz": fz, "q": twin.state()[0], "loop": opened, "penetration": deepest}
    return {"t": tr.t, "denoc_pin": ours, "mujoco": theirs}
