"""Compiling a spec into arrays: the objective, the constraint rows ``A w <= b``
(:data:`~worker.problem.compile.CONSTRAINT_BLOCKS`), the box, and rate constraints.
"""
