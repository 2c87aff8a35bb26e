"""The block model: for each block of a page, the probability that it is main content.

Gradient-boosted trees (scikit-learn's HistGradientBoostingClassifier) trained on WCXB's
development split (1,321 pages of seven types, CC-BY-4.0, Murrough Foley) over the block
features of block_features.py and readability's vote; rebuilt, byte for byte, by
`bench/blockmodel/build_model.py` (see the README's model card). The trees ship as a JSON
data file and are evaluated here with numpy, all trees at once, one level at a time: the same
sums as scikit-learn's, without scikit-learn.

It is read once per process, on first use (about 20 ms).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import numpy.typing as npt

from mcp_server_web.fetch.doc.block_features import FEATURES, block_features
from mcp_server_web.fetch.doc.blocks import Block, Segmentation

MODEL_FILE = "block_model.json"
INPUTS: tuple[str, ...] = (*FEATURES, "vote_readability")
"""What the model reads for each block, in order: the block's features, then the share of its words
in readability's output."""


KEEP_PROBABILITY = 0.5
"""The model votes for a block it gives at least this probability of being main content."""


class ModelFileError(RuntimeError):
    """The shipped model file does not fit this code (its inputs differ): a packaging mistake."""


ROW_BATCH = 128
"""Rows evaluated together: every tree's node for every row is an array of rows x trees, several of
them at a time (half a megabyte for a batch), which for all the blocks of a long page at once was
over a hundred megabytes. (512 rows took 2 MB, 16 times a page of 500 short paragraphs, and were
slower: 5.7 against 4.4 ms for 600 rows, the arrays no longer fitting the cache.)"""


@dataclass(frozen=True, slots=True)
class BlockModel:
    """All trees' nodes in flat arrays, tree after tree (``roots`` says where each tree starts); a
    leaf reads input 0 and its children are itself, so that every row can take the same number of
    steps (``depth``) down every tree at once. ``children`` holds each node's right child, then its
    left one: node ``i`` goes to ``children[2 * i + go_left]``, one lookup where a choice between
    two arrays took three."""

    baseline: float
    roots: npt.NDArray[np.intp]
    feature: npt.NDArray[np.intp]
    threshold: npt.NDArray[np.float64]
    children: npt.NDArray[np.intp]
    value: npt.NDArray[np.float64]
    depth: int

    def probabilities(self, rows: Sequence[Sequence[float]] | npt.NDArray[np.float64]) -> list[float]:
        """The probability of each row (one per block, INPUTS in order) being main content."""
        if len(rows) == 0:
            return []
        x = np.asarray(rows, dtype=np.float64)
        raw = np.concatenate(
            [self._raw(x[start : start + ROW_BATCH]) for start in range(0, len(x), ROW_BATCH)]
        )
        return (1.0 / (1.0 + np.exp(-raw))).tolist()  # type: ignore[no-any-return]

    def _raw(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The sum of the trees' values for each row of ``x`` (the log-odds of keeping it)."""
        width = x.shape[1]
        flat = x.ravel()
        starts = (np.arange(x.shape[0], dtype=np.intp) * width)[:, None]
        node = np.broadcast_to(self.roots, (x.shape[0], self.roots.shape[0]))
        for _ in range(self.depth):
            go_left = flat[starts + self.feature[node]] <= self.threshold[node]
            node = self.children[2 * node + go_left]
        result: npt.NDArray[np.float64] = self.baseline + self.value[node].sum(axis=1)
        return result


def load(text: str) -> BlockModel:
    """The model from the JSON that build_model.py writes."""
    data = json.loads(text)
    if tuple(data["inputs"]) != INPUTS:
        raise ModelFileError(
            f"{MODEL_FILE} was trained on other inputs than block_features.py gives; rebuild it "
            "with bench/blockmodel/build_model.py"
        )
    trees = data["trees"]
    sizes = [len(tree["feature"]) for tree in trees]
    roots = np.cumsum([0, *sizes[:-1]]).astype(np.intp)
    feature: list[int] = []
    threshold: list[float] = []
    children: list[int] = []
    value: list[float] = []
    for root, tree in zip(roots.tolist(), trees, strict=True):
        for i, node_feature in enumerate(tree["feature"]):
            leaf = node_feature < 0
            feature.append(0 if leaf else node_feature)
            threshold.append(tree["threshold"][i])
            children.append(root + i if leaf else root + tree["right"][i])
            children.append(root + i if leaf else root + tree["left"][i])
            value.append(tree["value"][i])
    return BlockModel(
        baseline=float(data["baseline"]),
        roots=roots,
        feature=np.array(feature, dtype=np.intp),
        threshold=np.array(threshold, dtype=np.float64),
        children=np.array(children, dtype=np.intp),
        value=np.array(value, dtype=np.float64),
        depth=int(data["depth"]),
    )


_model: BlockModel | None = None


def shipped_model() -> BlockModel:
    """The model in MODEL_FILE, read on first use and kept for the life of the process."""
    global _model
    if _model is None:
        _model = load(resources.files(__package__).joinpath(MODEL_FILE).read_text(encoding="utf-8"))
    return _model


def model_inputs(
    segmentation: Segmentation, readability: dict[Block, float], declared: frozenset[str]
) -> tuple[list[Block], npt.NDArray[np.float64]]:
    """The blocks with text and a row of INPUTS for each; ``readability`` is readability's vote
    (coverage.py) and ``declared`` the types the page declares (block_features.page_types)."""
    blocks, rows = block_features(segmentation, declared, spare=1)
    rows[:, -1] = [readability.get(block, 0.0) for block in blocks]
    return blocks, rows


def model_votes(
    segmentation: Segmentation, readability: dict[Block, float], declared: frozenset[str]
) -> dict[Block, float]:
    """The model's vote for each block with text: 1.0 to keep it, 0.0 not (as selection.VOTE reads)."""
    blocks, rows = model_inputs(segmentation, readability, declared)
    return {
        block: 1.0 if p >= KEEP_PROBABILITY else 0.0
        for block, p in zip(blocks, shipped_model().probabilities(rows), strict=True)
    }
