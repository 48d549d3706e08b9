"""The algorithms of :data:`worker.catalogue.CATALOGUE` over a compiled problem: one runner
module each (:mod:`.touch`, :mod:`.epro`, :mod:`.epro_orda`, :mod:`.svrg_ol`, :mod:`.games`,
:mod:`.network_games`).

:func:`worker.algorithms.registry.run_algorithm` is the entry point; :mod:`.arrays` turns a
:class:`~worker.problem.compiled.CompiledProblem` into kernel arrays, :mod:`.driver` runs the
compiled loop in chunks and keeps candidate snapshots.
"""
