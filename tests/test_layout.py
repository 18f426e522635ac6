"""The flat buffers (layout.py): the recycled slots of the articulated mass matrices, sizes, the model buffer.

The FD results themselves are checked against Pinocchio in test_forward.py on every model; here
the slot plan is checked on its own terms, so that a wrong plan is named as such.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_tree_urdf
from numba import njit

import denoc_pin as dp
from denoc_pin.core import spatial as sp
from denoc_pin.core.layout import articulated_slots, split_model, stamped_for


def check_slot_plan(model: dp.Model) -> int:
    """Replay the factorization's order: every M̂_k is opened (initialised) once, before it is
    read or added to, and no two open M̂ share a slot.  Returns the number of slots used."""
    slot, init = model.slot, model.slot_init
    owner: dict[int, int] = {}  # slot -> body whose M̂ it holds while open
    opened = set()
    for k in model.module_bodies[::-1]:
        k, b = int(k), int(model.parents[k])
        if init[k] & 1:
            assert k not in opened, f"body {k} opened twice"
            assert owner.get(int(slot[k])) is None, f"slot {slot[k]} of leaf {k} still holds body {owner[slot[k]]}"
            owner[int(slot[k])] = k
            opened.add(k)
        assert k in opened and owner[int(slot[k])] == k, f"body {k} eliminated without its own open M̂"
        if b > 0:
            if init[k] & 2:
                assert b not in opened, f"parent {b} opened twice"
                assert owner.get(int(slot[b])) is None, f"slot {slot[b]} of body {b} still holds {owner[slot[b]]}"
                owner[int(slot[b])] = b
                opened.add(b)
            assert b in opened and owner[int(slot[b])] == b, f"child {k} adds to an unopened M̂ of {b}"
        else:
            assert not init[k] & 2
        del owner[int(slot[k])]  # M̂_k is dead once k is eliminated
    assert opened == set(range(1, model.njoints))
    return int(slot[1:].max()) + 1


@pytest.mark.parametrize("planar", [False, True])
def test_a_chain_needs_two_slots(planar):
    model = dp.models.chain(1000, planar=planar)
    assert check_slot_plan(model) == 2
    assert model.create_data().M_hat.shape == (2, 6, 6)


@pytest.mark.parametrize("seed", range(20))
def test_slot_plan_on_random_trees(seed, tmp_path):
    path = tmp_path / "tree.urdf"
    path.write_text(random_tree_urdf(seed, n_links=int(np.random.default_rng(seed).integers(5, 40))))
    model = dp.load_urdf(path)
    assert check_slot_plan(model) <= model.njoints - 1


def test_slot_plan_on_a_star_and_a_branched_robot():
    # A star: every body on the base, each its own module and leaf; one slot is reused throughout.
    n = 8
    parents = np.zeros(n + 1, dtype=np.int64)
    bodies = np.arange(1, n + 1)
    slot, init, nslots = articulated_slots(parents, bodies)
    assert nslots == 1 and (init[1:] == 1).all()
    model = dp.models.isobe_multibranch()
    check_slot_plan(model)


def test_the_check_catches_a_shared_slot():
    """The replay above can fail: two open M̂ forced into one slot are caught."""
    model = dp.models.isobe_multibranch()
    bad = model.slot.copy()
    bad[:] = 0

    class Fake:
        pass

    fake = Fake()
    fake.slot, fake.slot_init, fake.module_bodies = bad, model.slot_init, model.module_bodies
    fake.parents, fake.njoints = model.parents, model.njoints
    with pytest.raises(AssertionError):
        check_slot_plan(fake)


def test_buffers_per_body_of_a_huge_chain():
    """The memory budget of the papers' chains, as sizes (the peak RSS is measured by the benchmark)."""
    n = 20_000
    model = dp.models.chain(n)
    data = model.create_data()
    per_body = (model.mf.nbytes + model.mi.nbytes + data.ws.nbytes) / n
    assert per_body < 1000, f"{per_body:.0f} bytes a body"
    assert not hasattr(model, "_M"), "the 6 x 6 M_k must not be stored unless asked for"
    np.testing.assert_array_equal(model.M[5], sp.mass_matrix(model.masses[5], model.coms[5],
                                                                         model.inertias_origin[5]))  # fmt: skip


@njit
def _split(mb):
    mi, mf = split_model(mb)
    return mi.copy(), mf.copy()


@njit
def _stamped(ws, mb):
    return stamped_for(ws, mb)


def test_one_model_buffer_holds_the_integers_and_floats_bit_for_bit():
    """The fast entry points take model.mb and split it in the kernel: the split must give back mi and mf."""
    model = dp.models.chain(7)
    mi, mf = _split(model.mb)
    assert mi.dtype == np.int64 and np.array_equal(mi, model.mi)
    assert np.array_equal(mf, model.mf)
    assert np.shares_memory(model.mi, model.mb) and np.shares_memory(model.mf, model.mb)


def test_a_workspace_is_stamped_for_its_own_model_only():
    model, twin = dp.models.chain(7), dp.models.chain(7)
    data = model.create_data()
    assert _stamped(data.ws, model.mb)
    assert not _stamped(data.ws, twin.mb)


def _chain_with_placements(rotations) -> dp.Model:
    """A spatial chain of len(rotations) revolute joints whose joint frames are rotated by ``rotations``."""
    base = dp.models.chain(len(rotations))
    R = np.repeat(np.eye(3)[None], base.njoints, axis=0)
    R[1:] = rotations
    return dp.Model(
        name="rotated", names=base.names, link_names=base.link_names, parents=base.parents, kinds=base.kinds,
        axes=base.axes, placement_rotation=R, placement_translation=base.placement_translation,
        masses=base.masses, coms=base.coms, inertias=base.inertias,
    )  # fmt: skip


def test_unrotated_marks_the_exact_identities_and_both_kinematics_match_pinocchio():
    """``unrotated`` lets the kinematics skip the product by an identity placement rotation: it must mark exactly
    the identities.  A rotation by 1e-9 rad has cos = 1.0 exactly, a diagonal of ones, and must not be marked.
    The world poses through both branches then match Pinocchio's."""
    import pinocchio as pin

    tiny = sp.axis_angle(np.array([1.0, 0.0, 0.0]), 1e-9)
    assert np.all(np.diag(tiny) == 1.0)
    rotations = [np.eye(3), tiny, pin.exp3(np.array([0.3, -0.2, 0.5])), np.eye(3), pin.exp3(np.array([0.0, 1.2, 0.0]))]
    model = _chain_with_placements(rotations)
    assert model.unrotated.tolist() == [1, 1, 0, 0, 1, 0]
    assert dp.models.chain(7).unrotated.tolist() == [1] * 8
    pm = dp.to_pinocchio(model)
    pd = pm.createData()
    data = model.create_data()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-4, 4, model.nq)
        dp.forward_kinematics(model, data, q)
        pin.forwardKinematics(pm, pd, q)
        for k in range(1, model.njoints):
            np.testing.assert_allclose(data.oR[k], pd.oMi[k].rotation, rtol=0, atol=1e-14)
            np.testing.assert_allclose(data.op[k], pd.oMi[k].translation, rtol=0, atol=1e-14)


def test_the_generated_views_are_up_to_date_and_a_stale_file_is_caught(monkeypatch):
    """core/views.py is what scripts/write_views.py writes from the tables today; a table changed without
    rewriting it (a field added) no longer matches."""
    from denoc_pin.core import tables

    assert tables.VIEWS.read_text() == tables.views_source(), "core/views.py is stale: run scripts/write_views.py"
    monkeypatch.setattr(tables, "DATA_FLOATS", (*tables.DATA_FLOATS, ("extra", ("nj",), "a new field")))
    assert tables.VIEWS.read_text() != tables.views_source()


def test_no_kernel_reads_a_buffer_at_a_literal_offset():
    """Header entries, frame rows and work areas are read by name (core/tables.py): no ``mi[1]``, ``ws[0]``,
    ``lw[0]``, ``fb[f, 10]`` or ``scratch[42:78]`` in the package outside the generated views."""
    import re
    from pathlib import Path

    literal = re.compile(r"\b(mi|ws|lw)\[\d|\bfb\[\w+, \d|\bscratch\[")
    package = Path(dp.__file__).parent
    found = [f"{p.relative_to(package)}:{i}: {line.strip()}" for p in sorted(package.rglob("*.py"))
             if p.name not in ("views.py", "tables.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if literal.search(line)]  # fmt: skip
    assert not found, found
    assert literal.search("    return mi[4]") and literal.search("k = int(fb[f, 0])")  # the pattern can fail


CONTACT_SOURCES = ("contact/*.py", "simulation/contact_simulation.py")


def _positional_uses(text: str) -> list[str]:
    """Where a contact or run record (core/tables.py: RECORDS, WORK_AREAS) is read by position: an integer index into
    a name bound to one, or one unpacked into names (``a, b, c = cts``)."""
    import ast

    names = {"geo", "geometry", "cts", "contacts", "pairs", "warm", "law", "out", "rec", "scene", "hits", "det"}
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
            base = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            if base in names and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                found.append(f"{node.lineno}: {base}[{node.slice.value}]")
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            value = node.value
            base = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else ""
            if base in names:
                found.append(f"{node.lineno}: unpacks {base}")
    return found


def _declared_outside(text: str) -> list[str]:
    """Where a contact buffer is declared outside the tables: a tuple of three or more freshly allocated arrays, or
    a table of offsets built by hand (``_offsets``)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Tuple):
            made = [e for e in node.elts if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
                    and e.func.attr in ("empty", "zeros", "full")]  # fmt: skip
            if len(made) >= 3 and len(made) == len(node.elts):
                found.append(f"{node.lineno}: a tuple of {len(made)} arrays")
        if isinstance(node, ast.FunctionDef) and node.name == "_offsets":
            found.append(f"{node.lineno}: _offsets")
    return found


def test_contact_buffers_are_read_by_name_and_declared_in_the_tables():
    """The contact and run buffers are the records of core/tables.py: no kernel or run reads one by position
    (``geo[3]``, ``out[6]``, ``a, b = warm``) or declares one of its own (a tuple of arrays, an offsets table);
    both checks fail on the forms they look for."""
    from pathlib import Path

    package = Path(dp.__file__).parent
    files = [p for pattern in CONTACT_SOURCES for p in sorted(package.glob(pattern))]
    assert any(p.name == "pipeline.py" for p in files)
    found = [f"{p.relative_to(package)}:{hit}" for p in files for hit in _positional_uses(p.read_text())]
    found += [f"{p.relative_to(package)}:{hit}" for p in files for hit in _declared_outside(p.read_text())]
    assert not found, found
    hits = sorted(_positional_uses("x = s.warm[1]\nrows, verts, support, _, chunks = geo\n"))
    assert hits == ["1: warm[1]", "2: unpacks geo"]
    made = "det = (np.empty((3, 3)), np.empty(3), np.zeros(3))\ndef _offsets(names):\n    pass\n"
    assert sorted(_declared_outside(made)) == ["1: a tuple of 3 arrays", "2: _offsets"]


def test_the_generated_records_are_up_to_date_and_a_stale_file_is_caught(monkeypatch):
    """core/records.py is what scripts/write_views.py writes from the records' tables; a per-contact field added to
    CONTACT_SET without rewriting it no longer matches, and the allocator gains it."""
    from denoc_pin.core import tables
    from denoc_pin.core.records import ContactSet, contact_set

    assert tables.RECORDS_FILE.read_text() == tables.records_source(), "core/records.py is stale: run write_views"
    cts = contact_set(4)
    assert type(cts) is ContactSet and cts.depth.shape == (4,) and cts.keys.dtype == np.int64
    monkeypatch.setattr(tables, "CONTACT_SET", (*tables.CONTACT_SET, ("torsion", ("cap",), "f", "μ_t")))
    monkeypatch.setattr(tables, "RECORDS", tuple((c, n, tables.CONTACT_SET if c == "ContactSet" else t)
                                                 for c, n, t in tables.RECORDS))  # fmt: skip
    text = tables.records_source()
    assert text != tables.RECORDS_FILE.read_text() and '"torsion",' in text


def test_a_work_area_holds_its_sizes_and_its_views_tile_it():
    """A ContactWork buffer carries (nj, nv, mmax, cap, most, pair_work, ncol, nd) in its header; its views, compiled
    and NumPy, are the same fields end to end over the whole buffer."""
    from denoc_pin.core.records import contact_work, contact_work_arrays, contact_work_size
    from denoc_pin.core.tables import CONTACT_WORK, CONTACT_WORK_HEADER

    buf = contact_work(3, 7, 11, 4, 6, 9, 5, 7)
    assert len(buf) == contact_work_size(3, 7, 11, 4, 6, 9, 5, 7) and list(buf[:8]) == [3, 7, 11, 4, 6, 9, 5, 7]
    views = contact_work_arrays(buf)
    assert views.J.shape == (11 * 7,) and views.Jall.shape == (6, 7) and views.cand.shape == (6, 5)
    assert views.narrow.shape == (9,) and views.col_R.shape == (5, 3, 3) and views.H.shape == (7 * 7,)
    total = sum(getattr(views, f).size for f, _, _ in CONTACT_WORK)
    assert total + len(CONTACT_WORK_HEADER) == len(buf)
    getattr(views, CONTACT_WORK[-1][0])[:] = 7.0
    assert buf[-1] == 7.0  # the last field ends the buffer
