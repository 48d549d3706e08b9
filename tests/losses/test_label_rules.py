"""Every loss's label rule: what it accepts, what the kernels receive, what users read."""

from __future__ import annotations

import numpy as np
import pytest

from worker.data.formats.tabular import LABEL_RULE
from worker.data.labels import checked_labels, label_kind
from worker.errors import DataError, SpecError
from worker.losses import CLASSES, LOSSES, TARGETS

RECORDS = list(LOSSES.values())


def test_every_loss_names_one_of_the_rules():
    assert {record.labels for record in RECORDS} == {CLASSES, TARGETS}
    assert label_kind("squared_hinge") is CLASSES and label_kind("squared") is TARGETS


def test_class_labels_accept_plus_minus_one_and_read_zero_as_minus_one():
    labels = np.array([1.0, -1.0, 0.0, 1.0])
    assert checked_labels(labels, CLASSES, "labels").tolist() == [1.0, -1.0, -1.0, 1.0]
    with pytest.raises(SpecError, match=r"objective.data.labels\[1\]: 2.0 is not a class "
                                        r"label; give \+1/-1 \(or 1/0, 0 meaning -1\)"):
        checked_labels(np.array([1.0, 2.0]), CLASSES, "labels")


def test_targets_take_any_finite_number_unchanged():
    labels = np.array([0.5, -3.0, 0.0, 7.25])
    assert checked_labels(labels, TARGETS, "labels").tolist() == labels.tolist()


@pytest.mark.parametrize("rule", [CLASSES, TARGETS], ids=lambda rule: rule.name)
def test_every_rule_refuses_non_finite_labels(rule):
    with pytest.raises(DataError, match="the label of row 1 is nan"):
        checked_labels(np.array([1.0, np.nan]), rule, "objective.data")


def test_the_file_readers_message_lists_every_loss_under_its_rule():
    for record in RECORDS:
        sentence = f"{record.labels.sentence} for "
        assert sentence in LABEL_RULE
        names = LABEL_RULE.split(sentence)[1].split(";")[0]
        assert record.name in names.split(", ")
