"""Built-in accounts: a name, a role and an argon2id hash of the password (argon2-cffi), in the store.

OIDC identities get a row too (no password) when a lead gives them a role; an identity with no row signs
in as a viewer. Managing accounts needs the manage_users permission, and only an admin makes an admin.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel, Field

from evalcore.auth.audit import authorize, record
from evalcore.auth.roles import Actor, Permission, PermissionDenied, Role, require
from evalcore.errors import EvalcoreError, NotFoundError, UsageError
from evalcore.models.common import now_utc
from evalcore.store import Store
from evalcore.store import schema as t

# OWASP's minimum for a password that is the only factor; longer is better, no composition rules.
MIN_PASSWORD_LENGTH = 12
MAX_NAME_LENGTH = 200

_hasher = PasswordHasher()  # argon2id with the library's current recommended cost
# Verified against when the name is unknown, so a wrong name takes as long as a wrong password.
_DUMMY_HASH = _hasher.hash("not a password of anyone")


class Account(BaseModel):
    """An account as `evalcore users list` shows it (never its hash)."""

    name: str = Field(description="the sign-in name, and the author name of everything it saves")
    role: Role = Field(description="what it may do")
    built_in: bool = Field(description="True when it signs in with a password; False for an OIDC identity")
    disabled: bool = Field(description="a disabled account cannot sign in; its sessions were ended")
    created_by: str = Field(description="who created it")
    created_at: datetime = Field(description="when")


def parse_role(value: str) -> Role:
    """A Role from its name, or a UsageError listing the names."""
    try:
        return Role[value.strip().lower()]
    except KeyError:
        names = ", ".join(r.name for r in Role)
        raise UsageError(f"unknown role {value!r}; one of: {names}") from None


def check_name(name: str) -> str:
    """The account name, stripped; refused when empty, too long or holding control characters."""
    name = name.strip()
    if not name:
        raise UsageError("an account name cannot be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise UsageError(f"an account name has at most {MAX_NAME_LENGTH} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise UsageError(f"account name {name!r} holds a control character")
    return name


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")


def _grant(actor: Actor, role: Role) -> None:
    if role == Role.admin and actor.role < Role.admin:
        raise PermissionDenied(f"making an admin needs the admin role; {actor.name} is a {actor.role.name}")


def _authorize_grant(store: Store, actor: Actor | None, action: str, target: str, role: Role) -> Actor:
    """`authorize` for managing accounts, refusing (and logging) a lead who would make an admin."""
    who = authorize(store, actor, Permission.manage_users, action, target=target)
    try:
        _grant(who, role)
    except PermissionDenied as exc:
        record(store, who, action, outcome="refused", target=target, detail=str(exc))
        raise
    return who


def _row(conn: sa.Connection, name: str) -> sa.Row | None:
    return conn.execute(sa.select(t.users).where(t.users.c.name == name)).first()


def add_user(
    store: Store, name: str, role: Role, password: str | None = None, *, actor: Actor | None = None
) -> Account:
    """Create an account: with a password a built-in one, without one the role of an OIDC identity
    (its e-mail, as the provider reports it). A name already taken is refused."""
    name = check_name(name)
    if password is not None:
        _check_password(password)
    who = _authorize_grant(store, actor, "users.add", f"{name} ({role.name})", role)
    digest = _hasher.hash(password) if password is not None else None
    stamp = now_utc()
    with store.write() as conn:
        if _row(conn, name) is not None:
            raise EvalcoreError(f"an account named {name!r} exists; reset its password or disable it")
        conn.execute(
            sa.insert(t.users).values(
                name=name, role=role.name, password_hash=digest, disabled=False,
                created_by=who.name, created_at=stamp, updated_at=stamp,
            )
        )  # fmt: skip
    record(store, who, "users.add", target=f"{name} ({role.name})")
    return _account(store, name)


def _account(store: Store, name: str) -> Account:
    with store.read() as conn:
        row = _row(conn, name)
    if row is None:
        raise NotFoundError(f"no account named {name!r}")
    return _from_row(row)


def _from_row(row: sa.Row) -> Account:
    return Account(
        name=row.name,
        role=Role[row.role],
        built_in=row.password_hash is not None,
        disabled=row.disabled,
        created_by=row.created_by,
        created_at=row.created_at,
    )


def list_users(store: Store, *, actor: Actor | None = None) -> list[Account]:
    """Every account, by name."""
    require(actor, Permission.manage_users)
    with store.read() as conn:
        rows = conn.execute(sa.select(t.users).order_by(t.users.c.name)).all()
    return [_from_row(r) for r in rows]


def _change(store: Store, name: str, who: Actor, action: str, **values: object) -> Account:
    name = check_name(name)
    with store.write() as conn:
        row = _row(conn, name)
        if row is None:
            raise NotFoundError(f"no account named {name!r}")
        if Role[row.role] == Role.admin:
            _grant(who, Role.admin)  # a lead cannot lock an admin out
        conn.execute(sa.update(t.users).where(t.users.c.name == name).values(updated_at=now_utc(), **values))
        # Every change of an account (disabled, new password, new role) ends its open sessions.
        conn.execute(
            sa.update(t.user_sessions)
            .where(t.user_sessions.c.user_name == name, t.user_sessions.c.ended_at.is_(None))
            .values(ended_at=now_utc())
        )
    record(store, who, action, target=name)
    return _account(store, name)


def disable_user(store: Store, name: str, *, disabled: bool = True, actor: Actor | None = None) -> Account:
    """Disable (or enable again) an account; its sessions end at once. Rows are never deleted: the
    account's name stays the author of what it saved."""
    action = "users.disable" if disabled else "users.enable"
    who = authorize(store, actor, Permission.manage_users, action, target=name)
    return _change(store, name, who, action, disabled=disabled)


def reset_password(store: Store, name: str, password: str, *, actor: Actor | None = None) -> Account:
    """Give an account a new password; its sessions end at once."""
    _check_password(password)
    who = authorize(store, actor, Permission.manage_users, "users.reset", target=name)
    return _change(store, name, who, "users.reset", password_hash=_hasher.hash(password))


def set_role(store: Store, name: str, role: Role, *, actor: Actor | None = None) -> Account:
    """Give an account another role; its sessions end, so the new role applies from the next sign-in."""
    who = _authorize_grant(store, actor, "users.role", f"{name} ({role.name})", role)
    return _change(store, name, who, "users.role", role=role.name)


def built_in_accounts_exist(store: Store) -> bool:
    """True when the store holds a built-in account (then the dashboard asks everyone to sign in)."""
    with store.read() as conn:
        return conn.scalar(sa.select(sa.literal(1)).where(t.users.c.password_hash.is_not(None)).limit(1)) == 1


def authenticate(store: Store, name: str, password: str) -> Actor | None:
    """The account's actor when `password` is its password and it is enabled; None otherwise (the same
    answer, and about the same time, whether the name, the password or the account's state was wrong).
    A sign-in, failed or not, is written to the audit log."""
    try:
        name = check_name(name)
    except UsageError:  # too long, empty or with control characters: no account has such a name
        name = ""
    with store.read() as conn:
        row = _row(conn, name) if name else None
    digest = row.password_hash if row is not None and row.password_hash else _DUMMY_HASH
    try:
        ok = _hasher.verify(digest, password) and digest is not _DUMMY_HASH
    except (VerificationError, InvalidHashError):
        ok = False
    if ok and row.disabled:
        ok = False
    shown = Actor(name=name or "(no valid name)", role=Role[row.role] if row is not None else Role.viewer)
    record(store, shown, "sign_in", outcome="done" if ok else "refused", target="password")
    if not ok:
        return None
    if _hasher.check_needs_rehash(digest):  # the library's cost went up: store the stronger hash
        with store.write() as conn:
            conn.execute(
                sa.update(t.users).where(t.users.c.name == name).values(password_hash=_hasher.hash(password))
            )
    return Actor(name=row.name, role=Role[row.role])


def oidc_actor(store: Store, identity: str) -> Actor:
    """The actor of a person the OIDC provider signed in (`identity`: their e-mail, else their name):
    the role a lead gave that identity, else viewer. A disabled identity is refused."""
    identity = check_name(identity)
    with store.read() as conn:
        row = _row(conn, identity)
    if row is not None and row.disabled:
        raise PermissionDenied(f"the account {identity} is disabled")
    return Actor(name=identity, role=Role[row.role] if row is not None else Role.viewer)
