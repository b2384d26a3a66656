"""The format pickers of the pages: items in from another tool's file, and specs, conversations or tests
out in another tool's format (evalcore.items.interop, evalcore.reports.formats). Pages only call these."""

from __future__ import annotations

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.inputs.formats import READERS
from evalcore.items.interop import import_text
from evalcore.reports.formats import WRITERS, export_format
from evalcore.store import Store
from pages._common import current_actor, md, show_error

LABELS = {
    "deepeval": "DeepEval goldens",
    "ragas": "Ragas testset",
    "promptfoo": "promptfoo tests",
    "tau2": "tau2-bench tasks",
    "inspect": "Inspect AI samples",
    "langfuse": "Langfuse dataset items",
    "langsmith": "LangSmith examples",
    "openai-evals": "OpenAI evals samples",
    "hf": "Hugging Face messages",
}
MIME = {"jsonl": "application/jsonl", "json": "application/json", "yaml": "application/x-yaml"}


def export_picker(store: Store, project_id: str, kind: str, key: str) -> None:
    """A format picker and a download of the project's items of `kind` in that format."""
    formats = [name for name, writer in WRITERS.items() if kind in writer.kinds]
    fmt = st.selectbox("Another tool's format", formats, format_func=LABELS.get, key=f"{key}:fmt")
    writer = WRITERS[fmt]
    st.download_button(
        f"Download as {LABELS[fmt]}",
        lambda: "\n".join(export_format(store, project_id, fmt, kind)) + "\n",  # written on click only
        f"{project_id}-{kind}s-{fmt}.{writer.suffix}",
        MIME[writer.layout],
        key=f"{key}:download",
        icon=":material/download:",
        on_click="ignore",
    )


def import_picker(store: Store, project_id: str, key: str) -> None:
    """A format picker and an upload of another tool's test data into the project, reported line by line."""
    with st.form(f"{key}:form", enter_to_submit=False):
        fmt = st.selectbox("Format", list(READERS), format_func=LABELS.get, key=f"{key}:fmt")
        upload = st.file_uploader("File", type=["json", "jsonl", "yaml", "yml"], key=f"{key}:file")
        if st.form_submit_button("Import file", type="primary") and upload is not None:
            try:
                done = import_text(
                    store, project_id, fmt, upload.getvalue(), upload.name, actor=current_actor()
                )
            except EvalcoreError as exc:
                show_error(exc)
                return
            written = f"{len(done.result.conversations)} conversation(s), {len(done.result.tests)} test(s)"
            st.success(f"Imported {written} from {md(upload.name)}.")
            for note in done.notes:
                st.caption(md(note))
