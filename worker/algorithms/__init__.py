"""The algorithms of :data:`worker.catalogue.CATALOGUE` over a compiled problem: one runner
module each, named by its record's :attr:`~worker.catalogue.Algorithm.runner` (and
:attr:`~worker.catalogue.Algorithm.network_runner`), so the catalogue is the one list of
them; on networks and robust objectives the games of :mod:`.network_games`, and the exact
epigraph program of :mod:`.exact_robust` for a small robust linear problem.

:func:`worker.algorithms.registry.run_algorithm` is the entry point; :mod:`.arrays` turns a
:class:`~worker.problem.compiled.CompiledProblem` into kernel arrays, :mod:`.driver` runs the
compiled loop in chunks and keeps candidate snapshots.
"""
