"""Parse svmlight/libsvm text into CSR arrays, one chunk of whole lines at a time.

A line is ``<label> [qid:<n>] <index>:<value> ... [# comment]``; blank and comment-only
lines are skipped. Numbers are converted exactly: a decimal with at most 18 significant
digits and a power of ten within ±22 is one correctly rounded multiplication or division of
two exactly representable doubles (Clinger's fast path, *How to read floating point numbers
accurately*, PLDI 1990, §3). Any other number token (more digits, larger exponents,
``inf``, ``nan``) is copied into a side buffer that the caller converts with numpy's
correctly rounded parser; its destination says where the value goes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

OK = 0
SIDE_FULL = 1
BAD_LABEL = 2
NO_COLON = 3
BAD_INDEX = 4
BAD_VALUE = 5
TOKEN_TOO_LONG = 6

#: Width of one side-buffer slot (bytes of a number token the fast path cannot convert).
SIDE_WIDTH = 64

#: Largest feature index stored (indices are int32).
MAX_INDEX = 2**31 - 1

_FAST = 0
_SIDE = 1
_INVALID = 2
_MAX_FAST_MANTISSA = 2**53
_POWERS_OF_TEN = np.array([10.0**k for k in range(23)])

_NEWLINE, _HASH, _COLON = 10, 35, 58
_SPACE, _TAB, _CR = 32, 9, 13
_PLUS, _MINUS, _DOT, _ZERO = 43, 45, 46, 48


@njit(cache=True)
def _is_blank(byte):
    return byte == _SPACE or byte == _TAB or byte == _CR


@njit(cache=True)
def _token_end(buf, pos, end):
    """First position at or after ``pos`` holding a separator, newline or ``#``."""
    while pos < end:
        byte = buf[pos]
        if _is_blank(byte) or byte == _NEWLINE or byte == _HASH:
            break
        pos += 1
    return pos


@njit(cache=True)
def _number(buf, start, end):
    """(kind, value) of the token ``buf[start:end]``: fast and exact, to the side, or invalid."""
    i = start
    negative = False
    if i < end and (buf[i] == _PLUS or buf[i] == _MINUS):
        negative = buf[i] == _MINUS
        i += 1
    if i < end and buf[i] > 64:  # a letter: inf, nan, infinity
        return _SIDE, 0.0
    mantissa = 0
    significant = 0
    exponent = 0
    digits = 0
    seen_dot = False
    while i < end:
        byte = buf[i]
        if byte == _DOT and not seen_dot:
            seen_dot = True
        elif _ZERO <= byte <= _ZERO + 9:
            digits += 1
            if significant > 0 or byte != _ZERO:
                significant += 1
            if significant <= 18:
                mantissa = mantissa * 10 + (byte - _ZERO)
            if seen_dot:
                exponent -= 1
        else:
            break
        i += 1
    if digits == 0:
        return _INVALID, 0.0
    if i < end and (buf[i] == 69 or buf[i] == 101):  # e, E
        i += 1
        sign = 1
        if i < end and (buf[i] == _PLUS or buf[i] == _MINUS):
            sign = -1 if buf[i] == _MINUS else 1
            i += 1
        power = 0
        power_digits = 0
        while i < end and _ZERO <= buf[i] <= _ZERO + 9:
            power = min(power * 10 + (buf[i] - _ZERO), 100_000)
            power_digits += 1
            i += 1
        if power_digits == 0:
            return _INVALID, 0.0
        exponent += sign * power
    if i != end:
        return _INVALID, 0.0
    if significant > 18 or mantissa > _MAX_FAST_MANTISSA or exponent < -22 or exponent > 22:
        return (_FAST, -0.0 if negative else 0.0) if mantissa == 0 else (_SIDE, 0.0)
    value = float(mantissa)
    value = value * _POWERS_OF_TEN[exponent] if exponent >= 0 else \
        value / _POWERS_OF_TEN[-exponent]
    return _FAST, -value if negative else value


@njit(cache=True)
def _set_aside(buf, start, end, destination, line, side, side_destination, side_line,
               n_side):
    """Copy a token to the side buffer; returns the new count, or -1 when it is too long."""
    if end - start > SIDE_WIDTH:
        return -1
    side[n_side, :] = 0
    side[n_side, :end - start] = buf[start:end]
    side_destination[n_side] = destination
    side_line[n_side] = line
    return n_side + 1


@njit(cache=True)
def parse_chunk(buf, start, row, nnz, line, labels, indptr, indices, data, side,
                side_destination, side_line, n_side):
    """Parse whole lines of ``buf[start:]`` into the CSR arrays, from ``row``/``nnz`` on.

    Parameters
    ----------
    buf : ndarray of uint8, shape (b,)
        Whole lines; only the last one may lack its newline.
    start, row, nnz, line : int
        Where to begin in ``buf``; rows and entries parsed so far; 0-based line number.
    labels : ndarray of float64, shape (rows_capacity,)
    indptr : ndarray of int64, shape (rows_capacity + 1,)
    indices : ndarray of int32, shape (nnz_capacity,)
    data : ndarray of float64, shape (nnz_capacity,)
    side : ndarray of uint8, shape (s, SIDE_WIDTH)
        Number tokens left for the caller; ``side_destination`` is ``-(row + 1)`` for a
        label, else the entry's position in ``data``; ``side_line`` its line.
    n_side : int
        Slots of ``side`` in use.

    Returns
    -------
    status, position, row, nnz, line, n_side, error_start, error_end, min_index, max_index
        ``status`` OK: all parsed. SIDE_FULL: the side buffer is full; convert it and call
        again from ``position`` (a line start). Otherwise the token ``buf[error_start:
        error_end]`` on ``line`` is malformed.
    """
    end = buf.shape[0]
    pos = start
    min_index = MAX_INDEX
    max_index = -1
    while pos < end:
        line_start, line_row, line_nnz, line_side = pos, row, nnz, n_side
        while pos < end and _is_blank(buf[pos]):
            pos += 1
        if pos < end and buf[pos] == _HASH:
            while pos < end and buf[pos] != _NEWLINE:
                pos += 1
        if pos >= end or buf[pos] == _NEWLINE:
            pos += 1
            line += 1
            continue
        token_end = _token_end(buf, pos, end)
        kind, value = _number(buf, pos, token_end)
        if kind == _INVALID:
            return BAD_LABEL, pos, row, nnz, line, n_side, pos, token_end, min_index, max_index
        if kind == _SIDE:
            if n_side == side.shape[0]:
                return (SIDE_FULL, line_start, line_row, line_nnz, line, line_side, 0, 0,
                        min_index, max_index)
            n_side = _set_aside(buf, pos, token_end, -(row + 1), line, side,
                                side_destination, side_line, n_side)
            if n_side < 0:
                return (TOKEN_TOO_LONG, pos, row, nnz, line, line_side, pos, token_end,
                        min_index, max_index)
        labels[row] = value
        pos = token_end
        while True:
            while pos < end and _is_blank(buf[pos]):
                pos += 1
            if pos >= end or buf[pos] == _NEWLINE or buf[pos] == _HASH:
                break
            token_start = pos
            token_end = _token_end(buf, pos, end)
            colon = token_start
            while colon < token_end and buf[colon] != _COLON:
                colon += 1
            if colon == token_end:
                return (NO_COLON, pos, row, nnz, line, n_side, token_start, token_end,
                        min_index, max_index)
            pos = token_end
            if colon - token_start == 3 and buf[token_start] == 113 \
                    and buf[token_start + 1] == 105 and buf[token_start + 2] == 100:  # qid
                continue
            index = 0
            for k in range(token_start, colon):
                digit = buf[k] - _ZERO
                if digit < 0 or digit > 9 or index > MAX_INDEX:
                    index = -1
                    break
                index = index * 10 + digit
            if index < 0 or index > MAX_INDEX or colon == token_start:
                return (BAD_INDEX, pos, row, nnz, line, n_side, token_start, token_end,
                        min_index, max_index)
            kind, value = _number(buf, colon + 1, token_end)
            if kind == _INVALID:
                return (BAD_VALUE, pos, row, nnz, line, n_side, token_start, token_end,
                        min_index, max_index)
            if kind == _SIDE:
                if n_side == side.shape[0]:
                    return (SIDE_FULL, line_start, line_row, line_nnz, line, line_side, 0, 0,
                            min_index, max_index)
                n_side = _set_aside(buf, colon + 1, token_end, nnz, line, side,
                                    side_destination, side_line, n_side)
                if n_side < 0:
                    return (TOKEN_TOO_LONG, pos, row, nnz, line, line_side, token_start,
                            token_end, min_index, max_index)
            indices[nnz] = index
            data[nnz] = value
            nnz += 1
            min_index = min(min_index, index)
            max_index = max(max_index, index)
        while pos < end and buf[pos] != _NEWLINE:
            pos += 1
        pos += 1
        line += 1
        row += 1
        indptr[row] = nnz
    return OK, pos, row, nnz, line, n_side, 0, 0, min_index, max_index
