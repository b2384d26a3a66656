"""Who may serve where: 127.0.0.1 serves one person without sign-in; any other address refuses to start
until sign-in is configured (a built-in account in the store, or OIDC in Streamlit's secrets)."""

from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path

from evalcore.auth.accounts import built_in_accounts_exist
from evalcore.errors import EvalcoreError
from evalcore.store import Store

# Set to 1 to ask for sign-in even on 127.0.0.1 (a shared machine whose users reach its loopback).
REQUIRE_SIGN_IN_ENV = "EVALCORE_REQUIRE_SIGN_IN"


def is_local_address(address: str | None) -> bool:
    """True for a loopback address; an empty address is every interface (Streamlit's default), not local."""
    if not address:
        return False
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def secrets_files(folder: Path | None = None) -> list[Path]:
    """Where Streamlit reads secrets for an app started from `folder` (default: here): the user's, then
    the project's `.streamlit/secrets.toml`."""
    here = folder or Path.cwd()
    return [Path.home() / ".streamlit" / "secrets.toml", here / ".streamlit" / "secrets.toml"]


def oidc_configured(files: list[Path] | None = None) -> bool:
    """True when a secrets file has an `[auth]` section with a provider (st.login's configuration)."""
    for path in files if files is not None else secrets_files():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise EvalcoreError(f"{path}: cannot read the secrets file: {exc}") from None
        auth = data.get("auth")
        if isinstance(auth, dict) and (
            auth.get("client_id") or any(isinstance(v, dict) for v in auth.values())
        ):
            return True
    return False


def sign_in_configured(store: Store, files: list[Path] | None = None) -> bool:
    """True when people can sign in: a built-in account exists, or OIDC is configured."""
    return built_in_accounts_exist(store) or oidc_configured(files)


def sign_in_forced() -> bool:
    """True when EVALCORE_REQUIRE_SIGN_IN=1 asks for sign-in on every address."""
    return os.environ.get(REQUIRE_SIGN_IN_ENV, "").strip() == "1"


def check_address(store: Store, address: str | None, files: list[Path] | None = None) -> None:
    """Refuse to serve a non-local address with no way to sign in (one line saying how to add one)."""
    if is_local_address(address) or sign_in_configured(store, files):
        return
    shown = address or "every interface"
    raise EvalcoreError(
        f"serving on {shown} needs sign-in: create the first admin with `evalcore users add NAME --role "
        "admin`, or configure OIDC in .streamlit/secrets.toml [auth]; or serve on 127.0.0.1"
    )
