"""The format registry (worker.data.formats.REGISTRY) and the tables derived from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.data.helpers import validation_error
from worker.data.formats import REGISTRY
from worker.data.refs import EXTENSIONS, FORMATS, MEDIA_TYPES, OPTION_FORMATS, DataRef
from worker.errors import SpecError
from worker.spec.models import parse_spec

ROOT = Path(__file__).resolve().parents[2]


def test_records_are_consistent():
    assert FORMATS == tuple(REGISTRY) and all(name == record.name
                                              for name, record in REGISTRY.items())
    extensions = [e for record in REGISTRY.values() for e in record.extensions]
    media_types = [m for record in REGISTRY.values() for m in record.media_types]
    assert len(set(extensions)) == len(extensions) == len(EXTENSIONS)  # no extension claimed twice
    assert len(set(media_types)) == len(media_types) == len(MEDIA_TYPES)
    assert all(e.startswith(".") and e == e.lower() for e in extensions)
    options = {option for record in REGISTRY.values() for option in record.options}
    assert options == set(OPTION_FORMATS) and options < set(DataRef.model_fields)
    kinds = {record.partitions.kind for record in REGISTRY.values()}
    assert kinds <= {"lines", "npy", "row_groups", "whole"}
    for record in REGISTRY.values():
        groups = record.partitions
        assert (groups.kind == "row_groups") == (groups.group_rows is not None) \
            == (groups.read_groups is not None)
        assert (groups.kind == "lines") == (groups.read_lines is not None)
        assert groups.header is None or groups.kind == "lines"


def test_the_distributed_reader_asks_the_records_not_the_names():
    """Partitioning, reading and census go through the record's hooks, so a new format needs
    no branch on its name there."""
    for path in (ROOT / "worker" / "distributed").glob("*.py"):
        text = path.read_text(encoding="utf-8").replace(" ", "")
        for name in REGISTRY:
            for test in (f'format=="{name}"', f'format!="{name}"'):
                assert test not in text, f"{path.name} branches on the format {name!r}"


@pytest.mark.parametrize(("uri", "expected"), [
    *((f"file:///d/data{e.upper()}", record.name) for record in REGISTRY.values()
      for e in record.extensions),
    *((f"data:{m},", record.name) for record in REGISTRY.values() for m in record.media_types),
])
def test_every_extension_and_media_type_implies_its_format(uri, expected):
    assert DataRef(uri=uri).format == expected


def test_options_name_every_format_they_apply_to():
    assert "option 'columns' applies to csv, parquet and feather data only, and this " \
           "reference is npy" in validation_error({"uri": "file:///x.npy",
                                                   "columns": [0]})[0]["msg"]
    assert "option 'label_column' applies to csv, parquet and feather" in \
        validation_error({"uri": "file:///x.svm", "label_column": 0})[0]["msg"]


def test_an_unknown_format_is_refused_at_its_json_path():
    spec = {"objective": {"type": "empirical_risk", "loss": "logistic",
                          "data": {"features": {"uri": "file:///x.dat", "format": "orc"},
                                   "labels": [1.0]}}}
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    assert str(info.value).startswith("objective.data.features.format: give "
                                      "'npy', 'npz', 'csv', 'parquet', 'svmlight', 'mtx' or "
                                      "'feather'")
