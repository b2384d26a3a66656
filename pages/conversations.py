"""Conversations: generate document-grounded conversations from specs, browse them, open their passages."""

import functools

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.doc_qa.browse import (
    cited_spans,
    conversation_table,
    display_table,
    filter_table,
    passage_views,
    summary,
    table_stamp,
)
from evalcore.generators.doc_qa.chain_lengths import allowed_lengths
from evalcore.generators.doc_qa.generate import qa_pairs
from evalcore.generators.doc_qa.job import RUN_KIND, start_run
from evalcore.generators.doc_qa.job import RUN_KIND as DOC_QA_KIND
from evalcore.generators.doc_qa.schema import CANNOTANSWER, QUERY_TYPES, is_cannot_answer
from evalcore.items.current import read_item
from evalcore.jobs import failed_units, progress, retry_failed
from evalcore.jobs.queue import enqueue
from evalcore.models.common import content_hash
from evalcore.models.wording import QUERY_TYPE_HELP, TIER_HELP, passage_words, term_help, without_ids, words
from evalcore.models.wording import tier as tier_word
from evalcore.reports.charts import count_chart
from evalcore.specs.store_ops import get_spec
from pages._common import (
    LIVE,
    answer_block,
    current_actor,
    current_project,
    job_panel,
    lazy_expander,
    may_start,
    md,
    md_block,
    next_step,
    show_error,
    show_flash,
    store_or_stop,
)
from pages._pickers import first_listed, matching

store = store_or_stop()
project_id = current_project(store)
st.title("Conversations")
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

TIER_BADGE = {"unreviewed": "gray", "silver": "blue", "gold": "orange", "rejected": "red"}
GENERATE = "conversations_generate"  # the Generate expander's key: open or closed
SPECS = "conversations_specs"  # the Spec filter's key: the chosen spec ids
FIND = "conversations_find"  # the key of the search beside it (a project of many specs)
PAGE_ROWS = 100  # conversations in the table at once: a screenful or three, light to send


@st.cache_resource
def _last_tables() -> dict:
    return {}


@st.cache_data(show_spinner="Reading the conversations...", max_entries=4)
def _table(project: str, stamp: tuple):
    # `stamp` changes with every new, edited or annotated conversation, tier policy and spec name. The
    # last table under the same policy is passed on: only the conversations saved since are read again.
    last = _last_tables()
    table = conversation_table(store, project, previous=last.get((project, stamp[1])))
    last[(project, stamp[1])] = table
    return table


@st.cache_data(show_spinner=False, max_entries=4)
def _passages(project: str, documents: str):
    # `documents` is a hash of the project's documents: a re-import that changes one splits them again.
    return passage_views(store.documents(project))


has_specs = store.count_items(project_id).get("spec", 0) > 0
table = _table(project_id, table_stamp(store, project_id))
runs = store.runs(project_id, kind=RUN_KIND)
unfinished = next((r for r in runs if r.status.value != "finished"), None)


def _queue(run_id: str, *, retry: bool = False) -> None:
    """Hand the run to the workers (a retry gives its failed units back first); its progress shows below."""
    try:
        if retry:
            may_start(store, store.run(run_id).kind)
            retry_failed(store, run_id)
        enqueue(store, run_id, actor=current_actor())
    except EvalcoreError as exc:
        show_error(exc)
        return
    st.rerun()


# ------------------------------------------------------------------------------------------ generate
show_flash()
if unfinished is not None:
    done, total = progress(store, unfinished)
    doing = "queued or running" if unfinished.status in LIVE else "unfinished"
    st.info(f"A generation is {doing} ({done}/{total} conversations): its progress is under Generate.")


@functools.cache  # this run of the page's: the open decision and the panel read it once between them
def _failed() -> dict[str, str]:
    """The latest finished run's units that could not be generated, with why (read only when the panel
    is drawn or decides whether to open)."""
    return failed_units(store, runs[0].id) if runs and runs[0].status not in LIVE else {}


def _generate() -> None:
    """The Generate panel: the form, the latest runs, a run's notes and progress, Resume and Retry."""
    if not has_specs:
        st.info("This project has no specs yet: generate them on the Spec review page first.")
    with st.form("doc_qa_generate", enter_to_submit=False):
        cols = st.columns(5)
        cols[0].selectbox("Generator", ["doc_qa"], format_func=words, help="Document-grounded QA (seed 000).")
        which = cols[1].selectbox("Specs", ["selected", "all"], help="The latest selection, or every spec.")
        d = cols[2].multiselect(
            "Documents per conversation",
            list(range(1, 9)),
            allowed_lengths(store, project_id),  # what the documents allow: no chain asked in vain
            help="Several lengths spread each spec's conversations over them (failure rate by documents). "
            "Through the document graph a conversation reaches that many documents where the graph links "
            "them; within the spec's documents, at most as many as the spec cites. " + term_help("d"),
        )
        turns = cols[3].number_input("Turns (L)", 2, 20, 7, help="Question/answer pairs per conversation.")
        per_spec = cols[4].number_input("Conversations per spec (n)", 1, 50, 10)
        model = st.text_input(
            "Generator model (optional)", placeholder="e.g. openai/gpt-4o-mini; empty: Settings"
        )
        chains = st.radio(
            "Chains",
            ["graph", "spec"],
            horizontal=True,
            format_func=lambda c: {
                "graph": "Through the document graph",
                "spec": "Within the spec's documents",
            }[c],
            help="Through the graph (seed 000): d documents from the spec's own, linked by shared entities "
            "and fields. Within the spec's documents: only those it cites, so usually shorter than d.",
        )
        start = st.form_submit_button("Generate", type="primary", disabled=not has_specs)
    if runs:
        rows = []
        for run in runs[:5]:
            done, total = progress(store, run)
            rows.append(
                {
                    "started": f"{run.started_at:%Y-%m-%d %H:%M}",
                    "status": words(run.status.value),
                    "progress": f"{done}/{total}",
                    "documents per conversation": str(run.params.get("d")),
                    "question/answer pairs": run.params.get("turns"),
                    "per spec": run.params.get("per_spec"),
                    "stopped": run.stopped_reason or "",
                }
            )
        st.dataframe(rows, hide_index=True, width="stretch")
        if failed := _failed():  # kept with their reasons, never dropped silently
            st.warning(f"{len(failed)} conversation(s) of the latest run could not be generated:")
            reasons = [{"unit (spec/conversation)": key, "error": error} for key, error in failed.items()]
            st.dataframe(reasons, hide_index=True, width="stretch")
            retry_help = "Generate them again; replies that could not be used are not reused."
            if st.button("Retry failed units", help=retry_help):
                _queue(runs[0].id, retry=True)
    if runs:
        shown = unfinished or runs[0]
        for warning in shown.warnings:
            st.caption(f"note: {md(without_ids(warning))}")
        kept = "Conversations already finished are kept; Resume continues from the next one."
        job_panel(store, shown.id, "conversations", stop_label="Stop generating", stop_help=kept)
    resumable = unfinished is not None and unfinished.status not in LIVE
    if resumable and st.button("Resume the unfinished generation", type="primary"):
        _queue(unfinished.id)
    if start:
        params = {
            "specs": which,
            "d": sorted(d) or allowed_lengths(store, project_id, which, chains),
            "turns": int(turns),
            "per_spec": int(per_spec),
            "chains": chains,
        }
        try:
            may_start(store, DOC_QA_KIND)  # before a run record is made for nothing
            run_id = start_run(store, project_id, **params, model=model.strip() or None).id
        except EvalcoreError as exc:
            show_error(exc)
        else:
            _queue(run_id)


if GENERATE not in st.session_state or (unfinished is not None and unfinished.status in LIVE):
    # Open on a first visit with nothing to browse, a generation to resume or failures to see, and while
    # one runs (its panel redraws in here and reruns the page when it ends); else as the user left it.
    st.session_state[GENERATE] = table.empty or unfinished is not None or bool(_failed())
generating = lazy_expander("Generate", GENERATE)
if generating.open:  # drawn only while open: a finished run's notes alone can be a hundred lines
    with generating:
        _generate()

if table.empty:
    st.info("No document-grounded conversation yet: generate some above.")
    st.stop()

# ------------------------------------------------------------------------------------------ filters
scenarios = dict(sorted(zip(table["spec_id"], table["spec"], strict=True), key=lambda pair: pair[1]))
chosen = [s for s in st.session_state.get(SPECS, []) if s in scenarios]
listed = list(scenarios)
searched = len(listed) > len(first_listed(listed))
*find, f1, f2, f3, f4, f5 = st.columns(6 if searched else 5)
if searched:
    # A picker of 2,000 specs costs every visit ~0.2 s of browser CPU: it lists the first that match a
    # search beside it, and those chosen.
    looked_for = find[0].text_input("Find a spec", placeholder="words of its scenario", key=FIND)
    listed = first_listed(matching(scenarios, looked_for))
    listed += [s for s in chosen if s not in listed]
st.session_state[SPECS] = chosen  # a spec gone from the table is no longer a filter
spec_pick = f1.multiselect("Spec", listed, format_func=scenarios.get, key=SPECS)
type_pick = f2.multiselect("Query type", list(QUERY_TYPES), format_func=words, help=QUERY_TYPE_HELP)
length_pick = f3.multiselect("Documents in chain", sorted(set(table["chain_length"])))
tier_pick = f4.multiselect(
    "Reviewed", ["unreviewed", "silver", "gold", "rejected"], format_func=tier_word, help=TIER_HELP
)
model_pick = f5.multiselect("Model", sorted(set(table["model"])))
shown = filter_table(
    table,
    specs=spec_pick,
    query_types=type_pick,
    chain_lengths=length_pick,
    tiers=tier_pick,
    models=model_pick,
)

# ------------------------------------------------------------------------------------------ summary
m1, m2, m3, m4 = st.columns(4)
m1.metric("Conversations", f"{len(shown):,}")
m2.metric("Question/answer pairs", f"{int(shown['pairs'].sum()):,}")
m3.metric("Silver or gold", f"{int(shown['tier'].isin(['silver', 'gold']).sum()):,}")
m4.metric("Produced offline", f"{int(shown['offline'].sum()):,}")
dist = summary(shown)
# One count at a time, another drawn when its tab is opened (a switch reruns the page): at a team's scale
# each chart costs the browser about a fifth of a second on every visit (issue 28).
COUNTS = (
    ("Query types", "query_types", "query type", "pairs", "Query types of the pairs"),
    ("Documents in chain", "chain_lengths", "documents in chain", "conversations", "Documents in chain"),
    ("Documents cited", "documents", "documents cited", "conversations", "Documents the answers cite"),
)
tabs = st.tabs([label for label, *_ in COUNTS], key="conversation_counts", on_change="rerun")
for tab, (_, key, x, y, title) in zip(tabs, COUNTS, strict=True):
    if tab.open:
        tab.vega_lite_chart(count_chart(dist[key], x, y, title), width="stretch", key=f"chart_{key}")

st.caption(
    "The counts and the table show the conversations the filters keep. An answer to a filler question cites "
    "a document outside the chain, so a conversation can cite more documents than its chain holds."
)
# A page of rows at a time: the browser gets PAGE_ROWS rows per rerun, not every conversation.
last_page = max(1, -(-len(shown) // PAGE_ROWS))
page = st.columns([1, 5])[0].number_input(f"Page (of {last_page})", 1, last_page, 1) if last_page > 1 else 1
first = (page - 1) * PAGE_ROWS
part = shown.iloc[first : first + PAGE_ROWS]
view = display_table(part)
view["tier"] = view["tier"].map(tier_word)
st.dataframe(
    view,
    hide_index=True,
    width="stretch",
    column_config={
        "id": None,  # the conversation's id: the spec and the row say which one it is
        "query_types": st.column_config.TextColumn("query types", help=QUERY_TYPE_HELP),
        "tier": st.column_config.TextColumn("reviewed", help=TIER_HELP),
    },
)
if shown.empty:
    st.stop()
if last_page > 1:
    st.caption(f"Rows {first + 1:,}-{first + len(part):,} of {len(shown):,}.")

# ------------------------------------------------------------------------------------------ one conversation
numbered = enumerate(part.itertuples(), start=first + 1)
labels = {
    row.id: f"{row.spec} · conversation {k}" if row.spec else f"Conversation {k}" for k, row in numbered
}
picked = st.selectbox("Open conversation", list(labels), format_func=labels.get)
conversation = read_item(store, picked).conversation()  # annotators' corrections applied
meta = conversation.metadata
spec = get_spec(store, project_id, conversation.spec_id).spec if conversation.spec_id in scenarios else None
tier = part.set_index("id").loc[picked, "tier"]
st.subheader(md(spec.scenario if spec else picked))
if spec:
    st.caption(md(f"Given {spec.given} · When {spec.when} · Then {spec.then}"))
badges = [
    f":{TIER_BADGE.get(tier, 'gray')}-badge[{tier_word(tier)}]",
    f"model {md(conversation.provenance.producer)}",
]
if meta.get("judge_score") is not None:
    badges.append(f"judge score {meta['judge_score']:.2f} ({md(meta.get('judge_model'))})")
st.markdown(" · ".join(badges))
if conversation.provenance.is_offline:
    st.warning(
        "Produced offline, without a model: template questions; every expected answer is copied from the "
        "documents' sentences or table cells."
    )
documents = {doc.id: doc for doc in store.documents(project_id)}
chain = (meta.get("chain") or {}).get("documents", [])
chain_titles = " → ".join(documents[d].title if d in documents else d for d in chain)
st.markdown(f"**Chain ({len(chain)} documents):** {md(chain_titles)}")
if (meta.get("chain") or {}).get("note"):
    st.caption(f"note: {md(meta['chain']['note'])}")
reasons = (meta.get("verification") or {}).get("reasons") or []
for reason in reasons:
    st.warning(md(reason))
passages = _passages(project_id, content_hash([d.model_dump(mode="json") for d in documents.values()]))


def _passage(text: str, source: dict | None = None) -> str:
    """A passage as markdown: its text shown as it is, what the answer cites in bold."""
    return "".join(f"**{md(span)}**" if cited else md(span) for span, cited in cited_spans(text, source))


def _open_sources(answer, pair: int) -> None:
    """Each grounding document as an expander showing the passage the answer comes from, drawn only once
    opened (a conversation's passages are pages of text the browser would otherwise lay out hidden)."""
    sources = answer.metadata.get("sources") or []
    for doc_id in answer.grounding:
        doc = documents.get(doc_id)
        title = doc.title if doc else doc_id
        mine = [s for s in sources if s.get("document_id") == doc_id]
        box = lazy_expander(
            f":material/description: {md(title)}", f"conversations_source:{conversation.id}:{pair}:{doc_id}"
        )
        if not box.open:
            continue
        with box:
            if not mine:
                st.markdown(_passage(doc.text) if doc else "(document not in the project)")
            for source in mine:
                passage = passages.get(source.get("passage_id", ""), {})
                st.caption(md(passage_words(source.get("passage_id", ""))))
                st.markdown(_passage(passage.get("text", ""), source))


for k, (question, answer) in enumerate(qa_pairs(conversation), start=1):
    with st.chat_message("user"):
        st.markdown(md_block(question.content))
        bridge = f" · bridging entity **{md(question.bridging_entity)}**" if question.bridging_entity else ""
        kind = CANNOTANSWER if is_cannot_answer(answer.content) else question.query_type
        st.caption(f"pair {k} · :violet-badge[{md(words(kind))}]{bridge}", help=QUERY_TYPE_HELP)
    with st.chat_message("assistant"):
        st.markdown(answer_block(answer.content))
        verdict = answer.metadata.get("correction")
        grounded = ", ".join(documents[d].title if d in documents else d for d in answer.grounding)
        grounded = grounded or "none (the documents do not answer it)"
        st.caption(
            md(f"expected answer · grounding: {grounded}" + (f" · correction: {verdict}" if verdict else ""))
        )
        if answer.metadata.get("original_answer"):
            st.caption(f"before correction: {md(answer.metadata['original_answer'])}")
        _open_sources(answer, k)
next_step("pages/annotate.py", "review the conversations in Annotate")
