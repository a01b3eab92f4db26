"""The one exception tree of auralgen.

Every error raised on bad user input is a :class:`ParameterError` whose message
names the offending key, the value given and what is allowed, on one line.
"""


class AuralgenError(Exception):
    """Base class of every error auralgen raises on purpose."""


class ParameterError(AuralgenError, ValueError):
    """A configuration value or function argument is outside what is allowed."""


class LabelError(AuralgenError):
    """An item's label is not supported by the audio that was rendered."""


class ExportError(AuralgenError):
    """Writing or reading an exported dataset failed."""


def check_range(key: str, value, *, low=None, high=None, low_open=False, high_open=False):
    """Raise ParameterError unless ``low <= value <= high`` (bounds optionally open).

    Examples
    --------
    >>> check_range("duration_s", 0.5, low=0, low_open=True)
    0.5
    """
    bad = False
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        lo = "" if low is None else (f"> {low}" if low_open else f">= {low}")
        hi = "" if high is None else (f"< {high}" if high_open else f"<= {high}")
        allowed = " and ".join(s for s in (lo, hi) if s)
        raise ParameterError(f"{key}={value!r} is out of range; allowed: {allowed}")
    return value
