"""The documentation's deterministic numbers are what ``scripts/refresh_docs.py`` writes from the commands they name."""

from __future__ import annotations

import runpy

import pytest
from conftest import ROOT

refresh_docs = runpy.run_path(str(ROOT / "scripts" / "refresh_docs.py"), run_name="refresh_docs")


@pytest.mark.parametrize("name", sorted(refresh_docs["REGIONS"]))
def test_each_generated_region_is_the_scripts_output(name):
    page, generate = refresh_docs["REGIONS"][name]
    on_page = refresh_docs["regions"]((ROOT / page).read_text())[name]
    fresh = generate()
    stale = f"{page}: {name} is stale: python scripts/refresh_docs.py"
    assert refresh_docs["same_figures"](on_page, fresh), f"{stale}\non the page:\n{on_page}\nnow:\n{fresh}"


def test_figures_agree_within_their_stated_factor_and_nothing_else_moves():
    """The CPU's rounding moves an error at the float64 floor (1.1e-15 on one x86-64 machine, 9.1e-16 on another):
    errors agree within a factor of 10, percentages within 5 points; a label, a count or a wrong decade does not."""
    same = refresh_docs["same_figures"]
    assert same("| panda | 7 | 1.1e-15 |", "| panda | 7 | 9.1e-16 |")
    assert same("45% off, 2.0e-10", "47% off, 3.1e-10")
    assert not same("| panda | 7 | 1.1e-15 |", "| panda | 8 | 1.1e-15 |")  # a size
    assert not same("| panda | 1.1e-15 |", "| ur5 | 1.1e-15 |")  # a label
    assert not same("| panda | 1.1e-15 |", "| panda | 2.0e-14 |")  # beyond the factor
    assert not same("45% off", "60% off")
    assert not same("| panda | 1.1e-15 |", "| panda | 1.1e-15 | 1.0e-16 |")  # a figure more


def test_a_stale_number_is_found():
    new = {"x": "| a | 2.0e-16 |", "y": "3e-15"}.get
    text = (
        "<!-- refresh_docs: x -->\n| a | 1.0e-16 |\n<!-- /refresh_docs -->, "
        "<!-- refresh_docs: y -->2e-15<!-- /refresh_docs -->."
    )
    fresh = refresh_docs["refresh"](text, new)
    assert fresh == text.replace("1.0e-16", "2.0e-16").replace("2e-15", "3e-15")
    assert refresh_docs["regions"](fresh) != refresh_docs["regions"](text)  # what --check reports as stale
    assert refresh_docs["refresh"](fresh, new) == fresh
