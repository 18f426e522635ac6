"""ModelBuilder: random trees of every joint kind against their Pinocchio twins, and bad input."""

import numpy as np
import pinocchio as pin
import pytest
from conftest import add_random_body, assert_close

import denoc_pin as dp
from denoc_pin.tools.validate import compare_with_pinocchio

KINDS = ["revolute", "continuous", "prismatic", "spherical", "universal", "planar", "fixed"]


def random_builder_tree(seed: int) -> dp.Model:
    rng = np.random.default_rng(seed)
    b = dp.ModelBuilder(f"tree{seed}")
    path = [0]  # the branch being grown: parents come from it, so the order stays depth-first
    root_kind = ["revolute", "free-flyer", "spherical", "universal", "planar"][seed % 5]
    for i in range(int(rng.integers(3, 10))):
        kind = root_kind if i == 0 else str(rng.choice(KINDS))
        if len(path) > 1 and rng.random() < 0.4:
            del path[int(rng.integers(1, len(path))) :]  # back up to an ancestor and branch there
        parent = path[-1]
        k = add_random_body(b, rng, parent, kind)
        if kind != "fixed":
            path.append(k)
    return b.build()


@pytest.mark.parametrize("seed", range(20))
def test_random_builder_trees_match_their_pinocchio_twin(seed):
    model = random_builder_tree(seed)
    pm = dp.to_pinocchio(model)
    failed = [(c.algorithm, c.max_rel) for c in compare_with_pinocchio(model, pm, samples=2, seed=seed) if not c.passed]
    assert not failed, failed


def test_to_pinocchio_refuses_an_order_pinocchio_cannot_handle():
    b = dp.ModelBuilder("zigzag")
    for parent in (0, 1, 0, 2):  # body 4 hangs under body 2 after body 3 started another branch
        b.add_body(parent, "revolute", mass=1.0, inertia=np.eye(3) * 0.01)
    model = b.build()
    with pytest.raises(dp.ModelError, match="not in depth-first order"):
        dp.to_pinocchio(model)
    # denoc_pin itself does not need that order: its GIM equals inverse-dynamics differences.
    data = model.create_data()
    q, z = np.array([0.1, 0.2, 0.3, 0.4]), np.zeros(4)
    g = dp.inverse_dynamics(model, data, q, z, z)
    cols = np.column_stack([dp.inverse_dynamics(model, data, q, z, e) - g for e in np.eye(4)])
    assert_close(dp.gim(model, data, q), cols, what="GIM columns")


def test_round_trip_through_pinocchio():
    model = random_builder_tree(3)
    back = dp.from_pinocchio(dp.to_pinocchio(model))
    assert back.names == model.names and list(back.kinds) == list(model.kinds)
    np.testing.assert_allclose(back.M, model.M, atol=1e-12)
    np.testing.assert_allclose(back.axes2, model.axes2, atol=1e-15)


def test_fixed_links_merge_and_attach_by_name():
    """A body on a fixed link equals the same body placed directly with the composed placement."""
    R1, p1 = pin.exp3(np.array([0.1, 0.2, 0.3])), np.array([0.1, 0.0, 0.2])
    R2, p2 = pin.exp3(np.array([-0.3, 0.1, 0.0])), np.array([0.0, 0.1, 0.05])
    a = dp.ModelBuilder()
    a.add_body(0, "revolute", axis=(0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01, link="arm")
    a.add_body("arm", "fixed", placement=(R1, p1), mass=0.5, com=(0.01, 0, 0), inertia=np.eye(3) * 1e-3, link="plate")
    a.add_body("plate", "revolute", axis=(1, 0, 0), placement=(R2, p2), mass=0.3, inertia=np.eye(3) * 1e-3)
    b = dp.ModelBuilder()
    b.add_body(0, "revolute", axis=(0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01, link="arm")
    b.add_body(1, "fixed", placement=(R1, p1), mass=0.5, com=(0.01, 0, 0), inertia=np.eye(3) * 1e-3, link="plate")
    b.add_body(1, "revolute", axis=(1, 0, 0), placement=(R1 @ R2, R1 @ p2 + p1), mass=0.3, inertia=np.eye(3) * 1e-3)
    ma, mb = a.build(), b.build()
    assert ma.njoints == 3 and abs(ma.masses[1] - 1.5) < 1e-15
    q, v = np.array([0.4, -0.2]), np.array([0.3, 0.1])
    assert_close(dp.forward_dynamics(ma, ma.create_data(), q, v, v), dp.forward_dynamics(mb, mb.create_data(), q, v, v))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"joint": "hinge"}, r"unknown joint 'hinge'; valid joints are: revolute, continuous, prismatic"),
        ({"parent": 5}, r"parent body 5 does not exist yet"),
        ({"parent": "nowhere"}, r"no link or joint named 'nowhere'; links are: universe"),
        ({"joint": "universal", "axis": (1, 0, 0)}, r"a universal joint takes axis=\(e1, e2\)"),
        ({"mass": -1.0}, r"negative or non-finite mass"),
        ({"inertia": -np.eye(3)}, r"not positive semi-definite"),
    ],
)
def test_add_body_errors(kwargs, pattern):
    b = dp.ModelBuilder()
    args = {"parent": 0, "joint": "revolute", "mass": 1.0, "inertia": np.eye(3) * 0.01} | kwargs
    with pytest.raises(dp.ModelError, match=pattern):
        b.add_body(**args)


def test_build_errors():
    b = dp.ModelBuilder("u")
    b.add_body(0, "universal", axis=((1, 0, 0), (1, 1, 0)), mass=1.0, inertia=np.eye(3) * 0.01)
    with pytest.raises(dp.ModelError, match="the axes of universal joint 'joint_1' must be orthogonal"):
        b.build()
    b = dp.ModelBuilder("z")
    b.add_body(0, "revolute", axis=(0, 0, 0), mass=1.0, inertia=np.eye(3) * 0.01)
    with pytest.raises(dp.ModelError, match="joint 'joint_1' has a zero or non-finite axis"):
        b.build()
    b = dp.ModelBuilder("massless")
    b.add_body(0, "spherical")
    with pytest.warns(dp.ModelWarning, match="moves only massless links"):
        b.build()
    with pytest.raises(ValueError, match="placement must be"):
        dp.ModelBuilder().add_body(0, placement=np.eye(3))


@pytest.mark.parametrize(
    ("kwargs", "what"),
    [
        ({"mass": 1e13}, "mass 10000000000000.0"),
        ({"inertia": np.diag([np.inf, 1.0, 1.0])}, "inertia \\[\\[inf, 0.0, 0.0\\], .*\\]"),
        ({"com": (np.nan, 0.0, 0.0)}, "com \\[nan, 0.0, 0.0\\]"),
        ({"placement": (np.eye(3), (0.0, 2e12, 0.0))}, "placement translation \\[0.0, 2000000000000.0, 0.0\\]"),
    ],
)
def test_non_finite_or_absurd_numbers_are_refused(kwargs, what):
    b = dp.ModelBuilder("absurd")
    with pytest.raises(dp.ModelError, match=f"link 'link_1': {what} is not finite or has a magnitude beyond 1e\\+12"):
        b.add_body(0, "revolute", **({"mass": 1.0, "inertia": np.eye(3) * 0.1} | kwargs))
