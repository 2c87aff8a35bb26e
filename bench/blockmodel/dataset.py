"""The development split as rows of block features and labels (see README.md).

Usage (from the repository root; the data is read from ../shared/bench, or BENCH_SHARED_DIR):

    .venv/bin/python bench/blockmodel/dataset.py            # our own blocks, no extractor
    .venv/bin/python bench/blockmodel/dataset.py --votes    # the pipeline's blocks, with its votes

Each page of wcxb-dev, wcxb-train and zyte is parsed and cleaned as web_fetch does it and cut
into blocks (fetch/doc/blocks.py); each block with text gets a row of FEATURES (block_features.py) and
a label: the share of its word trigrams found in the page's reviewed main text (blocks of one or
two words: found where the text around them is). With --votes the page-level navigation, header,
footer and sidebars go first, as in the pipeline, and each row ends with readability's vote, the
second vote (trafilatura's when this experiment was run; since the block model shipped, the
model's, or trafilatura's where the two part), whether the rule-based selection keeps the block,
and whether it read the page as an article. Written to bench/blockmodel/.cache/ (git-ignored).
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import json
import os
import pickle
import re
import sys
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mcp_server_web.fetch.doc import extract  # noqa: E402
from mcp_server_web.fetch.doc.block_features import FEATURES, block_features, page_types  # noqa: E402
from mcp_server_web.fetch.doc.blocks import Block, Segmentation, segment  # noqa: E402
from mcp_server_web.fetch.doc.html_tree import body_of, clean_tree, parse_html  # noqa: E402

SHARED = Path(os.environ.get("BENCH_SHARED_DIR", HERE.parent.parent.parent / "shared" / "bench"))
DATA = SHARED / "extraction"
CACHE = HERE / ".cache"
TOKEN = re.compile(r"[^\W_]+")  # the scorer's tokens
VOTES = ("vote_readability", "vote_trafilatura", "rules_keep", "rules_article")
WINDOW = 40
"""A short block's words count as found within this many words of where the text around it is."""


def pages() -> list[tuple[str, str, str, str]]:
    """(set, id, page type, url) of every page."""
    found = []
    for name in ("wcxb-dev", "wcxb-train"):
        for line in (DATA / name / "pages.tsv").read_text().splitlines()[1:]:
            page_id, page_type, url = line.split("\t")
            found.append((name, page_id, page_type, url))
    truth = json.loads((DATA / "zyte" / "ground-truth.json").read_text())
    found.extend(("zyte", page_id, "article", entry["url"]) for page_id, entry in truth.items())
    return found


def gold_text(name: str, page_id: str) -> str:
    if name == "zyte":
        return str(json.loads((DATA / "zyte" / "ground-truth.json").read_text())[page_id]["articleBody"])
    entry = json.loads((DATA / name / "ground-truth" / f"{page_id}.json").read_text())
    return str(entry["ground_truth"]["main_content"])


def label_blocks(blocks: list[list[str]], gold: list[str]) -> list[float]:
    """Per block, the share of its trigrams in ``gold``; a block of one or two words counts as
    found (1.0) where its words occur in ``gold`` between the places of the blocks around it."""
    first_place: dict[str, int] = {}
    for i in range(len(gold) - 2):
        first_place.setdefault(" ".join(gold[i : i + 3]), i)
    where: dict[str, list[int]] = {}
    for i, word in enumerate(gold):
        where.setdefault(word, []).append(i)
    labels = [0.0] * len(blocks)
    anchors: dict[int, tuple[int, int]] = {}
    for k, tokens in enumerate(blocks):
        if len(tokens) < 3:
            continue
        grams = (" ".join(tokens[i : i + 3]) for i in range(len(tokens) - 2))
        hits = sorted(first_place[gram] for gram in grams if gram in first_place)
        labels[k] = len(hits) / (len(tokens) - 2)
        if labels[k] >= 0.5:
            anchors[k] = (hits[len(hits) // 4], hits[-1] + 3)
    placed = sorted(anchors)
    for k, tokens in enumerate(blocks):
        if not tokens or len(tokens) >= 3:
            continue
        j = bisect.bisect_left(placed, k)
        before = anchors[placed[j - 1]] if j > 0 else None
        after = anchors[placed[j]] if j < len(placed) else None
        if before is None and after is None:
            continue
        low = before[1] - 5 if before else after[0] - WINDOW  # type: ignore[index]
        high = after[0] + 5 if after else before[1] + WINDOW  # type: ignore[index]
        if any(low <= i <= high and gold[i : i + len(tokens)] == tokens for i in where.get(tokens[0], ())):
            labels[k] = 1.0
    return labels


def one(item: tuple[str, str, str, str], votes: bool) -> dict[str, Any] | None:
    name, page_id, _, url = item
    path = (
        DATA / "zyte" / "pages" / f"{page_id}.html.gz"
        if name == "zyte"
        else DATA / name / "html" / f"{page_id}.html.gz"
    )
    root = parse_html(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"))
    if root is None:
        return None
    declared = page_types(root)
    if votes:
        segmentation, selection, (readability, trafilatura), _ = extract._choose(
            root, url, extract.prepare(root, url)
        )
    else:
        clean_tree(root, url, keep_hidden=True)
        segmentation = segment(body_of(root))
    blocks, rows = block_features(segmentation, declared)
    if votes:
        kept = set(selection.kept)
        article = 1.0 if selection.article else 0.0
        rows = [
            [*row, readability.get(block, 0.0), trafilatura.get(block, 0.0), float(block in kept), article]
            for block, row in zip(blocks, rows, strict=True)
        ]
    return record(item, segmentation, blocks, rows)


def record(
    item: tuple[str, str, str, str], segmentation: Segmentation, blocks: list[Block], rows: Any
) -> dict[str, Any]:
    """A page's record: where it is from, a row per block (of ``segmentation``'s), the blocks' labels
    and words, and the words of its reviewed text."""
    name, page_id, page_type, url = item
    gold = TOKEN.findall(gold_text(name, page_id).casefold())
    spelling = list(segmentation.words)  # (the tokens are the words' numbers)
    words = [[spelling[token] for token in block.tokens] for block in blocks]
    return {
        "set": name,
        "id": page_id,
        "type": page_type,
        "site": urlsplit(url).hostname,
        "rows": rows,
        "labels": label_blocks(words, gold),
        "btokens": words,
        "gold": Counter(gold),
    }


def _with_votes(item: tuple[str, str, str, str]) -> dict[str, Any] | None:
    return one(item, True)


def _without_votes(item: tuple[str, str, str, str]) -> dict[str, Any] | None:
    return one(item, False)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--votes", action="store_true", help="the pipeline's blocks, with its votes")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sys.setrecursionlimit(10_000)
    with Pool(args.processes) as pool:
        built = pool.map(_with_votes if args.votes else _without_votes, pages(), chunksize=8)
    data = [page for page in built if page is not None]
    CACHE.mkdir(exist_ok=True)
    out = CACHE / ("votes.pkl" if args.votes else "own.pkl")
    names = (*FEATURES, *VOTES) if args.votes else FEATURES
    with out.open("wb") as file:
        pickle.dump({"features": names, "pages": data}, file)
    print(f"{out}: {len(data)} pages, {sum(len(page['rows']) for page in data):,} blocks")


if __name__ == "__main__":
    main()
