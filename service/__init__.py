"""LightTouch HTTP edge: FastAPI app, auth, routes, SSE relay, settings (DESIGN §2, §5-§7)."""
