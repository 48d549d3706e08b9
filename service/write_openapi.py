"""``python -m service.write_openapi``: write ``openapi/openapi.json`` from a default app."""

from __future__ import annotations

import sys

from service.app import create_app
from service.openapi import COMMITTED, render
from service.settings import ServiceSettings


def main() -> int:
    """Write the committed OpenAPI document; print where."""
    COMMITTED.write_text(render(create_app(ServiceSettings())), encoding="utf-8")
    sys.stdout.write(f"wrote {COMMITTED}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
