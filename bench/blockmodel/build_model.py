"""Build the block model web_fetch ships (src/mcp_server_web/fetch/doc/block_model.json), and
cross-validate it through the real main_content (see README.md, and the README's model card).

Usage (from the repository root; needs the `train` dependency group, and ../shared/bench or
BENCH_SHARED_DIR):

    .venv/bin/python bench/blockmodel/build_model.py                    # ~3 min: rebuilds the file
    .venv/bin/python bench/blockmodel/build_model.py --cross-validate   # ~4 min more: the figures
                                        # (bench/results/blockmodel.json, bench/README.md's table)

Every page of WCXB's development split (wcxb-dev and wcxb-train, 1,321 pages of seven types,
CC-BY-4.0) is read as web_fetch reads it up to readability's vote (extract.first_reading) and each
block with text becomes a row of block_model.INPUTS, labelled with the share of its words in the
page's reviewed main text (dataset.label_blocks). scikit-learn's HistGradientBoostingClassifier,
on one thread with a fixed seed, learns keep/drop from them, each page weighing the same; the trees
are written out as JSON (exact floats, sorted keys), so the same data gives the same file, byte
for byte. zyte is never trained on; WCXB's test split is never read.

--cross-validate fits five more models, on folds grouped by site, and scores web_fetch's
main_content as the benchmark does with each wcxb-dev page read by the model whose training saw
none of its site's pages; then the shipped model on wcxb-dev (in-sample) and zyte (never seen).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread: the same trees on every machine

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dataset  # noqa: E402

from mcp_server_web.fetch.doc import block_model, extract  # noqa: E402
from mcp_server_web.fetch.doc.html_tree import parse_html  # noqa: E402

SHIPPED = Path(block_model.__file__).with_name(block_model.MODEL_FILE)
README = HERE.parent / "README.md"
RESULTS = HERE.parent / "results" / "blockmodel.json"
TREES = 150
DEPTH = 8
LEAF_BLOCKS = 40
"""The model's size and regularisation: 150 trees of depth at most 8 (at most 31 leaves each, at
least 40 blocks a leaf). Smaller models (60 trees of depth 6) lost on both sets; see README.md."""


def page_rows(item: tuple[str, str, str, str]) -> dict[str, Any] | None:
    """One page's rows, labels and words (dataset.py's record)."""
    name, page_id, _, url = item
    folder = dataset.DATA / name / ("pages" if name == "zyte" else "html")
    html = gzip.decompress((folder / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
    root = parse_html(html)
    if root is None:
        return None
    page = extract.prepare(root, url)
    first = extract.first_reading(root, page)
    blocks, rows = block_model.model_inputs(first.segmentation, first.readability, page.types)
    return dataset.record(item, first.segmentation, blocks, rows)


def fit(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """A model trained on ``pages``, as the JSON block_model.load reads."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    rows = np.array([row for page in pages for row in page["rows"]], dtype=np.float64)
    keep = np.array([label >= 0.5 for page in pages for label in page["labels"]])
    weight = np.array(
        [len(tokens) / max(sum(map(len, page["btokens"])), 1) for page in pages for tokens in page["btokens"]]
    )
    fitted = HistGradientBoostingClassifier(
        max_iter=TREES,
        learning_rate=0.1,
        max_depth=DEPTH,
        min_samples_leaf=LEAF_BLOCKS,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=0,
    ).fit(rows, keep, sample_weight=weight)
    trees = []
    depth = 0
    for (predictor,) in fitted._predictors:
        nodes = predictor.nodes
        leaf = nodes["is_leaf"].astype(bool)
        depth = max(depth, int(nodes["depth"].max()))
        trees.append(
            {
                "feature": [
                    -1 if is_leaf else int(f) for f, is_leaf in zip(nodes["feature_idx"], leaf, strict=True)
                ],
                "threshold": [
                    0.0 if is_leaf else float(t)
                    for t, is_leaf in zip(nodes["num_threshold"], leaf, strict=True)
                ],
                "left": [0 if is_leaf else int(i) for i, is_leaf in zip(nodes["left"], leaf, strict=True)],
                "right": [0 if is_leaf else int(i) for i, is_leaf in zip(nodes["right"], leaf, strict=True)],
                "value": [
                    float(v) if is_leaf else 0.0 for v, is_leaf in zip(nodes["value"], leaf, strict=True)
                ],
            }
        )
    return {
        "about": (
            "mcp-server-web's block model: gradient-boosted trees over block_model.INPUTS, trained on "
            "WCXB v1.0's development split (CC-BY-4.0, Murrough Foley); rebuilt by "
            "bench/blockmodel/build_model.py"
        ),
        "inputs": list(block_model.INPUTS),
        "baseline": float(fitted._baseline_prediction.ravel()[0]),
        "depth": depth,
        "trees": trees,
    }


def write(model: dict[str, Any], path: Path) -> str:
    text = json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n"
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- cross-validation through main_content -------------------------------------------------------

_models: dict[str, Any] = {}


def _start_scorer(fold_of: dict[str, int], models: list[str]) -> None:
    _models["fold_of"] = fold_of
    _models["models"] = [block_model.load(text) for text in models]


def _score_page(row: dict[str, Any]) -> tuple[str, float, float]:
    """The page's type, F1 and CPU seconds of main_content, read by the model of its site's fold
    (the last model when its site is in none)."""
    sys.path.insert(0, str(dataset.SHARED))
    import score_extraction

    fold = _models["fold_of"].get(urlsplit(row["url"]).hostname, -1)
    block_model._model = _models["models"][fold]  # the experiment's swap; web_fetch never does this
    html = gzip.decompress(Path(row["path"]).read_bytes()).decode("utf-8", "replace")
    started = time.process_time()
    text = extract.main_content(html, row["url"])
    seconds = time.process_time() - started
    found = score_extraction.tokenize(score_extraction.strip_markdown(text))
    truth = score_extraction.tokenize(row["truth"])
    return row["type"] or "article", score_extraction.prf(found, truth)[2], seconds


def score(name: str, fold_of: dict[str, int], models: list[str], processes: int) -> dict[str, Any]:
    sys.path.insert(0, str(dataset.SHARED))
    import score_extraction

    rows = score_extraction.load_dataset(dataset.DATA / name)
    with Pool(processes, initializer=_start_scorer, initargs=(fold_of, models)) as pool:
        results = pool.map(_score_page, rows, chunksize=8)
    by_type: dict[str, list[float]] = {}
    for page_type, f1, _ in results:
        by_type.setdefault(page_type, []).append(f1)
    return {
        "pages": len(results),
        "f1": round(statistics.fmean(f1 for _, f1, _ in results), 4),
        "types": {t: round(statistics.fmean(v), 4) for t, v in sorted(by_type.items())}
        if len(by_type) > 1
        else {},
    }


def cross_validate(pages: list[dict[str, Any]], shipped: str, processes: int) -> dict[str, Any]:
    import numpy as np
    from sklearn.model_selection import GroupKFold

    development = [page for page in pages if page["set"] != "zyte"]
    sites = {site: i for i, site in enumerate(sorted({page["site"] for page in development}))}
    groups = np.array([sites[page["site"]] for page in development])
    fold_of: dict[str, int] = {}
    folds: list[str] = []
    splits = GroupKFold(5).split(np.zeros(len(development)), groups=groups)
    for k, (train, test) in enumerate(splits):
        folds.append(json.dumps(fit([development[i] for i in train])))
        fold_of.update({development[i]["site"]: k for i in test})
        print(f"  fold {k + 1} of 5 trained", file=sys.stderr, flush=True)
    return {
        "wcxb-dev cross-validated": score("wcxb-dev", fold_of, [*folds, shipped], processes),
        "wcxb-dev in-sample": score("wcxb-dev", {}, [shipped], processes),
        "zyte": score("zyte", {}, [shipped], processes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cross-validate", action="store_true", help="also the cross-validated figures")
    parser.add_argument("--out", type=Path, default=SHIPPED, help="where to write the model")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sys.setrecursionlimit(10_000)
    with Pool(args.processes) as pool:
        pages = [page for page in pool.map(page_rows, dataset.pages(), chunksize=8) if page is not None]
    development = [page for page in pages if page["set"] != "zyte"]
    print(f"{len(development)} pages, {sum(len(p['rows']) for p in development):,} blocks", file=sys.stderr)
    model = fit(development)
    shipped = SHIPPED.read_bytes() if SHIPPED.exists() else b""  # before --out may write over it
    args.out.parent.mkdir(parents=True, exist_ok=True)
    digest = write(model, args.out)
    size = args.out.stat().st_size
    print(f"{args.out}: {size:,} bytes, sha256 {digest}…, {len(model['trees'])} trees", file=sys.stderr)
    same = args.out.read_bytes() == shipped
    print(f"the shipped {SHIPPED.name} rebuilt byte for byte: {'yes' if same else 'NO'}", file=sys.stderr)
    if args.cross_validate:
        figures = cross_validate(pages, json.dumps(model), args.processes)
        figures["model"] = {
            "bytes": size,
            "sha256": digest,
            "trees": len(model["trees"]),
            "same_as_shipped": same,
        }
        RESULTS.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(figures, indent=1))
        write_table(figures)


TYPES = ("article", "documentation", "service", "forum", "listing", "collection", "product")


def write_table(figures: dict[str, Any]) -> None:
    """The per-type table between bench/README.md's <!-- bench:blockmodel --> markers."""
    rows = [
        "| through `main_content` | all | " + " | ".join(TYPES) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in TYPES) + " |",
    ]
    for name in ("wcxb-dev cross-validated", "wcxb-dev in-sample", "zyte"):
        entry = figures[name]
        cells = [f"{entry['types'][t]:.3f}" if t in entry["types"] else "" for t in TYPES]
        rows.append(f"| {name} | {entry['f1']:.3f} | " + " | ".join(cells) + " |")
    model = figures["model"]
    rows += [
        "",
        f"The model: {model['trees']} trees, {model['bytes']:,} bytes, sha256 `{model['sha256']}…`; "
        f"the shipped file rebuilt byte for byte: {'yes' if model['same_as_shipped'] else 'no'}.",
    ]
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(r"(<!-- bench:blockmodel -->\n)(.*?)(<!-- /bench:blockmodel -->)", re.S)
    if not pattern.search(text):
        print("bench/README.md has no <!-- bench:blockmodel --> markers: table not written", file=sys.stderr)
        return
    README.write_text(
        pattern.sub(lambda m: m.group(1) + "\n".join(rows) + "\n" + m.group(3), text), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
