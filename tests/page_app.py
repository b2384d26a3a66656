"""A dashboard page opened in Streamlit's AppTest the way a visitor opens it: app.py first (the sidebar,
the project picker, the name), then the page, as a named user or as nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def open_page(
    page: str, user: str | None = None, *, timeout: float = 60, state: dict[str, Any] | None = None
) -> AppTest:
    """`page` (e.g. "pages/specs.py") run once through app.py, with `user` as the visitor's name and
    `state` put in the session first; fails the test if the page raised."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if user:
        at.session_state["user_name"] = user
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at
