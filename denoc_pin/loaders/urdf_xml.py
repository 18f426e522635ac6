"""Reading a URDF file's XML under the input policy (``docs/input-policy.md``), before yourdfpy parses it.

Every defect gets a verdict here, so that a bad file gives a :class:`ModelError` naming the file, the line,
the element and the attribute, never a traceback from inside lxml or yourdfpy, and never a silent default:

- what touches the dynamics (an inertial, a joint's origin or axis, a loop joint) must be complete and
  finite, within ``MAX_MAGNITUDE``: else ``ModelError``.  Defaults only where the URDF specification
  defines one, as urdfdom does: a missing ``<origin>`` or attribute of it is zero, a missing ``<axis>``
  is (1, 0, 0);
- what does not (the XML declaration, whitespace before it, bytes that are not UTF-8, a ``<visual>``, ``<collision>``,
  ``<material>``, ``<limit>``, ``<dynamics>``, ``<mimic>``, ``<safety_controller>``, ``<calibration>``
  element): a :class:`ModelWarning` naming it, the element dropped (a joint without ``<limit>`` is unbounded);
  ``strict=True`` refuses it instead.

Robot files come from the internet, so every XML file the three readers open (URDF, SDF, MJCF, their includes and
SDF's model.config) is read here under the same guards: a document type that declares entities or names an external
DTD is refused before lxml sees it (``_doctype_problem``: an external entity would read a local file into the model,
an entity-expansion bomb would take the memory), lxml itself resolves no entity, loads no DTD and reaches no
network (``PARSER_OPTIONS``), and a URI with a network scheme in an include or a mesh is refused, never fetched
(``_remote_uri``).
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

from ..model import MAX_MAGNITUDE, ModelError, ModelWarning

__all__ = ["LOCAL_SCHEMES", "PARSER_OPTIONS", "UrdfXml", "parse_xml", "quoted", "read_urdf_xml", "remote_uri",
           "robot_file"]  # fmt: skip

PARSER_OPTIONS = {"remove_comments": True, "huge_tree": True, "resolve_entities": False, "load_dtd": False,
                  "no_network": True}  # fmt: skip
"""lxml's parser for robot files: no entity resolved, no DTD loaded, no network (``docs/input-policy.md``);
huge_tree because a CAD export's mesh-free URDF can still hold text nodes over libxml2's 10 MB default."""
LOCAL_SCHEMES = ("package", "model", "file")
"""The URI schemes a robot file may name a file by: resolved in local folders, never fetched."""

URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

# Numbers of the elements that touch the dynamics: tag -> {attribute: how many numbers}.
DYNAMICS_NUMBERS = {
    "origin": {"xyz": 3, "rpy": 3},
    "axis": {"xyz": 3},
    "mass": {"value": 1},
    "inertia": {a: 1 for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    "link1": {"xyz": 3, "rpy": 3},
    "link2": {"xyz": 3, "rpy": 3},
    "axis2": {"xyz": 3},
}
# Attributes that must be present: the specification gives them no default (urdfdom refuses the file too).
REQUIRED = {"mass": ("value",), "inertia": DYNAMICS_NUMBERS["inertia"], "axis": ("xyz",), "axis2": ("xyz",)}
# The attributes of the elements that carry the dynamics: anything else is ignored (as by urdfdom), with a
# warning, since it may be a misspelt one (a silent default otherwise).
KNOWN_ATTRIBUTES = {
    "origin": ("xyz", "rpy"),
    "axis": ("xyz",),
    "mass": ("value",),
    "inertia": tuple(DYNAMICS_NUMBERS["inertia"]),
    "parent": ("link",),
    "child": ("link",),
}
# Elements that do not touch the dynamics, with their numbers: a defect drops the element, with a warning.
LENIENT_NUMBERS = {
    "limit": {"lower": 1, "upper": 1, "effort": 1, "velocity": 1},
    "dynamics": {"damping": 1, "friction": 1},
    "mimic": {"multiplier": 1, "offset": 1},
    "safety_controller": {"soft_lower_limit": 1, "soft_upper_limit": 1, "k_position": 1, "k_velocity": 1},
    "calibration": {"rising": 1, "falling": 1},
}
# The shapes of a <geometry>, with their attributes (required ones first) and numbers.
SHAPES = {
    "box": {"size": 3},
    "cylinder": {"radius": 1, "length": 1},
    "sphere": {"radius": 1},
    "capsule": {"radius": 1, "length": 1},
    "mesh": {"filename": 0, "scale": 3},
}
SHAPE_OPTIONAL = {"mesh": ("scale",)}


class UrdfXml:
    """The checked XML of a URDF: ``robot`` (the lxml ``<robot>`` element, defective optional elements
    removed), ``text`` (it, as a document for yourdfpy or Pinocchio), ``lines`` ((tag, name) -> line of each
    ``<link>``/``<joint>``) and ``dropped`` (what was removed or repaired, one message each)."""

    def __init__(self, robot, lines: dict, dropped: list[str]):
        self.robot = robot
        self.lines = lines
        self.dropped = dropped

    @property
    def text(self) -> bytes:
        """``robot`` as it is now, as a UTF-8 document."""
        from lxml import etree

        return etree.tostring(self.robot, xml_declaration=True, encoding="UTF-8")

    def where(self, tag: str, name: str) -> str:
        """'joint "j" (line 12)'."""
        line = self.lines.get((tag, name))
        return f"{tag} {name!r}" + (f" (line {line})" if line else "")


def quoted(items, limit: int = 25) -> str:
    """'a', 'b', … (n in all): names for a message, at most ``limit`` of them."""
    items = list(items)
    shown = ", ".join(repr(x) for x in items[:limit])
    return shown + (f", … ({len(items)} in all)" if len(items) > limit else "")


def _where(el) -> str:
    """'<origin> of joint "j1" (line 12)' for an element inside a link or joint."""
    owner = el.getparent()
    while owner is not None and owner.tag not in ("link", "joint", "loop_joint", "robot"):
        owner = owner.getparent()
    what = f"<{el.tag}>"
    if owner is not None and owner.tag != "robot":
        what += f" of {owner.tag} {owner.get('name')!r}"
    return f"{what} (line {el.sourceline})"


def _number_problem(el, attr: str, count: int, magnitude: bool) -> str | None:
    """What is wrong with the numbers of ``attr`` (None: nothing, or absent)."""
    raw = el.get(attr)
    if raw is None or count == 0:
        return None
    try:
        values = [float(x) for x in raw.split()]
    except ValueError:
        values = None
    if values is None or len(values) != count or not all(math.isfinite(x) for x in values):
        return f"attribute {attr}={raw!r} is not {count} finite number{'s' * (count > 1)}"
    if magnitude and any(abs(x) > MAX_MAGNITUDE for x in values):
        return f"attribute {attr}={raw!r} has a magnitude beyond {MAX_MAGNITUDE:g}"
    return None


def _geometry_problem(el) -> str | None:
    """What keeps a <visual> or <collision> from being drawn (None: nothing)."""
    origin = el.find("origin")
    if origin is not None:
        for attr, count in DYNAMICS_NUMBERS["origin"].items():
            problem = _number_problem(origin, attr, count, True)
            if problem:
                return f"<origin> (line {origin.sourceline}): {problem}"
    geometry = el.findall("geometry")
    if len(geometry) != 1:
        return f"has {len(geometry)} <geometry> elements; it needs one"
    shapes = [s for s in geometry[0] if isinstance(s.tag, str)]
    if len(shapes) != 1 or shapes[0].tag not in SHAPES:
        found = ", ".join(f"<{s.tag}>" for s in shapes) or "nothing"
        return f"<geometry> (line {geometry[0].sourceline}) holds {found}; it needs one of: " + ", ".join(SHAPES)
    shape = shapes[0]
    for attr, count in SHAPES[shape.tag].items():
        if shape.get(attr) is None and attr not in SHAPE_OPTIONAL.get(shape.tag, ()):
            return f"<{shape.tag}> (line {shape.sourceline}) has no {attr} attribute"
        problem = _number_problem(shape, attr, count, True)
        if problem:
            return f"<{shape.tag}> (line {shape.sourceline}): {problem}"
    return None


def _material_problem(el) -> str | None:
    for color in el.findall("color"):
        problem = _number_problem(color, "rgba", 4, False)
        if problem:
            return f"<color> (line {color.sourceline}): {problem}"
    return None


def _declaration(data: bytes, defects: list[str]) -> bytes:
    """The XML declaration put right: at the very start (lines kept) and with version 1.0."""
    m = re.match(rb"(\xef\xbb\xbf)?(\s*)(<\?xml\b[^>]*\?>)", data)
    if m is None:
        return data
    bom, space, decl = m.group(1) or b"", m.group(2), m.group(3)
    version = re.search(rb"""version\s*=\s*["']([^"']*)["']""", decl)
    if version is not None and version.group(1) not in (b"1.0", b"1.1"):
        defects.append(f"the XML declaration's version is {version.group(1).decode(errors='replace')!r}, not '1.0'")
        decl = decl[: version.start(1)] + b"1.0" + decl[version.end(1) :]
    if space:
        defects.append(f"{len(space)} whitespace character(s) before the XML declaration")
        # The declaration first, then the same line breaks: every element keeps its line number.
        return bom + decl.replace(b"\n", b" ") + space + b"\n" * decl.count(b"\n") + data[m.end() :]
    return bom + decl + data[m.end() :]


def _parse(path: Path, data: bytes, lenient: list[str]):
    """lxml's tree of ``data``.  Bytes that are not UTF-8 (a Latin-1 "é" in a comment, as CAD exports write,
    and Pinocchio's parser reads) are replaced by U+FFFD, with a warning: in a number they still fail its
    check, in a name they still fail to match, so the dynamics cannot change unnoticed."""
    from lxml import etree

    problem = _doctype_problem(data)
    if problem:
        raise ModelError(f"{path}: {problem}: robot files are read without a DTD's entities (docs/input-policy.md)")
    parser = etree.XMLParser(**PARSER_OPTIONS)
    try:
        return _tolerant(etree, data, parser, lenient)
    except etree.XMLSyntaxError as e:
        declared = re.match(rb"""(\xef\xbb\xbf)?<\?xml\b[^>]*encoding\s*=\s*["']([^"']*)""", data)
        utf8 = declared is None or declared.group(2).lower() in (b"utf-8", b"utf8")
        if not (utf8 and "Invalid bytes in character encoding" in e.msg):
            raise ModelError(f"{path}: line {e.lineno}: malformed XML: {e.msg}") from None
        first = e.lineno
    except Exception as e:  # lxml's other failures (an unknown encoding, …) still name the file
        raise ModelError(f"{path}: not readable as XML: {type(e).__name__}: {e}") from None
    text = data.decode("utf-8", errors="replace")
    n = text.count("\ufffd") - data.count("\ufffd".encode())
    lenient.append(f"line {first}: {n} byte sequence(s) that are not UTF-8, replaced by U+FFFD")
    try:
        return _tolerant(etree, text.encode(), parser, lenient)
    except etree.XMLSyntaxError as e:
        raise ModelError(f"{path}: line {e.lineno}: malformed XML: {e.msg}") from None


TOLERATED_XML = {"NS_ERR_UNDEFINED_NAMESPACE": "a namespace prefix that is not declared (gz-sim's gz:)",
                 "ERR_HYPHEN_IN_COMMENT": "a comment holding --"}  # fmt: skip
"""XML defects that TinyXML (libsdformat's and urdfdom's parser) reads past, which change no element or number."""


def _tolerant(etree, data: bytes, parser, lenient: list[str]):
    """``data`` parsed strictly; failing that, read past the ``TOLERATED_XML`` defects only (lxml's recovery, each
    defect noted in ``lenient``); any other defect raises the strict parse's error."""
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        recovering = etree.XMLParser(**PARSER_OPTIONS, recover=True)
        try:
            root = etree.fromstring(data, recovering)
        except etree.XMLSyntaxError:
            root = None
        errors = list(recovering.error_log)
        if root is None or not errors or any(err.type_name not in TOLERATED_XML for err in errors):
            raise
        kinds = sorted({TOLERATED_XML[err.type_name] for err in errors})
        lenient.append(f"line {errors[0].line}: {' and '.join(kinds)}: read past, as TinyXML does")
        return root


def _doctype_end(text: str) -> int | None:
    """Where the keyword of a document type declaration in the prolog of ``text`` ends (after the XML declaration,
    white space, comments and processing instructions), or None: a linear scan, as a regular expression over
    comments would backtrack on a file of many."""
    i = 1 if text.startswith("\ufeff") else 0
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("<!--", i) or text.startswith("<?", i):
            end = text.find("-->" if text[i + 1] == "!" else "?>", i + 2)
            if end < 0:
                return None
            i = end + (3 if text[i + 1] == "!" else 2)
        else:
            return i + len("<!DOCTYPE") if text.startswith("<!DOCTYPE", i) else None
    return None


def _doctype_problem(data: bytes) -> str | None:
    """What a document type declaration in ``data``'s prolog asks for that is refused: entity declarations (an
    external one reads a file or a URL into the model, nested internal ones are an expansion bomb) or an external
    DTD (a file or URL to load); None when there is no document type declaration or only a bare one."""
    head = data[:4]
    encoding = "utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in head else "utf-8"
    if encoding == "utf-8" and b"<!DOCTYPE" not in data:  # nearly every robot file: not decoded a second time
        return None
    text = data.decode(encoding, errors="replace")
    end = _doctype_end(text)
    if end is None:
        return None
    rest = text[end:]
    # Anywhere after the keyword: an entity value may hold "]>", which would end a search for the internal subset.
    names = re.findall(r"<!ENTITY\s+(?:%\s+)?([^\s>]+)", rest)
    line = text[:end].count("\n") + 1
    if names:
        return f"line {line}: the document type declares entities ({', '.join(names[:5])})"
    if re.match(r"[^\[>]*\b(SYSTEM|PUBLIC)\b", rest[:1000]):
        return f"line {line}: the document type names an external DTD"
    return None


def remote_uri(value: str) -> str | None:
    """The scheme of a URI that names a file elsewhere than this machine (``http``, ``https``, ``ftp``, …); None for
    a path or a ``package://``, ``model://`` or ``file://`` URI (``LOCAL_SCHEMES``)."""
    m = re.match(r"\s*([A-Za-z][A-Za-z0-9+.-]*)://", value)
    return m.group(1) if m and m.group(1).lower() not in LOCAL_SCHEMES else None


URI_ATTRIBUTES = ("filename", "file")
"""The attributes that name a file: URDF's ``<mesh filename>``, MJCF's ``<include file>``, ``<mesh file>``,
``<texture file>``, …; SDF names its files in ``<uri>`` elements (an include's is checked here)."""


def _remote_uri(path: Path, root) -> None:
    """A ModelError for the first file named by a network URI (never fetched: denoc_pin reads local files only)."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        values = [(f"{a}=", el.get(a)) for a in URI_ATTRIBUTES if el.get(a)]
        parent = el.getparent()
        if el.tag == "uri" and el.text and parent is not None and parent.tag == "include":
            # An SDF include; an SDF mesh's <uri> on Fuel (gz-sim's own worlds name them for scenery) is looked up
            # in local folders only, never fetched: a mesh not found (robots.mesh_file).
            values.append(("", el.text.strip()))
        for what, value in values:
            scheme = remote_uri(value)
            if scheme:
                raise ModelError(f"{path}: <{el.tag}> (line {el.sourceline}): {what}{value!r} is a {scheme}:// URI: "
                                 "network files are never fetched; download it and name the local file")  # fmt: skip


def robot_file(path, root_joint, root_joints) -> Path:
    """A loader's ``path`` as a Path, refused (:class:`ModelError`) when there is no such file, after ``root_joint``
    is checked against the loader's ``root_joints`` (ValueError)."""
    if root_joint not in root_joints:
        raise ValueError(f"root_joint must be one of {list(root_joints)}, got {root_joint!r}")
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such file" + (" (it is a directory)" if path.is_dir() else ""))
    return path


def parse_xml(path: Path, root_tag: str | tuple[str, ...], lenient: list[str]):
    """lxml's tree of a file, the XML declaration put right and bytes that are not UTF-8 replaced, each defect
    added to ``lenient``; an unreadable file, malformed XML or another root element than ``<root_tag>`` (or one of
    several) is a :class:`ModelError` naming the file (and the line)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"{path}: cannot read the file: {e.strerror or e}") from None
    root = _parse(path, _declaration(data, lenient), lenient)
    tags = (root_tag,) if isinstance(root_tag, str) else root_tag
    if root.tag not in tags:
        raise ModelError(f"{path}: no <{'> or <'.join(tags)}> element: the root element is <{root.tag}>")
    _remote_uri(path, root)
    return root


def _same_numbers(a, b) -> bool:
    """Two elements with the same attributes, numbers compared as numbers ("0 1 0" = "0.0 1.0 0")."""
    if set(a.attrib) != set(b.attrib):
        return False
    for key, x in a.attrib.items():
        try:
            if [float(t) for t in x.split()] != [float(t) for t in b.attrib[key].split()]:
                return False
        except ValueError:
            if x.split() != b.attrib[key].split():
                return False
    return True


def read_urdf_xml(path: Path, strict: bool = False) -> UrdfXml:
    """Parse ``path`` with lxml and apply the input policy (module docstring); warn about, or under ``strict``
    refuse, the defects that do not touch the dynamics."""
    lenient: list[str] = []
    robot = parse_xml(path, "robot", lenient)

    def refuse(el, problem: str):
        raise ModelError(f"{path}: {_where(el)}: {problem}")

    # The elements in their URDF places only: an extension (<gazebo>, <transmission>) may hold a <mass> or an
    # <origin> of its own, which is not ours to judge.
    places = {
        "joint": ("origin", "axis", "parent", "child"),
        "link/inertial": ("origin", "mass", "inertia"),
        "loop_joint": ("link1", "link2", "axis", "axis2"),
    }
    drop, repaired = [], set()  # repaired: <limit>s whose velocity or effort was dropped (named once)
    for owner_path, tags in places.items():
        for owner in robot.findall(owner_path):
            for el in owner:
                if not isinstance(el.tag, str):
                    continue
                if el.tag == "limit" and owner.tag == "joint":  # a bad velocity or effort: that number alone dropped
                    for a in ("velocity", "effort"):
                        problem = _number_problem(el, a, 1, False)
                        if problem:
                            lenient.append(f"{_where(el)}: {problem}; {a} taken as inf, the position limits kept")
                            del el.attrib[a]
                            repaired.add(el)
                if el.tag in LENIENT_NUMBERS and owner.tag == "joint":
                    problem = next(
                        (p for a, c in LENIENT_NUMBERS[el.tag].items() if (p := _number_problem(el, a, c, False))), None
                    )
                    if problem:
                        drop.append((el, problem))
                    continue
                if el.tag not in tags:
                    if owner.tag == "inertial":
                        lenient.append(f"{_where(el)}: unknown element ignored; <inertial> takes "
                                       f"{', '.join(f'<{c}>' for c in tags)}")  # fmt: skip
                    continue
                unknown = sorted(set(el.attrib) - set(KNOWN_ATTRIBUTES.get(el.tag, el.attrib)))
                if unknown:
                    lenient.append(f"{_where(el)}: unknown attribute(s) {', '.join(unknown)} ignored; "
                                   f"<{el.tag}> takes {', '.join(KNOWN_ATTRIBUTES[el.tag])}")  # fmt: skip
                for attr in REQUIRED.get(el.tag, ()):
                    if el.get(attr) is None:
                        refuse(el, f"the required attribute {attr!r} is missing (the URDF specification gives it "
                                   "no default)")  # fmt: skip
                for attr, count in DYNAMICS_NUMBERS.get(el.tag, {}).items():
                    problem = _number_problem(el, attr, count, True)
                    if problem:
                        refuse(el, problem)
    if not robot.get("name"):
        lenient.append(f"<robot> (line {robot.sourceline}) has no name; it is named {path.stem!r} after the file")
        robot.set("name", path.stem)
    for tag in ("visual", "collision"):  # a link's drawings (a <gazebo> sensor may hold another <collision>)
        for el in robot.findall(f"link/{tag}"):
            problem = _geometry_problem(el)
            if problem is None and el.find("geometry/capsule") is not None:  # yourdfpy refuses the whole file
                problem = ("a <capsule> (pybullet's and Gazebo's extension of URDF's shapes) is not read: left out "
                           f"of the {'collisions' if tag == 'collision' else 'drawing'}")  # fmt: skip
            if problem:
                drop.append((el, problem))
    for el in robot.findall("material") + robot.findall("link/visual/material"):
        problem = _material_problem(el)
        if problem:
            drop.append((el, problem))
    lines: dict[tuple[str, str], int] = {}
    for tag in ("link", "joint"):
        for el in robot.findall(tag):
            name = el.get("name")
            if not name:
                raise ModelError(f"{path}: <{tag}> (line {el.sourceline}) has no name attribute")
            if (tag, name) in lines:
                raise ModelError(
                    f"{path}: two <{tag}> elements named {name!r} (lines {lines[tag, name]} and {el.sourceline})"
                )
            lines[tag, name] = el.sourceline
    worlds = [j for j in robot.findall("joint") for p in j.findall("parent") if p.get("link") == "world"]
    if worlds and ("link", "world") not in lines:  # Gazebo's and Drake's reading: the world itself
        from lxml import etree

        robot.insert(0, etree.Element("link", name="world"))
        lines["link", "world"] = worlds[0].sourceline
        lenient.append(f"joint {worlds[0].get('name')!r} (line {worlds[0].sourceline}) hangs from link 'world', "
                       "which the file does not declare; taken as the world (as Gazebo and Drake take it)")  # fmt: skip
    for el in robot.findall("joint"):
        name, jtype = el.get("name"), el.get("type")
        if jtype not in URDF_JOINT_TYPES:
            raise ModelError(
                f"{path}: joint {name!r} (line {el.sourceline}) has unknown type {jtype!r}; "
                f"URDF joint types are: {', '.join(URDF_JOINT_TYPES)}"
            )
        for sub in ("parent", "child"):
            found = el.findall(sub)
            if len(found) != 1 or not found[0].get("link"):
                what = f'no <{sub} link="…"/>' if not found or not found[0].get("link") else f"{len(found)} <{sub}>"
                raise ModelError(f"{path}: joint {name!r} (line {el.sourceline}) has {what}")
        for sub in ("origin", "axis"):
            found = el.findall(sub)
            if len(found) < 2:
                continue
            at = ", ".join(str(f.sourceline) for f in found)
            if not all(_same_numbers(f, found[0]) for f in found[1:]):
                raise ModelError(f"{path}: joint {name!r} (line {el.sourceline}) has {len(found)} <{sub}> that differ "
                                 f"(lines {at}): which one holds is not defined; keep one")  # fmt: skip
            lenient.append(f"joint {name!r} (line {el.sourceline}) has {len(found)} identical <{sub}> (lines {at}); "
                           "one is read")  # fmt: skip
            for extra in found[1:]:
                el.remove(extra)
        if jtype in ("revolute", "prismatic") and el.find("limit") is None:
            lenient.append(f"joint {name!r} (line {el.sourceline}) is {jtype} but has no <limit> (the specification "
                           "requires one); its position is unbounded, its velocity and effort inf")  # fmt: skip
        for limit in el.findall("limit"):
            try:
                if float(limit.get("lower", 0)) > float(limit.get("upper", 0)):
                    lenient.append(f"{_where(limit)}: lower {limit.get('lower', '0')} is above upper "
                                   f"{limit.get('upper', '0')}; kept as given, as Pinocchio does")  # fmt: skip
            except ValueError:
                pass  # not numbers: the element is dropped, with its own warning
            missing = [a for a in ("effort", "velocity") if limit.get(a) is None]
            if missing and limit not in repaired:
                lenient.append(f"{_where(limit)}: no {' or '.join(missing)} (the specification requires them); "
                               "taken as inf")  # fmt: skip
    for el in robot.findall("link"):
        inertials = el.findall("inertial")
        if len(inertials) > 1:
            raise ModelError(f"{path}: link {el.get('name')!r} (line {el.sourceline}) has more than one <inertial>")
        for inertial in inertials:
            for sub in ("mass", "inertia"):
                if len(inertial.findall(sub)) != 1:
                    count = "no" if inertial.find(sub) is None else "more than one"
                    raise ModelError(
                        f"{path}: <inertial> of link {el.get('name')!r} (line {inertial.sourceline}) "
                        f"has {count} <{sub}>"
                    )
    for el, problem in drop:
        lenient.append(f"{_where(el)}: {problem}; the element is ignored")
        el.getparent().remove(el)
    if lenient and strict:
        raise ModelError(f"{path}: {lenient[0]} (strict=True refuses what the default only warns about)")
    for message in lenient:
        warnings.warn(f"{path}: {message}", ModelWarning, stacklevel=3)
    return UrdfXml(robot, lines, lenient)
