"""Data sets that ship with LightTouch, for examples: UCI Adult as pandas DataFrames."""

from __future__ import annotations

from importlib.resources import files
from typing import Any


def adult() -> tuple[Any, Any]:
    """UCI Adult (Becker & Kohavi 1996, CC BY 4.0) as shipped: (train, test) DataFrames of
    32,561 and 16,281 rows, 14 feature columns and ``Y`` (``<=50K`` or ``>50K``; the test
    file's trailing periods removed). Needs pandas."""
    import pandas as pd

    folder = files("worker.datasets") / "uci_adult"
    frames = []
    for name in ("adult.data", "adult.test"):
        with (folder / name).open("r", encoding="utf-8") as handle:
            frame = pd.read_csv(handle, skipinitialspace=True, na_values="?")
        frame["Y"] = frame["Y"].str.rstrip(".")
        frames.append(frame)
    return frames[0], frames[1]
