"""The problem spec: pydantic models of the JSON a user sends, and
:func:`~worker.spec.models.parse_spec` (errors name the JSON path).
"""
