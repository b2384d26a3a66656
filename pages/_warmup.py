"""What the dashboard's server does once when it starts, before anyone visits (issue 28): import every page's
libraries and make the first, slow uses (the table serializer: charts send their data as tables too; the
local embedding model), so the first visitor after a start does not wait for them (about 1.3 s of imports
and 0.8 s of model on an idle machine, several seconds under load); then freeze what is loaded out of the
garbage collector's reach (Streamlit collects after every run).

`dashboard.py` (what `evalcore serve` and the tests start) calls `warm_up` before the server listens."""

from __future__ import annotations

import ast
import gc
import importlib
import logging
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def page_imports(root: Path = ROOT) -> list[str]:
    """The modules app.py and the pages import at their top level, in order, each once: read from their
    source, so a page's new import is warmed without a list to keep up to date."""
    names: list[str] = []
    for path in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.append(node.module)
    return list(dict.fromkeys(names))


def _first_uses() -> None:
    """Serialize a small table to Arrow, as st.dataframe and st.vega_lite_chart do with their data: the
    first conversion loads pyarrow's pandas bridge."""
    import pandas as pd
    from streamlit import dataframe_util, env_util

    frame = pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})
    dataframe_util.convert_pandas_df_to_arrow_bytes(frame)
    # Streamlit's first element of the process asks inspect.stack() whether it runs in a REPL; inspect
    # then indexes the file of every loaded module (0.7 s of CPU with the pages' libraries loaded, on the
    # first visitor's request). The index is kept: build it now.
    env_util.is_repl()
    # Settings names the embedding model, and whether the local one loads is known only by loading it
    # (0.7-0.9 s of CPU, once per process): loaded now, and kept for every page that embeds.
    from evalcore.llm.registry import default_embedding

    default_embedding()


def warm_up(root: Path = ROOT) -> list[str]:
    """Import what the pages import and make the slow first uses (see the module docstring); returns the
    modules imported."""
    names = page_imports(root)
    # A cache decorated before the server's runtime exists warns that it has none; its storage is made on
    # first use, inside the runtime, so the warning is noise here. (Streamlit sets its loggers' levels as
    # their modules load: this one is loaded first.)
    import streamlit.runtime.caching.cache_data_api  # noqa: F401

    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = caching.level
    caching.setLevel(logging.ERROR)
    try:
        for name in names:
            importlib.import_module(name)
        _first_uses()
    finally:
        caching.setLevel(level)
    # Streamlit collects garbage (a full gc.collect) after every script run: with the pages' libraries
    # loaded that walks some 230,000 objects, 0.1-0.5 s of CPU on every rerun of every page. What was
    # just loaded lives as long as the server: frozen, those collections skip it.
    gc.collect()
    gc.freeze()
    return names
