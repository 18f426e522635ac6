"""Closed kinematic loops: cut joints, their constraints and Lagrange multipliers; and joint couplings (gearboxes,
mimic joints), one constraint row each (``JointCoupling``), handled by the same functions.

A closed mechanism is its spanning tree (the :class:`Model`) plus the joints cut to open it,
``model.loops``.  Following Schiehlen (eq. 17–20), the tree keeps its recursive O(n) dynamics and
each cut joint adds its q_c closing reactions λ:

    GIM q̈ + h = τ + Jᵀ λ,          J q̈ + J̇ q̇ = 0                      (eq. 19)
    N_c λ = −J̇ q̇ − J GIM⁻¹ (τ − h),  N_c = J GIM⁻¹ Jᵀ                  (eq. 20)

GIM⁻¹ is never formed: GIM⁻¹ (τ − h) is the tree's forward dynamics and GIM⁻¹ Jᵀ comes from the
UDUᵀ factors of that same call (Table 3 applied to the columns of Jᵀ).  Inverse dynamics of a
closed loop splits the joints into actuated and passive ones and solves for the actuator torques
and λ together: the determinate/indeterminate subsystems of Shah, Saha & Dutt (section 2.2).

Conventions (the same for every function here):

- A cut joint has two frames: C1 fixed to ``link1`` and C2 fixed to ``link2``.  When the loop is
  closed, C2 coincides with C1 up to the joint's own motion (rotation about ``axis`` for a
  revolute, …).  ``axis`` is expressed in C1 (the link1 frame moved by the loop joint's
  xyz/rpy, as a URDF joint axis is expressed in its joint frame); ``axis2`` (universal) in C2.
- The relative twist of C2 with respect to C1, in C1 components and DeNOC order [ω; v], is
  Δ = [ω₂ − ω₁; ṗ₂ − ṗ₁], ṗᵢ the velocity of the origin of Cᵢ.  Each constraint is one direction
  of Δ that the joint blocks, angular directions first, then linear ones:

  The directions each cut type blocks are tabled in ``core.cuts``.
- ``J`` (n_constraints, nv): the rows of Δ = J q̇.  ``λ``: one entry per constraint, the
  reaction that link1 exerts on link2 through the cut joint (link1 feels −λ), in C1 components:
  a moment [N·m] for an angular row, a force [N] for a linear one; the moment is about the joint
  point.  The joint torques it produces are Jᵀ λ.
- The residual r(q) (``loop_residual``) vanishes exactly when every loop is closed, has the
  same rows, and ṙ = J q̇ on the constraint manifold: linear rows are the components of
  C1→C2 in C1 [m]; angular rows are a rotation error [rad] (log of R₁₂ for fixed and prismatic
  joints, the tilt of the axis for a revolute, the cosine between the universal's axes).

The subpackage: ``types`` (LoopJoint, the errors), ``resolution`` (onto the bodies), ``kernel`` (J, r
and J̇ q̇ from the tree's workspace), ``dynamics`` (Schiehlen eq. 19–20, the inverse problem,
complete_motion), ``assembly`` (closing the loops: Newton projection, mobility).
"""

from .assembly import assemble, loop_mobility
from .dynamics import (
    complete_motion,
    constrained_forward_dynamics,
    constrained_forward_dynamics_derivatives,
    constrained_inverse_dynamics,
)
from .held_frames import contact_3d, contact_6d
from .loop_kinematics import loop_jacobian, loop_residual
from .resolution import resolve_loops
from .types import LOOP_TYPES, AssemblyError, JointCoupling, LoopJoint, SingularConfigurationError

__all__ = [
    "contact_3d",
    "contact_6d",
    "LOOP_TYPES",
    "AssemblyError",
    "JointCoupling",
    "LoopJoint",
    "SingularConfigurationError",
    "assemble",
    "complete_motion",
    "constrained_forward_dynamics",
    "constrained_forward_dynamics_derivatives",
    "constrained_inverse_dynamics",
    "loop_jacobian",
    "loop_mobility",
    "loop_residual",
    "resolve_loops",
]
