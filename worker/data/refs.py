"""The data values a spec may hold where it expects a ``<matrix>`` or a ``<vector>``.

A matrix is inline nested lists of numbers, an inline sparse ``{"format": "coo", ...}``
object, or a data reference ``{"uri": ..., "format": ...}`` (the formats of
:data:`worker.data.formats.REGISTRY`); a vector is an inline list of numbers or a data
reference. These models only say what a value *is*; :mod:`worker.data.read` turns them
into arrays.

``MatrixValue`` and ``VectorValue`` pick their member from the value's shape (a list is
inline, an object with ``uri`` or a non-``coo`` format is a reference, any other object is
COO) and validate only that member, so an error names one problem at the value's own JSON
path (``features.row.5``) instead of one failure per union member.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal, NamedTuple
from urllib.parse import unquote, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from worker.data.formats import REGISTRY
from worker.data.sizes import MAX_SIZE

#: The format names a reference accepts, in registry order.
FORMATS: tuple[str, ...] = tuple(REGISTRY)
Format = Literal[FORMATS]

#: File-name extensions (of the URI's path) that fix the format when ``format`` is omitted.
EXTENSIONS = {extension: record.name for record in REGISTRY.values()
              for extension in record.extensions}

#: ``data:`` media types that fix the format (a ``;format=<name>`` parameter also does).
MEDIA_TYPES = {media_type: record.name for record in REGISTRY.values()
               for media_type in record.media_types}

#: The format-specific options of :class:`DataRef`.
FORMAT_OPTIONS = ("key", "header", "columns", "label_column", "zero_based", "n_features")

#: The formats each format-specific option of :class:`DataRef` applies to.
OPTION_FORMATS = {option: tuple(record.name for record in REGISTRY.values()
                                if option in record.options)
                  for option in FORMAT_OPTIONS}


Number = Annotated[float, Strict()]
Index = Annotated[int, Strict()]
Size = Annotated[int, Strict(), Field(ge=0, le=MAX_SIZE)]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def uri_scheme(uri: str) -> str:
    """The URI's scheme in lower case, or ``""`` when it has none."""
    match = _SCHEME.match(uri)
    return match.group(1).lower() if match else ""


class DataUri(NamedTuple):
    """The parts of an RFC 2397 ``data:[<media type>][;<param>=<value>]*[;base64],<payload>``."""

    media_type: str
    params: dict[str, str]
    base64: bool
    payload: str


def parse_data_uri(uri: str) -> DataUri:
    """Split a ``data:`` URI into its parts; ValueError when it has no ``,`` before the payload."""
    header, comma, payload = uri[len("data:"):].partition(",")
    if not comma:
        raise ValueError("malformed data: URI: no ',' separates the header from the payload")
    media_type, *params = header.split(";")
    is_base64 = bool(params) and params[-1].strip().lower() == "base64"
    if is_base64:
        params.pop()
    pairs = (param.partition("=") for param in params)
    return DataUri(media_type.strip().lower(),
                   {name.strip().lower(): unquote(value).strip() for name, _, value in pairs},
                   is_base64, payload)


def _listed(names: tuple[str, ...]) -> str:
    """Names for a message: ``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(filter(None, (", ".join(names[:-1]), names[-1])))


def infer_format(uri: str) -> str:
    """The format a URI implies: its ``data:`` media type or parameter, else its extension."""
    if uri_scheme(uri) == "data":
        header = parse_data_uri(uri)
        named = header.params.get("format") or MEDIA_TYPES.get(header.media_type)
        if named in FORMATS:
            return named
        raise ValueError(f"cannot tell the format of this data: URI (media type "
                         f"{header.media_type or 'none'!r}); set \"format\" to one of "
                         f"{', '.join(FORMATS)}, or use a media type such as application/x-npy")
    suffix = PurePosixPath(unquote(urlsplit(uri).path)).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    raise ValueError(f"cannot tell the format from the URI's extension; set \"format\" to one "
                     f"of {', '.join(FORMATS)} (or name the file .npy, .npz, .csv, ...)")


class CooMatrix(BaseModel):
    """An inline sparse matrix in coordinate form: entry k is ``data[k]`` at ``(row[k], col[k])``.

    Duplicate coordinates are summed when the matrix is read.
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["coo"]
    shape: tuple[Size, Size]
    row: list[Index]
    col: list[Index]
    data: list[Number]

    @model_validator(mode="after")
    def _check_entries(self) -> CooMatrix:
        """Equal lengths, and every index inside ``shape``."""
        if not len(self.row) == len(self.col) == len(self.data):
            raise ValueError(f"row, col and data need equal lengths, got {len(self.row)}, "
                             f"{len(self.col)} and {len(self.data)}")
        for axis, name in enumerate(("row", "col")):
            limit = self.shape[axis]
            for k, index in enumerate(getattr(self, name)):
                if not 0 <= index < limit:
                    raise ValueError(f"{name}[{k}] = {index} is out of range for "
                                     f"shape[{axis}] = {limit}")
        return self


class DataRef(BaseModel):
    """A reference to data outside the spec: ``{"uri": ..., "format": ..., ...options}``.

    ``format`` is inferred when omitted (see :func:`infer_format`); after validation it is
    always set. Options that do not apply to the format are refused:

    - ``key`` (npz): the archive member; needed when the archive holds several arrays.
    - ``header`` (csv, default true): the first line names the columns.
    - ``columns`` (csv, parquet, feather): feature columns by name or 0-based index; default
      all but the label column.
    - ``label_column`` (csv, parquet, feather): the column holding the labels (numbers only).
    - ``zero_based`` (svmlight): index base; when omitted, one-based unless an index is 0.
    - ``n_features`` (svmlight): the number of columns; default the largest index.
    - ``sha256`` (any): the SHA-256 of the bytes; a mismatch is an error.
    """

    model_config = ConfigDict(extra="forbid")

    uri: Annotated[str, Strict(), Field(min_length=1)]
    format: Format | None = None
    key: Annotated[str, Strict(), Field(min_length=1)] | None = None
    header: Annotated[bool, Strict()] = True
    columns: list[Annotated[str, Strict()] | Size] | None = None
    label_column: Annotated[str, Strict()] | Size | None = None
    zero_based: Annotated[bool, Strict()] | None = None
    n_features: Annotated[int, Strict(), Field(gt=0)] | None = None
    sha256: Annotated[str, Strict()] | None = None

    @field_validator("sha256")
    @classmethod
    def _check_sha256(cls, value: str | None) -> str | None:
        """64 hexadecimal digits, kept in lower case."""
        if value is not None and not _SHA256.fullmatch(value):
            raise ValueError("sha256 must be 64 hexadecimal digits (the SHA-256 of the data)")
        return None if value is None else value.lower()

    @model_validator(mode="after")
    def _resolve_format(self) -> DataRef:
        """Fill in ``format`` and refuse options meant for another format."""
        if self.format is None:
            self.format = infer_format(self.uri)
        for option, formats in OPTION_FORMATS.items():
            if option in self.model_fields_set and self.format not in formats:
                raise ValueError(f"option {option!r} applies to {_listed(formats)} data "
                                 f"only, and this reference is {self.format}")
        return self


_DENSE = TypeAdapter(list[list[Number]])
_VECTOR = TypeAdapter(list[Number])
_COO = TypeAdapter(CooMatrix)
_REF = TypeAdapter(DataRef)


def _is_ref(value: object) -> bool:
    """An object with ``uri``, or with a format other than ``coo``, is a data reference."""
    if isinstance(value, DataRef):
        return True
    return isinstance(value, dict) and ("uri" in value or value.get("format") not in (None, "coo"))


def _matrix(value: Any, _handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate a matrix value as the one member its shape selects."""
    if isinstance(value, list):
        return _DENSE.validate_python(value)
    if _is_ref(value):
        return _REF.validate_python(value)
    if isinstance(value, dict | CooMatrix):
        return _COO.validate_python(value)
    raise PydanticCustomError(
        "matrix_type", "expected a matrix: nested lists of numbers, a sparse "
        "{\"format\": \"coo\", \"shape\", \"row\", \"col\", \"data\"} object or a data "
        "reference {\"uri\": ...}")


def _vector(value: Any, _handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate a vector value as the one member its shape selects."""
    if isinstance(value, list):
        return _VECTOR.validate_python(value)
    if isinstance(value, dict | DataRef):
        return _REF.validate_python(value)
    raise PydanticCustomError(
        "vector_type", "expected a vector: a list of numbers or a data reference {\"uri\": ...}")


MatrixValue = Annotated[list[list[Number]] | CooMatrix | DataRef, WrapValidator(_matrix)]
VectorValue = Annotated[list[Number] | DataRef, WrapValidator(_vector)]
