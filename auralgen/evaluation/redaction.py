"""Keep credentials out of files: redact URLs and scrub known secrets from text.

A URL may carry a key in its user info (``http://user:KEY@host/v1``, ``http://KEY@host``)
or in a query parameter (``?api_key=KEY``, ``&token=...``). :func:`redact_url` replaces
both by ``***``; :func:`redact` does so for every URL inside a (nested) config or message,
so anything written to ``results.json``, ``run.json``, ``replies.jsonl`` or a log line
goes through it. :func:`url_secrets` lists the secret strings a URL holds, for scrubbing
replies and error text (a server may echo them back).

>>> redact_url("http://me:sk-123@host:8000/v1?api_key=sk-456&api-version=2024")
'http://***@host:8000/v1?api_key=***&api-version=2024'
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

# query parameter names whose values are credentials
SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|credential|session", re.IGNORECASE)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
MASK = "***"


def _query_pairs(query: str) -> list[tuple[str, str | None]]:
    """``a=1&b`` -> [("a", "1"), ("b", None)], keeping the text as written."""
    pairs = []
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        pairs.append((name, value if eq else None))
    return pairs


def redact_url(url: str) -> str:
    """``url`` with its user info and secret query values replaced by ``***``.

    Parameters
    ----------
    url : str
        A URL (one that does not parse is returned as it is).

    Returns
    -------
    str
        The redacted URL.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        query = "&".join(
            name if value is None else f"{name}={MASK if SECRET_PARAM.search(unquote(name)) else value}"
            for name, value in _query_pairs(query)
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials ``url`` holds (user info password, or a bare user as token; secret query values).

    Parameters
    ----------
    url : str
        A URL.

    Returns
    -------
    list of str
        Each secret as written and percent-decoded, longest first; empty when there is none.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password if parts.password else parts.username]
    for name, value in _query_pairs(parts.query) if parts.query else []:
        if value and SECRET_PARAM.search(unquote(name)):
            found.append(value)
    out = []
    for s in found:
        if s:
            out += [s, unquote(s)]
    return sorted(set(out), key=len, reverse=True)


def redact(obj):
    """A copy of ``obj`` (str, dict, list, tuple; others unchanged) with every URL in it redacted.

    Parameters
    ----------
    obj : object
        A string, or a config or message nested of dicts, lists and tuples.

    Returns
    -------
    object
        The same structure with each URL inside a string passed through :func:`redact_url`.
    """
    if isinstance(obj, str):
        return URL.sub(lambda m: redact_url(m.group(0)), obj) if "://" in obj else obj
    if isinstance(obj, dict):
        return {k: redact(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact(v) for v in obj)
    return obj


def scrub(text: str, secrets) -> str:
    """``text`` with every secret (4 characters or longer) replaced by ``***`` and its URLs redacted.

    Parameters
    ----------
    text : str
        A reply or an error message.
    secrets : iterable of str
        The secrets to remove (e.g. from :func:`url_secrets`); shorter than 4 characters are left.

    Returns
    -------
    str
        The scrubbed text.
    """
    for s in sorted(secrets, key=len, reverse=True):
        if s and len(s) >= 4:
            text = text.replace(s, MASK)
    return redact(text)
