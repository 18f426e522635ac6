"""The first calls after an install, as a user meets them: each step a fresh process, started from a folder outside
the checkout, on a kernel cache that is empty at the start (cold), then the same steps again (warm).

    python benchmarks/first_calls.py [--python VENV/bin/python] [--cache FOLDER] [--json]

--python: the interpreter of the install to time (default: this one); a wheel installed into a fresh venv, with the
``[test]`` extra for example-robot-data's solo12.  --cache: the kernel cache to use (default: a new temporary folder,
so cold means nothing compiled).  Prints one table row a step: seconds cold, seconds warm.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PREAMBLE = """
import time
t0 = time.perf_counter()
import numpy as np
import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf
t_import = time.perf_counter()
model = dp.load_urdf(example_robot_urdf("solo12"), root_joint="free-flyer")
t_load = time.perf_counter()
q, z = dp.neutral(model), np.zeros(model.nv)
"""
STEPS = {
    "import + load_urdf(solo12) + first FD": """
dp.forward_dynamics(model, model.create_data(), q, z, z)
t = time.perf_counter()
print(t - t0, t_import - t0, t_load - t_import, t - t_load)
""",
    "first contact simulation (solo12 on the ground, 50 steps)": """
q[2] = 0.35
pd = dp.JointPD(model, 100.0, 0.5, q)
t1 = time.perf_counter()
dp.simulate(model, q, z, 0.05, 1e-3, tau=pd, ground=dp.Ground(friction=0.9), progress=False)
print(time.perf_counter() - t1)
""",
    "first derivatives (forward dynamics')": """
t1 = time.perf_counter()
dp.forward_dynamics_derivatives(model, model.create_data(), q, z, z)
print(time.perf_counter() - t1)
""",
}


def run(python: str, cache: Path, code: str) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["DENOC_PIN_CACHE_DIR"] = str(cache)
    with tempfile.TemporaryDirectory() as elsewhere:  # not the checkout: the installed package is imported
        out = subprocess.run([python, "-c", PREAMBLE + code], cwd=elsewhere, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return [float(x) for x in out.stdout.split()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp) / "kernels"
        results = {}
        for state in ("cold", "warm"):
            for name, code in STEPS.items():
                results.setdefault(name, {})[state] = run(args.python, cache, code)
    if args.json:
        print(json.dumps(results))
        return 0
    print("| step, a fresh process each | cold (empty cache) | warm |")
    print("|---|---|---|")
    for name, r in results.items():
        detail = ""
        if len(r["cold"]) == 4:  # import, load, FD apart
            detail = " (import {:.1f}, load {:.1f}, FD {:.1f})".format(*r["cold"][1:])
        print(f"| {name} | {r['cold'][0]:.1f} s{detail} | {r['warm'][0]:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
