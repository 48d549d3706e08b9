"""The report of a Result (docs/results.md): objective, classification error and every
constraint of the spec, on training and validation data, for the mixture (in expectation over
its weights), its mean, the projection and the deterministic model; rates with bootstrap
intervals on validation data.

``schema`` is the Result's ``report`` (pydantic, no other imports); ``metrics`` and
``bootstrap`` the numbers on plain arrays; ``split`` the held-out rows of
``validation.fraction``; ``build`` puts a report together from a spec, its data and the
deployed points.
"""
