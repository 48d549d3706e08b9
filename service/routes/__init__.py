"""HTTP routes: ``jobs`` (the ``/v1`` API), ``algorithms``, ``health`` (liveness, readiness,
metrics) and ``home`` (``GET /``: the dashboard for a browser, links for a client)."""
