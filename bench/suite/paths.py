"""Where things are: the repository, the peer venv, the shared data sets and the scorer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
README = BENCH / "README.md"
LATEST = RESULTS / "latest.json"

OUR_PYTHON = Path(sys.executable)
PEER_VENV = BENCH / ".peer-venv"
PEER_PYTHON = PEER_VENV / "bin" / "python"

SHARED_BENCH = Path(os.environ.get("BENCH_SHARED_DIR", REPO.parent / "shared" / "bench"))
SCORER = SHARED_BENCH / "score_extraction.py"
DATASETS = {
    "zyte": SHARED_BENCH / "extraction" / "zyte",
    "wcxb-dev": SHARED_BENCH / "extraction" / "wcxb-dev",
}


def ensure_repo_on_path() -> None:
    """tests/support (the loopback Origin, the HTTP server helpers) is imported from the repo root."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
