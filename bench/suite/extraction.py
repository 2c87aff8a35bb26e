"""Bench 1: extraction quality and speed, every pipeline through the same scorer.

Each pipeline is a callable f(html, url) -> str handed to shared/bench/score_extraction.py, run
as its own subprocess with the interpreter that pipeline belongs to: our .venv for ours, plain
readability-lxml -> markdownify and trafilatura; bench/.peer-venv for mcp-server-fetch's
extract_content_from_html (bench/peer_extract.py), once with Node on PATH (readabilipy runs
Readability.js under Node) and once with a PATH that has no node (readabilipy's pure-Python
fallback). The scorer times only the extractor call, after one untimed warm-up call, and writes
per-page rows (--json) that are kept as bench/results/extraction-*.raw.json (git-ignored).

mcp-server-fetch with Node spawns a Node process per page (about 0.5-1 s each), so it runs on a
fixed subset: evenly spaced page ids, the same number from each page type. Every other pipeline
runs on all pages, and is also reported on that subset from its per-page rows, side by side.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite import data
from suite.paths import BENCH, DATASETS, OUR_PYTHON, PEER_PYTHON, PEER_VENV, REPO, RESULTS, SCORER
from suite.stats import median, ratio

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def clean_env(**extra: str) -> dict[str, str]:
    """os.environ without proxy settings (all traffic stays on loopback), plus extra."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra)
    return env


def path_without_node() -> str:
    """The peer venv's bin only: readabilipy finds no `node` (nor npm) and uses its Python extractor."""
    return str(PEER_VENV / "bin")


def path_with_node() -> str:
    return os.pathsep.join([str(PEER_VENV / "bin"), os.environ.get("PATH", "")])


@dataclass(frozen=True)
class Pipeline:
    key: str
    label: str
    python: Path
    spec: str
    env: dict[str, str] = field(default_factory=dict)
    subset_only: bool = False
    """Time-boxed: scored on the fixed subset only."""


def pipelines(node_available: bool, peer_available: bool) -> list[Pipeline]:
    found: list[Pipeline] = [
        Pipeline("ours", "mcp-server-web", OUR_PYTHON, "mcp_server_web.fetch.doc.extract:main_content"),
        Pipeline(
            "readability",
            "readability-lxml → markdownify",
            OUR_PYTHON,
            f"{BENCH / 'pipelines.py'}:readability_markdownify",
        ),
    ]
    found += [
        Pipeline(
            "parse-libxml2",
            "whole page text, libxml2 tree",
            OUR_PYTHON,
            f"{BENCH / 'pipelines.py'}:libxml2_page_text",
        ),
        Pipeline(
            "parse-browser",
            "whole page text, browser tree (ours)",
            OUR_PYTHON,
            f"{BENCH / 'pipelines.py'}:browser_tree_page_text",
        ),
    ]
    if importlib.util.find_spec("trafilatura") is not None:
        found.append(
            Pipeline(
                "trafilatura",
                "trafilatura (comments off)",
                OUR_PYTHON,
                f"{BENCH / 'pipelines.py'}:trafilatura_text",
            )
        )
    if peer_available:
        worker = f"{BENCH / 'peer_extract.py'}:main_content"
        found.append(
            Pipeline(
                "fetch-nonode",
                "mcp-server-fetch, without Node",
                PEER_PYTHON,
                worker,
                env={"PATH": path_without_node(), "BENCH_PEER_NODE": "0", "PYTHONPATH": ""},
            )
        )
        if node_available:
            found.append(
                Pipeline(
                    "fetch-node",
                    "mcp-server-fetch, with Node",
                    PEER_PYTHON,
                    worker,
                    env={"PATH": path_with_node(), "BENCH_PEER_NODE": "1", "PYTHONPATH": ""},
                    subset_only=True,
                )
            )
    return found


def _score(pipeline: Pipeline, dataset: str, ids: list[str] | None, log: Path) -> dict[str, Any]:
    raw = RESULTS / f"extraction-{dataset}-{pipeline.key}.raw.json"
    command = [
        str(pipeline.python),
        str(SCORER),
        pipeline.spec,
        "--data",
        str(DATASETS[dataset]),
        "--label",
        pipeline.key,
        "--json",
        str(raw),
        "--quiet",
        "--worst",
        "0",
    ]
    if ids is not None:
        command += ["--ids", *ids]
    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(command[:4])} ... ({dataset})\n")
        out.flush()
        done = subprocess.run(
            command, cwd=REPO, env=clean_env(**pipeline.env), stdout=out, stderr=out, check=False
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"scorer failed for {pipeline.key} on {dataset} (exit {done.returncode}); see {log}"
        )
    blob: dict[str, Any] = json.loads(raw.read_text(encoding="utf-8"))
    blob["wall_s"] = time.perf_counter() - started
    return blob


def _summary_row(pipeline: Pipeline, blob: dict[str, Any], on_subset: bool) -> dict[str, Any]:
    s = blob["summary"]
    row: dict[str, Any] = {
        "label": pipeline.label,
        "pages": s["pages"],
        "subset_only": on_subset,
        "f1": s["f1"],
        "f1_std": s["f1_bootstrap_std"],
        "precision": s["precision"],
        "recall": s["recall"],
        "f1_4gram": s.get("f1_ng"),
        "empty": s["empty"],
        "errors": s["errors"],
        "median_ms": s.get("time_median_ms"),
        "p90_ms": s.get("time_p90_ms"),
        "max_ms": s.get("time_max_ms"),
        "total_s": s.get("time_total_s"),
        "wall_s": blob["wall_s"],
    }
    if "by_type" in s:
        row["by_type"] = {
            t: {"pages": v["pages"], "f1": v["f1"], "empty": v["empty"]} for t, v in s["by_type"].items()
        }
        row["f1_type_mean"] = s["f1_type_mean"]
    return row


def _subset_row(pages: list[dict[str, Any]], ids: set[str]) -> dict[str, Any]:
    rows = [p for p in pages if p["id"] in ids]
    times = [p["seconds"] for p in rows if p["seconds"] is not None]
    return {
        "pages": len(rows),
        "f1": sum(p["f1"] for p in rows) / len(rows) if rows else None,
        "empty": sum(1 for p in rows if p["empty"]),
        "median_ms": 1000 * median(times) if times else None,
    }


def run(
    *,
    node_subset: dict[str, int],
    log: Path,
    all_on_subset: bool = False,
    with_peer: bool = True,
    with_node: bool = True,
    only_sets: list[str] | None = None,
) -> dict[str, Any]:
    """Score every pipeline on each data set; all_on_subset runs all of them on the subset only (quick)."""
    node_available = with_node and shutil.which("node") is not None
    peer_available = with_peer and PEER_PYTHON.exists()
    chosen = pipelines(node_available, peer_available)
    result: dict[str, Any] = {
        "pipelines": {p.key: p.label for p in chosen},
        "skipped": [],
        "sets": {},
        "ratios": {},
    }
    if "trafilatura" not in result["pipelines"]:
        result["skipped"].append("trafilatura (not installed: pip install -e '.[bench]')")
    if not peer_available:
        result["skipped"].append("mcp-server-fetch (not asked for, or bench/setup-peers not run)")
    elif not node_available:
        result["skipped"].append("mcp-server-fetch with Node (not asked for, or no node on PATH)")
    for dataset in only_sets or list(DATASETS):
        subset_ids = data.subset(dataset, node_subset[dataset])
        total = len(data.items(dataset))
        entry: dict[str, Any] = {
            "pages": total,
            "subset_pages": len(subset_ids),
            "subset_rule": f"{len(subset_ids)} of {total} pages, evenly spaced ids"
            + (", as many of each type" if len({row["type"] for row in data.items(dataset)}) > 1 else ""),
            "pipelines": {},
            "subset": {},
        }
        for pipeline in chosen:
            print(f"  extraction: {pipeline.key} on {dataset} ...", file=sys.stderr, flush=True)
            on_subset = pipeline.subset_only or all_on_subset
            blob = _score(pipeline, dataset, subset_ids if on_subset else None, log)
            entry["pipelines"][pipeline.key] = _summary_row(pipeline, blob, on_subset)
            entry["subset"][pipeline.key] = _subset_row(blob["pages"], set(subset_ids))
            summary = blob["summary"]
            print(
                f"    F1 {summary['f1']:.3f}, median {summary.get('time_median_ms', 0):.1f} ms, "
                f"{blob['wall_s']:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        rows = entry["pipelines"]
        if "ours" in rows and "readability" in rows:
            result["ratios"][dataset] = {
                "ours_median_over_readability_median": ratio(
                    rows["ours"]["median_ms"], rows["readability"]["median_ms"]
                ),
                "ours_p90_over_readability_p90": ratio(rows["ours"]["p90_ms"], rows["readability"]["p90_ms"]),
            }
            if "parse-libxml2" in rows and "parse-browser" in rows:
                result["ratios"][dataset]["browser_tree_median_over_libxml2_median"] = ratio(
                    rows["parse-browser"]["median_ms"], rows["parse-libxml2"]["median_ms"]
                )
            if "fetch-node" in entry["subset"]:
                result["ratios"][dataset]["fetch_node_median_over_ours_median_on_subset"] = ratio(
                    entry["subset"]["fetch-node"]["median_ms"], entry["subset"]["ours"]["median_ms"]
                )
            if "fetch-nonode" in rows:
                result["ratios"][dataset]["fetch_nonode_median_over_ours_median"] = ratio(
                    rows["fetch-nonode"]["median_ms"], rows["ours"]["median_ms"]
                )
        result["sets"][dataset] = entry
    return result
