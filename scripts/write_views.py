"""Write denoc_pin/core/views.py from the layout tables of denoc_pin/core/tables.py (after changing a table).

    python scripts/write_views.py

The tables module is loaded by its path, without the package, so that a stale or broken views.py can be rewritten.
"""

import importlib.util
from pathlib import Path

TABLES = Path(__file__).resolve().parents[1] / "denoc_pin" / "core" / "tables.py"

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("denoc_pin_tables", TABLES)
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    print("denoc_pin/core/views.py " + ("written" if tables.write_views() else "is up to date"))
