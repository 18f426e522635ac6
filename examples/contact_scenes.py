"""Contact with friction: a ball bouncing on the ground and a cube sliding to a stop, beside their closed forms.

    python examples/contact_scenes.py [--html FOLDER]

Prints what a reader checks (the apex heights against e^{2k}, the sliding distance against v0² / (2 μ g)), then the
numbers as one JSON line; with --html, writes each run as a page (ball.html, cube.html) that plays it with the ground,
the contact points and their forces.
"""

import argparse
import json
from pathlib import Path

import numpy as np

import denoc_pin as dp


def body(name: str, shape, mass: float, inertia) -> dp.Model:
    """A free-flying body carrying one collision shape."""
    b = dp.ModelBuilder(name)
    b.add_body(0, joint="free-flyer", mass=mass, inertia=inertia, link=name)
    b.add_collision(name, shape)
    return b.build()


def main(html: Path | None = None) -> dict:
    # A 0.1 m ball dropped from 1 m onto ground of restitution e = 0.5.
    r, e = 0.1, 0.5
    ball = body("ball", dp.Sphere(r), 1.0, np.eye(3) * 0.4 * r**2)
    q0 = dp.neutral(ball)
    q0[2] = 1.0 + r
    traj = dp.simulate(ball, q0, np.zeros(6), 2.2, 2e-4, ground=dp.Ground(restitution=e), progress=False)
    if html is not None:
        dp.Viewer(ball).save_html(html / "ball.html", traj=traj)
    z = traj.q[:, 2] - r
    apexes = [float(z[i]) for i in range(1, len(z) - 1) if z[i - 1] <= z[i] > z[i + 1]][:3]
    for k, h in enumerate(apexes, start=1):
        print(f"bounce {k}: apex {h:.5f} m, e^{2 * k} = {e ** (2 * k):.5f} m")

    # A 0.2 m, 1 kg cube launched at 1 m/s on ground of friction μ = 0.4.
    mu, v0 = 0.4, 1.0
    cube = body("cube", dp.Box((0.2, 0.2, 0.2)), 1.0, np.eye(3) * 0.04 / 6)
    q0 = dp.neutral(cube)
    q0[2] = 0.1
    traj = dp.simulate(cube, q0, [v0, 0, 0, 0, 0, 0], 0.5, 5e-4, ground=dp.Ground(friction=mu),
                       contact=dp.ContactSettings(solver="admm", tol=1e-8), progress=False)  # fmt: skip
    if html is not None:
        dp.Viewer(cube).save_html(html / "cube.html", traj=traj)
    slid = float(traj.q[-1, 0])
    last = traj.contacts[-2]
    print(f"cube: slid {slid:.5f} m, v0²/(2 μ g) = {v0**2 / (2 * mu * 9.81):.5f} m; at rest on "
          f"{len(last['points'])} corners carrying {last['forces'][:, 2].sum():.4f} N")  # fmt: skip
    return {"apexes": apexes, "slid": slid, "support": float(last["forces"][:, 2].sum())}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="a folder to write the runs' pages in")
    print(json.dumps(main(parser.parse_args().html)))
