"""Measure web_fetch's focused reading (query=) on real pages: is the answer among the passages, and
at what share of the document's characters?

Each pair of questions.json names a page of the shared extraction sets, a question, and a distinctive
substring of the one paragraph that answers it. The page is converted by our converter exactly as
web_fetch converts it (markdown, main content), the passages are ranked with rank_passages, and the
pair is found when the answer substring lies whole inside one returned passage (whitespace collapsed).

    PYTHONPATH=src .venv/bin/python bench/passages/run.py [--max-chars 2000] [--json out.json] [-v]

The shared data sets are found at ../shared/bench from the repository root, or at $BENCH_SHARED_DIR.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mcp_server_web.fetch import FetchResponse, rank_passages
from mcp_server_web.fetch.doc.convert import convert

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED_BENCH = Path(os.environ.get("BENCH_SHARED_DIR", REPO.parent / "shared" / "bench"))
TIMING_ROUNDS = 5


@dataclass(frozen=True)
class Outcome:
    page: str
    question: str
    found: bool
    in_first_slice: bool
    returned: int
    total: int
    passages: int
    seconds: float


def page_html(data_set: str, page: str) -> tuple[bytes, str]:
    """The raw HTML of a page of the shared sets, and its URL."""
    extraction = SHARED_BENCH / "extraction"
    if data_set == "zyte":
        url = json.loads((extraction / "zyte" / "ground-truth.json").read_text())[page]["url"]
        return gzip.decompress((extraction / "zyte" / "pages" / f"{page}.html.gz").read_bytes()), url
    truth = json.loads((extraction / "wcxb-dev" / "ground-truth" / f"{page}.json").read_text())
    return gzip.decompress((extraction / "wcxb-dev" / "html" / f"{page}.html.gz").read_bytes()), truth["url"]


def document_of(data_set: str, page: str) -> str:
    """The page as web_fetch's document: our converter, markdown, main content."""
    body, url = page_html(data_set, page)
    response = FetchResponse(
        url=url, final_url=url, status=200, headers={}, media_type="text/html", charset=None, body=body
    )
    return convert(response, output_format="markdown", main_content=True).text


def flat(text: str) -> str:
    return " ".join(text.split())


def megabyte_timing(documents: list[str], questions: list[str], max_chars: int) -> dict[str, float]:
    """Ranking time on a document of 1 MB or more: the set's pages one after another, repeated."""
    joined = "\n\n".join(documents)
    big = "\n\n".join([joined] * (1 + 1_000_000 // len(joined)))
    timings = []
    for question in questions:
        started = time.perf_counter()
        rank_passages(big, question, max_chars=max_chars)
        timings.append(time.perf_counter() - started)
    return {
        "megabyte_document_chars": len(big),
        "megabyte_median_rank_ms": round(1000 * statistics.median(timings), 1),
        "megabyte_max_rank_ms": round(1000 * max(timings), 1),
    }


def measure(
    pairs: list[dict[str, str]], max_chars: int, documents: dict[tuple[str, str], str]
) -> list[Outcome]:
    outcomes = []
    for pair in pairs:
        key = (pair["set"], pair["page"])
        if key not in documents:
            documents[key] = document_of(*key)
        document = documents[key]
        # The converter keeps a paragraph's own line breaks: compare with whitespace collapsed.
        answer = flat(pair["answer"])
        if answer not in flat(document):
            raise SystemExit(f"{key}: the answer {answer!r} is not in the converted page; fix the set.")
        timings = []
        for _ in range(TIMING_ROUNDS):
            started = time.perf_counter()
            passages = rank_passages(document, pair["question"], max_chars=max_chars)
            timings.append(time.perf_counter() - started)
        outcomes.append(
            Outcome(
                page=f"{pair['set']}/{pair['page']}",
                question=pair["question"],
                found=any(answer in flat(passage.text) for passage in passages),
                in_first_slice=answer in flat(document[:max_chars]),
                returned=sum(passage.length for passage in passages),
                total=len(document),
                passages=len(passages),
                seconds=min(timings),
            )
        )
    return outcomes


def report(outcomes: list[Outcome], max_chars: int) -> dict[str, object]:
    count = len(outcomes)
    found = sum(outcome.found for outcome in outcomes)
    shares = [outcome.returned / outcome.total for outcome in outcomes]
    return {
        "pairs": count,
        "pages": len({outcome.page for outcome in outcomes}),
        "max_chars": max_chars,
        "found": found,
        "found_rate": round(found / count, 4),
        "found_in_first_slice_rate": round(sum(o.in_first_slice for o in outcomes) / count, 4),
        "mean_share": round(statistics.mean(shares), 4),
        "max_share": round(max(shares), 4),
        "total_share": round(sum(o.returned for o in outcomes) / sum(o.total for o in outcomes), 4),
        "mean_returned_chars": round(statistics.mean(o.returned for o in outcomes)),
        "mean_document_chars": round(statistics.mean(o.total for o in outcomes)),
        "median_rank_ms": round(1000 * statistics.median(o.seconds for o in outcomes), 2),
        "max_rank_ms": round(1000 * max(o.seconds for o in outcomes), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-chars", type=int, default=2000, help="rank_passages' max_chars (default 2000)")
    parser.add_argument("--json", type=Path, help="also write the summary and per-pair rows here")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the pairs that were not found")
    arguments = parser.parse_args()
    pairs = json.loads((HERE / "questions.json").read_text())["pairs"]
    documents: dict[tuple[str, str], str] = {}
    outcomes = measure(pairs, arguments.max_chars, documents)
    summary = report(outcomes, arguments.max_chars)
    questions = [pair["question"] for pair in pairs]
    summary.update(megabyte_timing(list(documents.values()), questions, arguments.max_chars))
    # A command-line report: stdout is this script's own output, not a protocol channel.
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    if arguments.verbose:
        for outcome in outcomes:
            if not outcome.found:
                sys.stdout.write(f"not found: {outcome.page}: {outcome.question}\n")
    if arguments.json:
        rows = [outcome.__dict__ for outcome in outcomes]
        arguments.json.write_text(json.dumps({"summary": summary, "pairs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
