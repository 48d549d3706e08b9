"""Certified lower bounds on the optimum: the objective without its regularizer in numpy
(:mod:`.smooth_part`), weak duality from any multipliers (:mod:`.dual_bound`) and the
Lagrangian gap of ``iterations: "auto"`` (:mod:`.certificate`)."""
