"""Watching which items a reader of summaries reads whole (`evalcore.items.summaries`): a kept summary of
the current version must spare the read."""

from __future__ import annotations

import pytest

import evalcore.items.summaries as summaries_module


def reads_whole(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the items read whole from now on (to summarize them), in the order read."""
    read: list[str] = []
    real = summaries_module.read_items
    monkeypatch.setattr(summaries_module, "read_items", lambda s, ids: read.extend(ids) or real(s, ids))
    return read
