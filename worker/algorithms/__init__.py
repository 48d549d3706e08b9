"""Algorithms over a compiled problem: FullTouch, LightTouch, MidTouch and projected SGD.

:func:`worker.algorithms.registry.run_algorithm` is the entry point; :mod:`.arrays` turns a
:class:`~worker.problem.CompiledProblem` into kernel arrays, :mod:`.driver` runs the
compiled loop in chunks and keeps candidate snapshots.
"""
