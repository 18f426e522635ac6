"""A fuzz test of the URDF loader (the input policy, docs/input-policy.md).

A seeded generator mutates the bundled URDFs and standard robots (delete elements and attributes, bad
numbers, scaled numbers, truncation, invalid bytes, duplicated or dangling names, cycles, zero and
non-unit axes, unknown and swapped joint types, renamed tags, the XML declaration).  Each case must
either load and agree with Pinocchio (rnea and the joint limits, where Pinocchio loads it and returns finite
numbers) or raise a ModelError naming the file: never another exception type, a NaN, or numbers of its own."""

import functools
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import URDF_DIR, assert_close
from lxml import etree

import denoc_pin as dp
from denoc_pin.loaders.pinocchio_bridge import LIMITS
from denoc_pin.loaders.robots import example_robot_urdf

SOURCES = sorted(p.name for p in (URDF_DIR).glob("*.urdf")) + [
    "ur5",
    "panda",
    "solo12",
    "anymal",
    "double_pendulum",
    "talos_reduced",
]
CASES_PER_SOURCE = 45  # 14 sources: 630 cases
BAD_NUMBERS = ["nan", "inf", "-inf", "-1e308", "1e13", "abc", "", "1 2", "0x10", "1e999", "1,5", "--1"]
SCALES = [-1.0, 0.0, 1e-3, 1e3, 2.5, 1e-300]
JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar"]
UNKNOWN_TYPES = ["ball", "screw", "", "REVOLUTE", "gearbox"]


def _source_bytes(name: str) -> bytes:
    path = URDF_DIR / name if name.endswith(".urdf") else example_robot_urdf(name)
    return path.read_bytes()


def _elements(root, tag=None) -> list:
    return [e for e in root.iter(tag) if isinstance(e.tag, str) and e is not root]


def _numeric(root) -> list:
    """(element, attribute) pairs holding numbers."""
    out = []
    for e in _elements(root):
        for a, raw in e.attrib.items():
            try:
                [float(x) for x in raw.split()]
            except ValueError:
                continue
            if raw.split():
                out.append((e, a))
    return out


def _link_names(root) -> list[str]:
    return [e.get("name") for e in root.findall("link") if e.get("name")]


def _tree_mutation(root, rng) -> str:
    """One mutation of the XML tree, in place; what it did."""
    ops = ["delete element", "delete attribute", "bad number", "scale number", "duplicate", "dangling", "cycle",
           "zero axis", "non-unit axis", "unknown type", "swap type", "rename tag"]  # fmt: skip
    op = ops[rng.integers(len(ops))]
    joints = root.findall("joint") + root.findall("loop_joint")
    pick = lambda xs: xs[rng.integers(len(xs))]  # noqa: E731
    if op == "delete element":
        e = pick(_elements(root))
        e.getparent().remove(e)
        return f"{op} <{e.tag}>"
    if op == "delete attribute":
        e = pick([e for e in _elements(root) if e.attrib] or [root])
        if e.attrib:
            del e.attrib[pick(list(e.attrib))]
        return f"{op} of <{e.tag}>"
    if op in ("bad number", "scale number"):
        e, a = pick(_numeric(root))
        parts = e.get(a).split()
        i = rng.integers(len(parts))
        if op == "bad number":
            parts = [pick(BAD_NUMBERS)] if rng.random() < 0.5 else parts[:i] + [pick(BAD_NUMBERS)] + parts[i + 1 :]
        else:
            parts[i] = repr(float(parts[i]) * pick(SCALES))
        e.set(a, " ".join(parts))
        return f"{op} <{e.tag} {a}>"
    if op == "duplicate":
        e = pick(root.findall("link") + root.findall("joint"))
        root.append(etree.fromstring(etree.tostring(e)))
        return f"{op} <{e.tag} {e.get('name')}>"
    if not joints:
        return "no joint to mutate"
    j = pick(joints)
    if op == "dangling":
        sub = j.find(pick(["parent", "child", "link1", "link2"]))
        if sub is not None:
            sub.set("link", "ghost_link")
        return f"{op} in joint {j.get('name')}"
    if op == "cycle":
        links = _link_names(root)
        sub = j.find(pick(["parent", "child"]))
        if sub is not None and links:
            sub.set("link", pick(links))
        return f"{op} via joint {j.get('name')}"
    if op in ("zero axis", "non-unit axis"):
        axis = j.find("axis")
        if axis is None:
            axis = etree.SubElement(j, "axis", xyz="1 0 0")
        if op == "zero axis":
            axis.set("xyz", "0 0 0")
        else:
            try:
                axis.set("xyz", " ".join(repr(2.5 * float(x)) for x in axis.get("xyz", "1 0 0").split()))
            except ValueError:
                pass
        return f"{op} of {j.get('name')}"
    if op == "unknown type":
        j.set("type", pick(UNKNOWN_TYPES))
        return f"{op} of {j.get('name')}"
    if op == "swap type":
        j.set("type", pick(JOINT_TYPES))
        return f"{op} of {j.get('name')}"
    e = pick(_elements(root))
    e.tag = e.tag + "x"
    return f"{op} <{e.tag}>"


def mutate(text: bytes, rng) -> tuple[bytes, str]:
    """One to three tree mutations, then, sometimes, a mutation of the bytes."""
    root = etree.fromstring(text, etree.XMLParser(remove_comments=True))
    done = [_tree_mutation(root, rng) for _ in range(rng.integers(1, 4))]
    out = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    r = rng.random()
    if r < 0.06:
        cut = int(rng.integers(len(out)))
        out, done = out[:cut], [*done, f"truncated at {cut}"]
    elif r < 0.12:
        at = int(rng.integers(len(out)))
        out, done = out[:at] + [b"\xff", b"\xc3\x28", b"\x00"][rng.integers(3)] + out[at:], [*done, f"bad byte at {at}"]
    elif r < 0.16:
        out = out.replace(b"version='1.0'", b"version='0.0'", 1)
        out, done = (b"\n \n" + out if rng.random() < 0.5 else out), [*done, "XML declaration"]
    return out, "; ".join(done)


def run_case(path) -> str:
    """'agree', 'loaded' (Pinocchio refuses it or returns non-finite numbers) or 'refused'; raises otherwise."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dp.ModelWarning)
            m = dp.load_urdf(path)
    except dp.ModelError as e:
        assert str(path) in str(e), f"the message does not name the file: {e}"
        return "refused"
    try:
        pm = pin.buildModelFromUrdf(str(path))
    except Exception:
        return "loaded"
    rng = np.random.default_rng(0)
    q = dp.random_configuration(m, rng)
    v, a = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    tau = dp.inverse_dynamics(m, m.create_data(), q, v, a)
    assert np.isfinite(tau).all(), "a loaded model gave non-finite torques"
    if (pm.nq, pm.nv) != (m.nq, m.nv):  # Pinocchio built another model (e.g. a joint type we refuse): no referee
        raise AssertionError(f"Pinocchio loads nq={pm.nq}, nv={pm.nv}; denoc_pin nq={m.nq}, nv={m.nv}")
    for ours, theirs in LIMITS.items():  # the joint limits too, bit for bit
        assert np.array_equal(getattr(m, ours), np.asarray(getattr(pm, theirs))), f"{ours} differs from Pinocchio's"
    ref = pin.rnea(pm, pm.createData(), q, v, a)
    if not np.isfinite(ref).all():
        return "loaded"
    assert_close(tau, ref, what="rnea of the mutated file")
    return "agree"


@functools.cache
def outcomes() -> tuple[Counter, dict[str, list[str]]]:
    """Every case, run once per session: (counts of each outcome, the failures of each source)."""
    counts: Counter = Counter()
    failures: dict[str, list[str]] = {source: [] for source in SOURCES}
    with tempfile.TemporaryDirectory() as tmp:
        for seed, source in enumerate(SOURCES):
            original, rng = _source_bytes(source), np.random.default_rng(seed)
            for i in range(CASES_PER_SOURCE):
                text, what = mutate(original, rng)
                path = Path(tmp) / f"{Path(source).stem}_case{i}.urdf"
                path.write_bytes(text)
                try:
                    counts[run_case(path)] += 1
                except Exception as e:  # collected, so that one run shows every failing case
                    counts["other"] += 1
                    failures[source].append(f"case {i} ({what}): {type(e).__name__}: {e}")
    return counts, failures


@pytest.mark.parametrize("source", SOURCES)
def test_mutated_urdfs_load_and_agree_or_raise_model_error(source):
    failures = outcomes()[1][source]
    assert not failures, "\n".join(failures)


def test_the_fuzz_cases_cover_both_outcomes():
    """The generator must neither only break the files nor only leave them loadable."""
    counts = outcomes()[0]
    print(dict(counts))
    assert sum(counts.values()) == len(SOURCES) * CASES_PER_SOURCE >= 500
    assert counts["agree"] >= 100 and counts["refused"] >= 100 and counts["other"] == 0
