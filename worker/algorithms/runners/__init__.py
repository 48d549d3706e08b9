"""The runners of the iterative and quasi-Newton methods, one module per family, each named by
its record's :attr:`~worker.catalogue.Algorithm.runner` in :data:`worker.catalogue.CATALOGUE`."""
