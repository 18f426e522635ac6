"""The SDF corpus (tests/data/sdf_corpus.tar.xz: SDFormat's, Gazebo's and gz-sim's own files, with their licences)
and libsdformat's reading of it (tests/data/sdf_corpus_reading.json.xz, written by sdformat_reader/): each
file loaded here and compared with that reading, or refused for a reason docs/sdf.md gives."""

from __future__ import annotations

import json
import lzma
import re
import tarfile
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

import denoc_pin as dp
from denoc_pin.core.joints import CONTINUOUS, PRISMATIC, REVOLUTE, UNIVERSAL
from denoc_pin.core.spatial import quaternion_rotation

DATA = Path(__file__).parent / "data"
ARCHIVE = DATA / "sdf_corpus.tar.xz"
READING = DATA / "sdf_corpus_reading.json.xz"
MODEL_PATHS = ("gazebo_models", "sdformat/test/integration/model", "gz-sim/test/worlds/models")
"""The folders of the archive where model:// is looked up (as the reading was written)."""
TOL = 1e-9
COMPARED: Counter = Counter()
"""The collisions compared with libsdformat's, per shape (``_compare_collisions``)."""

# Each refusal message of docs/sdf.md, as a pattern: the corpus's refusals must all be among them.
REASONS = {
    "nothing moves": r"has no movable joint|is static: nothing in it moves|has no <link>|no <model> in",
    "several models move": r"models, \d+ of them not static",
    "not a tree": r"no joint's child|joints attach the model to the world|joins link .* to itself|fixed to the "
                  r"joint's own frame|child cannot be the world",
    "include not found": r"only model://, file:// and paths|network files are never fetched|no such file|"
                         r"no folder .* in the model paths|"
                         r"names no <sdf> file|without a model.config|has no <model> to include|has no <uri>",
    "include option": r"placement_frame|merge=",
    "joint type": r"type '[^']*' is not read",
    "auto inertia": r"auto='true'",
    "version": r"has version|the root element is <",
    "malformed": r"malformed XML|finite|not numbers|expected \d|is zero|is reserved|has no name|names no frame|"
                 r"is taken by|needs <axis|relative_to is not allowed|nested model .* is static",
}  # fmt: skip


def extract(into: Path) -> tuple[Path, dict]:
    """The corpus extracted under ``into``, and the reading keyed by each file's path relative to the corpus."""
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(into, filter="data")
    reading = json.loads(lzma.decompress(READING.read_bytes()))
    return into, {str(Path(k)): v for k, v in reading.items()}


def _pose(p) -> tuple[np.ndarray, np.ndarray]:
    x, y, z, w, qx, qy, qz = p
    return quaternion_rotation(qx, qy, qz, w), np.array([x, y, z])


def _relative(a, b):
    """b in a's frame."""
    return a[0].T @ b[0], a[0].T @ (b[1] - a[1])


def _composite(parts):
    """(mass, centre, inertia about the centre) of (mass, centre, inertia about its centre) parts, one frame."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[1] for p in parts) / m
    I = sum(p[2] + p[0] * ((p[1] - c) @ (p[1] - c) * np.eye(3) - np.outer(p[1] - c, p[1] - c)) for p in parts)
    return m, c, I


def _close(a, b, scale=1.0) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(scale, np.abs(b).max(initial=0.0), 1e-300))


def compare(model: dp.Model, reading: dict) -> dict[str, float]:
    """The largest relative difference per quantity between our model at q = 0 and libsdformat's model of the same
    name: link frames, joint anchors and axes (relative to the first link), the joints' limits, and each body's
    mass, centre of mass and inertia about it against those of the links merged into it."""
    links = {link["name"]: link for link in reading["links"]}
    joints = {joint["name"]: joint for joint in reading["joints"]}
    data = model.create_data()
    q = dp.neutral(model)
    frames = {f.name: i for i, f in enumerate(model.frames) if f.type == "body"}
    ours = {name: dp.frame_placement(model, data, q, i) for name, i in frames.items()}
    ours = {name: (X[:3, :3], X[:3, 3]) for name, X in ours.items()}
    ref_name = next(name for name in links if name in ours)
    ref_ours, ref_theirs = ours[ref_name], _pose(links[ref_name]["pose"])
    size = max(1.0, max(np.abs(_pose(link["pose"])[1]).max() for link in links.values()))
    out = {
        "links": 0.0,
        "anchors": 0.0,
        "axes": 0.0,
        "limits": 0.0,
        "mass": 0.0,
        "com": 0.0,
        "inertia": 0.0,
        "collisions": 0.0,
    }
    for name, link in links.items():
        if name not in ours:
            raise AssertionError(f"link {name!r} of libsdformat's reading is not a body frame here")
        R1, p1 = _relative(ref_ours, ours[name])
        R2, p2 = _relative(ref_theirs, _pose(link["pose"]))
        out["links"] = max(out["links"], _close(R1, R2), _close(p1, p2, size))
    for k in range(1, model.njoints):
        name = model.names[k]
        if name == "root_joint" or model.kinds[k] not in (REVOLUTE, CONTINUOUS, PRISMATIC, UNIVERSAL):
            continue
        joint = joints[name]
        X = dp.frame_placement(model, data, q, model.frame_id(name, type="joint"))
        J_ours = _relative(ref_ours, (X[:3, :3], X[:3, 3]))
        J_theirs = _relative(ref_theirs, _pose(joint["pose"]))
        out["anchors"] = max(out["anchors"], _close(J_ours[1], J_theirs[1], size))
        axis = ref_ours[0].T @ X[:3, :3] @ model.axes[k]
        theirs = ref_theirs[0].T @ np.array(joint["axes"][0]["xyz"])
        out["axes"] = max(out["axes"], _close(axis, theirs / np.linalg.norm(theirs)))
        if model.kinds[k] in (REVOLUTE, PRISMATIC):
            i = int(model.idx_q[k])
            lo, hi = (min(max(x, -1e300), 1e300) for x in (joint["axes"][0]["lower"], joint["axes"][0]["upper"]))
            lo, hi = (-np.inf if lo <= -1e16 else lo), (np.inf if hi >= 1e16 else hi)
            ours_lo, ours_hi = model.lower_position_limit[i], model.upper_position_limit[i]
            ours_lo, ours_hi = (-np.inf if ours_lo <= -1e16 else ours_lo), (np.inf if ours_hi >= 1e16 else ours_hi)
            out["limits"] = max(out["limits"], 0.0 if (ours_lo, ours_hi) == (lo, hi) else
                                _close([ours_lo, ours_hi], [lo, hi]))  # fmt: skip
    dp.forward_kinematics(model, data, q)
    out["collisions"] = _compare_collisions(model, data, reading, ref_ours, ref_theirs, size)
    body_of = {f.name: f.body for f in model.frames if f.type == "body"}
    for k in range(model.njoints):  # each body against the links merged into it (body 0: those welded to the world)
        parts = []
        for name, link in links.items():
            if body_of[name] == k:
                X = _relative(ref_theirs, _pose(link["pose"]))
                Xi = _pose(link["inertial_pose"])
                R, c = X[0] @ Xi[0], X[0] @ Xi[1] + X[1]
                parts.append((link["mass"], c, R @ np.array(link["moi"]).reshape(3, 3) @ R.T))
        if not parts:
            continue
        m2, c2, I2 = _composite(parts)
        R, p = _relative(ref_ours, (data.oR[k], data.op[k]))
        out["mass"] = max(out["mass"], _close(model.masses[k], m2))
        out["com"] = max(out["com"], _close(R @ model.coms[k] + p, c2, size))
        if k > 0:  # the world's body keeps no rotational inertia: it moves nothing
            out["inertia"] = max(out["inertia"], _close(R @ model.inertias[k] @ R.T, I2))
    return out


def _compare_collisions(model, data, reading, ref_ours, ref_theirs, size) -> float:
    """Each collision libsdformat reads against ours: every box, sphere, cylinder and capsule that touches something
    is here (a mesh where its file is in the corpus), of the same size, bits, friction and pose; none is here that
    libsdformat does not read.  Returns the largest relative pose difference."""
    ours = {c.name: c for c in model.collisions}
    theirs = {f"{link['name']}::{c['name']}": c for link in reading["links"] for c in link["collisions"]}
    selfish = {f"{link['name']}::{c['name']}" for link in reading["links"] for c in link["collisions"]
               if link["self_collide"] or reading["self_collide"]}  # fmt: skip
    assert set(ours) <= set(theirs), f"collisions libsdformat does not read: {sorted(set(ours) - set(theirs))}"
    worst = 0.0
    for name, c in theirs.items():
        if c["bitmask"] == 0 or c["type"] not in ("box", "sphere", "cylinder", "capsule", "mesh"):
            assert name not in ours, f"collision {name!r} ({c['type']}, bitmask {c['bitmask']}) touches nothing"
            continue
        if c["type"] == "mesh" and name not in ours:  # its file is not in the corpus (left out with a warning)
            continue
        mine = ours[name]
        kind = type(mine.shape).__name__.lower()
        assert kind == c["type"], f"{name}: {kind}, libsdformat reads a {c['type']}"
        size_ours = {
            "box": lambda s: s.size,
            "sphere": lambda s: [s.radius],
            "mesh": lambda s: s.scale,
            "cylinder": lambda s: [s.radius, s.length],
            "capsule": lambda s: [s.radius, s.length],
        }[kind]
        assert _close(size_ours(mine.shape), c["size"]) <= TOL, (name, size_ours(mine.shape), c["size"])
        assert mine.friction == c["mu"], (name, mine.friction, c["mu"])
        bits = (c["bitmask"], c["bitmask"]) if name in selfish else (1, 0)
        assert (mine.group, mine.mask) == bits, (name, mine.group, mine.mask, bits)
        COMPARED[kind] += 1
        k = mine.body
        R, p = _relative(ref_ours, (data.oR[k] @ mine.rotation, data.oR[k] @ mine.translation + data.op[k]))
        R2, p2 = _relative(ref_theirs, _pose(c["pose"]))
        worst = max(worst, _close(R, R2), _close(p, p2, size))
    return worst


def reason(message: str) -> str | None:
    """The documented reason a refusal message gives, or None."""
    return next((key for key, pattern in REASONS.items() if re.search(pattern, message)), None)


def load(path: Path, root: Path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        return dp.load_sdf(path, model_paths=[root / p for p in MODEL_PATHS], **kw)
