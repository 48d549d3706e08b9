"""Every registered loss: compiled kernels against the numpy reference and the derivative."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.errors import SpecError
from worker.kernels.objective import loss_slope, loss_value
from worker.losses import CLASSES, LOSS_NAMES, LOSSES, QUADRATIC
from worker.spec.models import parse_spec

RECORDS = list(LOSSES.values())
scores = st.floats(-30.0, 30.0, allow_nan=False)


def label_for(record, draw_label: float) -> float:
    return (1.0 if draw_label >= 0 else -1.0) if record.labels == CLASSES else draw_label


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
@settings(max_examples=200, deadline=None)
@given(score=scores, raw_label=st.floats(-5.0, 5.0))
def test_kernels_match_the_numpy_reference(record, score, raw_label):
    label = label_for(record, raw_label)
    s, y = np.array([score]), np.array([label])
    assert loss_value(record.code, score, label) == pytest.approx(
        record.reference_value(s, y)[0], rel=1e-12, abs=1e-12)
    assert loss_slope(record.code, score, label) == pytest.approx(
        record.reference_slope(s, y)[0], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
def test_slope_is_the_derivative_where_it_exists(record):
    rng = np.random.default_rng(record.code)
    for _ in range(200):
        score, label = rng.normal(0.0, 2.0), label_for(record, rng.normal())
        if record.labels == CLASSES and abs(1.0 - label * score) < 1e-3:
            continue                               # the hinge's kink
        h = 1e-6
        numeric = (loss_value(record.code, score + h, label)
                   - loss_value(record.code, score - h, label)) / (2 * h)
        assert loss_slope(record.code, score, label) == pytest.approx(numeric, abs=1e-5)


def test_codes_are_distinct_and_unknown_codes_raise():
    codes = [record.code for record in RECORDS]
    assert len(set(codes)) == len(codes) and QUADRATIC not in codes
    with pytest.raises(ValueError, match="unknown loss code"):
        loss_value(99, 0.0, 1.0)
    with pytest.raises(ValueError, match="unknown loss code"):
        loss_slope(99, 0.0, 1.0)


def test_the_spec_names_an_unknown_loss():
    spec = {"spec_version": 1, "dimension": 2,
            "objective": {"type": "empirical_risk", "loss": "cubic",
                          "data": {"features": [[1.0, 0.0]], "labels": [1.0]}}}
    with pytest.raises(SpecError, match="objective.loss") as caught:
        parse_spec(spec)
    assert "squared_hinge" in str(caught.value)


def test_the_spec_reference_names_every_loss():
    text = (Path(__file__).resolve().parents[2] / "docs" / "spec.md").read_text()
    losses = text[text.index("* Losses"):text.index('Or `{"type": "quadratic"')]
    assert [name for name in LOSS_NAMES if f"`{name}`" not in losses] == []
