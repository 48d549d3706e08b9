"""What every reader returns: the values a file holds and the labels it carries, if any."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

Values = np.ndarray | sp.spmatrix | sp.sparray


@dataclass(frozen=True)
class Parsed:
    """The values (ndarray or scipy sparse), and the labels when the file carries them."""

    values: Values
    labels: np.ndarray | None = None
