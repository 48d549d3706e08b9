"""Models on raw tables (docs/tables.md): columns read by name, fixed calibrators and lattice
interpolation, groups by column, and the lowering of a calibrated model's spec into the
engine's hand-built spec (:mod:`.lower`)."""
