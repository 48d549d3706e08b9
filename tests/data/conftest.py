"""Every data test reads with its own, empty parsed-data cache."""

from tests.data.helpers import isolated_data_cache

__all__ = ["isolated_data_cache"]
