"""Signed-in sessions of built-in accounts: a random token in the browser, its SHA-256 in the store, an
expiry, and an end when the person signs out or their account changes."""

from __future__ import annotations

import hashlib
import os
import secrets
from datetime import timedelta

import sqlalchemy as sa

from evalcore.auth.audit import record
from evalcore.auth.roles import Actor, Role
from evalcore.errors import UsageError
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

SESSION_HOURS_ENV = "EVALCORE_SESSION_HOURS"
# A working day and a bit: a browser left signed in overnight asks again in the morning.
DEFAULT_SESSION_HOURS = 12.0


def session_hours() -> float:
    """How long a sign-in lasts: EVALCORE_SESSION_HOURS, else 12."""
    raw = os.environ.get(SESSION_HOURS_ENV, "").strip()
    if not raw:
        return DEFAULT_SESSION_HOURS
    try:
        hours = float(raw)
    except ValueError:
        raise UsageError(f"{SESSION_HOURS_ENV}={raw!r} is not a number of hours") from None
    if not 0 < hours <= 24 * 30:
        raise UsageError(f"{SESSION_HOURS_ENV} must be between 0 and 720 hours")
    return hours


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(store: Store, actor: Actor, hours: float | None = None) -> str:
    """A new session for a signed-in account; returns the token to keep in the browser (only its hash is
    stored). The token is URL-safe base64: letters, digits, '-' and '_'."""
    token = secrets.token_urlsafe(32)
    stamp = now_utc()
    with store.write() as conn:
        conn.execute(
            sa.insert(t.user_sessions).values(
                token_hash=_digest(token),
                user_name=actor.name,
                created_at=stamp,
                expires_at=stamp + timedelta(hours=hours or session_hours()),
            )
        )
    return token


def session_actor(store: Store, token: str | None) -> Actor | None:
    """The actor a browser's token signs in: None when the token is unknown, ended, expired, or its
    account is disabled."""
    if not token:
        return None
    s, u = t.user_sessions, t.users
    with store.read() as conn:
        row = conn.execute(
            sa.select(u.c.name, u.c.role)
            .join(s, s.c.user_name == u.c.name)
            .where(
                s.c.token_hash == _digest(token),
                s.c.ended_at.is_(None),
                s.c.expires_at > now_utc(),
                u.c.disabled.is_(False),
            )
        ).first()
    return Actor(name=row.name, role=Role[row.role]) if row is not None else None


def end_session(store: Store, token: str | None) -> None:
    """Sign out: the token no longer signs anyone in (a token already ended or unknown changes nothing)."""
    if not token:
        return
    actor = session_actor(store, token)
    with store.write() as conn:
        conn.execute(
            sa.update(t.user_sessions)
            .where(t.user_sessions.c.token_hash == _digest(token), t.user_sessions.c.ended_at.is_(None))
            .values(ended_at=now_utc())
        )
    if actor is not None:
        record(store, actor, "sign_out")
