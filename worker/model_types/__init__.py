"""The spec's model types, one :class:`~worker.model_types.record.ModelType` record each in
:data:`MODEL_TYPES`.

A record owns its spec model, how the spec compiles (lowered to the engine's linear problem
for the models on raw tables; the network layout for the models the network kernels score),
the parameters the spec fixes (the memory estimate before any data are read,
:func:`worker.pipeline.memory.declared_parts`), the Result's description of it and how a
Result's model scores rows. The pipeline (:mod:`worker.pipeline.solve`,
:mod:`worker.pipeline.validate`), the memory estimate, the report and
:class:`worker.mixture.Mixture` ask the record. Adding a model type is its spec model, its
record module here and one line below.
"""

from __future__ import annotations

from worker.model_types import calibrated_lattice, calibrated_linear, linear, mlp
from worker.model_types.record import ModelType

MODEL_TYPES: dict[str, ModelType] = {record.name: record for record in (
    linear.RECORD,
    mlp.RECORD,
    calibrated_linear.RECORD,
    calibrated_lattice.RECORD,
)}
