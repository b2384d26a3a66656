"""Caches the pages share (issue 28): what is slow to rebuild on every rerun, kept while its inputs stay the
same. Keys are the inputs themselves (Streamlit hashes them), so a cached result can never be stale."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st


@st.cache_data(show_spinner=False, max_entries=64)
def _figure(name: str, _build: Callable, args: tuple, kwargs: tuple):
    # Streamlit hashes no function: the builder's dotted name stands for it in the key.
    return _build(*args, **dict(kwargs))


def cached_figure(build: Callable, *args: object, **kwargs: object):
    """`build(*args, **kwargs)` (a chart builder of evalcore), built once per distinct arguments: a page's
    rerun with the same data reuses the figure instead of building it again. The arguments must be
    hashable by Streamlit (tables, lists, strings, numbers)."""
    return _figure(f"{build.__module__}.{build.__qualname__}", build, args, tuple(sorted(kwargs.items())))
