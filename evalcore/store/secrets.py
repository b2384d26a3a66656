"""Credentials: which environment variables hold one, and their values taken out of everything we keep.

Configuration never holds a credential, only the name of the environment variable that does (a provider's
or a target's `api_key_env`, `${NAME}` in a target's header). Whoever reads such a variable registers its
name here, whatever the name is (`BOT_AUTH` as much as `OPENAI_API_KEY`). `redact` replaces the value of
every registered variable, and of every variable named like a credential (KEY, TOKEN, SECRET, PASSWORD),
with '***', in the forms a server may quote it back (as is, JSON-escaped, URL-encoded), and in the forms a
target may echo it altered (`altered_spans`): upper- or lower-cased, reversed, spaced out, base64-encoded,
or any 16 characters of it in a row (a key cut short).

A URL's password (a store's `postgresql://user:password@host/db`, a queue's `redis://:password@host`, a
`?password=` in its query) is masked by `mask_url`, the one function every page, command, log and error
shows a URL through; `redact` applies it to every URL in a text too, whatever variable it came from.

It is applied where text leaves the process, so a server that echoes a key in an error cannot put it on
disk, in a log, in an export or on a page:
- the store redacts every text parameter of every statement it executes (`redact_parameters`, hooked
  in by `evalcore.store.engine.create_engine`), so no table can hold a credential;
- log records are redacted as they are made (`install_log_redaction`), whichever library logs them;
- the errors the model layer raises carry redacted messages (`evalcore.llm.types`), for pages and CLI.
Exports and pages read the store, so they only ever see redacted text.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import re
import threading
import urllib.parse
from typing import Any

MASK = "***"
# Shorter values are not credentials anyone issues, and replacing them would blank out ordinary words.
MIN_LENGTH = 8
_CREDENTIAL_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_registered: set[str] = set()
_lock = threading.Lock()
_log_factory_installed = False


def register(*names: str | None) -> None:
    """Record that these environment variables hold credentials (names only; values stay in the
    environment and are read when redacting). Empty names are ignored."""
    wanted = {n for n in names if n and _ENV_NAME.match(n)}
    if not wanted <= _registered:
        with _lock:
            _registered.update(wanted)
    install_log_redaction()


def registered() -> frozenset[str]:
    """The names registered so far in this process."""
    return frozenset(_registered)


@functools.lru_cache(maxsize=4096)
def _named_like_a_credential(name: str) -> bool:
    return _CREDENTIAL_NAME.search(name) is not None


@functools.lru_cache(maxsize=64)
def _forms(values: tuple[str, ...]) -> tuple[str, ...]:
    forms = {f for v in values for f in (v, json.dumps(v)[1:-1], urllib.parse.quote(v, safe=""))}
    return tuple(sorted(forms, key=len, reverse=True))


def credential_values() -> tuple[str, ...]:
    """Every form of every credential value set in the environment, longest first (so a value that
    contains another is replaced whole). Read on every call (the environment may change); the work on
    an unchanged environment is cached, since the store calls this for every statement."""
    names = [name for name in os.environ if name in _registered or _named_like_a_credential(name)]
    values = (os.environ.get(name, "") for name in names)  # keys first: decoding every value costs more
    return _forms(tuple(v for v in values if len(v) >= MIN_LENGTH))


# The userinfo of a URL (`scheme://user:password@`): the password runs to the last '@' before the host, so
# a password holding '@' or ':' is masked whole, as libpq reads it.
_URL_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"]*:)(?P<password>[^\s'\"]*)@(?=[^@\s'\"]*(?:[\s/?'\"]|$))"
)
# Query parameters and libpq key=value pairs that hold a password (`?password=...`, `sslpassword=...`);
# only password names: other words (`key=`, `token=`) are ordinary in conversations and tool documents.
_QUERY_SECRET = re.compile(
    r"(?P<head>(?:^|[?&\s;])[A-Za-z_]*(?:password|passwd|pwd)=)(?P<value>[^&\s;'\"]*)", re.IGNORECASE
)


def mask_url(text: str) -> str:
    """`text` (a URL, or any text holding URLs or libpq `key=value` settings) with every password in a
    URL's userinfo and every credential-named query parameter replaced by '***'. It never parses, so a
    URL SQLAlchemy cannot read is masked too."""
    if "://" in text:  # cheap checks first: the store masks every text parameter of every statement
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@" if m["password"] else m[0], text)
    if "=" in text:
        text = _QUERY_SECRET.sub(lambda m: f"{m['head']}{MASK}" if m["value"] else m[0], text)
    return text


# Sixteen characters of a key in a row are still that key (issued keys are random; no ordinary text holds
# them) and fewer are the common prefixes every key of a provider shares ('sk-proj-'); a 20-character cut,
# the one a probe tried, holds such a run.
FRAGMENT = 16
# Characters a target may put between a key's characters to space it out (and which JSON, URL and base64
# forms hold anyway): they are skipped on both sides before comparing.
_SPACING = frozenset(" \t\r\n-_.,:;|/\\*'\"`+=~")


def _base64_cores(value: str) -> set[str]:
    """The base64 text of `value` at each of the three byte offsets it may start at inside a longer
    encoded text, without the first and last groups, which depend on the bytes around it."""
    raw, cores = value.encode(), set()
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + raw).decode()
            whole_groups = (offset + len(raw)) // 3 * 4
            cores.add(encoded[4 if offset else 0 : whole_groups])
    return cores


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased without spacing characters, and the position in `text` of each character kept."""
    kept = [(c.lower() if len(c.lower()) == 1 else c, i) for i, c in enumerate(text) if c not in _SPACING]
    return "".join(c for c, _ in kept), [i for _, i in kept]


@functools.lru_cache(maxsize=64)
def _fragments(values: tuple[str, ...]) -> dict[int, frozenset[str]]:
    """Every run of FRAGMENT characters (a whole value when shorter) of every altered form of the values,
    folded as `_folded` folds a text, by length."""
    forms = {f for v in values for f in (v, v[::-1], *_base64_cores(v), *(c[::-1] for c in _base64_cores(v)))}
    runs: dict[int, set[str]] = {}
    for form in forms:
        folded = _folded(form)[0]
        if len(folded) < MIN_LENGTH:
            continue
        size = min(FRAGMENT, len(folded))
        runs.setdefault(size, set()).update(folded[i : i + size] for i in range(len(folded) - size + 1))
    return {size: frozenset(found) for size, found in runs.items()}


def altered_spans(text: str, values: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (start, end) spans of `text` that hold a credential value altered: in any case, reversed,
    spaced out, base64-encoded, or cut to FRAGMENT characters or more."""
    fragments = _fragments(values)
    if not fragments or len(text) < MIN_LENGTH:
        return []
    folded, where = _folded(text)
    covered = bytearray(len(folded))
    for size, runs in fragments.items():
        for i in range(len(folded) - size + 1):
            if folded[i : i + size] in runs:
                covered[i : i + size] = b"\1" * size
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(folded):
        if covered[i]:
            j = i
            while j + 1 < len(folded) and covered[j + 1]:
                j += 1
            spans.append((where[i], where[j] + 1))
            i = j + 1
        else:
            i += 1
    return spans


def _replace(text: str, values: tuple[str, ...]) -> str:
    text = mask_url(text)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    for start, end in reversed(altered_spans(text, values) if values else []):
        text = text[:start] + MASK + text[end:]
    return text


def redact(text: str) -> str:
    """`text` with every credential value replaced by '***'."""
    return _replace(text, credential_values()) if text else text


def _redact_any(value: Any, values: tuple[str, ...]) -> Any:
    """Strings replaced inside containers; psycopg's Json/Jsonb wrappers (PostgreSQL JSON parameters)
    are rebuilt around the redacted object."""
    if isinstance(value, str):
        return _replace(value, values)
    if isinstance(value, dict):
        return {_redact_any(k, values): _redact_any(v, values) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redact_any(v, values) for v in value)
    if type(value).__name__ in ("Json", "Jsonb") and hasattr(value, "obj"):
        return type(value)(_redact_any(value.obj, values), value.dumps)
    return value


def redact_parameters(parameters: Any) -> Any:
    """A statement's parameters (a tuple, a dict, or a list of them) with credentials redacted."""
    return _redact_any(parameters, credential_values())


def _redacting_factory(previous: Any) -> Any:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        values = credential_values()
        try:
            message = record.getMessage()
        except Exception:  # malformed arguments: logging reports them itself when it formats the record
            return record
        clean = _replace(message, values)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[0] is not None:
            # Formatters reuse exc_text when set: the traceback is written with the messages redacted.
            trace = logging.Formatter().formatException(record.exc_info)
            record.exc_text = _replace(trace, values)
        return record

    return make


def install_log_redaction() -> None:
    """Redact every log record as it is made (once per process): a filter on a logger would miss records
    of other loggers, a filter on a handler would miss handlers added later (pytest's, a worker's)."""
    global _log_factory_installed
    if _log_factory_installed:
        return
    with _lock:
        if _log_factory_installed:
            return
        logging.setLogRecordFactory(_redacting_factory(logging.getLogRecordFactory()))
        _log_factory_installed = True
