"""Markdown tables from the results, and their place in bench/README.md between markers."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from suite.env import describe

WCXB_TYPES = ("article", "documentation", "service", "forum", "product", "collection", "listing")
SECTIONS = ("extraction", "e2e", "http", "startup")


def _num(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}"


def _f1(value: Any) -> str:
    return _num(value, 3)


def _times(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value < 10:
        return f"{value:.2f}×"
    return f"{value:,.1f}×" if value < 100 else f"{value:,.0f}×"


def _rounds(count: int) -> str:
    return f"{count} round" + ("" if count == 1 else "s")


BUSY_WARNING = 0.15
"""Other load above this share of the CPU, seen just before a section, is flagged with its figures."""


def measured_line(info: dict[str, Any]) -> str:
    mode = " (quick mode)" if info.get("quick") else ""
    notes = []
    busy = info.get("busy_before")
    if busy is not None and busy > BUSY_WARNING:
        notes.append(f"**other load on the machine: {busy:.0%} of the CPU busy just before this section**")
    other = info.get("other_load")
    if other is not None and other > BUSY_WARNING:
        notes.append(f"**other processes used {other:.0%} of the CPU while it ran: timings disturbed**")
    if info.get("src_changed"):
        notes.append("**src/ changed while this section ran**")
    extra = (" " + "; ".join(notes) + ".") if notes else ""
    return f"_Measured {info['date']}{mode}: {describe(info)}._{extra}"


def extraction_tables(res: dict[str, Any]) -> str:
    out: list[str] = []
    labels: dict[str, str] = res["pipelines"]
    for dataset, entry in res["sets"].items():
        rows = entry["pipelines"]
        out.append(f"**{dataset}** ({entry['pages']} pages; per-page time of the extractor call alone)\n")
        out.append(
            "| pipeline | pages | F1 | P | R | 4-gram F1 | empty | errors | median ms | p90 ms | max ms |"
        )
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for key, row in rows.items():
            pages = f"{row['pages']} (subset)" if row["subset_only"] else str(row["pages"])
            out.append(
                f"| {labels[key]} | {pages} | {_f1(row['f1'])} ± {_f1(row['f1_std'])} | "
                f"{_f1(row['precision'])} | {_f1(row['recall'])} | {_f1(row['f1_4gram'])} | "
                f"{row['empty']} | {row['errors']} | "
                f"{_num(row['median_ms'])} | {_num(row['p90_ms'])} | {_num(row['max_ms'])} |"
            )
        ratios = res["ratios"].get(dataset, {})
        if ratios:
            median_ratio = _num(ratios["ours_median_over_readability_median"], 2)
            parts = [
                f"ours / plain readability, median time per page: **{median_ratio}**"
                f" (p90: {_num(ratios['ours_p90_over_readability_p90'], 2)})"
            ]
            if "browser_tree_median_over_libxml2_median" in ratios:
                parts.append(
                    "building the tree a browser builds / libxml2's own tree, median: "
                    f"{_num(ratios['browser_tree_median_over_libxml2_median'], 2)}"
                )
            if "fetch_nonode_median_over_ours_median" in ratios:
                nonode = _num(ratios["fetch_nonode_median_over_ours_median"], 1)
                parts.append(f"mcp-server-fetch without Node / ours: {nonode}")
            if "fetch_node_median_over_ours_median_on_subset" in ratios:
                parts.append(
                    "mcp-server-fetch with Node / ours (subset): "
                    f"{_num(ratios['fetch_node_median_over_ours_median_on_subset'], 1)}"
                )
            out.append("\n" + "; ".join(parts) + ".\n")
        if dataset == "wcxb-dev" and any("by_type" in row for row in rows.values()):
            out.append(
                "**wcxb-dev by page type** (mean F1 per type; all = mean over pages, "
                "types = mean of the 7 type F1s)\n"
            )
            out.append("| pipeline | all | types | " + " | ".join(WCXB_TYPES) + " |")
            out.append("| --- | ---: | ---: | " + " | ".join("---:" for _ in WCXB_TYPES) + " |")
            for key, row in rows.items():
                by_type = row.get("by_type", {})
                cells = [_f1(by_type[t]["f1"]) if t in by_type else "n/a" for t in WCXB_TYPES]
                name = labels[key] + (" (subset)" if row["subset_only"] else "")
                out.append(
                    f"| {name} | {_f1(row['f1'])} | {_f1(row.get('f1_type_mean'))} | "
                    + " | ".join(cells)
                    + " |"
                )
            out.append("")
    subset_sets = [
        d for d, e in res["sets"].items() if any(r["subset_only"] for r in e["pipelines"].values())
    ]
    if subset_sets:
        rules = "; ".join(f"{d}: {res['sets'][d]['subset_rule']}" for d in subset_sets)
        out.append(f"**The time-boxed subset, all pipelines side by side** ({rules})\n")
        header = " | ".join(f"{d} F1 | {d} median ms" for d in subset_sets)
        out.append(f"| pipeline | {header} |")
        out.append("| --- | " + " | ".join("---: | ---:" for _ in subset_sets) + " |")
        for key in labels:
            cells = []
            for d in subset_sets:
                sub = res["sets"][d]["subset"].get(key)
                cells.append(
                    f"{_f1(sub['f1']) if sub else 'n/a'} | {_num(sub['median_ms']) if sub else 'n/a'}"
                )
            out.append(f"| {labels[key]} | " + " | ".join(cells) + " |")
        out.append("")
    if res.get("skipped"):
        out.append("Skipped: " + "; ".join(res["skipped"]) + ".\n")
    return "\n".join(out)


def e2e_tables(res: dict[str, Any]) -> str:
    servers = res["servers"]
    out = [
        f"{res['real_pages']} real pages (first page each, never cached) and one long document "
        f"({res['long_document_bytes'] // 1000} kB of HTML, {servers['ours']['long_pages']} pages at "
        f"max_length {res['max_length']}), {_rounds(res['rounds'])}, a fresh server process per round; "
        f"robots.txt {res['robots']}.\n",
        "| server | first page, median ms | first page, p90 ms | long doc, first page ms "
        "| long doc, following page, median ms | following page, p90 ms | pages | tool errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in servers.values():
        out.append(
            f"| {row['label']} | {_num(row['first_page_median_ms'])} | {_num(row['first_page_p90_ms'])} | "
            f"{_num(row['long_first_page_ms'])} | {_num(row['following_page_median_ms'], 2)} | "
            f"{_num(row['following_page_p90_ms'], 2)} | {row['long_pages']} | {row['error_calls']} |"
        )
    if res["ratios"]:
        out.append("\nRatios (theirs / ours; above 1 means ours is faster):\n")
        out.append("| compared with | first page | long doc, first page | following page |")
        out.append("| --- | ---: | ---: | ---: |")
        for key, r in res["ratios"].items():
            out.append(
                f"| {servers[key]['label']} | {_times(r['first_page'])} | {_times(r['long_first_page'])} | "
                f"**{_times(r['following_page'])}** |"
            )
    if "target_following_pages_10x" in res:
        verdict = "met" if res["target_following_pages_10x"] else "NOT met"
        out.append(f'\nTarget "following pages at least 10× faster than mcp-server-fetch": **{verdict}**.')
    errors = [f"{servers[k]['label']}: {e}" for k in servers for e in servers[k]["errors"]]
    if errors:
        out.append("\nTool errors (the call is still timed): " + "; ".join(errors[:6]))
    return "\n".join(out) + "\n"


def http_tables(res: dict[str, Any]) -> str:
    out = [
        f"Server cache cap MCP_WEB_CACHE_MAX_MB={res['cache_max_mb']}; {_rounds(res['rounds'])}, figures "
        f"are medians over rounds; about {res['html_fetched_per_round_mb']} MB of HTML downloaded per "
        "round by the uncached phases.\n",
        "| phase | clients | calls | calls/s | p50 ms | p99 ms | errors | server RSS after, MB, per round |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in res["phases"].items():
        kind, clients = name.rsplit("-", 1)
        errors = str(row["errors"]) + (f" ({row['not_cached']} not cached)" if row["not_cached"] else "")
        out.append(
            f"| {kind} | {clients} | {row['calls']} | {_num(row['calls_per_s'])} | {_num(row['p50_ms'])} | "
            f"{_num(row['p99_ms'])} | {errors} | {' → '.join(str(mb) for mb in row['rss_end_mb'])} |"
        )
    codes: dict[str, int] = {}
    for row in res["phases"].values():
        for code, count in row.get("error_codes", {}).items():
            codes[code] = codes.get(code, 0) + count
    if codes:
        listed = ", ".join(f"{code} × {count}" for code, count in sorted(codes.items()))
        out.append(
            f"\nErrors are summed over rounds, by code: {listed} (extraction_failed: a page of the "
            "sets that is an empty JavaScript shell, with no text to recover)."
        )
    verdict = "within" if res["rss_within_bound"] else "ABOVE"
    out.append(
        f"\nServer RSS: {res['rss_idle_mb']} MB idle after start-up, "
        f"peak (VmHWM) **{res['rss_peak_mb']} MB**, "
        f"{res['rss_final_mb']} MB at the end: {verdict} the stated bound of {res['rss_bound_mb']} MB."
    )
    return "\n".join(out) + "\n"


def startup_tables(res: dict[str, Any]) -> str:
    out = [
        "| server | median ms | min ms | max ms | runs | tools | ratio to ours |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, row in res["servers"].items():
        r = "1.00×" if key == "ours" else _times(res["ratios_to_ours"].get(key))
        out.append(
            f"| {row['label']} | {_num(row['median_ms'])} | {_num(row['min_ms'])} | {_num(row['max_ms'])} | "
            f"{row['runs']} | {row['tools']} | {r} |"
        )
    return "\n".join(out) + "\n"


RENDER = {"extraction": extraction_tables, "e2e": e2e_tables, "http": http_tables, "startup": startup_tables}


def section_markdown(name: str, section: dict[str, Any]) -> str:
    return measured_line(section["info"]) + "\n\n" + RENDER[name](section["result"])


def update_readme(readme: Path, sections: dict[str, dict[str, Any]]) -> list[str]:
    """Replace the text between <!-- bench:NAME --> and <!-- /bench:NAME -->; returns the names done."""
    text = readme.read_text(encoding="utf-8")
    done = []
    for name, section in sections.items():
        pattern = re.compile(rf"(<!-- bench:{name} -->\n)(.*?)(<!-- /bench:{name} -->)", re.S)
        if not pattern.search(text):
            continue
        body = section_markdown(name, section)
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(3), text)
        done.append(name)
    readme.write_text(text, encoding="utf-8")
    return done
