"""Kinematic modules: maximal serial chains, a new module at every branch (Fig. 1, Fig. 4)."""

import numpy as np
from conftest import URDF_DIR

import denoc_pin as dp
from denoc_pin.core.modules import decompose, draw_module_tree, module_arrays


def modules_of(parents):
    names = tuple(f"j{k}" for k in range(len(parents)))
    return decompose(np.array(parents), names, np.ones(len(parents), dtype=int))


def summary(mods):
    return [(m.parent, m.bodies) for m in mods]


def test_serial_chain_is_one_module():
    assert summary(modules_of([0, 0, 1, 2, 3])) == [(None, (1, 2, 3, 4))]


def test_two_chains_on_the_base():
    assert summary(modules_of([0, 0, 1, 0, 3])) == [(None, (1, 2)), (None, (3, 4))]


def test_gripper_fig4():
    # link 1^1 carries two fingers: M1 = {1^1}, M2 = {1^2, 2^2}, M3 = {1^3}
    assert summary(modules_of([0, 0, 1, 2, 1])) == [(None, (1,)), (0, (2, 3)), (0, (4,))]


def test_fig1_like_tree_with_nested_branches():
    #        1 - 2 (branch) ─┬─ 3 - 4 (branch) ─┬─ 5
    #                        │                  └─ 6 - 7
    #                        └─ 8 - 9 - 10
    parents = [0, 0, 1, 2, 3, 4, 4, 6, 2, 8, 9]
    assert summary(modules_of(parents)) == [
        (None, (1, 2)),
        (0, (3, 4)),
        (1, (5,)),
        (1, (6, 7)),
        (0, (8, 9, 10)),
    ]


def test_module_arrays_and_ordering():
    parents = [0, 0, 1, 2, 3, 4, 4, 6, 2, 8, 9]
    mods = modules_of(parents)
    ptr, bodies, body_module = module_arrays(mods, len(parents) - 1)
    assert list(ptr) == [0, 2, 4, 5, 7, 10]
    assert sorted(bodies) == list(range(1, 11))
    for m in mods:
        assert m.parent is None or m.parent < m.index, "parents first"
        assert all(body_module[k] == m.index for k in m.bodies)
        for a, b in zip(m.bodies, m.bodies[1:], strict=False):
            assert parents[b] == a, "a module is a serial chain"


def test_model_modules_report_names_and_dof():
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    assert [(m.index, m.parent, m.joints, m.nv) for m in model.modules] == [
        (0, None, ("joint_1_1",), 1),
        (1, 0, ("joint_1_2", "joint_2_2"), 2),
        (2, 0, ("joint_1_3",), 1),
    ]
    text = str(model)
    assert "M1 [1 dof]: joint_1_1" in text and "├── M2 [2 dof]: joint_1_2 → joint_2_2" in text
    assert "└── M3 [1 dof]: joint_1_3" in text


def test_draw_module_tree():
    text = draw_module_tree(modules_of([0, 0, 1, 0]), base="ground")
    assert text.splitlines() == ["M0 (ground)", "├── M1 [2 dof]: j1 → j2", "└── M2 [1 dof]: j3"]
