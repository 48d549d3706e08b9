"""sweep.path: every path written from names, [k] and [*] reads back as its steps."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.spec.sweep import path_steps

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: name != "sweep")
STEPS = st.one_of(NAMES, st.integers(0, 10**6), st.just("*"))


def written(steps: list[str | int]) -> str:
    text = ""
    for step in steps:
        if isinstance(step, int) or step == "*":
            text += f"[{step}]"
        else:
            text += f".{step}" if text else step
    return text


@given(NAMES, st.lists(STEPS, max_size=6))
def test_written_paths_read_back(first, rest):
    steps = [first, *rest]
    assert path_steps(written(steps)) == steps


@pytest.mark.parametrize("path", ["", ".a", "a.", "a..b", "[0]", "a[-1]", "a[x]", "sweep.path",
                                  "a b"])
def test_unreadable_paths_say_so(path):
    with pytest.raises(ValueError):
        path_steps(path)
