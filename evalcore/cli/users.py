"""`evalcore users add|list|disable|enable|reset|role` (built-in accounts and OIDC roles) and
`evalcore audit` (who did what). The CLI acts as the local user: whoever runs it already holds the
store's URL, so it holds every role; the first admin is made here."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from evalcore.cli.common import DbOption, ProjectOption, emit, friendly, open_store
from evalcore.errors import UsageError

app = typer.Typer(help="Accounts: built-in sign-in names and passwords, and roles of OIDC identities.")

RoleOption = Annotated[str, typer.Option("--role", help="admin, lead, analyst, annotator or viewer.")]
StdinOption = Annotated[
    bool, typer.Option("--password-stdin", help="Read the password from the first line of standard input.")
]


def _password(from_stdin: bool) -> str:
    """The new password: one line of stdin, or asked twice without echo (never an argument: a command
    line is visible to every process of the machine)."""
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise UsageError("--password-stdin: standard input held no password")
        return line
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


@app.command("add")
@friendly
def add(
    name: Annotated[str, typer.Argument(help="Sign-in name (for --oidc: the e-mail the provider reports).")],
    role: RoleOption = "annotator",
    oidc: Annotated[
        bool, typer.Option("--oidc", help="An OIDC identity: a role only, it signs in with the provider.")
    ] = False,
    password_stdin: StdinOption = False,
    db: DbOption = None,
) -> None:
    """Create an account (asks for its password) or give an OIDC identity a role."""
    from evalcore.auth.accounts import add_user, parse_role

    chosen = parse_role(role)
    password = None if oidc else _password(password_stdin)
    account = add_user(open_store(db), name, chosen, password)
    kind = "built-in account" if account.built_in else "OIDC identity"
    typer.echo(f"{kind} {account.name}: {account.role.name}")


@app.command("list")
@friendly
def list_(db: DbOption = None) -> None:
    """Every account: name, role, kind, state, who created it and when."""
    from evalcore.auth.accounts import list_users

    accounts = list_users(open_store(db))
    if not accounts:
        typer.echo("no accounts: `evalcore users add NAME --role admin` makes the first")
        return
    for a in accounts:
        kind = "password" if a.built_in else "oidc"
        state = "disabled" if a.disabled else "active"
        when = a.created_at.strftime("%Y-%m-%d %H:%M")
        typer.echo(f"{a.name}\t{a.role.name}\t{kind}\t{state}\tby {a.created_by} at {when}")


@app.command("disable")
@friendly
def disable(name: str, db: DbOption = None) -> None:
    """Disable an account: it cannot sign in, its sessions end now; what it saved keeps its name."""
    from evalcore.auth.accounts import disable_user

    disable_user(open_store(db), name)
    typer.echo(f"{name}: disabled, signed out everywhere")


@app.command("enable")
@friendly
def enable(name: str, db: DbOption = None) -> None:
    """Enable a disabled account again."""
    from evalcore.auth.accounts import disable_user

    disable_user(open_store(db), name, disabled=False)
    typer.echo(f"{name}: enabled")


@app.command("reset")
@friendly
def reset(name: str, password_stdin: StdinOption = False, db: DbOption = None) -> None:
    """Set a new password (asked for); the account's sessions end now."""
    from evalcore.auth.accounts import reset_password

    reset_password(open_store(db), name, _password(password_stdin))
    typer.echo(f"{name}: new password set, signed out everywhere")


@app.command("role")
@friendly
def role_(name: str, role: Annotated[str, typer.Argument(help="The new role.")], db: DbOption = None) -> None:
    """Give an account another role (from its next sign-in: its sessions end now)."""
    from evalcore.auth.accounts import parse_role, set_role

    account = set_role(open_store(db), name, parse_role(role))
    typer.echo(f"{account.name}: {account.role.name}")


@friendly
def audit(
    project: ProjectOption = None,
    since: Annotated[
        str | None, typer.Option(help="Only actions at or after this time (ISO, e.g. 2026-11-01).")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many actions, newest first (0: all).")] = 1000,
    csv: Annotated[
        bool, typer.Option("--csv", help="CSV (formula cells neutralised) instead of lines.")
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file.")] = None,
    db: DbOption = None,
) -> None:
    """The audit trail: who did what and when (settings, jobs, imports, accounts, sign-ins, refusals,
    saved versions and verdicts), newest first."""
    from evalcore.auth.audit import trail, trail_csv

    try:
        start = datetime.fromisoformat(since) if since else None
    except ValueError:
        raise UsageError(f"--since {since!r} is not an ISO date or time") from None
    entries = trail(open_store(db, existing=True), project_id=project, since=start, limit=limit or None)
    if csv:
        lines = trail_csv(entries).splitlines()
    else:
        lines = [
            f"{e.at:%Y-%m-%d %H:%M:%S}\t{e.actor}\t{e.role or '-'}\t{e.action}\t{e.outcome}\t"
            f"{e.project_id or '-'}\t{e.target}\t{e.detail}"
            for e in entries
        ]
    count = emit(lines, out)
    if out is not None:
        typer.echo(f"wrote {count} line(s) to {out}")
