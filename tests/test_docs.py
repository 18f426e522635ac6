"""Every code block of README.md and docs/*.md runs as written, with Sybil.

Sybil (a maintained library for testing the examples in documentation) parses each page's fenced blocks and HTML
comments, evaluates them in order in one namespace per page (a later block builds on an earlier one, as a reader's
session does), and keeps a block's line numbers in its tracebacks.  It also gives the page setups, written in the
page: ``<!-- invisible-code-block: python -->`` (hidden on GitHub, seen in the source) and the reasoned skips
``<!-- skip: next "why" -->``.  pytest-markdown-docs runs each block alone, and pytest-codeblocks has no page setups.

Fences are tagged: ``python`` blocks run, ``sh`` blocks run each ``denoc-pin`` line through the command line (in the
same process: kernels compile once) and require exit code 0; ``text`` and ``xml`` are shown, not run (diagrams,
formulas, synopses, file fragments).  An untagged fence fails the test.  A block that takes long is preceded by
``<!-- small: A => B; C => D -->``: its text with A replaced by B, … is what runs.  Each page runs in its own temporary
folder, so the files it writes land there.
"""

from __future__ import annotations

import importlib
import re
import runpy
import shlex
import unittest
from pathlib import Path

import psutil
import pytest
from conftest import ROOT
from sybil import Lexeme, Region, Sybil
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.markdown import CodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer

from denoc_pin.tools import cli

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "sh")
SHOWN = ("text", "xml")
SMALL = "_docs_small"  # the namespace entry holding the next block's replacements
PYTHON = PythonEvaluator()


def _small(example) -> None:
    pairs = [p.split("=>") for p in example.parsed.split(";") if p.strip()]
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"line {example.line}: write <!-- small: A => B; C => D -->, not {example.parsed!r}")
    example.namespace[SMALL] = [(a.strip(), b.strip()) for a, b in pairs]


def _source(example) -> str:
    """The block's text with the preceding ``small`` replacements applied (each must occur)."""
    text = str(example.parsed)
    for old, new in example.namespace.pop(SMALL, []):
        if old not in text:
            raise ValueError(f"line {example.line}: '<!-- small: {old} => …' names text the block does not hold")
        text = text.replace(old, new)
    return text


def _run_python(example) -> None:
    """Sybil's own Python evaluator, on the block's text after its ``small`` replacements."""
    __tracebackhide__ = True
    example.parsed = Lexeme(_source(example), example.parsed.offset, example.parsed.line_offset)
    PYTHON(example)


def _run_sh(example) -> None:
    __tracebackhide__ = True
    for i, line in enumerate(_source(example).splitlines(), example.line + 1):
        args = shlex.split(line, comments=True)
        if not args:
            continue
        if args[0] != "denoc-pin":
            raise AssertionError(f"{example.path}:{i}: an sh block runs denoc-pin lines only, not {line!r}")
        try:
            code = cli.main(args[1:])
        except SystemExit as e:  # --version, --help: argparse exits
            code = e.code
        assert code == 0, f"{example.path}:{i}: `{' '.join(args)}` exited with {code}"


def _small_parser(document):
    for lexed in DirectiveInHTMLCommentLexer(directive="small", arguments=".+?")(document):
        yield Region(lexed.start, lexed.end, lexed.lexemes["arguments"], _small)


SYBIL = Sybil(parsers=[CodeBlockParser("python", _run_python), CodeBlockParser("sh", _run_sh), SkipParser(),
                       _small_parser])  # fmt: skip


def run_page(path: Path) -> list[str]:
    """Evaluate every block of the page in order; the reasons of the blocks skipped."""
    document = SYBIL.parse(path)
    document.namespace["__name__"] = "__main__"  # a block guarded for Dask's worker processes runs, as in a script
    skipped = []
    for example in document.examples():
        try:
            example.evaluate()
        except unittest.SkipTest as e:
            skipped.append(f"line {example.line}: {e}")
    return skipped


FENCE = re.compile(r"^(```+|~~~+)(.*)$")


def fences(text: str) -> list[tuple[int, str]]:
    """(line, info string) of each block's opening fence."""
    found, closing = [], None
    for i, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line.strip())
        if not m:
            continue
        if closing is None:
            found.append((i, m.group(2).strip()))
            closing = m.group(1)
        elif m.group(1).startswith(closing) and not m.group(2).strip():
            closing = None
    return found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_is_tagged(path):
    bad = [(i, info) for i, info in fences(path.read_text()) if info not in RUN + SHOWN]
    assert bad == [], f"{path.name}: fences tagged none of {RUN + SHOWN}"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_runs(path, tmp_path, monkeypatch):
    """Each page's blocks run, in order, as a reader copies them — and leave no live MeshCat server behind (a
    page that starts one shows how to stop it)."""
    monkeypatch.chdir(tmp_path)
    before = meshcat_servers()
    skipped = run_page(path)
    for reason in skipped:  # a skip says, in the page, what the suite cannot have
        assert re.search(r"needs|takes", reason), f"{path.name}, {reason}: say what the block needs"
    assert meshcat_servers() <= before, f"{path.name}: a block left a live MeshCat server running"


def meshcat_servers() -> int:
    """The meshcat servers this process started (``dp.Viewer(live=True)``) that still run."""
    return sum("meshcat_server" in " ".join(p.cmdline()) for p in psutil.Process().children(recursive=True))


def test_a_broken_block_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n```python\nx = 1\n```\n\n```python\nassert x == 2, 'x is 1'\n```\n")
    with pytest.raises(AssertionError, match="x is 1"):
        run_page(page)
    page.write_text("```sh\ndenoc-pin info no_such_robot\n```\n")
    with pytest.raises(AssertionError, match=r"page.md:2: `denoc-pin info no_such_robot` exited with 2"):
        run_page(page)
    page.write_text("<!-- small: 5000 => 2 -->\n```python\nn = 1000\n```\n")
    with pytest.raises(ValueError, match="names text the block does not hold"):
        run_page(page)
    page.write_text("<!-- small: 1000 => 2 -->\n```python\nn = 1000\n```\n\n```python\nassert n == 2\n```\n")
    assert run_page(page) == []
    assert fences("```\nplain\n```\n\n```python\nx\n```\n") == [(1, ""), (5, "python")]


DOTTED = re.compile(r"`(denoc_pin(?:\.\w+)+)")
FILE = re.compile(r"`((?:denoc_pin|examples|tests|benchmarks|scripts|docs)/[\w/.-]+\.(?:py|md|urdf|png))")


def resolves(dotted: str) -> bool:
    """``denoc_pin.a.b.c``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("path", [*PAGES, *sorted((ROOT / "examples").glob("*.py"))], ids=lambda p: p.name)
def test_the_names_and_files_a_page_cites_exist(path):
    text = path.read_text()
    assert [n for n in DOTTED.findall(text) if not resolves(n)] == []
    assert [f for f in FILE.findall(text) if not (ROOT / f).exists()] == []


def test_the_name_checker_sees_a_missing_name():
    assert resolves("denoc_pin.loaders.edits.transfer_state") and resolves("denoc_pin.tools.demo")
    assert not resolves("denoc_pin.edits.transfer_state") and not resolves("denoc_pin.tools.validate.nothing")


IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+\.png)\)")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_names_the_command_that_writes_it(path):
    """Each image of a page is one scripts/figures.py writes, and the page names that command within five lines."""
    makers = runpy.run_path(str(ROOT / "scripts" / "figures.py"), run_name="figures")["MAKERS"]
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        for image in IMAGE.findall(line):
            stem = Path(image).stem
            assert stem in makers, f"{path.name}:{i + 1}: {image} is written by no maker of scripts/figures.py"
            near = "\n".join(lines[i : i + 6])
            assert "scripts/figures.py" in near and stem in near, f"{path.name}:{i + 1}: name the command for {image}"


TIMING = re.compile(r"\d\s?(?:µs|ns)\b|\d\s?M? ?samples/s|speed-up\W+\d|\d(?:\.\d+)?\s?ms (?:a|per) (?:run|call|step)")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_timings_live_in_performance_md_alone(path):
    """Measured timings depend on the machine and the run: docs/performance.md holds them, with the commit and the
    machine, and every other page links there (README's speed table is its copy, by scripts/refresh_docs.py)."""
    if path.name == "performance.md":
        return
    text = "\n".join(line for line in path.read_text().splitlines() if "refresh_docs" not in line)
    assert TIMING.findall(text) == []


def test_the_timing_checker_sees_a_timing():
    assert TIMING.findall("takes about 64 µs against 25 µs") and TIMING.findall("speed-up **1.77–1.97**")
    assert TIMING.findall("(46–50 ms a run)") and not TIMING.findall("RK4 at dt = 1 ms, 1,000 steps")
