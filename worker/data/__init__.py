"""Data by reference: URIs and inline values (:mod:`.refs`), where bytes come from
(:mod:`.sources`), formats (:mod:`.formats`), the parse cache, label rules and the data settings.
"""
