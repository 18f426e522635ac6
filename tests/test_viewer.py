"""The MeshCat viewer: what it draws, where (against our own kinematics), the offline HTML, and a
headless-Chromium screenshot of it."""

import base64
import re
import runpy
import shutil
import subprocess
import warnings

import numpy as np
import pinocchio as pin
import pytest
import umsgpack
from conftest import ROOT, URDF_DIR, box_on_table

import denoc_pin as dp
from denoc_pin.loaders.robots import example_robot_urdf
from denoc_pin.tools.viewer import MAX_BODIES, Viewer

URDF_DIR = URDF_DIR

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def scene_commands(html: str) -> list[dict]:
    """The meshcat commands inlined in a saved page."""
    return [umsgpack.unpackb(base64.b64decode(b)) for b in re.findall(r'base64,([A-Za-z0-9+/=]+)"', html)]


def recorded_transform(viewer: Viewer, name: str) -> np.ndarray:
    """The 4 x 4 transform the scene holds for geometry object ``name`` (meshcat stores it column-major)."""
    from meshcat.servers.tree import find_node

    node = find_node(viewer._scene.tree, ["meshcat", "denoc_pin", "visuals", name])
    return np.array(umsgpack.unpackb(node.transform)["matrix"]).reshape(4, 4).T


def test_primitives_for_models_without_visuals():
    rope = dp.models.rope(n_links=6)
    v = Viewer(rope)
    names = [g.name for g in v.visual_model.geometryObjects]
    assert len(names) == 12  # a sphere and a cylinder per link
    assert sum(n.startswith("joint_") for n in names) == 6


def test_urdf_visuals_and_cut_markers():
    v = Viewer(dp.load_urdf(URDF_DIR / "four_bar.urdf"))
    names = [g.name for g in v.visual_model.geometryObjects]
    assert sum(n.startswith("cut_") for n in names) == 2
    assert not any(n.startswith("joint_") for n in names)  # every link has a URDF visual


def test_a_visual_that_cannot_be_drawn_is_named_and_the_rest_is_drawn(tmp_path):
    # A <mesh scale> of four numbers (and a declaration Pinocchio's parser refuses): the other visuals still load.
    text = (URDF_DIR / "gripper.urdf").read_text().replace('<?xml version="1.0"?>', '<?xml version="0.0"?>')
    text = re.sub(r"<cylinder[^>]*/>", '<mesh filename="palm.stl" scale="1 1 1 1"/>', text, count=1)
    path = tmp_path / "gripper.urdf"
    path.write_text(text)
    with pytest.warns(dp.ModelWarning):
        model = dp.load_urdf(path)
    with pytest.warns(dp.ModelWarning, match=r"not drawn: <visual> of link 'link_1_1' \(line \d+\): <mesh>"):
        v = Viewer(model)
    stand_in = {int(g.parentJoint) for g in v.visual_model.geometryObjects if g.name.startswith("collision_")}
    drawn = {int(g.parentJoint) for g in v.visual_model.geometryObjects} - stand_in
    assert stand_in == {1} and drawn == {2, 3, 4}  # the palm as its collision shape, the fingers from the file


def test_a_missing_mesh_file_is_named_and_the_rest_is_drawn(tmp_path):
    text = re.sub(
        r"<cylinder[^>]*/>", '<mesh filename="meshes/palm.stl"/>', (URDF_DIR / "gripper.urdf").read_text(), count=1
    )
    path = tmp_path / "gripper.urdf"
    path.write_text(text)
    with pytest.warns(dp.ModelWarning, match=r"not drawn: <visual> of link 'link_1_1' \(line 29\): mesh file "
                      r"'meshes/palm\.stl' not found"):  # fmt: skip
        v = Viewer(dp.load_urdf(path))
    stand_in = {int(g.parentJoint) for g in v.visual_model.geometryObjects if g.name.startswith("collision_")}
    assert stand_in == {1} and {int(g.parentJoint) for g in v.visual_model.geometryObjects} == {1, 2, 3, 4}


def test_panda_meshes_load():
    model = dp.load_urdf(example_robot_urdf("panda"))
    v = Viewer(model)
    meshes = [g for g in v.visual_model.geometryObjects if g.meshPath]
    assert len(meshes) >= 8
    assert not any(g.name.startswith("joint_") for g in v.visual_model.geometryObjects if g.parentJoint <= 7)


def cassie() -> dp.Model:
    from denoc_pin.loaders.robots import robots_dir

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        return dp.load_sdf(robots_dir() / "cassie_description" / "robots" / "cassie_v2.sdf")


def test_cassie_sdf_meshes_load():
    model = cassie()
    meshes = [g for g in Viewer(model).visual_model.geometryObjects if g.meshPath.endswith(".stl")]
    assert len(meshes) == 23  # one per link: model://example-robot-data/… found in the installed package
    assert {int(g.parentJoint) for g in meshes} == set(range(model.njoints))


def _model(which: str) -> dp.Model:
    if which == "rope":
        return dp.models.rope(n_links=8)
    return cassie() if which == "cassie" else dp.load_urdf(URDF_DIR / f"{which}.urdf")


@pytest.mark.parametrize("which", ["spatial_tree", "rope", "four_bar", "cassie"])
def test_display_places_bodies_where_our_kinematics_puts_them(which):
    model = _model(which)
    v = Viewer(model)
    q = dp.random_configuration(model, 3)
    v.display(q)
    pd = v.pin_model.createData()
    pin.forwardKinematics(v.pin_model, pd, q)  # the referee: Pinocchio's kinematics of the same model
    R = [M.rotation for M in pd.oMi]
    o = [M.translation for M in pd.oMi]
    for g in v.visual_model.geometryObjects:
        k = int(g.parentJoint)
        T = recorded_transform(v, g.name)
        expected = o[k] + R[k] @ g.placement.translation
        np.testing.assert_allclose(T[:3, 3], expected, atol=1e-12)
        np.testing.assert_allclose(T[:3, :3] @ np.diag(1 / np.asarray(g.meshScale)), R[k] @ g.placement.rotation,
                                   atol=1e-12)  # fmt: skip


def test_cut_markers_meet_when_the_loop_is_closed():
    model = dp.load_urdf(URDF_DIR / "four_bar.urdf")
    q = dp.assemble(model, np.array([0.3, 1.0, 1.2]), fixed=["crank_joint"])
    v = Viewer(model)
    v.display(q)
    lp = model.loops[0].name
    c1, c2 = (recorded_transform(v, f"cut_{lp}_C{i}")[:3, 3] for i in (1, 2))
    np.testing.assert_allclose(c1, c2, atol=1e-12)


def test_save_html_with_animation(tmp_path):
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    traj = dp.simulate(model, np.deg2rad([-60.0, 0, 0, 0]), np.zeros(4), 0.5, dt=1e-3, progress=False)
    path = Viewer(model).save_html(tmp_path / "gripper.html", traj=traj)
    html = path.read_text()
    assert "MeshCat.Viewer" in html and "http://" not in html.split("<script>")[0]
    anims = [c for c in scene_commands(html) if c["type"] == "set_animation"]
    assert len(anims) == 1
    tracks = anims[0]["animations"]
    assert len(tracks) == len(Viewer(model).visual_model.geometryObjects)
    # 0.5 s at 30 frames per second: frames 0..15
    times = tracks[0]["clip"]["tracks"][0]["keys"]
    assert len(times) == 16


def test_bad_arguments():
    model = dp.load_urdf(URDF_DIR / "gripper.urdf")
    v = Viewer(model)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        v.display(np.zeros(3))
    traj = dp.simulate(model, np.zeros(4), np.zeros(4), 0.1, progress=False)
    with pytest.raises(ValueError, match="speed"):
        v.save_html("/tmp/never.html", traj=traj, speed=0.0)
    with pytest.raises(dp.ModelError, match=f"at most {MAX_BODIES} bodies"):
        Viewer(dp.models.chain(MAX_BODIES + 1))
    with pytest.raises(TypeError, match="denoc_pin.Model"):
        Viewer("gripper.urdf")


def listening(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every socket process ``pid`` listens on."""
    import psutil

    sockets = psutil.Process(pid).net_connections("inet")
    return sorted((c.laddr.ip, c.laddr.port) for c in sockets if c.status == "LISTEN")


def test_live_server_on_loopback():
    """The live server's sockets, read from the system (meshcat's own server put its web page on every interface):
    its web page and its command socket, both on 127.0.0.1 only."""
    v = Viewer(dp.models.rope(n_links=3), live=True)
    try:
        assert v.url.startswith("http://127.0.0.1:")
        v.display(np.zeros(v.model.nq))  # goes through the server and is recorded
        sockets = listening(v._scene.live.server_proc.pid)
        ports = {int(v.url.split(":")[2].split("/")[0]), int(v._scene.live.zmq_url.rsplit(":", 1)[1])}
        assert {port for _, port in sockets} == ports
        assert {address for address, _ in sockets} == {"127.0.0.1"}
    finally:
        v.close()


def screenshot(html_path, png_path) -> np.ndarray:
    from PIL import Image

    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-quic", f"--user-data-dir={png_path.parent / 'ud'}",
        "--window-size=640,480", "--virtual-time-budget=5000", f"--screenshot={png_path}", f"file://{html_path}",
    ]  # fmt: skip
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert png_path.exists(), "chromium wrote no screenshot"
    return np.asarray(Image.open(png_path).convert("RGB"), dtype=int)


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); .ci/run installs it"
)
@pytest.mark.parametrize("which", ["gripper", "rope", "cassie"])
def test_html_renders_the_robot_in_chromium(tmp_path, which):
    """The robot is drawn, framed whole, standing on the ground grid: the page differs from the same page with
    the robot hidden in a region near the image centre (where the camera looks), not at the image's edges,
    and nowhere is the page blank; and the grid (the page against the one with the grid hidden) is drawn
    under the robot, in its columns below its lowest pixel."""
    model = dp.models.rope(n_links=20) if which == "rope" else _model(which)
    v = Viewer(model)
    v.display(dp.neutral(model))
    with_robot = screenshot(v.save_html(tmp_path / "a.html"), tmp_path / "a.png")
    v.meshcat["/Grid"].set_property("visible", False)
    without_grid = screenshot(v.save_html(tmp_path / "c.html"), tmp_path / "c.png")
    v.meshcat["/Grid"].set_property("visible", True)
    v.meshcat["denoc_pin"].set_property("visible", False)
    without = screenshot(v.save_html(tmp_path / "b.html"), tmp_path / "b.png")
    assert with_robot.std() > 5, "blank page: WebGL did not render"
    robot = np.abs(with_robot - without).sum(axis=2) > 30
    assert robot.sum() > 150, f"only {robot.sum()} pixels show the robot"
    rows, cols = np.nonzero(robot)
    h, w = robot.shape
    assert abs(np.median(rows) - h / 2) < h / 4 and abs(np.median(cols) - w / 2) < w / 4, "not centred"
    assert rows.min() > 0.02 * h and rows.max() < 0.98 * h, "not framed whole: the robot touches the top or bottom"
    grid = np.abs(with_robot - without_grid).sum(axis=2) > 15
    below = grid[rows.max() + 1 :, max(0, cols.min() - w // 20) : cols.max() + w // 20]
    assert below.sum() > 20, f"the grid is not drawn under the robot ({below.sum()} grid pixels below it)"


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); .ci/run installs it"
)
def test_the_falling_rope_stays_whole_in_the_picture(tmp_path):
    """The paper's rope (Fig. 7), released along x, seen as its animation frames it (the box swept by the whole
    fall, from the side across the rope): at the start, in the middle of the swing and at the end, the rope is in the
    picture, away from its edges, and fills no more than part of it."""
    model = dp.models.rope()
    q0 = np.zeros(model.nq)
    q0[1] = np.pi / 2  # straight along −x, as demo and examples/rope_fall.py release it
    traj = dp.simulate(model, q0, np.zeros(model.nv), 1.75, dt=1e-3)
    v = Viewer(model)
    v.frame(traj.q[::25])  # what animate(traj) frames: the configurations it shows
    v.meshcat["denoc_pin"].set_property("visible", False)
    empty = screenshot(v.save_html(tmp_path / "empty.html"), tmp_path / "empty.png")
    v.meshcat["denoc_pin"].set_property("visible", True)
    for k in (0, len(traj.t) // 2, len(traj.t) - 1):
        v.display(traj.q[k])
        shot = screenshot(v.save_html(tmp_path / f"{k}.html"), tmp_path / f"{k}.png")
        rope = np.abs(shot - empty).sum(axis=2) > 30
        h, w = rope.shape
        assert rope.sum() > 150, f"t = {traj.t[k]:.2f} s: only {rope.sum()} pixels show the rope"
        rows, cols = np.nonzero(rope)
        inside = rows.min() > 0.02 * h and rows.max() < 0.98 * h and cols.min() > 0.02 * w and cols.max() < 0.98 * w
        where = f"rows {rows.min()}-{rows.max()}, columns {cols.min()}-{cols.max()} of {h} x {w}"
        assert inside, f"t = {traj.t[k]:.2f} s: the rope leaves the picture ({where})"
        assert rope.mean() < 0.25 and (cols.max() - cols.min()) < 0.9 * w, f"t = {traj.t[k]:.2f} s: it fills it"


# ---------------------------------------------------------------------------------------------------------------
# Contacts: the ground, the contact points and their forces (docs/contacts.md).
# ---------------------------------------------------------------------------------------------------------------


def _node_transform(viewer: Viewer, *path) -> np.ndarray:
    from meshcat.servers.tree import find_node

    node = find_node(viewer._scene.tree, ["meshcat", *path])
    return np.array(umsgpack.unpackb(node.transform)["matrix"]).reshape(4, 4).T


def _cube_on(ground, t_final=0.3):
    b = dp.ModelBuilder("cube")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.2**2 / 6, link="cube")
    b.add_collision("cube", dp.Box((0.2, 0.2, 0.2)))
    model = b.build()
    q0 = dp.neutral(model)
    q0[:3] = np.asarray(ground.normal) * (ground.height + 0.1)  # a face on the ground
    q0[3:7] = pin.Quaternion(ground.frame).coeffs()
    return model, dp.simulate(model, q0, np.zeros(6), t_final, 1e-3, ground=ground, progress=False)


def test_contacts_are_drawn_at_their_points_along_their_forces():
    """A cube resting on a tilted ground: the slab's top face lies in the plane {n·x = h} with its normal n; each
    contact's dot is at its point, its arrow starts there along the force, as long as |f| / (m g) times the framed
    radius; markers left over from a busier row shrink to nothing; the collision shape, not a primitive, is drawn."""
    ground = dp.Ground(height=0.3, normal=(0.2, 0.0, 1.0), friction=1.0)
    model, traj = _cube_on(ground)
    v = Viewer(model)
    assert [g.name for g in v.visual_model.geometryObjects] == [f"collision_{model.collisions[0].name}"]
    row = traj.contacts[-2]
    assert len(row["points"]) == 4
    v.frame(traj.q[-1])
    v.show_ground(traj.ground)
    v.display(traj.q[-1], row)
    n = np.asarray(ground.normal)
    S = _node_transform(v, "denoc_pin", "ground")
    thick = 0.02 * max(2.0, 8.0 * v._radius)
    assert_close = np.testing.assert_allclose
    assert_close(S[:3, 2], n, atol=1e-12)
    assert_close(n @ (S[:3, 3] + 0.5 * thick * n), ground.height, atol=1e-12)
    weight = model.masses.sum() * 9.81
    for i, (p, f) in enumerate(zip(row["points"], row["forces"], strict=True)):
        assert_close(_node_transform(v, "denoc_pin", "contacts", str(i), "point")[:3, 3], p, atol=1e-12)
        shaft = _node_transform(v, "denoc_pin", "contacts", str(i), "shaft")
        head = _node_transform(v, "denoc_pin", "contacts", str(i), "head")
        axis = shaft[:3, 1]  # three.js cylinders lie along y: the scaled y column is the shaft
        assert_close(axis / np.linalg.norm(axis), f / np.linalg.norm(f), atol=1e-12)
        tip = head[:3, 3] + 0.5 * head[:3, 1]
        assert_close(np.linalg.norm(tip - p), np.linalg.norm(f) / weight * v._radius, rtol=1e-12)
        assert_close(shaft[:3, 3] - 0.5 * shaft[:3, 1], p, atol=1e-12)
    v.display(traj.q[-1], {"points": row["points"][:1], "forces": row["forces"][:1]})
    for i in range(1, 4):
        for part in ("point", "shaft", "head"):
            assert np.abs(_node_transform(v, "denoc_pin", "contacts", str(i), part)[:3, :3]).max() < 1e-8


def test_contacts_between_bodies_are_drawn_as_the_grounds():
    """A box resting on a table fixed to the world, no ground: the pair's 4 contacts are drawn as the ground's are,
    a dot at each point and an arrow along the force on the box (up, carrying its weight)."""
    model, q = box_on_table()
    traj = dp.simulate(model, q, np.zeros(6), 0.1, 1e-3, contact=dp.ContactSettings(), progress=False)
    row = traj.contacts[-2]
    assert len(row["points"]) == 4 and all(c[0] != "ground" for c in row["collisions"])
    v = Viewer(model)
    v.display(traj.q[-1], row)
    for i, (p, f) in enumerate(zip(row["points"], row["forces"], strict=True)):
        np.testing.assert_allclose(_node_transform(v, "denoc_pin", "contacts", str(i), "point")[:3, 3], p, atol=1e-12)
        axis = _node_transform(v, "denoc_pin", "contacts", str(i), "shaft")[:3, 1]
        np.testing.assert_allclose(axis / np.linalg.norm(axis), f / np.linalg.norm(f), atol=1e-12)
    assert abs(row["forces"][:, 2].sum() - 9.81) <= 1e-6


def test_a_contact_trajectory_animates_its_ground_and_contacts(tmp_path):
    """save_html of a contact Trajectory draws the ground it ran on and animates every contact marker with the
    model, one key per frame."""
    model, traj = _cube_on(dp.Ground(), t_final=0.5)
    v = Viewer(model)
    html = v.save_html(tmp_path / "cube.html", traj=traj).read_text()
    assert v.ground == traj.ground
    commands = scene_commands(html)
    assert any(c["type"] == "set_object" and c["path"].endswith("denoc_pin/ground") for c in commands)
    tracks = [c for c in commands if c["type"] == "set_animation"][0]["animations"]
    paths = {t["path"] for t in tracks}
    assert {f"/meshcat/denoc_pin/contacts/{i}/{p}" for i in range(4) for p in ("point", "shaft", "head")} <= paths
    assert all(len(t["clip"]["tracks"][0]["keys"]) == 16 for t in tracks)
    with pytest.raises(TypeError, match="dp.Ground"):
        v.show_ground((0, 0, 1))


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); .ci/run installs it"
)
def test_the_ground_and_the_contact_forces_render_in_chromium(tmp_path):
    """A ball at rest on the ground: the ground fills the lower half of the picture (against the page with it
    hidden), the force arrow is drawn green, upright, through the see-through ball from its lowest point (against
    the page with the contacts hidden)."""
    b = dp.ModelBuilder("ball")
    b.add_body(0, joint="free-flyer", mass=1.0, inertia=np.eye(3) * 0.004, link="ball")
    b.add_collision("ball", dp.Sphere(0.1))
    model = b.build()
    q0 = dp.neutral(model)
    q0[2] = 0.1
    traj = dp.simulate(model, q0, np.zeros(6), 0.2, 1e-3, ground=dp.Ground(), progress=False)
    v = Viewer(model, ground=traj.ground)
    v.display(traj.q[-1], traj.contacts[-2])
    full = screenshot(v.save_html(tmp_path / "a.html"), tmp_path / "a.png")
    v.meshcat["denoc_pin/contacts"].set_property("visible", False)
    bare = screenshot(v.save_html(tmp_path / "b.html"), tmp_path / "b.png")
    v.meshcat["denoc_pin/contacts"].set_property("visible", True)
    v.meshcat["denoc_pin/ground"].set_property("visible", False)
    v.meshcat["/Grid"].set_property("visible", False)
    no_ground = screenshot(v.save_html(tmp_path / "c.html"), tmp_path / "c.png")
    h, w = full.shape[:2]
    ground = np.abs(full - no_ground).sum(axis=2) > 30
    assert ground[h // 2 :].mean() > 0.5, f"the ground covers {ground[h // 2 :].mean():.0%} of the lower half"
    arrow = np.abs(full - bare).sum(axis=2) > 30
    rows, cols = np.nonzero(arrow)
    assert arrow.sum() > 200, f"only {arrow.sum()} pixels show the contact"
    green = full[arrow][:, 1] > full[arrow][:, 0]
    assert green.mean() > 0.5, "the arrow is not green"
    assert rows.max() - rows.min() > 8 * (cols.max() - cols.min() + 1) / 3, "the arrow is not upright"
    assert abs(np.median(cols) - w / 2) < w / 10, "the arrow is not under the ball's centre"


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium); .ci/run installs it"
)
def test_the_gripper_lifting_a_box_renders_in_chromium(tmp_path):
    """examples/gripper_grasp.py's grasp (the box on the ground) and lift (the box held in the air), one camera for
    both: the box is drawn in each (against the page with it hidden) and stands higher in the lifted picture; the
    fingers' contacts are drawn on it (against the page with the contacts hidden), within its columns."""
    out = runpy.run_path(str(ROOT / "examples" / "gripper_grasp.py"), run_name="grasp")["main"]()
    grasp, lift = out["grasp"], out["lift"]
    v = Viewer(out["model"], ground=grasp.ground)
    v.frame(np.stack([grasp.q[-1], lift.q[-1]]))
    box = "denoc_pin/visuals/collision_box_collision_0"
    shots = {}
    for name, traj in (("held", grasp), ("lifted", lift)):
        v.display(traj.q[-1], traj.contacts[-2])
        shots[name] = screenshot(v.save_html(tmp_path / f"{name}.html"), tmp_path / f"{name}.png")
        v.meshcat[box].set_property("visible", False)
        shots[name + "_nobox"] = screenshot(v.save_html(tmp_path / f"{name}_nb.html"), tmp_path / f"{name}_nb.png")
        v.meshcat[box].set_property("visible", True)
    v.meshcat["denoc_pin/contacts"].set_property("visible", False)
    no_contacts = screenshot(v.save_html(tmp_path / "nc.html"), tmp_path / "nc.png")
    assert shots["lifted"].std() > 5, "blank page: WebGL did not render"
    lowest = {}
    for name in ("held", "lifted"):
        pixels = np.abs(shots[name] - shots[name + "_nobox"]).sum(axis=2) > 30
        assert pixels.sum() > 100, f"{name}: only {pixels.sum()} pixels show the box"
        lowest[name] = np.nonzero(pixels)[0].max()
    assert lowest["held"] - lowest["lifted"] > 30, f"the box's lowest pixel row: {lowest}"
    contacts = np.abs(shots["lifted"] - no_contacts).sum(axis=2) > 30
    assert contacts.sum() > 30, f"only {contacts.sum()} pixels show the contacts"
    box_cols = np.nonzero(np.abs(shots["lifted"] - shots["lifted_nobox"]).sum(axis=2) > 30)[1]
    middle = np.median(np.nonzero(contacts)[1])
    assert box_cols.min() - 20 <= middle <= box_cols.max() + 20, (middle, box_cols.min(), box_cols.max())


def test_the_viewer_inline_in_a_notebook():
    """``_repr_html_`` and ``iframe``: the self-contained page in a frame's srcdoc (the page ``html`` gives, escaped:
    it unescapes to it), a trajectory's animation in it; a live viewer's frame points at its server; ``show`` wraps
    it for IPython; a height that is not a pixel count is refused."""
    import html

    from IPython.display import HTML

    model = dp.models.bundled("gripper")
    v = Viewer(model)
    frame = v._repr_html_()
    assert frame.startswith('<iframe srcdoc="') and frame.endswith("</iframe>")
    page = html.unescape(frame[len('<iframe srcdoc="') : frame.index('" style=')])
    assert page == v.html() and "MeshCat.Viewer" in page
    traj = dp.simulate(model, dp.neutral(model), np.zeros(model.nv), 0.1, progress=False, record_every=10)
    shown = v.show(traj, height=300)
    assert isinstance(shown, HTML) and "height: 300px" in shown.data
    assert len(shown.data) > len(frame)  # the animation's frames are in it
    for bad in (50, 1e3, "400px"):
        with pytest.raises(ValueError, match="height is the frame's height in pixels"):
            v.iframe(height=bad)
    live = Viewer(model, live=True)
    try:
        assert live._repr_html_().startswith(f'<iframe src="{live.url}"')
    finally:
        live.close()
