"""Regenerate the documentation's numbers that are written in more than one place or computed by a command: the
accuracy tables of docs/accuracy.md and the README's accuracy headline, each from the command it names
(``denoc-pin validate NAME --samples 10 --seed 0 --json``), and the README's speed table, copied from the one page
that holds measured timings, docs/performance.md.

    python scripts/refresh_docs.py            # rewrite the pages
    python scripts/refresh_docs.py --check    # exit 1, naming each region that differs (tests/test_refresh_docs.py)

A page's error figures are compared with a fresh run's within a factor of 10, not digit for digit (``same_figures``:
they are at the float64 floor, and the last digits depend on the CPU).

A generated region sits between ``<!-- refresh_docs: NAME -->`` and ``<!-- /refresh_docs -->``; the text between is
replaced, everything else is the page's.  Timings are not measured here: they depend on the machine and the load, and
are written in docs/performance.md alone, from a run of ``benchmarks/compare.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import warnings
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # a checkout script: the pages it rewrites are the checkout's

FIXED = [("gripper", "gripper"), ("two_link", "two_link"), ("spatial_tree", "spatial_tree"), ("panda", "panda"),
         ("ur5", "ur5"), ("ur10", "ur10"), ("talos_left_arm", "talos_left_arm"),
         ("talos_reduced", "talos_reduced (fixed base)"), ("allegro", "allegro (hand)"),
         ("double_pendulum_continuous", "double_pendulum_continuous"), ("baxter", "baxter"), ("kinova", "kinova"),
         ("xarm7", "xarm7")]  # fmt: skip
FLOATING = [("talos_reduced", "talos_reduced"), ("solo12", "solo12"), ("anymal", "anymal"), ("anymal_c", "anymal_c"),
            ("g1", "g1 (humanoid)"), ("romeo", "romeo (humanoid)"), ("go2", "go2")]  # fmt: skip
# Table column -> the validate checks it takes the worst of.
COLUMNS = {
    "ID": ("inverse_dynamics", "inverse_dynamics (fext)"),
    "FD": ("forward_dynamics", "forward_dynamics (fext)"),
    "GIM": ("gim",),
    "GIM⁻¹": ("gim_inverse",),
    "nle": ("nonlinear_effects",),
    "UDUᵀ": ("udut (U D Uᵀ)",),
    "NᵀMN": ("denoc_matrices gim = NᵀMN",),
    "Cv+g": ("denoc_matrices C v + g",),
    "t=Nv": ("denoc_matrices t = N v",),
}
SAMPLES, SEED = 10, 0


@cache
def validate(name: str, floating: bool) -> dict:
    """``denoc-pin validate NAME --samples 10 --seed 0 --json [--root-joint free-flyer]``'s report."""
    from denoc_pin.loaders.robots import robots_dir
    from denoc_pin.tools import cli

    if name == "cassie":  # example-robot-data's SDF, by path
        name = str(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf")

    argv = ["validate", name, "--samples", str(SAMPLES), "--seed", str(SEED), "--json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv + (["--root-joint", "free-flyer"] if floating else []))
    if code != 0:
        raise RuntimeError(f"denoc-pin {' '.join(argv)} exited with {code}")
    return json.loads(out.getvalue())


def worst(report: dict, column: str) -> float:
    return max(c["max_rel"] for c in report["checks"] if c["algorithm"] in COLUMNS[column])


def table(robots, floating: bool) -> str:
    head = ["robot (free-flyer)", "nq", "nv"] if floating else ["robot", "nv"]
    lines = ["| " + " | ".join([*head, "modules", *COLUMNS]) + " |", "|" + "---|" * (len(head) + 1 + len(COLUMNS))]
    for name, label in robots:
        r = validate(name, floating)
        sizes = [str(r["nq"]), str(r["nv"])] if floating else [str(r["nv"])]
        cells = [label, *sizes, str(r["modules"]), *(f"{worst(r, c):.1e}" for c in COLUMNS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def headline() -> str:
    reports = [validate(n, False) for n, _ in FIXED] + [validate(n, True) for n, _ in FLOATING]
    main = max(worst(r, c) for r in reports for c in ("ID", "FD", "GIM"))
    inverse = max(worst(r, "GIM⁻¹") for r in reports)
    return f"{main:.1e} for ID, FD and the GIM, and {inverse:.1e} for GIM⁻¹"


LOOPS = ["four_bar", "slider_crank", "two_link_closed", "rrr_3", "isobe_five_bar"]  # the bundled closed loops
DYNAMICS = {name for names in COLUMNS.values() for name in names}


def rows(report: dict, algorithm: str, reference: str | None = None) -> list[dict]:
    return [c for c in report["checks"] if c["algorithm"] == algorithm and reference in (None, c["reference"])]


def kinematics_headline() -> str:
    """The worst absolute error of the kinematics rows of the same reports (every frame, three references, the
    centre of mass, the centroidal quantities): some of their entries are zero, where a relative error is not."""
    reports = [validate(n, False) for n, _ in FIXED] + [validate(n, True) for n, _ in FLOATING]
    return f"{max(c['max_abs'] for r in reports for c in kinematic_rows(r)):.1e}"


BUNDLED = ["gripper", "two_link", "spatial_tree", *LOOPS]
KINEMATICS = {  # the README's words for the validate rows, by the start of their names
    "placements": ("frame_placements",),
    "Jacobians": ("frame_jacobian ", "joint_jacobians"),
    "velocities": ("frame_velocity",),
    "classical accelerations": ("frame_acceleration",),
    "Jacobian time variations": ("frame_jacobian_time_var",),
    "centre of mass": ("center_of_mass",),
    "its Jacobian": ("com_jacobian",),
    "centroidal momentum": ("centroidal_momentum",),
    "map": ("centroidal_map",),
    "map time variation": ("centroidal_map_time_variation",),
}


def kinematic_rows(report: dict) -> list[dict]:
    return [c for c in report["checks"] if c["algorithm"].startswith(sum(KINEMATICS.values(), ()))]


def kinematics_table() -> str:
    """Per group of robots: sizes, frames and the worst absolute error over every kinematic quantity."""
    import denoc_pin as dp
    from denoc_pin.loaders.robots import example_robot_urdf

    groups = [("the 8 bundled URDFs", [(n, False) for n in BUNDLED]),
              (", ".join(n for n, _ in FIXED[3:]), [(n, False) for n, _ in FIXED[3:]]),
              (", ".join(n for n, _ in FLOATING) + " (free-flyer)", [(n, True) for n, _ in FLOATING])]  # fmt: skip
    lines = ["| model | nv | frames | worst absolute error, every quantity |", "|---|---|---|---|"]
    for label, members in groups:
        nv, frames, worst = [], [], []
        for name, floating in members:
            path = dp.models.bundled_file(name) if name in dp.models.BUNDLED else example_robot_urdf(name)
            with warnings.catch_warnings():  # the files' defects: validate has said them already
                warnings.simplefilter("ignore", dp.ModelWarning)
                model = dp.load(path, root_joint="free-flyer" if floating else None)
            nv.append(model.nv)
            frames.append(len(model.frames))
            worst.append((max(c["max_abs"] for c in kinematic_rows(validate(name, floating))), name))
        err, name = max(worst)
        lines.append(f"| {label} | {min(nv)}–{max(nv)} | {min(frames)}–{max(frames)} | {err:.1e} ({name}) |")
    return "\n".join(lines)


def kinematics_by_quantity() -> str:
    names = [(n, False) for n in BUNDLED] + [(n, False) for n, _ in FIXED[3:]] + [(n, True) for n, _ in FLOATING]
    rows = [c for n, f in names for c in kinematic_rows(validate(n, f))]
    parts = []
    for word, prefixes in KINEMATICS.items():
        mine = [c for c in rows if c["algorithm"].startswith(prefixes)]
        if word == "map":  # not its time variation
            mine = [c for c in mine if c["algorithm"] == "centroidal_map"]
        parts.append(f"{word} {max(c['max_abs'] for c in mine):.1e}")
    return ", ".join(parts)


def loops_headline() -> str:
    worst = max(c["max_rel"] for n in LOOPS for c in rows(validate(n, False), "constrained_fd q̈"))
    return f"{worst:.1e}"


def cassie_headline() -> str:
    r = validate("cassie", True)
    ours = max(c["max_rel"] for c in rows(r, "constrained_fd q̈", "50 digits (pin M, h, J)"))
    theirs = max(c["max_rel"] for c in rows(r, "constraintDynamics q̈", "50 digits (pin M, h, J)"))
    return f"to {ours:.1e} in q̈, where `pin.constraintDynamics` is {theirs:.0%} off"


SPEED = [("panda", "panda"), ("talos_reduced", "talos_reduced"), ("solo12 (free-flyer)", "solo12 (free-flyer)"),
         ("chain 100", "chain of 100 revolute joints")]  # fmt: skip


def speed_headline() -> str:
    """The README's speed table: the ratio columns of docs/performance.md's per-call table, for four robots."""
    text = (ROOT / "docs" / "performance.md").read_text()
    start = text.index("| case | nv | ID | rnea | ratio | FD | aba | ratio | GIM | crba | ratio |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells
    lines = ["| robot | nv | ID / `rnea` | FD / `aba` | GIM / `crba` |", "|---|---|---|---|---|"]
    for case, label in SPEED:
        c = rows[case]
        lines.append(f"| {label} | {c[1]} | {c[4]} | {c[7]} | {c[10]} |")
    return "\n".join(lines)


def performance_table(caption: str) -> str:
    """The table that follows the line starting with ``caption`` in docs/performance.md (compare.py's output)."""
    lines = (ROOT / "docs" / "performance.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(caption)) + 1
    end = next(i for i in range(start, len(lines) + 1) if i == len(lines) or not lines[i].startswith("|"))
    return "\n".join(lines[start:end]).replace("κ(U')", "κ(U′)").replace("κ(L')", "κ(L′)")


DERIVATIVES = {  # table column -> validate's derivative row
    "∂τ/∂q": "inverse_dyn._derivatives ∂τ/∂q",
    "∂τ/∂v": "inverse_dyn._derivatives ∂τ/∂v",
    "∂τ (fext)": "inverse_dyn._derivatives (fext)",
    "∂q̈/∂q": "forward_dyn._derivatives ∂q̈/∂q",
    "∂q̈/∂v": "forward_dyn._derivatives ∂q̈/∂v",
    "∂q̈/∂τ": "forward_dyn._derivatives ∂q̈/∂τ",
    "∂q̈ (fext)": "forward_dyn._derivatives (fext)",
    "dIntegrate": "integrate_derivatives",
    "dDifference": "difference_derivatives",
}


def derivatives_table() -> str:
    """The worst relative error of each derivative row against Pinocchio, per robot (the validate reports above)."""
    lines = ["| robot | " + " | ".join(DERIVATIVES) + " |", "|" + "---|" * (len(DERIVATIVES) + 1)]
    for robots, floating in ((FIXED, False), (FLOATING, True)):
        for name, label in robots:
            r = validate(name, floating)
            checks = [rows(r, row)[0] for row in DERIVATIVES.values()]
            # where Pinocchio's matrix vanishes (no velocity terms), the absolute error, which is what is judged
            cells = [f"{c['max_rel']:.1e}" if c["max_rel"] <= 1e-6 else f"{c['max_abs']:.0e} abs" for c in checks]
            lines.append(f"| {label}{' (free-flyer)' if floating else ''} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


REGIONS = {
    "accuracy_fixed_base": ("docs/accuracy.md", lambda: table(FIXED, False)),
    "accuracy_floating_base": ("docs/accuracy.md", lambda: table(FLOATING, True)),
    "accuracy_headline": ("README.md", headline),
    "speed_headline": ("README.md", speed_headline),
    "kinematics_headline": ("README.md", kinematics_headline),
    "loops_headline": ("README.md", loops_headline),
    "cassie_headline": ("README.md", cassie_headline),
    "cassie_sdf": ("docs/sdf.md", cassie_headline),
    "kinematics_table": ("docs/accuracy.md", kinematics_table),
    "derivatives_table": ("docs/derivatives.md", derivatives_table),
    "kinematics_by_quantity": ("docs/accuracy.md", kinematics_by_quantity),
    "scale_accuracy": ("docs/accuracy.md", lambda: performance_table("Accuracy on spatial chains")),
    "scale_conditioning": ("docs/accuracy.md", lambda: performance_table("κ₂ of the GIM and of the factors")),
}
REGION = re.compile(r"(<!-- refresh_docs: (\w+) -->)(.*?)(<!-- /refresh_docs -->)", re.S)


def refresh(text: str, generate=None) -> str:
    """``text`` with each generated region's content replaced by its generator's (``generate(name)``)."""
    generate = generate or (lambda name: REGIONS[name][1]())

    def one(m):
        body = generate(m.group(2))
        sep = "\n" if m.group(3).startswith("\n") else ""  # a block region keeps its lines; an inline one stays inline
        return f"{m.group(1)}{sep}{body}{sep}{m.group(4)}"

    return REGION.sub(one, text)


def regions(text: str) -> dict[str, str]:
    return {m.group(2): m.group(3) for m in REGION.finditer(text)}


# An error figure (1.1e-15), a percentage (45%): what the CPU's rounding moves.  Errors at the float64 floor come from
# the order of sums and from fused multiply-adds, which differ between CPUs (AVX-512 or AVX2, the BLAS kernel numpy
# picks): the same commit gives 1.1e-15 on one x86-64 machine and 9.1e-16 on another, and a non-converging reference
# (Pinocchio's constraintDynamics on Cassie) ends a little elsewhere.  So a page agrees with a fresh run when its text
# is the same but for these figures, each error within a factor of FACTOR and each percentage within POINTS points.
FIGURE = re.compile(r"(\d+(?:\.\d+)?e[+-]\d+)|(\d+)%")
FACTOR, POINTS = 10.0, 5


def same_figures(page: str, fresh: str) -> bool:
    """Whether ``page`` is ``fresh`` but for its error figures and percentages, within FACTOR and POINTS."""
    if FIGURE.sub("#", page).strip() != FIGURE.sub("#", fresh).strip():
        return False
    for a, b in zip(FIGURE.finditer(page), FIGURE.finditer(fresh), strict=True):
        if a.group(1) is not None:
            x, y = float(a.group(1)), float(b.group(1))
            if not (x == y or (x > 0 and y > 0 and max(x / y, y / x) <= FACTOR)):
                return False
        elif a.group(2) is None or b.group(2) is None or abs(int(a.group(2)) - int(b.group(2))) > POINTS:
            return False
    return True


def main(argv=None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for page in sorted({page for page, _ in REGIONS.values()}):
        path = ROOT / page
        old = path.read_text()
        missing = [n for n, (p, _) in REGIONS.items() if p == page and n not in regions(old)]
        if missing:
            raise SystemExit(f"{page}: no region {', '.join(missing)} (<!-- refresh_docs: NAME --> … )")
        new = refresh(old)
        stale += [f"{page}: {n}" for n, body in regions(new).items() if not same_figures(regions(old)[n], body)]
        if not check and new != old:
            path.write_text(new)
    for line in stale:
        print(("stale: " if check else "rewritten: ") + line)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
