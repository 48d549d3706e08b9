"""HTTP routes: ``jobs`` (the ``/v1`` API) and ``health`` (liveness, readiness, metrics)."""
