"""The algorithms of :data:`worker.catalogue.CATALOGUE` over a compiled problem, by role:

- :mod:`.runners`: the iterative and quasi-Newton methods, one module per family, each named
  by its record's :attr:`~worker.catalogue.Algorithm.runner` (and
  :attr:`~worker.catalogue.Algorithm.network_runner`), so the catalogue is the one list of them;
- :mod:`.exact`: the exact methods' conic programs and their runners (a robust ``max_of`` of a
  linear model included);
- :mod:`.run`: what the runners share: options, the chunked loop and its phases, the stopping
  and step rules, the kernel arrays, the one-answer trajectory;
- :mod:`.bounds`: certified lower bounds (weak duality, the Lagrangian gap);
- :mod:`.method_choice` (``auto``) and :mod:`.registry` (resolve the choice once, run it).

A run returns a :class:`~worker.candidates.trajectory.Trajectory` of
:class:`~worker.candidates.snapshots.Candidates`, which the pipeline shrinks.
"""
