"""Conversion workers start with what conversions read from files on first use (fetch/doc/warm.py):
the fork server reads it once, before it forks them."""

from __future__ import annotations

import json
import subprocess
import sys

from mcp_server_web.fetch import CONVERSION_JOB, CONVERSION_PRELOAD

SCRIPT = """
import json, sys, anyio
from mcp_server_web.fetch.workers import ConversionPool

async def main() -> None:
    pool = ConversionPool(1, memory_limit=2**30, preload=tuple(json.loads(sys.argv[1])))
    try:
        print(json.dumps(await pool.run("tests.support.worker_probes:loaded_at_start")))
    finally:
        pool.close()

anyio.run(main)
"""


def _loaded_in_a_worker(preload: tuple[str, ...]) -> dict[str, bool]:
    # A process of its own: the fork server is one per process, started with the first pool's preload.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(preload)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_workers_start_with_the_block_model_and_trafilatura_stoplists() -> None:
    assert _loaded_in_a_worker(CONVERSION_PRELOAD) == {"block_model": True, "stoplists": True}


def test_without_the_warm_module_a_worker_reads_them_itself() -> None:
    """The control: the conversion stack alone loads neither until a page needs it."""
    assert _loaded_in_a_worker((CONVERSION_JOB.partition(":")[0],)) == {
        "block_model": False,
        "stoplists": False,
    }
