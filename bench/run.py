"""Run the benchmark suite: extraction, end to end over stdio, HTTP throughput, start-up.

Usage (from the repository root, after bench/setup-peers):

    .venv/bin/python bench/run.py                      # everything (about 10-15 minutes on 2 cores)
    .venv/bin/python bench/run.py --only e2e,startup   # some benches
    .venv/bin/python bench/run.py --quick              # a smoke run of a few minutes

A full run writes bench/results/latest.json (a summary to commit) and rewrites the tables in
bench/README.md between the <!-- bench:NAME --> markers; with --only, the other sections keep
their last results. --quick uses small subsets and one round, and writes only
bench/results/quick.raw.json (git-ignored) and the tables on stdout, never the committed files.
Per-page scorer rows go to bench/results/*.raw.json, server and scorer logs to
bench/results/run.log. All traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import env, report
from suite.extraction import PROXY_VARS
from suite.paths import LATEST, PEER_PYTHON, README, REPO, RESULTS, SCORER

BENCHES = ("extraction", "e2e", "http", "startup")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(BENCHES), help=f"comma list of {', '.join(BENCHES)}")
    parser.add_argument(
        "--quick", action="store_true", help="small subsets, one round; writes no committed file"
    )
    parser.add_argument("--no-peer", action="store_true", help="leave mcp-server-fetch out")
    parser.add_argument("--no-node", action="store_true", help="leave mcp-server-fetch with Node out")
    g = parser.add_argument_group("extraction")
    g.add_argument(
        "--node-subset-zyte", type=int, help="zyte pages for mcp-server-fetch with Node (default 60)"
    )
    g.add_argument(
        "--node-subset-wcxb", type=int, help="wcxb-dev pages for it, spread over types (default 140)"
    )
    g = parser.add_argument_group("end to end")
    g.add_argument("--e2e-rounds", type=int, help="rounds, a fresh server each (default 3)")
    g.add_argument("--max-length", type=int, default=8000, help="page size for both servers (default 8000)")
    g = parser.add_argument_group("HTTP")
    g.add_argument("--http-rounds", type=int, help="rounds (default 3)")
    g.add_argument("--http-uncached", type=int, help="uncached calls per phase (default 200)")
    g.add_argument("--http-cached", type=int, help="cached calls per phase (default 600)")
    g.add_argument("--concurrency", default="8,32", help="concurrent clients, comma list (default 8,32)")
    g.add_argument("--cache-mb", type=int, default=32, help="server MCP_WEB_CACHE_MAX_MB (default 32)")
    g.add_argument(
        "--rss-bound-mb", type=int, default=512, help="stated bound on peak server RSS (default 512)"
    )
    g = parser.add_argument_group("start-up")
    g.add_argument("--startup-runs", type=int, help="timed starts per server (default 10)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=None,
        metavar="S",
        help="before each bench, wait up to S seconds for other load on the machine to drop below 15%% "
        "(default 300; 0 in --quick)",
    )
    parser.add_argument(
        "--retry-busy",
        type=int,
        default=0,
        metavar="N",
        help="run a bench up to N more times while other processes used over 15%% of the CPU during it; "
        "the least disturbed attempt is kept (default 0)",
    )
    parser.add_argument(
        "--at",
        metavar="REF",
        help="measure our code as of git REF (a read-only `git archive` snapshot of src/ put first on "
        "PYTHONPATH), not the working tree",
    )
    args = parser.parse_args(argv)
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in only if name not in BENCHES]
    if unknown:
        parser.error(f"unknown bench(es) {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    args.only = only
    quick = args.quick

    def pick(value: int | None, full: int, small: int) -> int:
        return value if value is not None else (small if quick else full)

    args.node_subset_zyte = pick(args.node_subset_zyte, 60, 10)
    args.node_subset_wcxb = pick(args.node_subset_wcxb, 140, 14)
    args.e2e_rounds = pick(args.e2e_rounds, 3, 1)
    args.http_rounds = pick(args.http_rounds, 3, 1)
    args.http_uncached = pick(args.http_uncached, 200, 48)
    args.http_cached = pick(args.http_cached, 600, 160)
    args.startup_runs = pick(args.startup_runs, 10, 3)
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c.strip()]
    if args.quiet_wait is None:
        args.quiet_wait = 0.0 if quick else 300.0
    return args


def loopback_only_environment() -> None:
    """No proxy for anything this run starts: every request goes to 127.0.0.1 directly."""
    for name in PROXY_VARS:
        os.environ.pop(name, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"


def use_snapshot(ref: str) -> Path:
    """Extract src/ as of ref into a temporary folder and put it first on PYTHONPATH for every child."""
    target = Path(tempfile.mkdtemp(prefix="mcp-web-bench-src-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "src"], cwd=REPO, capture_output=True, check=True
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    src = target / "src"
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p)
    found = subprocess.run(
        [sys.executable, "-c", "import mcp_server_web; print(mcp_server_web.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not found.startswith(str(src)):
        raise SystemExit(f"--at {ref}: mcp_server_web still imports from {found}")
    return src


def run_bench(name: str, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    with_peer = not args.no_peer and PEER_PYTHON.exists()
    if name == "extraction":
        from suite import extraction

        return extraction.run(
            node_subset={"zyte": args.node_subset_zyte, "wcxb-dev": args.node_subset_wcxb},
            all_on_subset=args.quick,
            with_peer=with_peer,
            with_node=not args.no_node,
            log=log,
        )
    if name == "e2e":
        from suite import e2e

        return e2e.run(
            rounds=args.e2e_rounds,
            max_length=args.max_length,
            zyte_pages=6 if args.quick else 10,
            wcxb_per_type=1 if args.quick else 2,
            with_peer=with_peer,
            with_node=not args.no_node,
            log=log,
        )
    if name == "http":
        from suite import http_load

        return http_load.run(
            rounds=args.http_rounds,
            uncached_calls=args.http_uncached,
            cached_calls=args.http_cached,
            concurrency=args.concurrency,
            cache_mb=args.cache_mb,
            rss_bound_mb=args.rss_bound_mb,
        )
    from suite import startup

    return startup.run(runs=args.startup_runs, with_peer=with_peer, log=log)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not SCORER.exists():
        print(f"the extraction scorer is missing: {SCORER} (set BENCH_SHARED_DIR)", file=sys.stderr)
        return 2
    if not args.no_peer and not PEER_PYTHON.exists():
        print(
            "bench/.peer-venv is missing: run bench/setup-peers first (continuing without the peer)",
            file=sys.stderr,
        )
    loopback_only_environment()
    code_root = REPO / "src"
    if args.at:
        code_root = use_snapshot(args.at)
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "run.log"
    log.write_text("", encoding="utf-8")
    info = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "source": env.source(args.at),
        "versions": env.versions(),
        "machine": env.machine(),
    }
    print(report.measured_line(info), file=sys.stderr)
    sections: dict[str, dict[str, Any]] = {}
    for name in BENCHES:
        if name not in args.only:
            continue
        best: dict[str, Any] | None = None
        for attempt in range(1 + max(0, args.retry_busy)):
            section = measure_section(name, args, log, info, code_root)
            if best is None or (section["info"]["other_load"] or 0) < (best["info"]["other_load"] or 0):
                best = section
            if (section["info"]["other_load"] or 0) <= report.BUSY_WARNING:
                break
            if attempt < args.retry_busy:
                print(f"   trying {name} again ({attempt + 2}/{1 + args.retry_busy})", file=sys.stderr)
        assert best is not None
        sections[name] = best
        print(f"\n### {name}\n\n" + report.section_markdown(name, best), flush=True)

    if args.quick:
        target = RESULTS / "quick.raw.json"
        target.write_text(json.dumps({"sections": sections}, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"quick run: results in {target}; latest.json and README.md left as they were", file=sys.stderr)
        return 0
    merged: dict[str, Any] = {"sections": {}}
    if LATEST.exists():
        merged = json.loads(LATEST.read_text(encoding="utf-8"))
    merged["sections"].update(sections)
    merged["generated"] = info["date"]
    merged["summary"] = headline(merged["sections"])
    LATEST.write_text(json.dumps(merged, indent=1, default=str) + "\n", encoding="utf-8")
    done = report.update_readme(README, merged["sections"])
    print(
        f"wrote {LATEST.relative_to(README.parent.parent)}; README tables updated: {', '.join(done)}",
        file=sys.stderr,
    )
    return 0


def measure_section(
    name: str, args: argparse.Namespace, log: Path, info: dict[str, Any], code_root: Path
) -> dict[str, Any]:
    """Wait for a quiet machine, run one bench, and note the load and code changes seen meanwhile."""
    busy, waited = env.wait_until_quiet(report.BUSY_WARNING, args.quiet_wait)
    load = "unknown" if busy is None else f"{busy:.0%}"
    print(f"== {name} (other load: {load} of the CPU, waited {waited:.0f} s)", file=sys.stderr, flush=True)
    digest = env.tree_digest(code_root)
    other = env.OtherLoad()
    other.start()
    started = time.perf_counter()
    result = run_bench(name, args, log)
    seconds = time.perf_counter() - started
    section_info = {
        **info,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(seconds, 1),
        "busy_before": busy,
        "other_load": other.share(),
        "src_changed": env.tree_digest(code_root) != digest,
    }
    if (section_info["other_load"] or 0) > report.BUSY_WARNING:
        print(
            f"   other processes used {section_info['other_load']:.0%} of the CPU during {name}: "
            "its timings are disturbed",
            file=sys.stderr,
        )
    print(f"== {name} done in {seconds:.0f} s", file=sys.stderr, flush=True)
    return {"info": section_info, "result": result}


def headline(sections: dict[str, Any]) -> dict[str, Any]:
    """The few numbers people ask for, pulled out of the sections."""
    out: dict[str, Any] = {}
    if "extraction" in sections:
        res = sections["extraction"]["result"]
        out["extraction_f1"] = {
            d: {k: round(row["f1"], 4) for k, row in entry["pipelines"].items()}
            for d, entry in res["sets"].items()
        }
        out["extraction_ours_median_over_readability"] = {
            d: round(r["ours_median_over_readability_median"], 3) for d, r in res["ratios"].items()
        }
    if "e2e" in sections:
        res = sections["e2e"]["result"]
        out["e2e_following_page_speedup"] = {
            k: round(r["following_page"], 1) for k, r in res["ratios"].items()
        }
        out["e2e_first_page_speedup"] = {k: round(r["first_page"], 2) for k, r in res["ratios"].items()}
    if "startup" in sections:
        res = sections["startup"]["result"]
        out["startup_ms"] = {k: round(r["median_ms"], 1) for k, r in res["servers"].items()}
        out["startup_ratio_to_ours"] = {k: round(v, 2) for k, v in res["ratios_to_ours"].items()}
    if "http" in sections:
        res = sections["http"]["result"]
        out["http_calls_per_s"] = {k: round(r["calls_per_s"], 1) for k, r in res["phases"].items()}
        out["http_rss_peak_mb"] = res["rss_peak_mb"]
    return out


if __name__ == "__main__":
    sys.exit(main())
