"""Checks of what users pass in: one place for numbers, flags, choices, spans and arrays.

Every check names the argument, shows the value it was given and says what
is accepted, in the form ``"{name} must be {accepted}, got {value}"``; the
value is shown as :func:`shown` writes it, or as the caller's ``show`` does
(``odekit serve`` shows a page's values as JSON).  None coerces silently: a
string is not a number (``h="0.1"``), a bool is neither a number nor a count
(``h=True``), ``"yes"`` and ``"False"`` are not flags, and a masked array is
not an array of numbers (its mask would be dropped).

A value that is not accepted raises ValueError, whatever its type; TypeError
is left to the callers for objects of the wrong kind (a problem, a function).
This module imports nothing from the rest of odekit, so every layer can use it.
"""

import math
import numbers

import numpy as np

# the kinds of NumPy dtypes that hold real numbers, and complex ones too
REAL = "iuf"
COMPLEX = "iufc"


def shown(value, limit=80):
    """``repr(value)``, shortened, with the type when it is not plainly a number."""
    text = " ".join(repr(value).split())
    if len(text) > limit:
        text = text[:limit - 4] + " ..."
    if value is not None and (isinstance(value, bool)
                              or not isinstance(value, (numbers.Number, np.ndarray, list, tuple))):
        text += f" ({type(value).__name__})"
    return text


def fail(name, accepted, value, hint="", show=shown):
    """The ValueError of every check: ``name`` must be ``accepted``, got ``value`` (as ``show`` writes it)."""
    return ValueError(f"{name} must be {accepted}, got {show(value)}" + (f"; {hint}" if hint else ""))


def is_real(value):
    """Whether ``value`` is one real number: a Python or NumPy int or float (a bool is not)."""
    if type(value) in (float, int):        # the common case, decided quickly
        return True
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in REAL
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def real(name, value, accepted="a finite real number", ok=math.isfinite, hint="", show=shown):
    """One real number as a float, for which ``ok(float)`` holds (by default: finite).

    Parameters
    ----------
    name : str
        The argument, as the user wrote it.
    value
        What the user gave.
    accepted : str
        What is accepted, as the end of "``name`` must be ...".
    ok : callable
        ``ok(x)`` for the float ``x``: whether it is accepted.
    hint : str
        Advice appended to the message.
    show : callable
        How the message writes the value: :func:`shown`, or the caller's.
    """
    if not is_real(value):
        raise fail(name, accepted, value, hint, show)
    try:
        number = float(value)
    except OverflowError:                  # an int beyond the range of floats
        raise fail(name, accepted, value, hint, show) from None
    if not ok(number):
        raise fail(name, accepted, value, hint, show)
    return number


def reals(name, value, size, accepted, ok=math.isfinite, show=shown):
    """A list or tuple of ``size`` real numbers, each accepted by :func:`real` with ``ok``, as floats."""
    if isinstance(value, (list, tuple)) and len(value) == size:
        try:
            return tuple(real(name, number, accepted, ok) for number in value)
        except ValueError:
            pass
    raise fail(name, accepted, value, show=show)


def positive(name, value, accepted="a positive finite number", hint=""):
    """A real number ``> 0`` and finite, as a float."""
    return real(name, value, accepted, lambda x: x > 0 and math.isfinite(x), hint)


def count(name, value, minimum=1, maximum=None, accepted=None):
    """A whole number (a Python or NumPy int, not a bool or a float) in ``[minimum, maximum]``, as an int."""
    if accepted is None:
        accepted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        if maximum is not None:
            accepted += f" of at most {maximum}"
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer))
            or value < minimum or (maximum is not None and value > maximum)):
        raise fail(name, accepted, value)
    return int(value)


# A count of steps from NO_LIMIT on is as good as unlimited, and still fits an int64.
NO_LIMIT = 2 ** 62


def steps(name, value):
    """A count of steps: a positive integer, capped at :data:`NO_LIMIT` (no limit)."""
    return min(count(name, value), NO_LIMIT)


def flag(name, value, accepted="True or False", show=shown):
    """``True`` or ``False`` (also NumPy's), as a bool: not 1, ``"yes"`` or ``"False"``."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(name, accepted, value, show=show)
    return bool(value)


def choice(name, value, options, accepted=None, show=shown):
    """One of ``options``, compared by type and value (so ``1`` is not ``True``)."""
    for option in options:
        if value is option or (type(value) is type(option) and value == option):
            return option
    raise fail(name, accepted or "one of " + ", ".join(map(repr, options)), value, show=show)


def strings(name, value, most, accepted, show=shown):
    """A list of 1 to ``most`` strings (names), as a new list."""
    if not (isinstance(value, list) and 1 <= len(value) <= most and all(isinstance(s, str) for s in value)):
        raise fail(name, accepted, value, show=show)
    return list(value)


def callable_or_none(name, value, accepted):
    """``value`` if it is callable or None; else a TypeError naming ``accepted``."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be {accepted} or None, got {type(value).__name__}")
    return value


def array(name, value, kinds=REAL, accepted="an array of real numbers"):
    """``value`` as a NumPy array whose dtype kind is among ``kinds``, not converted.

    Refused: strings, bools, objects (``None``, fractions), nested lists of
    unequal lengths and masked arrays, each with the reason.
    """
    if isinstance(value, np.ma.MaskedArray):
        raise fail(name, accepted, value, "a masked array's mask would be dropped: give np.ma.filled(a, "
                                          "fill_value) or the entries to use")
    try:
        values = np.asarray(value)
    except (TypeError, ValueError):        # NumPy refuses lists of unequal lengths
        raise fail(name, accepted, value, "its nested lists have unequal lengths") from None
    if values.dtype.kind not in kinds:
        raise fail(name, accepted, value, f"its entries are of dtype {values.dtype}")
    return values


def fitting(name, value, dtype, accepted="an array of"):
    """An array of numbers a state of ``dtype`` can hold: real ones for a real state, complex too for a complex one."""
    if dtype.kind == "c":
        return array(name, value, COMPLEX, f"{accepted} real or complex numbers")
    return array(name, value, REAL, f"{accepted} real numbers (the state is real)")


def finite_entries(name, values):
    """``values`` unchanged if every entry is finite; else a ValueError naming the first that is not."""
    bad = ~np.isfinite(values)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        entry = f"{name}{list(where)}" if where else name
        raise ValueError(f"{name} must be finite, but {entry} = {values[where].item()!r}")
    return values


def state(name, value, empty=False):
    """A non-empty (or with ``empty``, any) finite array of real or complex numbers, as float64 or complex128."""
    values = array(name, value, COMPLEX, "an array of real or complex numbers")
    values = values.astype(np.complex128 if values.dtype.kind == "c" else np.float64)
    if values.size == 0 and not empty:
        raise ValueError(f"{name} is empty; accepted: at least one number")
    return finite_entries(name, values)


def times(name, value):
    """Times: an array of finite real numbers, as floats (its shape is the caller's to check)."""
    values = array(name, value, REAL, "a real number or a one-dimensional array of them")
    return finite_entries(name, values.astype(float))


def time_span(name, value, zero=False):
    """A pair ``(t0, t_end)`` of finite real numbers with ``t_end != t0`` (unless ``zero``) and a finite length."""
    accepted = "a pair of numbers (t0, t_end)"
    try:
        pair = tuple(value) if not isinstance(value, (str, bytes)) else ()
    except TypeError:
        pair = ()
    if len(pair) != 2:
        raise fail(name, accepted, value)
    for i, t in enumerate(pair):
        if not is_real(t):
            raise fail(name, accepted, value, f"{name}[{i}] = {shown(t)} is not a real number")
    try:
        t0, t1 = (float(t) for t in pair)
    except OverflowError:                  # an int beyond the range of floats
        t0 = t1 = math.inf
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if t0 == t1 and not zero:
        raise ValueError(f"{name} has zero length: t0 = t_end = {t0!r}; accepted: t_end != t0 "
                         "(t_end < t0 integrates backward)")
    if not math.isfinite(t1 - t0):
        raise ValueError(f"{name}={value!r} is longer than the largest float: t_end - t0 overflows; "
                         f"accepted: |t_end - t0| <= {np.finfo(float).max:.4g}")
    return t0, t1


def tolerance(name, value, n):
    """A positive finite tolerance: one number, or one per state component (``n``) as an array."""
    if is_real(value):
        return real(name, value, "positive and finite", lambda x: x > 0 and math.isfinite(x))
    values = array(name, value, REAL, f"a number or have one entry per state component ({n})")
    if values.ndim > 1 or (values.ndim == 1 and values.size != n):
        raise ValueError(f"{name} must be a number or have one entry per state component ({n}), "
                         f"got shape {values.shape}")
    values = values.astype(float)
    if not np.all((values > 0) & np.isfinite(values)):
        raise fail(name, "positive and finite", value)
    return values
