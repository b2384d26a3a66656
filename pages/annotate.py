"""Annotate: the queue, then one conversation turn by turn (verdict + reason per turn, corrections, the
grounding documents beside each answer; on a simulated dialogue, breakdown labels per target turn), saved
in one go by the Save button only (never by Enter in a field); the next conversation opens after a save."""

import threading

import pandas as pd
import streamlit as st

from evalcore.auth.roles import Permission
from evalcore.errors import EvalcoreError, NotFoundError, StaleVersionError
from evalcore.generators.tool_case.overview import situation_info
from evalcore.models.wording import QUERY_TYPE_HELP, TIER_HELP, words
from evalcore.models.wording import tier as tier_word
from evalcore.review import (
    TIER_FILTERS,
    QueueFilter,
    filter_options,
    next_item,
    open_item,
    previous_item,
    progress,
    queue_page,
    queue_progress,
    save_log,
)
from evalcore.review.breakdown_labels import BREAKDOWN_CHOICES, form_labels
from evalcore.review.grounding import relevant_passages
from evalcore.review.guidelines import edit_guidelines, guidelines
from evalcore.review.labels import CHOICES, LABELS, choice_of, text_of, verdict_of
from evalcore.review.verdicts import (
    ItemVerdict,
    adjudicate,
    item_verdict,
    reopen,
    save_review,
    turn_verdict,
)
from evalcore.review.workitem import trail, turn_groups
from pages._common import (
    answer_block,
    current_actor,
    current_project,
    current_user,
    flash,
    lazy_expander,
    md,
    md_block,
    quoted,
    require_user,
    run_script,
    show_flash,
    store_or_stop,
)
from pages._keys import review_keys, with_key
from pages._pickers import first_listed, matching

store = store_or_stop()
project_id = current_project(store)
if project_id is None:
    st.title("Annotate")
    st.info("Import a project on Home first.")
    st.stop()
if not current_user():
    st.title("Annotate")
user = require_user()

PAGE_SIZE = 25
OUTBOX = "annotate_outbox"  # what a Save callback leaves for the next run (`_outbox`)
ITEM = "item"  # query parameter naming the open conversation: a browser reload reopens it
TIER_COLORS = {"gold": "orange", "silver": "gray", "rejected": "red", "unreviewed": "blue"}
SCROLL_TOP = (
    "for (const el of document.querySelectorAll('[data-testid=stMain], [data-testid=stAppViewContainer]'))"
    " { el.scrollTo(0, 0); } window.scrollTo(0, 0);"
)
# One label set for turns, the whole conversation and a lead's decision: the same words and the same key.
CHOICE_LABELS = {label.value: with_key(label.text, label.key) for label in LABELS}
LABEL_HELP = "  \n".join(f"**{label.key}** {label.text}: {label.help}" for label in LABELS)


def _session(item_id: str) -> dict:
    """What this browser session holds about an open conversation: the version it opened, the text it
    was shown per turn (what a correction is compared with), and a refused save's message."""
    return st.session_state.setdefault(f"annotate:{item_id}", {"opened": None, "shown": {}, "refused": None})


def _forget(item_id: str | None) -> None:
    if item_id:
        st.session_state.pop(f"annotate:{item_id}", None)


def _open(item_id: str | None, *, rerun: bool = True) -> None:
    """Leave the open conversation (a later visit starts afresh) and open another, or the queue; from a
    callback (`rerun=False`) the run about to start draws it."""
    _outbox()["go"] = None  # the person's own move wins over where their last save was still going
    _forget(st.query_params.get(ITEM))
    if item_id is None:
        st.query_params.pop(ITEM, None)
    else:
        st.query_params[ITEM] = item_id
    if rerun:
        st.rerun()


def _reload(view) -> None:
    """Take the latest version as the one opened. Unsaved choices stay in the form, except expected
    answers left as they were shown: those show the latest text (else saving would undo a correction)."""
    record = _session(view.conversation.id)
    for index, shown in record["shown"].items():
        key = f"te:{view.conversation.id}:{index}"
        if st.session_state.get(key, shown) == shown:
            st.session_state.pop(key, None)
    record.update(opened=view.version, shown={}, refused=None)
    st.rerun()


def _outbox() -> dict:
    """What a Save callback leaves for the page's next run. Taken from the session before the callback
    commits and filled after it as a plain dict: every `st.session_state` access is a point where
    Streamlit ends a callback when the browser has sent another request (a second press, a click on
    the page), so from the save's arrival on the callback touches nothing of Streamlit's: a save that
    arrived is made and answered, or refused and told, never dropped half-way."""
    return st.session_state.setdefault(
        OUTBOX, {"replies": [], "saved": {}, "go": None, "toast": None, "last": None, "count": 0}
    )


def _deliver() -> bool:
    """Open what the last Save left in the outbox (the next conversation, or the queue) with its toast;
    True when it left the toast to show.
    The outbox keeps where to go until a run has drawn it (the end of the page): a request the browser
    sent before it saw the new address (a second press) starts a run with the old one, which must not
    reopen the conversation just saved."""
    outbox = _outbox()
    if outbox["go"] is None:
        return False
    if st.query_params.get(ITEM, "") != outbox["go"]:
        _forget(st.query_params.get(ITEM))
        if outbox["go"]:
            st.query_params[ITEM] = outbox["go"]
        else:
            st.query_params.pop(ITEM, None)
    toast, outbox["toast"] = outbox["toast"], None
    if toast:
        flash("toast", toast, rerun=False)
    return bool(toast)


def _replied() -> None:
    """The saves waiting for an answer have it on the page: the save log's last phase, with the
    conversation shown (a person may close the tab once they see it, before the run ends)."""
    replies = _outbox()["replies"]
    while replies:
        save_log.record(replies.pop(0), "reply", drawn=st.query_params.get(ITEM))


# ------------------------------------------------------------------ sidebar: queue filters, progress
rules = guidelines(store, project_id)
if rules is not None:
    # Open beside a conversation, closed over the queue (each remembers its own state): the Markdown is
    # drawn only while open, a closed expander's costs the browser its drawing all the same.
    beside = bool(st.query_params.get(ITEM))
    with st.sidebar:
        rules_box = lazy_expander("Annotation guidelines", f"annotate_rules:{beside}", expanded=beside)
    if rules_box.open:
        # The project's Markdown: headings, lists and emphasis stay; nothing in it is live (no HTML).
        rules_box.markdown(md_block(rules.text))
options = filter_options(store, project_id)
team = progress(store, project_id)
mine = next((p for p in team if p.annotator == user), None)
with st.sidebar:
    st.subheader("Queue")
    if mine and mine.assigned:
        st.progress(mine.done / mine.assigned, text=f"You: {mine.done} / {mine.assigned} assigned done")
    st.session_state.setdefault("q_mine", bool(mine and mine.assigned > mine.done))
    only_mine = st.toggle("Only my assigned, not yet reviewed", key="q_mine")
    tier = st.selectbox(
        "Tier", [None, *TIER_FILTERS], key="q_tier", format_func=lambda x: tier_word(x) if x else "any",
        help=TIER_HELP,
    )  # fmt: skip
    generator = st.selectbox(
        "Generator", [None, *options.generators], key="q_gen", format_func=lambda x: words(x) if x else "any"
    )
    # A project of thousands of specs gets a search above the picker, which lists the first matches (a
    # picker of 2,000 costs every visit ~0.25 s of browser CPU).
    found = options.specs
    if len(options.specs) > len(first_listed(options.specs)):
        looked_for = st.text_input("Find a spec", key="q_spec_find", placeholder="words of its scenario")
        found = matching(options.specs, looked_for)
    if st.session_state.get("q_spec") not in (None, *options.specs):
        del st.session_state["q_spec"]  # a spec no longer in the project: the filter is off
    spec = st.selectbox(
        "Spec",
        [None, *first_listed(found, st.session_state.get("q_spec"))],
        key="q_spec",
        format_func=lambda x: "any" if x is None else options.specs[x],
    )
    assignee = st.selectbox(
        "Assigned to", [None, *options.annotators], key="q_assignee", format_func=lambda x: x or "anyone"
    )
flt = QueueFilter(
    generator=generator,
    spec_id=spec,
    tier=tier,
    assignee=assignee,
    needs_review_by=user if only_mine else None,
)
answered = _deliver()
show_flash()
if answered:  # the toast that says the save was made is on its way to the browser
    _replied()


def _progress() -> None:
    """How far I am through this queue, and what I saved in this session."""
    mine_done = queue_progress(store, project_id, flt, user)
    if not mine_done.total:
        return
    saved = _outbox()["count"]
    st.progress(
        mine_done.done / mine_done.total,
        text=f"{mine_done.done:,} of {mine_done.total:,} done"
        + (f" · {saved} saved in this session" if saved else ""),
    )


def _guidelines_editor() -> None:
    """A lead writes or edits the project's annotation guidelines (Markdown; saved as a new version)."""
    editing = lazy_expander(
        "Edit the annotation guidelines", "annotate_guidelines", icon=":material/edit_note:"
    )
    if not editing.open:
        return  # the form is drawn only while open
    with editing:
        st.caption(
            "Markdown: headings, lists, **bold**. Annotators see them beside every conversation. Each save "
            "is a new version, with your name; importing the project's guidelines.md again adds its text "
            "only when the file changed."
        )
        with st.form("guidelines", enter_to_submit=False, border=False):
            text = st.text_area("Guidelines", rules.text if rules else "", height=320, key="guidelines_text")
            if st.form_submit_button("Save guidelines", type="primary"):
                try:
                    version = edit_guidelines(
                        store, project_id, text, user, rules.version if rules else None, actor=current_actor()
                    )
                except EvalcoreError as exc:
                    st.error(md(exc))
                else:
                    st.session_state.pop("guidelines_text", None)
                    flash("toast", f"Guidelines saved (version {version}).")


# ------------------------------------------------------------------ the queue
def queue_view() -> None:
    st.title("Annotate")
    key = repr(flt)
    if st.session_state.get("annotate_filter") != key:
        st.session_state["annotate_filter"] = key
        st.session_state["annotate_page"] = 0
    page_no = st.session_state.get("annotate_page", 0)
    page = queue_page(store, project_id, flt, limit=PAGE_SIZE, offset=page_no * PAGE_SIZE, user=user)
    head, action = st.columns([4, 1], vertical_alignment="center")
    head.caption(
        f"**{page.total:,}** conversation(s) match the filters. Pick one, or start with the first: "
        "mark each turn (or give the whole conversation a verdict) and save."
    )
    with head:
        _progress()
    if action.button(
        "Review next", type="primary", icon=":material/play_arrow:", shortcut="Alt+N", disabled=not page.total
    ):
        _open(next_item(store, project_id, flt))
    if not page.total and not options.generators:
        st.info("This project has no conversations yet: generate some on the Conversations page.")
    elif not page.total:
        st.info(
            "Nothing to review with these filters."
            + (" Turn off 'Only my assigned' to see every conversation." if only_mine else "")
        )
    else:
        frame = pd.DataFrame(
            [
                {
                    "conversation": r.item_id,  # what a picked row opens; not shown (the title columns are)
                    "tier": tier_word("disagreement" if r.needs_adjudication else r.tier),
                    "first question": r.preview,
                    "turns": r.n_turns,
                    "judge": r.judge_score,
                    "generator": words(r.generator),
                    "spec": options.specs.get(r.spec_id, r.spec_id) if r.spec_id else "",
                    "assigned to": ", ".join(r.assignees),
                    "reviews": r.reviewers,
                    "you": words(r.my_verdict, missing="").capitalize(),
                }
                for r in page.rows
            ]
        )
        # Blind review: a list of one's own work to do does not show what others decided.
        hidden = {"conversation"} | ({"tier", "reviews", "you"} if only_mine else set())
        if not options.specs:
            hidden.add("spec")
        event = st.dataframe(
            frame,
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key=f"queue:{key}:{page_no}",
            height=36 + 35 * len(frame),
            width="stretch",
            column_order=[c for c in frame.columns if c not in hidden],
            column_config={
                # Widths (px) that fit the nine shown columns in the ~1,030 px of a 1500 px window: the
                # question and the spec get the room, the tier and the generator in words what they need,
                # the counts no more than their header.
                "tier": st.column_config.TextColumn(width=140, help=TIER_HELP),
                "first question": st.column_config.TextColumn(width=185),
                "turns": st.column_config.NumberColumn(width=50),
                "judge": st.column_config.ProgressColumn(
                    min_value=0.0, max_value=1.0, format="%.2f", width=70
                ),
                "generator": st.column_config.TextColumn(width=170),
                "spec": st.column_config.TextColumn(width=150),
                "assigned to": st.column_config.TextColumn(width=80),
                "reviews": st.column_config.NumberColumn(width=55),
                "you": st.column_config.TextColumn(width=55),
            },
        )
        if event.selection.rows:
            _open(frame.iloc[event.selection.rows[0]]["conversation"])
        pages = (page.total + PAGE_SIZE - 1) // PAGE_SIZE
        prev_col, info_col, next_col = st.columns([1, 3, 1], vertical_alignment="center")
        if prev_col.button("◀ Previous page", disabled=page_no == 0):
            st.session_state["annotate_page"] = page_no - 1
            st.rerun()
        info_col.caption(
            f"Page {page_no + 1} of {pages} · rows {page.offset + 1}-{page.offset + len(page.rows)}"
        )
        if next_col.button("Next page ▶", disabled=page_no + 1 >= pages):
            st.session_state["annotate_page"] = page_no + 1
            st.rerun()
    if current_actor().may(Permission.manage_review):
        _guidelines_editor()
    team_box = lazy_expander("Team progress", "annotate_team") if team else None
    if team_box is not None and team_box.open:  # its table drawn only while open
        with team_box:
            st.dataframe(
                pd.DataFrame([vars(p) for p in team]).rename(columns={"reviewed": "reviewed in all"}),
                hide_index=True,
                column_config={"done": st.column_config.NumberColumn(help="assigned items with a verdict")},
            )


# ------------------------------------------------------------------ one conversation
def _documents(view, indexes: list[int], whole_shown: set[str]) -> None:
    """The grounding documents of a block of turns: the passages that bear on them, and each whole
    document once per conversation (a table drawn again beside every turn costs the browser more than
    the rest of the page)."""
    ids = list(dict.fromkeys(g for i in indexes for g in view.conversation.turns[i].grounding))
    if not ids:
        st.caption("No grounding documents for this turn.")
        return
    text = " ".join(view.content(i) for i in indexes)
    for doc_id in ids:
        doc = view.documents.get(doc_id)
        if doc is None:
            st.warning(f"Grounding document {md(doc_id)} is not in the project.")
            continue
        st.markdown(f"**{md(doc.title)}** · {doc.kind.value}")  # the title names it: no id
        for passage in relevant_passages(doc, text):
            for row in passage.rows:  # one line per row: every field stays visible in a narrow column
                st.markdown("> " + " · ".join(f"**{md(k)}** {md(v)}" for k, v in row.items()))
            if passage.text:
                st.markdown(
                    quoted(passage.text)
                    + (f"  \n> :gray[— {md(passage.heading)}]" if passage.heading else "")
                )
        if doc_id in whole_shown:
            st.caption("Whole document: beside an earlier turn.")
            continue
        whole_shown.add(doc_id)
        with st.expander("Whole document"):
            if doc.rows:
                st.dataframe(pd.DataFrame(doc.rows), hide_index=True, height=240)
            else:
                st.container(height=260).markdown(md_block(doc.text))


def _chat(turn, content: str, query_label: str | None) -> None:
    role = {"user": "user", "assistant": "assistant"}.get(turn.role.value, turn.role.value)
    with st.chat_message(role, avatar=":material/build:" if role.startswith("tool") else None):
        # A tool turn as the Tool cases page words it: the project's tool by its name, the role in words.
        said = {"tool_call": f"calls {turn.tool_name}", "tool_result": f"{turn.tool_name} answers"}
        label = " · ".join(x for x in (said.get(role, role), query_label and words(query_label)) if x)
        st.caption(f"Turn {turn.index} · {md(label)}", help=QUERY_TYPE_HELP if query_label else None)
        if turn.role.value == "tool_call" and not content:
            st.markdown(f"Calls {md(turn.tool_name)}")
        else:
            st.markdown(answer_block(content) if content else "_(empty)_")
        if turn.arguments:
            st.json(turn.arguments, expanded=True)


def _adjudication(view, version: int) -> None:
    state = view.state
    if view.blind(user) or not (state.needs_adjudication or state.adjudicated_by or user in view.leads):
        return
    with st.expander("Adjudicate as lead", expanded=state.needs_adjudication, icon=":material/gavel:"):
        st.markdown(
            md(
                f"Accepted by: {', '.join(state.accepted_by) or 'nobody'} · rejected by: "
                f"{', '.join(state.rejected_by) or 'nobody'} · reasons: {', '.join(state.reasons) or 'none'}"
            )
        )
        if state.adjudicated_by:
            st.info(md(f"Decided by lead {state.adjudicated_by}: {state.adjudication}."))
        if view.leads and user not in view.leads:
            st.caption(md(f"Only the project's leads ({', '.join(view.leads)}) can decide."))
            return
        with st.form(f"lead:{view.conversation.id}", enter_to_submit=False):
            # The annotators' label set: accept, or the reason that rejects.
            decision = st.segmented_control(
                "Decision", CHOICES, key=f"lead_d:{view.conversation.id}", format_func=CHOICE_LABELS.get,
                help=LABEL_HELP,
            )  # fmt: skip
            note = st.text_input("Note", key=f"lead_n:{view.conversation.id}")
            if st.form_submit_button("Record lead decision", type="primary"):
                try:
                    label, reason = verdict_of(decision)
                    item = ItemVerdict(label=label or "", reason=reason, note=note)
                    adjudicate(store, view.conversation.id, user, version, item, actor=current_actor())
                except (EvalcoreError, ValueError) as exc:
                    st.error(md(_message(exc)))
                else:
                    flash(
                        "toast",
                        f"Lead decision on {md(view.title)} recorded: {text_of(decision).lower()}.",
                        rerun=False,
                    )
                    _open(
                        next_item(store, project_id, flt, after=view.conversation.id) or view.conversation.id
                    )
        if state.adjudicated_by and st.button("Withdraw the lead decision"):
            _guarded(
                lambda: reopen(
                    store, view.conversation.id, user, version, role="lead", actor=current_actor()
                ),
                view.conversation.id,
            )


def _message(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic: the first problem, without the model dump
        return "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in errors())
    return str(exc)


def _guarded(action, item_id: str) -> None:
    try:
        action()
    except StaleVersionError as exc:
        _session(item_id)["refused"] = str(exc)
        st.rerun()
    except EvalcoreError as exc:
        st.error(md(exc))
    else:
        _forget(item_id)
        flash("toast", "Saved.", rerun=False)
        st.rerun()


def _turn_controls(view, index: int) -> None:
    """Verdict (accept, a reason, or none yet), note and correction of one judged turn; pre-filled with
    mine. The Save button's callback reads them by key (`_form`)."""
    key = f"{view.conversation.id}:{index}"
    prev = view.mine.get(index)
    # Nothing is pre-marked: a turn nobody looked at has no verdict, it is not an accept (issue 15).
    st.segmented_control(
        f"Turn {index}", CHOICES, default=choice_of(prev), format_func=CHOICE_LABELS.get,
        key=f"tv:{key}", label_visibility="collapsed",
    )  # fmt: skip
    if prev is not None and prev.label != "accept" and choice_of(prev) is None:
        st.caption(md(f"Your saved reason '{prev.reason}' is not one of these labels: it stays as saved."))
    st.text_input(
        "Note", value=prev.note if prev else "", key=f"tn:{key}", placeholder="Note (say what, for 'other')",
        label_visibility="collapsed",
    )  # fmt: skip
    what = "call" if view.conversation.turns[index].role.value == "tool_call" else "answer"
    shown = _session(view.conversation.id)["shown"].setdefault(
        index, view.content(index)
    )  # what `_form` compares
    # A simulated dialogue's assistant turns are what the target said, not expected answers.
    title = (
        "Write what the assistant should have said"
        if view.breakdown_turns
        else f"Correct the expected {what}"
    )
    with st.expander(f"{title} (marks the turn 'wrong answer')"):
        st.text_area("Expected answer", value=shown, key=f"te:{key}")


def _breakdown_controls(view, index: int) -> None:
    """Breakdown or not, and its types (by title), of one target turn of a simulated dialogue; pre-filled
    with mine. The detector's verdict is not shown: the label is the annotator's own."""
    key = f"{view.conversation.id}:{index}"
    prev = view.breakdown_labels.get(user, {}).get(index)
    default = None if prev is None else BREAKDOWN_CHOICES[0] if prev.breakdown else BREAKDOWN_CHOICES[1]
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    left.segmented_control(
        "Dialogue breakdown", BREAKDOWN_CHOICES, default=default, key=f"bd:{key}", format_func=str.capitalize
    )
    titles = list(dict.fromkeys([*view.breakdown_titles, *(prev.types if prev else [])]))
    right.multiselect(
        "Breakdown types", titles, default=prev.types if prev else [], key=f"bt:{key}",
        placeholder="Types of the breakdown",
    )  # fmt: skip


def _form(view) -> tuple[dict, str | None, str | None, str, dict]:
    """What the review form holds now, read from its widgets' keys: per judged turn (choice, note,
    expected answer, the text shown, my earlier correction), the conversation's verdict, reason and note,
    and per target turn the breakdown choice, types and note."""
    state, item_id = st.session_state, view.conversation.id
    shown = _session(item_id)["shown"]
    fields = {}
    for index in view.judged_turns:
        key, prev = f"{item_id}:{index}", view.mine.get(index)
        fields[index] = (
            state.get(f"tv:{key}"), state.get(f"tn:{key}", ""), state.get(f"te:{key}"), shown.get(index),
            prev.edited_content if prev else None,
        )  # fmt: skip
    breakdowns = {}
    for index in view.breakdown_turns:
        key, prev = f"{item_id}:{index}", view.breakdown_labels.get(user, {}).get(index)
        breakdowns[index] = (state.get(f"bd:{key}"), state.get(f"bt:{key}", []), prev.note if prev else "")
    verdict, reason = verdict_of(state.get(f"cv:{item_id}"))
    return fields, verdict, reason, state.get(f"cn:{item_id}", ""), breakdowns


def _save(view, opened: int) -> None:
    """The Save button's callback: save the form on top of the version opened and leave the next
    conversation of the queue for the run about to start (`_deliver`), so that one run draws it (the one
    just saved is not drawn again first: half of a save's time in the browser). A second press of a form
    this session already saved is answered as the first (`duplicate` in the save log), not saved again."""
    item_id = view.conversation.id
    outbox, record = _outbox(), _session(item_id)
    form, actor = _form(view), current_actor()  # both read the session: before anything is written
    save = save_log.new_save()
    save_log.record(save, "arrive", item=item_id, author=user, version=opened)
    outbox["replies"].append(save)
    # Streamlit's fast reruns run a second press's callback on a new thread while the first's may still
    # be saving (seen under load: the second was refused as stale instead of answered as the first's
    # duplicate): one save at a time per session, so the second sees what the first saved.
    with outbox.setdefault("lock", threading.Lock()):
        _save_once(view, opened, save, (form, actor), (outbox, record))


def _save_once(view, opened: int, save: str, read: tuple, session: tuple[dict, dict]) -> None:
    """`_save` under the session's save lock: the duplicate check, the save and what it leaves in the
    outbox; `read` is the form and the actor, `session` the outbox and the item's record, all read
    from the session before (nothing here touches Streamlit)."""
    item_id, (form, actor), (outbox, record) = view.conversation.id, read, session
    if outbox["saved"].get(item_id) == opened:
        save_log.record(save, "duplicate", item=item_id)
        return
    record["error"] = None
    following = next_item(store, project_id, flt, after=item_id)
    try:
        fields, verdict, reason, note, breakdowns = form
        marked = {
            i: turn_verdict(i, choice, note_i, text, shown, mine_edit)
            for i, (choice, note_i, text, shown, mine_edit) in fields.items()
        }
        turns = [v for v in marked.values() if v is not None]
        unmarked = [i for i, v in marked.items() if v is None]
        labels, cleared = form_labels(breakdowns, view.breakdown_labels.get(user, {}))
        item = item_verdict(
            turns, verdict, reason if verdict != "accept" else None, note, unmarked, bool(labels or cleared)
        )
        result = save_review(store, item_id, user, opened, turns, item, labels, cleared, actor=actor)
    except StaleVersionError as exc:
        save_log.record(save, "refused", item=item_id)
        record["refused"] = str(exc)
        return
    except (EvalcoreError, ValueError) as exc:
        save_log.record(save, "error", item=item_id, error=str(exc))
        record["error"] = _message(exc)
        return
    save_log.record(save, "commit", item=item_id, appended=result.appended)
    state = result.state or view.state
    tier = tier_word("disagreement" if state.needs_adjudication else state.tier.value)
    name = md(view.title)
    done = (
        f"Saved {name}: you {item.label}ed it; its tier is now '{tier}'."
        if item
        else f"Saved the breakdown labels of {name}."
    )
    if following == item_id:
        following = None
    if following is None:
        done = f"{done} Nothing else matches the filters: this queue is done."
    elif not result.appended:
        done = f"{name}: nothing changed."
    outbox.update(toast=done, last=(item_id, view.title), count=outbox["count"] + 1)
    outbox["saved"][item_id] = opened
    outbox["go"] = following or ""  # "" is the queue


def _stale_notice(view, record: dict, where: str) -> None:
    """Someone saved after this session opened the conversation: say who, and offer to reload."""
    if view.version == record["opened"] and not record["refused"]:
        return
    st.warning(
        md(
            record["refused"]
            or f"{view.saved_by} saved this conversation (version {view.version}) after you opened version "
            f"{record['opened']}. Reload to see their change; your unsaved choices stay in the form."
        ),
        icon=":material/sync_problem:",
    )
    if st.button("Reload", type="primary", icon=":material/refresh:", key=f"reload:{where}"):
        _reload(view)


def _lazy(label: str, key: str):
    """An expander whose content is drawn only while it is open (its `.open`): a table or JSON tree in a
    closed expander still costs the browser its drawing on every conversation opened."""
    return st.expander(label, key=f"annotate_{key}", on_change="rerun")


def item_view(item_id: str) -> None:
    try:
        view = open_item(store, item_id, user)
    except NotFoundError:
        st.warning(f"There is no conversation '{md(item_id)}' any more.")
        if st.button("Back to the queue"):
            _open(None)
        return
    conv = view.conversation
    record = _session(item_id)
    if record["opened"] is None:
        record["opened"] = view.version
    opened = record["opened"]
    if st.session_state.get("annotate_shown") != item_id:
        # "Save & next" is pressed at the bottom; the next conversation must start at its top, not there.
        # The script differs from the last one (so it runs again) by a counter: no data goes into it.
        st.session_state["annotate_shown"] = item_id
        shown = st.session_state["annotate_scrolls"] = st.session_state.get("annotate_scrolls", 0) + 1
        run_script("/* $shown */ " + SCROLL_TOP, shown=int(shown))
    with st.container(horizontal=True, vertical_alignment="center"):
        if st.button("Queue", icon=":material/list:", shortcut="Alt+Q"):
            _open(None)
        if st.button("Previous", icon=":material/chevron_left:", shortcut="Alt+P"):
            _open(previous_item(store, project_id, flt, item_id) or item_id)
        if st.button("Skip", icon=":material/chevron_right:", shortcut="Alt+N"):
            _open(next_item(store, project_id, flt, after=item_id) or item_id)
        last, last_title = _outbox()["last"] or (None, "")
        if (
            last
            and last != item_id
            and st.button(
                "Back to the one just saved", icon=":material/undo:", shortcut="Alt+B", help=md(last_title)
            )
        ):
            _open(last)  # the one just saved has left a "to review" queue: this is the way back to fix it
        # Blind review: until you give your verdict, others' verdicts (and the tier they make) stay hidden.
        tier = view.tier_label
        badge = (
            ":blue-badge[to review]"
            if view.blind(user)
            else f":{TIER_COLORS.get(tier, 'violet')}-badge[{tier_word(tier)}]"
        )
        judge = f" :gray-badge[judge {view.judge_score:.2f}]" if view.judge_score is not None else ""
        st.markdown(
            f"#### {md(view.title)} {badge}{judge}", width="content",
            help=md(f"Conversation {conv.id}.") + "\n\n" + TIER_HELP,
        )  # fmt: skip
    if view.spec and view.first_question:
        st.markdown(f"**First question:** {md(view.first_question)}")
    st.caption(
        md(
            f"{words(conv.generator)} · version {view.version} saved by {view.saved_by} · produced by "
            f"{'the offline provider' if conv.provenance.is_offline else conv.provenance.producer} · "
            f"assigned to {', '.join(view.assignees) or 'nobody'} · {len(view.others_reviewed(user))} other "
            "reviewer(s)"
        )
    )
    _progress()
    if situation := situation_info(store, project_id, conv):  # a tool case: people confirm or reject it
        st.info(
            f"Meant to show {md(situation.intended)}. Accept the conversation if it does, reject it "
            f"(off-spec) if not.\n\n**Situation:** {md(situation.description)}\n\n"
            f"**World state:** {md(situation.world_state)}",
            icon=":material/label:",
        )
    if view.spec:
        with st.expander(f"Spec: {md(view.spec.get('scenario', conv.spec_id))}"):
            st.markdown("  \n".join(f"**{part.capitalize()}** {md(view.spec.get(part, ''))}"
                                     for part in ("given", "when", "then")))  # fmt: skip
    judge_notes = (conv.metadata.get("verification") or {}).get("reasons") or []
    details = _lazy(
        "Generator and judge details" + (f" ({len(judge_notes)} judge notes)" if judge_notes else ""),
        "details",
    )
    with details:
        if details.open:
            for note in judge_notes:
                st.markdown(f"- {md(note)}")
            st.json(conv.metadata, expanded=1)
    _stale_notice(view, record, "top")
    _adjudication(view, opened)
    groups = turn_groups(view)
    judged = set(view.judged_turns)
    review_keys()
    st.caption(
        "Keys: **1**-**7** label the outlined turn and move to the next one (the last is the whole "
        "conversation); **J** and **K** move down and up; **Ctrl+Enter** saves."
    )
    # Enter in a note field must not save the review: only the button (or its Ctrl+Enter) does.
    with st.form(f"review:{item_id}", border=False, enter_to_submit=False):
        whole_shown: set[str] = set()
        for group in groups:
            with st.container(border=True):
                left, right = st.columns([5, 2], gap="medium")
                with left:
                    for index in group:
                        _chat(conv.turns[index], view.content(index), view.query_label(index))
                with right:
                    _documents(view, group, whole_shown)
                # Under both columns: the seven labels with their keys fit on one row.
                if group[-1] in judged:
                    _turn_controls(view, group[-1])
                if group[-1] in view.breakdown_turns:
                    _breakdown_controls(view, group[-1])
        if view.breakdown_turns:
            st.caption(
                "Breakdown labels say how the target did, not whether the dialogue is good data: they can "
                "be saved alone, without a verdict."
            )
        st.markdown("**Whole conversation**")
        st.caption(
            "Leave the verdict empty to take it from the turns: rejected when a turn is rejected and not "
            "corrected, accepted when every turn is marked and none is (a corrected conversation is a good "
            "one). Turns left unmarked are not counted as accepted. Ctrl+Enter saves and opens the next "
            "conversation."
        )
        prev = view.mine.get(None)
        st.segmented_control(
            "Verdict (accept, or the reason that rejects it)", CHOICES, default=choice_of(prev),
            key=f"cv:{item_id}", format_func=CHOICE_LABELS.get, help=LABEL_HELP,
        )  # fmt: skip
        st.text_input(
            "Note on the conversation", value=prev.note if prev else "", key=f"cn:{item_id}", width=560
        )
        st.form_submit_button(
            "Save & next", type="primary", icon=":material/done_all:", shortcut="Ctrl+Enter",
            on_click=_save, args=(view, opened),
        )  # fmt: skip
    if record.get("error"):
        st.error(md(record["error"]))
    if record["refused"]:  # also where the Save button was pressed, not only at the top of the page
        _stale_notice(view, record, "bottom")

    reopen_help = "Withdraws your verdicts; corrections stay."
    if view.mine and st.button("Reopen my verdict", icon=":material/undo:", help=reopen_help):
        _guarded(lambda: reopen(store, item_id, user, opened, actor=current_actor()), item_id)
    if view.mine or user in view.leads:
        others = _lazy(f"Other reviews ({len(view.others_reviewed(user))})", "others")
        with others:
            if others.open:
                st.dataframe(pd.DataFrame(trail(view, leave_out=user)), hide_index=True)
    history = _lazy("History", "history")
    with history:
        if history.open:
            st.dataframe(pd.DataFrame(trail(view)), hide_index=True)


opened_item = st.query_params.get(ITEM)
if opened_item:
    item_view(opened_item)
else:
    queue_view()
_outbox()["go"] = None  # this run drew where the last save went
_replied()  # a refusal or an error is drawn with the conversation
