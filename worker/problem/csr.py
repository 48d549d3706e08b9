"""The canonical CSR form (:mod:`worker.data.csr`) for the compiled problem and the layers
above it, which do not read data themselves."""

from __future__ import annotations

from worker.data.csr import as_csr, for_products, kernel_parts

__all__ = ["as_csr", "for_products", "kernel_parts"]
