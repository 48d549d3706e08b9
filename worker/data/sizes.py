"""The largest size a spec or a data file may give any axis; byte counts as messages say them."""

from __future__ import annotations

#: Largest dimension, matrix side or feature index + 1: 2**27 keeps a CSR row-pointer array
#: and every per-coordinate array of the kernels under 1 GiB.
MAX_SIZE = 2**27


def gib(count: int) -> str:
    """Bytes as a message says them: ``1.50 GiB``."""
    return f"{count / 2**30:,.2f} GiB"
