"""Train and cross-validate a per-block keep/drop model on the development split (see README.md).

Usage (from the repository root, after dataset.py; needs the `train` dependency group:
`uv pip install --group train` or `.venv/bin/pip install scikit-learn numpy`):

    .venv/bin/python bench/blockmodel/train.py                 # own blocks: the model decides alone
    .venv/bin/python bench/blockmodel/train.py --votes         # + the extractors' votes, and as a
                                                               # correction of the rules' decisions

A gradient-boosted tree model (scikit-learn's HistGradientBoostingClassifier, fixed seed) learns
whether a block is main content from its FEATURES, each page weighing the same (a block weighs
its share of its page's words, as the page-averaged F1 does). Five folds grouped by site: no site
is in both the training and the scored part. Scored as the benchmark scores: per page, F1 of the
words of the kept blocks against the reviewed text; the mean over wcxb-dev's 543 pages, per type;
zyte (never trained on) by a model trained on all 1,321 development pages.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mcp_server_web.fetch.doc.block_features import CATEGORICAL  # noqa: E402

Page = dict[str, Any]
Decide = Callable[[Page, Sequence[float]], list[bool]]


def model(features: Sequence[str], trees: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(
        max_iter=trees,
        learning_rate=0.1,
        max_depth=8,
        min_samples_leaf=40,
        l2_regularization=1.0,
        categorical_features=[name in CATEGORICAL for name in features],
        random_state=0,
    )


def arrays(pages: list[Page]) -> tuple[Any, Any, Any]:
    rows = np.array([row for page in pages for row in page["rows"]], dtype=np.float64)
    keep = np.array([label >= 0.5 for page in pages for label in page["labels"]])
    weight = np.array(
        [len(tokens) / max(sum(map(len, page["btokens"])), 1) for page in pages for tokens in page["btokens"]]
    )
    return rows, keep, weight


def f1(kept: Counter[str], gold: Counter[str]) -> float:
    common = sum((kept & gold).values())
    if not common:
        return 0.0
    precision, recall = common / sum(kept.values()), common / sum(gold.values())
    return 2 * precision * recall / (precision + recall)


def page_f1(page: Page, keep: list[bool]) -> float:
    kept: Counter[str] = Counter()
    for tokens, chosen in zip(page["btokens"], keep, strict=True):
        if chosen:
            kept.update(tokens)
    return f1(kept, page["gold"])


def predict(fitted: HistGradientBoostingClassifier, page: Page) -> list[float]:
    return list(fitted.predict_proba(np.array(page["rows"]))[:, 1]) if page["rows"] else []


def report(label: str, pages: list[Page], probabilities: list[list[float]], decide: Decide) -> float:
    by_type: dict[str, list[float]] = defaultdict(list)
    for page, probs in zip(pages, probabilities, strict=True):
        if page["set"] == "wcxb-dev":
            by_type[page["type"]].append(page_f1(page, decide(page, probs)))
    mean = float(np.mean([score for scores in by_type.values() for score in scores]))
    types = " ".join(f"{name} {np.mean(scores):.3f}" for name, scores in sorted(by_type.items()))
    print(f"{label:44s} wcxb-dev {mean:.4f}  {types}")
    return mean


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--votes", action="store_true", help="read dataset.py --votes's rows")
    parser.add_argument("--trees", type=int, default=150)
    args = parser.parse_args()
    with (HERE / ".cache" / ("votes.pkl" if args.votes else "own.pkl")).open("rb") as file:
        data = pickle.load(file)
    features: list[str] = list(data["features"])
    development = [page for page in data["pages"] if page["set"] != "zyte"]
    zyte = [page for page in data["pages"] if page["set"] == "zyte"]
    sites = {site: i for i, site in enumerate(sorted({page["site"] for page in development}))}
    groups = np.array([sites[page["site"]] for page in development])

    held_out: list[list[float]] = [[] for _ in development]
    for train, test in GroupKFold(5).split(np.zeros(len(development)), groups=groups):
        fitted = model(features, args.trees).fit(*arrays([development[i] for i in train]))
        for i in test:
            held_out[i] = predict(fitted, development[i])
    everything = model(features, args.trees).fit(*arrays(development))
    in_sample = [predict(everything, page) for page in development]
    on_zyte = [predict(everything, page) for page in zyte]

    def threshold(at: float) -> Decide:
        return lambda page, probs: [p >= at for p in probs]

    def zyte_f1(decide: Decide) -> float:
        return float(
            np.mean([page_f1(page, decide(page, probs)) for page, probs in zip(zyte, on_zyte, strict=True)])
        )

    decisions: dict[str, Decide] = {f"model >= {at}": threshold(at) for at in (0.3, 0.4, 0.5, 0.6)}
    if args.votes:
        rules, article = features.index("rules_keep"), features.index("rules_article")
        decisions["rules alone"] = lambda page, probs: [bool(row[rules]) for row in page["rows"]]

        def correct(drop_below: float, add_above: float, article_too: bool) -> Decide:
            def decide(page: Page, probs: Sequence[float]) -> list[bool]:
                if not article_too and page["rows"] and page["rows"][0][article]:
                    return [bool(row[rules]) for row in page["rows"]]
                return [
                    p >= drop_below if row[rules] else p >= add_above
                    for row, p in zip(page["rows"], probs, strict=True)
                ]

            return decide

        for low, high, article_too in itertools.product((0.1, 0.2, 0.3), (0.7, 0.8, 0.9), (True, False)):
            where = "all pages" if article_too else "region-mode pages"
            decisions[f"rules, corrected {low}/{high}, {where}"] = correct(low, high, article_too)
    for name, decide in decisions.items():
        report(f"{name}, cross-validated", development, held_out, decide)
        report(f"{name}, in-sample", development, in_sample, decide)
        print(f"{'':44s} zyte {zyte_f1(decide):.4f}")


if __name__ == "__main__":
    main()
