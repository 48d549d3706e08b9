"""LightTouch in Python: solve a spec in process, run it on a service, or fit a constrained
scikit-learn estimator (docs/python.md).

::

    import lighttouch
    result = lighttouch.solve(spec)                      # in this process
    job = lighttouch.Client(url, api_key).submit(spec)   # on a running service
    model = lighttouch.ConstrainedClassifier(constraints=[...]).fit(X, y, sensitive_features=s)

Errors (one hierarchy, :class:`LightTouchError` at its root): :class:`SpecError` and
:class:`DataError` name the JSON path of what to fix; :class:`RemoteProblem` carries a
service's problem+json fields; :class:`ServiceUnreachable`; :class:`JobFailed`.
"""

from importlib.metadata import PackageNotFoundError, version

from lighttouch.client import (
    AsyncClient,
    AsyncJob,
    Client,
    Event,
    Job,
    JobFailed,
    RemoteProblem,
    ServiceUnreachable,
)
from lighttouch.solving import solve
from worker.errors import DataError, LightTouchError, SpecError
from worker.mixture import Mixture
from worker.result import Result

#: The estimators need scikit-learn (``pip install 'lighttouch[sklearn]'``): imported on use.
ESTIMATORS = ("ConstrainedClassifier", "ConstrainedRegressor")

try:
    __version__ = version("lighttouch")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["AsyncClient", "AsyncJob", "Client", "ConstrainedClassifier", "ConstrainedRegressor",
           "DataError", "Event", "Job", "JobFailed", "LightTouchError", "Mixture",
           "RemoteProblem", "Result", "ServiceUnreachable", "SpecError", "__version__", "solve"]


def __getattr__(name: str):
    """The estimators, imported when first used (they need scikit-learn)."""
    if name not in ESTIMATORS:
        raise AttributeError(f"module 'lighttouch' has no attribute {name!r}")
    try:
        from lighttouch import estimators
    except ImportError as error:
        raise ImportError(f"lighttouch.{name} needs scikit-learn: pip install "
                          f"'lighttouch[sklearn]' ({error})") from error
    return getattr(estimators, name)
