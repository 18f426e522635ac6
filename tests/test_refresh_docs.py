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
    assert on_page.strip() == generate().strip(), f"{page}: {name} is stale: python scripts/refresh_docs.py"


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
