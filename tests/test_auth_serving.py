"""`evalcore serve` and `dashboard.py` on 127.0.0.1 start as before; on any other address they refuse to
start until sign-in is configured (a built-in account in the store, or OIDC in Streamlit's secrets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalcore.auth import accounts
from evalcore.auth.roles import Role
from evalcore.auth.serving import check_address, is_local_address, oidc_configured
from evalcore.cli.main import app
from evalcore.errors import EvalcoreError
from evalcore.store import Store

ROOT = Path(__file__).resolve().parents[1]
OIDC = (
    '[auth]\nclient_id = "x"\nclient_secret = "y"\nserver_metadata_url = "http://127.0.0.1:1/.well-known"\n'
)


def test_loopback_is_local_and_every_other_address_is_not():
    assert all(is_local_address(a) for a in ("127.0.0.1", "localhost", "::1", "127.0.0.2"))
    assert not any(is_local_address(a) for a in ("0.0.0.0", "", None, "10.0.0.5", "::", "example.com"))


def test_a_non_local_address_needs_an_account_or_oidc(store: Store, tmp_path):
    secrets = tmp_path / "secrets.toml"
    check_address(store, "127.0.0.1", [secrets])
    with pytest.raises(EvalcoreError, match=r"serving on 0\.0\.0\.0 needs sign-in: create the first admin"):
        check_address(store, "0.0.0.0", [secrets])
    with pytest.raises(EvalcoreError, match="serving on every interface needs sign-in"):
        check_address(store, None, [secrets])

    secrets.write_text(OIDC, encoding="utf-8")
    assert oidc_configured([secrets])
    check_address(store, "0.0.0.0", [secrets])

    secrets.write_text("[other]\nx = 1\n", encoding="utf-8")
    accounts.add_user(store, "zoe@example.com", Role.lead)  # an OIDC role is no way to sign in
    with pytest.raises(EvalcoreError, match="needs sign-in"):
        check_address(store, "0.0.0.0", [secrets])
    accounts.add_user(store, "dana", Role.admin, "correct horse battery")
    check_address(store, "0.0.0.0", [secrets])


def test_serve_and_dashboard_refuse_a_non_local_address_without_sign_in(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    result = CliRunner().invoke(app, ["serve", "--address", "0.0.0.0", "--db", db])
    assert result.exit_code == 1
    assert "error: serving on 0.0.0.0 needs sign-in" in result.output

    env = {**os.environ, "EVALCORE_DATABASE_URL": db}
    started = subprocess.run(
        [sys.executable, str(ROOT / "dashboard.py"), "--server.address", "0.0.0.0", "--server.port", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert started.returncode == 1
    assert "serving on 0.0.0.0 needs sign-in" in started.stderr


def test_deploy_start_refuses_a_network_address_without_sign_in_and_starts_nothing(tmp_path):
    env = {
        **os.environ,
        "EVALCORE_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}",
        "DASHBOARD_ADDR": "0.0.0.0",
        "DEPLOY_DIR": str(tmp_path / "run"),
        "PY": sys.executable,
    }
    started = subprocess.run(
        ["bash", str(ROOT / "deploy" / "start.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    assert started.returncode == 1, started.stdout + started.stderr
    assert "deploy: serving on 0.0.0.0 needs sign-in" in started.stderr
    assert list((tmp_path / "run").glob("*.pid")) == []
