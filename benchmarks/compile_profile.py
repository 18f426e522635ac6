"""Where the compile time goes: every kernel group of ``denoc-pin compile`` run in turn in one process on an empty
kernel cache, each numba compile recorded from its ``numba:compile`` events (which fire on a cache miss only).

    python benchmarks/compile_profile.py [--groups A B …] [--top 40] [--json FILE]

Prints per group its seconds, then the kernels by their own compile time (their time less that of the kernels
compiled inside them), with the signatures each was compiled for: a kernel compiled for two signatures, or compiled
again inside a caller's typing, shows here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", nargs="*")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    os.environ["DENOC_PIN_CACHE_DIR"] = tempfile.mkdtemp(prefix="denoc_pin-profile-")  # empty: everything compiles

    from numba.core import event

    from denoc_pin.kernel_cache import NOTICE, CompileRecord
    from denoc_pin.tools import precompile

    event.unregister("numba:compile", NOTICE)
    record = CompileRecord()
    event.register("numba:compile", record)
    group_of: list[str] = []  # the group each record was made in
    groups = precompile._needed(args.groups or precompile.TASKS)
    times = {}
    for group in groups:
        t0, c0 = time.perf_counter(), time.process_time()
        precompile.TASKS[group].run()
        times[group] = (time.perf_counter() - t0, time.process_time() - c0)
        group_of += [group] * (len(record.records) - len(group_of))
    print("| group | wall s | CPU s |\n|---|---|---|")
    for g, (w, c) in times.items():
        print(f"| {g} | {w:.1f} | {c:.1f} |")
    total = sum(c for _, c in times.values())
    print(f"| all {len(times)} | {sum(w for w, _ in times.values()):.1f} | {total:.1f} |\n")

    records = [r | {"group": g} for r, g in zip(record.records, group_of, strict=True)]
    by_kernel: dict[str, dict] = defaultdict(lambda: {"self": 0.0, "signatures": set(), "compiles": 0})
    for r in records:
        k = by_kernel[r["kernel"]]
        k["self"] += r["own"]
        k["signatures"].add(r["signature"])
        k["compiles"] += 1
    own = sum(k["self"] for k in by_kernel.values())
    print(f"{len(records)} compiles of {len(by_kernel)} functions, {own:.1f} s in all (their own times)\n")
    print("| kernel | own s | compiles | signatures |\n|---|---|---|---|")
    for name, k in sorted(by_kernel.items(), key=lambda kv: -kv[1]["self"])[: args.top]:
        print(f"| {name} | {k['self']:.1f} | {k['compiles']} | {len(k['signatures'])} |")
    twice = {n: sorted(k["signatures"]) for n, k in by_kernel.items() if len(k["signatures"]) > 1}
    print(f"\n{len(twice)} functions compiled for more than one signature:")
    for name, sigs in sorted(twice.items()):
        print(f"- {name}: " + "; ".join(sigs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"groups": times, "records": records}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
