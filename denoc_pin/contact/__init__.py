"""Contact with friction: detection against the ground and between shapes, the NCP on the Delassus matrix, its
solvers (a sticking guess, PGS, ADMM) and the time step that solves it together with the closed loops
(``docs/contacts.md``)."""

from .detection import ground_contacts, pair_contacts
from .solvers import solve_admm, solve_pgs, solve_sticking
from .stepping import SOLVERS, ContactSettings, ContactStepper

__all__ = ["SOLVERS", "ContactSettings", "ContactStepper", "ground_contacts", "pair_contacts", "solve_admm",
           "solve_pgs", "solve_sticking"]  # fmt: skip
