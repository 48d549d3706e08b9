"""LightTouch HTTP edge: FastAPI app, auth, routes, SSE relay, settings (docs/architecture.md)."""
