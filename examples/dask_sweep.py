"""A sweep on Dask: the gripper dropped from 16 random configurations, one simulation a task, on two local worker
processes; the final states and each run's energy balance come back, and the trajectories go to a Zarr store.

    python examples/dask_sweep.py [OUT_DIR]        (needs the [dask] extra: pip install "denoc-pin[dask]")

On a cluster, pass ``client=dp.distributed.client("tcp://scheduler:8786")`` instead of starting a local one.
"""

import sys
from pathlib import Path

import numpy as np
import zarr

import denoc_pin as dp

URDF = dp.models.bundled_file("gripper")  # or the path of your own robot file


def main(out: Path) -> dict:
    model = dp.load_urdf(URDF)
    rng = np.random.default_rng(0)
    q0s = np.stack([dp.random_configuration(model, rng) for _ in range(16)])
    with dp.distributed.client(n_workers=2) as client:  # a local cluster of two worker processes
        runs = dp.distributed.simulate_many(model, q0s, t_final=0.5, dt=1e-3, client=client,
                                            out=out / "sweep.zarr", progress=False)  # fmt: skip
    store = zarr.open_group(str(out / "sweep.zarr"), mode="r")
    print(f"{len(q0s)} runs, errors: {runs['errors'] or 'none'}")
    print(f"largest energy drift over the runs: {np.nanmax(runs['drift']):.1e} of the peak kinetic energy")
    print(f"trajectories in {out / 'sweep.zarr'}: q {store['q'].shape} (run, sample, nq)")
    print("final joint angles of run 0 [deg]:", np.round(np.rad2deg(runs["q"][0]), 2))
    return {"runs": len(q0s), "drift_max": float(np.nanmax(runs["drift"])), "shape": list(store["q"].shape)}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    main(out)
