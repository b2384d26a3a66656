"""Start the dashboard: `python dashboard.py [streamlit options]` is `streamlit run app.py` with one fix.

Streamlit treats an app with a pages/ folder as a folder-routed app until app.py has run once, so on a
fresh server a first deep link (e.g. /specs) would skip app.py's frame (sidebar, navigation). app.py
routes with st.navigation, so tell Streamlit that before the server starts.
"""

import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

if __name__ == "__main__":
    PagesManager.uses_pages_directory = False
    # No file watcher: a server re-importing modules changed under it (an upgrade, a checkout) serves a
    # mix of old and new classes that its caches can no longer pickle, and floods the log on big trees.
    watcher = ["--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    sys.argv = ["streamlit", "run", str(Path(__file__).with_name("app.py")), *watcher, *sys.argv[1:]]
    sys.exit(cli.main())
