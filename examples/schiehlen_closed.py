"""The seed paper's example `schiehlen_closed` (denoc_pin/demo.py): writes its figure, prints its numbers."""

import json
import sys
from pathlib import Path

from denoc_pin.tools import demo

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    print(json.dumps(demo.schiehlen_closed(out), indent=2))
