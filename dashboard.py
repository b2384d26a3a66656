"""Start the dashboard: `python dashboard.py [streamlit options]` is `streamlit run app.py` with one fix.

Streamlit treats an app with a pages/ folder as a folder-routed app until app.py has run once, so on a
fresh server a first deep link (e.g. /specs) would skip app.py's frame (sidebar, navigation). app.py
routes with st.navigation, so tell Streamlit that before the server starts. And the pages' libraries are
imported before it listens (pages/_warmup.py), so the first visit does not wait for them.
"""

import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

from evalcore.auth.serving import check_address, is_local_address
from evalcore.errors import EvalcoreError
from evalcore.store import Store
from pages._warmup import warm_up


def _address(args: list[str]) -> str | None:
    """The --server.address among Streamlit's options (None: Streamlit listens on every interface)."""
    for i, arg in enumerate(args):
        if arg.startswith("--server.address="):
            return arg.split("=", 1)[1]
        if arg == "--server.address" and i + 1 < len(args):
            return args[i + 1]
    return None


def _refuse_unguarded(args: list[str]) -> None:
    """Any address but 127.0.0.1 needs sign-in configured: say how, and do not start."""
    address = _address(args)
    if is_local_address(address):
        return  # one person on a laptop, as before: the store is not even opened here
    store = Store()
    try:
        check_address(store, address)
    except EvalcoreError as exc:
        sys.exit(f"error: {exc}")
    finally:
        store.close()


if __name__ == "__main__":
    _refuse_unguarded(sys.argv[1:])
    PagesManager.uses_pages_directory = False
    warm_up()  # the pages' libraries imported now, not on the first visitor's request
    # No file watcher: a server re-importing modules changed under it (an upgrade, a checkout) serves a
    # mix of old and new classes that its caches can no longer pickle, and floods the log on big trees.
    watcher = ["--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    sys.argv = ["streamlit", "run", str(Path(__file__).with_name("app.py")), *watcher, *sys.argv[1:]]
    sys.exit(cli.main())
