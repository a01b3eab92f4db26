"""The one exception tree of auralgen.

Every error raised on bad user input is a :class:`ParameterError` whose message
names the offending key, the value given and what is allowed, on one line.
"""

import errno


class AuralgenError(Exception):
    """Base class of every error auralgen raises on purpose."""


class ParameterError(AuralgenError, ValueError):
    """A configuration value or function argument is outside what is allowed."""


class LabelError(AuralgenError):
    """An item's label is not supported by the audio that was rendered."""


class Redraw(AuralgenError):
    """This draw of an item cannot become a valid item (e.g. a rendered room gain that clips); the
    generator draws it again, as for a measurement that does not support the label.

    ``check`` names what failed (counted with the re-draws' other reasons); the message says why.
    """

    def __init__(self, check: str, message: str):
        super().__init__(message)
        self.check = check


class ExportError(AuralgenError):
    """Writing or reading an exported dataset failed."""


def reason(exc: BaseException, name: str) -> str:
    """``exc``'s message on one line, an object's repr in it (``<_io.BytesIO object at 0x...>``,
    what soundfile says of in-memory bytes) replaced by ``name``, the thing the user knows.

    Parameters
    ----------
    exc : BaseException
        The error whose message is reported.
    name : str
        What to show instead of an object's repr, e.g. the quoted file name.

    Returns
    -------
    str
        The message on one line (runs of whitespace collapsed to one space).

    Examples
    --------
    >>> reason(RuntimeError("Error opening <_io.BytesIO object at 0x7f3a>: bad"), "'a.wav'")
    "Error opening 'a.wav': bad"
    """
    import re

    return re.sub(r"<[\w.]+ object at 0x[0-9a-fA-F]+>", name, " ".join(str(exc).split()))


EXIT_ENVIRONMENT = 75  # sysexits' EX_TEMPFAIL: the machine, not the input, failed (disk full); rerun when fixed
_ENVIRONMENT_ERRNOS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "the disk quota is exceeded"}


def environment_error(exc: BaseException, out: str) -> str | None:
    """The one line for an error of the machine rather than of the input (disk full, quota
    exceeded) writing under ``out``, else None. The exit code for it is :data:`EXIT_ENVIRONMENT`.

    Parameters
    ----------
    exc : BaseException
        The error raised while writing.
    out : str
        The output folder being written, named in the line.

    Returns
    -------
    str or None
        ``"error: environment: ..."`` for an ``OSError`` with errno ENOSPC or EDQUOT, else None
        (the error is the input's or a bug's, reported elsewhere).

    Examples
    --------
    >>> print(environment_error(OSError(28, "No space left on device"), "data/x"))  # doctest: +NORMALIZE_WHITESPACE
    error: environment: no space left on the device (writing under out='data/x': [Errno 28] No space left on
    device); allowed: free space (or a larger quota), then rerun the same command
    """
    codes = _ENVIRONMENT_ERRNOS
    if not isinstance(exc, OSError) or exc.errno not in codes:
        return None
    return (
        f"error: environment: {codes[exc.errno]} (writing under out={out!r}: {exc}); "
        "allowed: free space (or a larger quota), then rerun the same command"
    )


def check_range(key: str, value, *, low=None, high=None, low_open=False, high_open=False):
    """Raise ParameterError unless ``low <= value <= high`` (bounds optionally open).

    Parameters
    ----------
    key : str
        The config key or argument name quoted in the error.
    value : float or int
        The value to check (any type ordered against the bounds).
    low, high : float or int or None, optional
        The bounds, in the value's own unit; None means unbounded on that side.
    low_open, high_open : bool, optional
        Whether the bound itself is excluded (``value > low`` rather than ``>=``).

    Returns
    -------
    float or int
        ``value`` unchanged.

    Raises
    ------
    ParameterError
        When ``value`` lies outside the bounds; the message names the key, the value and the range.

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
