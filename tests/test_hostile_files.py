"""Hostile robot files (``docs/input-policy.md``): each is refused with a ``dp.ModelError`` naming the file, in URDF,
SDF and MJCF; and each refusal is shown to depend on its guard: with the guard removed, the same check fails.

The guards (``denoc_pin/loaders/urdf_xml.py``): a document type that declares entities or names an external DTD is
refused before lxml parses (``_doctype_problem``); lxml resolves no entity, loads no DTD and reaches no network
(``PARSER_OPTIONS``); a network URI in a file attribute or a ``<uri>`` is refused (``_remote_uri``); lxml's errors
become ``ModelError``s naming the file (``_parse``).  Network access is watched by a local HTTP server that counts
the requests it gets."""

from __future__ import annotations

import http.server
import resource
import threading
import time
import warnings

import pytest

import denoc_pin as dp
from denoc_pin.loaders import urdf_xml

SECRET = "TOPSECRET-8d1f0c"
INERTIA = '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
SDF_INERTIA = "<inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia>"
# A two-link robot in each format; {doctype} before the root, {name} its name, {parent} the joint's parent link (SDF
# names it in element text, where an entity is read as text), {extra} inside the moving link, {top} in the root.
TEMPLATES = {
    "urdf": '<?xml version="1.0"?>\n{doctype}\n<robot name="{name}">{top}<link name="base"/><link name="arm">'
            '<inertial><mass value="1"/>' + INERTIA + '</inertial>{extra}</link><joint name="j" type="revolute">'
            '<parent link="{parent}"/><child link="arm"/><axis xyz="0 0 1"/><limit effort="1" velocity="1" '
            'lower="-1" upper="1"/></joint></robot>\n',
    "sdf": '<?xml version="1.0"?>\n{doctype}\n<sdf version="1.9"><model name="{name}">{top}<link name="base">'
           "<inertial><mass>1</mass>" + SDF_INERTIA + '</inertial></link><link name="arm"><inertial><mass>1</mass>'
           + SDF_INERTIA + '</inertial>{extra}</link><joint name="j" type="revolute"><parent>{parent}</parent>'
           "<child>arm</child><axis><xyz>0 0 1</xyz></axis></joint></model></sdf>\n",
    "xml": '<?xml version="1.0"?>\n{doctype}\n<mujoco model="{name}">{top}<worldbody><body name="{parent}">'
           '<joint name="j" type="hinge" axis="0 0 1"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{extra}'
           '</body></worldbody></mujoco>\n',
}  # fmt: skip
FORMATS = list(TEMPLATES)


def robot(tmp_path, fmt: str, doctype: str = "", name: str = "r", parent: str = "base", extra: str = "",
          top: str = "", stem: str = "robot"):  # fmt: skip
    path = tmp_path / f"{stem}.{fmt}"
    parent = parent if fmt != "xml" or parent != "base" else "arm"
    path.write_text(TEMPLATES[fmt].format(doctype=doctype, name=name, parent=parent, extra=extra, top=top))
    return path


def test_the_templates_load(tmp_path):
    """The hostile files below differ from these by their attack only."""
    for fmt in FORMATS:
        assert dp.load(robot(tmp_path, fmt)).nv == 1


@pytest.fixture(scope="module")
def http_server():
    """A local HTTP server that counts the requests it gets: (its URL, the list of paths requested)."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(SECRET.encode())

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()


@pytest.fixture
def server(http_server):
    """The server, its count of requests at zero."""
    http_server[1].clear()
    return http_server


@pytest.fixture
def unguarded(monkeypatch):
    """The XML guards removed: no DOCTYPE check, lxml resolving entities, loading DTDs and reaching the network,
    no check of network URIs."""
    monkeypatch.setattr(urdf_xml, "_doctype_problem", lambda data: None)
    monkeypatch.setattr(urdf_xml, "_remote_uri", lambda path, root: None)
    for key, value in {"resolve_entities": True, "load_dtd": True, "no_network": False}.items():
        monkeypatch.setitem(urdf_xml.PARSER_OPTIONS, key, value)


def refused(path, *patterns: str) -> str:
    """The ModelError message of loading ``path``, checked to name the file, to say each of ``patterns`` and to hold
    no byte of the secret."""
    with pytest.raises(dp.ModelError) as e:
        dp.load(path)
    message = str(e.value)
    assert str(path) in message or path.name in message, message
    for pattern in patterns:
        assert pattern in message, message
    assert SECRET not in message
    return message


def external_entity(tmp_path, fmt: str, url: str | None = None):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    doctype = f'<!DOCTYPE root [<!ENTITY x SYSTEM "{url or secret.as_uri()}">]>'
    # An attribute in each format (lxml refuses external entities there itself) and, in SDF, element text.
    return robot(tmp_path, fmt, doctype, name="&x;" if fmt != "sdf" else "r", parent="&x;" if fmt == "sdf" else "base")


def bomb(tmp_path, fmt: str):
    """A billion laughs: ten levels of ten references, 10^9 copies of "lol" once expanded (3 GB)."""
    levels = '<!ENTITY a0 "lol">' + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
    return robot(tmp_path, fmt, f"<!DOCTYPE root [{levels}]>", name="&a9;" if fmt != "sdf" else "r",
                 parent="&a9;" if fmt == "sdf" else "base")  # fmt: skip


def check_external_entity(tmp_path, fmt):
    refused(external_entity(tmp_path, fmt), "declares entities (x)")


def check_bomb(tmp_path, fmt):
    path = bomb(tmp_path, fmt)
    before, start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter()
    refused(path, "declares entities (a0, a1")
    assert time.perf_counter() - start < 2.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # kB: nothing was expanded


def check_external_dtd(tmp_path, fmt):
    (tmp_path / "evil.dtd").write_text(f'<!ENTITY x "{SECRET}">')
    refused(robot(tmp_path, fmt, f'<!DOCTYPE root SYSTEM "{(tmp_path / "evil.dtd").as_uri()}">'), "external DTD")


def check_network_entity(tmp_path, fmt, server):
    url, hits = server
    refused(external_entity(tmp_path, fmt, f"{url}/entity"), "declares entities (x)")
    assert hits == []


def network_uris(fmt: str, url: str) -> dict:
    """Files that name a file by a network URI: {what: (robot keywords, ...)}."""
    if fmt == "urdf":
        return {"mesh": {"extra": f'<visual><geometry><mesh filename="{url}/arm.stl"/></geometry></visual>'}}
    if fmt == "sdf":  # an SDF mesh on a server: below (test_an_sdf_mesh_on_a_server_is_never_fetched)
        return {"include": {"top": f"<include><uri>{url}/models/evil</uri></include>"}}
    return {"mesh": {"top": f'<asset><mesh name="m" file="{url}/arm.stl"/></asset>'},
            "include": {"top": f'<include file="{url}/evil.xml"/>'}}  # fmt: skip


def check_network_uris(tmp_path, fmt, server):
    url, hits = server
    for kw in network_uris(fmt, url).values():
        refused(robot(tmp_path, fmt, **kw), "is a http:// URI: network files are never fetched")
    assert hits == []


CHECKS = {"external entity": check_external_entity, "entity bomb": check_bomb, "external DTD": check_external_dtd,
          "entity from the network": check_network_entity, "network URI": check_network_uris}  # fmt: skip


def run(check, tmp_path, fmt, server):
    return check(tmp_path, fmt, server) if "server" in check.__code__.co_varnames else check(tmp_path, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("attack", CHECKS)
def test_hostile_files_are_refused(tmp_path, fmt, attack, server):
    run(CHECKS[attack], tmp_path, fmt, server)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("attack", CHECKS)
def test_without_the_guards_the_checks_fail(tmp_path, fmt, attack, server, unguarded):
    """The same checks, the guards removed: each fails (lxml's own limits then refuse the bomb and an external
    entity in an attribute, with their own messages; what nothing else stops is shown below)."""
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        run(CHECKS[attack], tmp_path, fmt, server)


def test_without_the_guards_a_local_file_is_read_into_the_model(tmp_path, unguarded):
    """What the entity guards prevent: an SDF joint whose parent is an external entity, read into the model's error
    message once lxml resolves entities."""
    with pytest.raises(dp.ModelError, match=SECRET):
        dp.load(external_entity(tmp_path, "sdf"))


def test_includes_of_a_folder_or_a_binary_file(tmp_path):
    """An include (SDF's <uri>, MJCF's file) of a folder or of a binary file, and a robot file that is either: a
    ModelError naming it."""
    folder, blob = tmp_path / "folder", tmp_path / "blob.bin"
    folder.mkdir()
    blob.write_bytes(bytes(range(256)) * 64)
    includes = {"sdf": "<include><uri>{}</uri></include>", "xml": '<include file="{}"/>'}
    for fmt, include in includes.items():
        refused(robot(tmp_path, fmt, top=include.format(folder)), str(folder))
        refused(robot(tmp_path, fmt, top=include.format(blob)), f"{blob}", "malformed XML")
    for fmt in FORMATS:
        target = tmp_path / f"blob.{fmt}"
        target.write_bytes(blob.read_bytes())
        refused(target, "malformed XML")
        (tmp_path / f"folder.{fmt}").mkdir()
        refused(tmp_path / f"folder.{fmt}", "it is a directory")


def test_without_the_parse_guard_a_binary_file_escapes_as_lxml_error(tmp_path, monkeypatch):
    """What the refusal of a binary file depends on: ``_parse`` turning lxml's errors into ModelErrors."""
    from lxml import etree

    monkeypatch.setattr(urdf_xml, "_parse", lambda path, data, lenient: etree.fromstring(data))
    blob = tmp_path / "blob.urdf"
    blob.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(etree.XMLSyntaxError):
        dp.load(blob)


def test_an_sdf_mesh_on_a_server_is_never_fetched(tmp_path, server):
    """gz-sim's own worlds name Fuel meshes (scenery, visuals): an SDF mesh's network URI is looked up in local
    folders only, a mesh not found, and the file loads; the server gets no request."""
    url, hits = server
    extra = (f"<visual name='v'><geometry><mesh><uri>{url}/arm.stl</uri></mesh></geometry></visual>"
             f"<collision name='c'><geometry><mesh><uri>{url}/arm.stl</uri></mesh></geometry></collision>")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp.ModelWarning)
        assert dp.load(robot(tmp_path, "sdf", extra=extra)).nv == 1
    assert hits == []
