"""The dashboard's sign-in gate: with sign-in on, a signed-out browser sees the sign-in page and nothing
else, on every URL; a signed-in one sees who it is and a Sign out button, and acts as that person.

Sign-in is on when the store holds a built-in account, when OIDC is configured (Streamlit's `st.login`
with the `[auth]` section of `.streamlit/secrets.toml`), or when EVALCORE_REQUIRE_SIGN_IN=1. Built-in
accounts sign in through a form; the browser keeps a random session token in a cookie, the store keeps its
hash and expiry (evalcore.auth.sessions). An OIDC sign-in lasts as long as a built-in one: its ID token's
issue time plus the session hours.
"""

from __future__ import annotations

import time

import streamlit as st

from evalcore.auth.accounts import authenticate, built_in_accounts_exist, oidc_actor
from evalcore.auth.audit import record
from evalcore.auth.roles import Actor, require_signed_in_actors
from evalcore.auth.serving import is_local_address, sign_in_forced
from evalcore.auth.sessions import end_session, session_actor, session_hours, start_session
from evalcore.errors import EvalcoreError
from evalcore.store import Store
from pages._common import ACTOR_KEY, md, run_script

SESSION_COOKIE = "evalcore_session"
TOKEN_KEY = "session_token"
_COOKIE_SET = "session_cookie_written"
_OIDC_RECORDED = "oidc_sign_in_recorded"


def oidc_configured() -> bool:
    """True when Streamlit's secrets hold an `[auth]` section (st.login's OIDC provider)."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def _cookie_token() -> str | None:
    try:
        raw = st.context.cookies.get(SESSION_COOKIE)
    except Exception:  # no browser behind the session (a page test)
        return None
    return raw if isinstance(raw, str) and raw else None


def _keep_cookie(token: str) -> None:
    """Keep the session token in this browser (once per token), for reloads, new tabs and links."""
    if st.session_state.get(_COOKIE_SET) == token:
        return
    st.session_state[_COOKIE_SET] = token
    with st.sidebar:
        run_script(
            "document.cookie = '$name=$value; path=/; max-age=$age; SameSite=Strict';",
            name=SESSION_COOKIE,
            value=token,
            age=int(session_hours() * 3600),
        )


def _forget_cookie() -> None:
    with st.sidebar:
        run_script("document.cookie = '$name=; path=/; max-age=0; SameSite=Strict';", name=SESSION_COOKIE)


def _oidc_actor(store: Store) -> Actor | None:
    if not oidc_configured() or not st.user.is_logged_in:
        return None
    issued = st.user.get("iat")
    if isinstance(issued, int | float) and time.time() - issued > session_hours() * 3600:
        st.logout()  # the sign-in is older than a session lasts: ask the provider again
        return None
    identity = str(st.user.get("email") or st.user.get("preferred_username") or st.user.get("sub") or "")
    try:
        actor = oidc_actor(store, identity)
    except EvalcoreError as exc:  # a disabled identity, or one no account could have
        st.error(md(exc))
        st.button("Sign out", on_click=st.logout)
        st.stop()
    if st.session_state.get(_OIDC_RECORDED) != identity:
        st.session_state[_OIDC_RECORDED] = identity
        record(store, actor, "sign_in", target="oidc")
    return actor


def _session_actor(store: Store) -> Actor | None:
    token = st.session_state.get(TOKEN_KEY) or _cookie_token()
    actor = session_actor(store, token)
    if actor is None:
        st.session_state.pop(TOKEN_KEY, None)
        if _cookie_token() and st.session_state.get(_COOKIE_SET) != "":
            st.session_state[_COOKIE_SET] = ""
            _forget_cookie()  # an ended or expired token: nothing for the browser to send again
        return None
    st.session_state[TOKEN_KEY] = token
    _keep_cookie(token)
    return actor


def _sign_in_page(store: Store) -> None:
    st.title("Sign in to evalcore")
    built_in = built_in_accounts_exist(store)
    if built_in:
        with st.form("sign_in", enter_to_submit=True):
            name = st.text_input("Name", autocomplete="username")
            password = st.text_input("Password", type="password", autocomplete="current-password")
            if st.form_submit_button("Sign in", type="primary"):
                actor = authenticate(store, name, password)
                if actor is None:
                    st.error("Wrong name or password, or the account is disabled.")
                else:
                    st.session_state[TOKEN_KEY] = start_session(store, actor)
                    st.rerun()
    if oidc_configured():
        st.button("Sign in with your organisation's account", on_click=st.login, type="secondary")
    if not built_in and not oidc_configured():
        st.error(
            "This dashboard asks everyone to sign in, but no way to sign in is configured: create the "
            "first admin with `evalcore users add NAME --role admin`, or configure OIDC."
        )


def _sign_out(store: Store) -> None:
    end_session(store, st.session_state.pop(TOKEN_KEY, None))
    st.session_state.pop(ACTOR_KEY, None)
    st.session_state[_COOKIE_SET] = ""
    if oidc_configured() and st.user.is_logged_in:
        st.logout()


def sign_in_gate(store: Store) -> Actor | None:
    """The signed-in actor, when sign-in is on; None for local use. A browser that is not signed in is
    shown the sign-in page and the run stops here: no page, no sidebar, no data. A non-local address
    with no sign-in configured shows only a refusal (the server should not have started)."""
    required = sign_in_forced() or oidc_configured() or built_in_accounts_exist(store)
    if not required:
        st.session_state.pop(ACTOR_KEY, None)
        address = st.get_option("server.address")
        # dashboard.py and `evalcore serve` refuse to start there; this stops one started another way.
        # (Unset is a page test's or a plain `streamlit run`'s: dashboard.py refuses to start unset.)
        if address and not is_local_address(address):
            st.error("This dashboard listens beyond 127.0.0.1 without sign-in: it shows nothing.")
            st.stop()
        return None
    require_signed_in_actors()  # a library call this process makes without an actor is refused
    actor = _oidc_actor(store) or _session_actor(store)
    if actor is None:
        st.session_state.pop(ACTOR_KEY, None)
        _sign_in_page(store)
        st.stop()
    st.session_state[ACTOR_KEY] = actor
    st.sidebar.caption(f"Signed in as **{md(actor.name)}** ({actor.role.name})")
    st.sidebar.button("Sign out", on_click=_sign_out, args=(store,), icon=":material/logout:")
    return actor
