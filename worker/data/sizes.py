"""The largest size a spec or a data file may give any axis."""

from __future__ import annotations

#: Largest dimension, matrix side or feature index + 1: 2**27 keeps a CSR row-pointer array
#: and every per-coordinate array of the kernels under 1 GiB.
MAX_SIZE = 2**27
