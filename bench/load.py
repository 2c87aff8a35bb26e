"""The load test of the HTTP service in its full form: 50 clients, 20,000 calls by default.

Usage (from the repository root):

    .venv/bin/python bench/load.py                  # or: make load
    .venv/bin/python bench/load.py --clients 20 --calls 2000 --max-concurrency 12

The load itself is tests/support/load.py (the CI test tests/security/test_load.py runs a bounded
form of the same driver): the real server process over streamable HTTP on 127.0.0.1, a loopback
origin and the five provider fakes, concurrent SDK clients making cached and uncached fetches,
repeated and distinct searches, and calls cancelled mid-flight. It prints a table (calls/s,
outcomes, p50/p99/max latency, open descriptors and RSS at baseline, peak and after) and writes
the whole report to bench/results/load.json. The exit status is 1 when the run failed its checks
(any tool or protocol error, hang, wrong answer, leaked descriptor, RSS past its bound).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from suite import env  # noqa: E402
from suite.paths import RESULTS, ensure_repo_on_path  # noqa: E402

ensure_repo_on_path()
from tests.support.load import LoadPlan, format_report, run_load  # noqa: E402

DEFAULTS = LoadPlan()


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=DEFAULTS.clients, help="concurrent clients")
    parser.add_argument("--calls", type=int, default=DEFAULTS.calls, help="tool calls in all")
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=DEFAULTS.max_concurrency,
        help="MCP_WEB_MAX_CONCURRENCY for the server (default: the server's own, 32)",
    )
    parser.add_argument(
        "--cache-mb", type=int, default=DEFAULTS.cache_max_mb, help="MCP_WEB_CACHE_MAX_MB for the server"
    )
    parser.add_argument(
        "--rss-headroom-mb",
        type=float,
        default=DEFAULTS.rss_headroom_mb,
        help="how far above baseline the server's RSS may end, besides the document cache",
    )
    parser.add_argument(
        "--fd-tolerance", type=int, default=DEFAULTS.fd_tolerance, help="extra open descriptors allowed after"
    )
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed)
    parser.add_argument(
        "--json", type=Path, default=RESULTS / "load.json", help="where to write the report (JSON)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    plan = LoadPlan(
        clients=args.clients,
        calls=args.calls,
        max_concurrency=args.max_concurrency,
        cache_max_mb=args.cache_mb,
        rss_headroom_mb=args.rss_headroom_mb,
        fd_tolerance=args.fd_tolerance,
        seed=args.seed,
    )
    print(f"load: {plan.calls} calls from {plan.clients} clients ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    report = run_load(plan)
    report["info"] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(time.perf_counter() - started, 1),
        "source": env.source(),
        "versions": {
            **{name: _version(name) for name in ("mcp-server-web", "mcp", "httpx", "uvicorn", "anyio")},
            "python": sys.version.split()[0],
        },
        "machine": env.machine(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(format_report(report))
    print(f"\nreport written to {args.json} ({report['info']['seconds']} s in all)")
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
