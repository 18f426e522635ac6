"""Write every figure of docs/figures/ from the code that computes it.

    python scripts/figures.py [NAME ...]      # all, or the named ones (the file stems below)

gripper_torques, gripper_fall, rope_fall: `denoc-pin demo` (the same functions); isobe_multibranch,
isobe_structure_varying: `denoc_pin.tools.demo`; viewer_rope_fall: the rope's saved viewer page in the middle of its
fall, screenshot by headless Chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.tools import demo

FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"  # a checkout script: the checkout's docs


def viewer_rope_fall(out: Path) -> Path:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("viewer_rope_fall needs Chromium (apt-get install chromium)")
    model = dp.models.rope()
    q0 = np.zeros(model.nq)
    q0[1] = np.pi / 2  # straight along −x, as the demo releases it
    traj = dp.simulate(model, q0, np.zeros(model.nv), 1.75, dt=1e-3, progress=False)
    viewer = dp.Viewer(model)
    viewer.frame(traj.q[::25])  # the camera as the animation frames the whole fall
    viewer.display(traj.q[len(traj.t) // 2])
    path = out / "viewer_rope_fall.png"
    with tempfile.TemporaryDirectory() as tmp:
        page = viewer.save_html(Path(tmp) / "rope.html")
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp}/ud",
               "--window-size=640,480", "--virtual-time-budget=5000", f"--screenshot={path}",
               f"file://{page}"]  # fmt: skip
        subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    return path


MAKERS = {
    "gripper_torques": lambda out: demo.gripper_inverse_dynamics(out)["figure"],
    "gripper_fall": lambda out: demo.gripper_fall(out)["figure"],
    "rope_fall": lambda out: demo.rope_fall(out, html=False)["figure"],
    "isobe_multibranch": lambda out: demo.isobe_multibranch(out)["figure"],
    "isobe_structure_varying": lambda out: demo.isobe_structure_varying(out)["figure"],
    "viewer_rope_fall": viewer_rope_fall,
}


def main(names) -> int:
    unknown = sorted(set(names) - set(MAKERS))
    if unknown:
        raise SystemExit(f"no figure {', '.join(unknown)}; figures: {', '.join(MAKERS)}")
    for name in names or MAKERS:
        print(MAKERS[name](FIGURES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
