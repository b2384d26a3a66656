"""Home's "Upload" tab: a project sent from this browser, as a zip of its folder
(evalcore.inputs.archive) or as its files (evalcore.inputs.uploads); both are checked whole first, and a
refused upload changes nothing. Importing is a lead's; the library checks."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from evalcore.errors import EvalcoreError, Problem, ValidationFailed
from evalcore.inputs.archive import import_archive
from evalcore.inputs.project import ImportResult
from evalcore.inputs.uploads import import_files
from evalcore.store import Store
from pages._common import current_actor, show_error

TYPES = ["zip", "yaml", "yml", "md", "txt", "csv", "json"]


def upload_form(store: Store, report: Callable[[ImportResult], None]) -> None:
    """The form; `report` shows what an accepted import did."""
    with st.form("import_upload", clear_on_submit=False):
        sent = st.file_uploader(
            "A zipped project folder, or the project's files",
            type=TYPES,
            accept_multiple_files=True,
            help="The files are sorted into the project's folders by kind: system.yaml is the system card, "
            ".md and .txt files are documents, .csv tables, .json tools, other .yaml files procedures.",
        )
        policies = st.file_uploader(
            "Policy documents (optional)",
            type=["md", "txt"],
            accept_multiple_files=True,
            help="Documents that are the assistant's rules (returns, identification, refunds ...).",
        )
        if st.form_submit_button("Import upload", type="primary"):
            files = [(f.name, f.getvalue()) for f in sent or []]
            rules = [(f.name, f.getvalue()) for f in policies or []]
            zips = [name for name, _ in files if name.lower().endswith(".zip")]
            try:
                if zips and (len(files) > 1 or rules):
                    problem = Problem(zips[0], "send a zip alone, or the project's files without a zip")
                    raise ValidationFailed([problem], "uploaded files")
                if zips:
                    report(import_archive(store, files[0][1], files[0][0], actor=current_actor()))
                else:
                    report(import_files(store, files, policies=rules, actor=current_actor()))
            except EvalcoreError as exc:
                show_error(exc)
