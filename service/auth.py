"""Bearer API keys → tenants (``LIGHTTOUCH_API_KEYS``)."""

from __future__ import annotations

import hashlib

from service.errors import Unauthorized

#: The one tenant of open dev mode (no keys configured).
DEV_TENANT = "dev"


def _digest(api_key: str) -> bytes:
    return hashlib.sha256(api_key.encode()).digest()


class KeyRing:
    """Looks tenants up by key digest, so lookups take the same time whatever the key."""

    def __init__(self, api_keys: dict[str, str]):
        self._tenants = {_digest(api_key): tenant for api_key, tenant in api_keys.items()}

    def tenant(self, api_key: str | None) -> str:
        """The tenant of ``api_key``; :class:`Unauthorized` if it is missing or unknown."""
        if not self._tenants:
            return DEV_TENANT
        if not api_key:
            raise Unauthorized("send 'Authorization: Bearer <API key>'")
        tenant = self._tenants.get(_digest(api_key))
        if tenant is None:
            raise Unauthorized("unknown API key")
        return tenant
