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


@dataclass(frozen=True, slots=True)
class BlockModel:
    """Trees as (tree, node) arrays; a leaf's feature is -1 and its children are itself."""

    baseline: float
    feature: npt.NDArray[np.intp]
    threshold: npt.NDArray[np.float64]
    left: npt.NDArray[np.intp]
    right: npt.NDArray[np.intp]
    value: npt.NDArray[np.float64]
    depth: int

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """The probability of each row (one per block, INPUTS in order) being main content."""
        if not rows:
            return []
        x = np.asarray(rows, dtype=np.float64)
        count, trees = x.shape[0], self.feature.shape[0]
        tree = np.arange(trees)[None, :]
        row = np.arange(count)[:, None]
        node = np.zeros((count, trees), dtype=np.intp)
        for _ in range(self.depth):
            feature = self.feature[tree, node]
            # A leaf's feature is -1: it reads the last input, and goes to itself either way.
            go_left = x[row, feature] <= self.threshold[tree, node]
            node = np.where(go_left, self.left[tree, node], self.right[tree, node])
        raw = self.baseline + self.value[tree, node].sum(axis=1)
        return [float(p) for p in 1.0 / (1.0 + np.exp(-raw))]


def load(text: str) -> BlockModel:
    """The model from the JSON that build_model.py writes."""
    data = json.loads(text)
    if tuple(data["inputs"]) != INPUTS:
        raise ModelFileError(
            f"{MODEL_FILE} was trained on other inputs than block_features.py gives; rebuild it "
            "with bench/blockmodel/build_model.py"
        )
    trees = data["trees"]
    width = max(len(tree["feature"]) for tree in trees)
    shape = (len(trees), width)
    feature = np.full(shape, -1, dtype=np.intp)
    threshold = np.zeros(shape, dtype=np.float64)
    left = np.zeros(shape, dtype=np.intp)
    right = np.zeros(shape, dtype=np.intp)
    value = np.zeros(shape, dtype=np.float64)
    for i, tree in enumerate(trees):
        n = len(tree["feature"])
        feature[i, :n] = tree["feature"]
        threshold[i, :n] = tree["threshold"]
        left[i, :n] = tree["left"]
        right[i, :n] = tree["right"]
        value[i, :n] = tree["value"]
        for j in range(n):
            if tree["feature"][j] < 0:
                left[i, j] = right[i, j] = j
    return BlockModel(
        baseline=float(data["baseline"]),
        feature=feature,
        threshold=threshold,
        left=left,
        right=right,
        value=value,
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
) -> tuple[list[Block], list[list[float]]]:
    """The blocks with text and a row of INPUTS for each; ``readability`` is readability's vote
    (coverage.py) and ``declared`` the types the page declares (block_features.page_types)."""
    blocks, rows = block_features(segmentation, declared)
    return blocks, [[*row, readability.get(block, 0.0)] for block, row in zip(blocks, rows, strict=True)]


def model_votes(
    segmentation: Segmentation, readability: dict[Block, float], declared: frozenset[str]
) -> dict[Block, float]:
    """The model's vote for each block with text: 1.0 to keep it, 0.0 not (as selection.VOTE reads)."""
    blocks, rows = model_inputs(segmentation, readability, declared)
    return {
        block: 1.0 if p >= KEEP_PROBABILITY else 0.0
        for block, p in zip(blocks, shipped_model().probabilities(rows), strict=True)
    }
