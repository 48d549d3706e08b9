"""Compiling a spec into arrays: the objective, the constraint rows ``A w <= b`` and the rate
constraints (each constraint type by its record in
:data:`~worker.problem.constraint_types.CONSTRAINT_TYPES`), and the box.
"""
