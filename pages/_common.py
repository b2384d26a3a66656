"""What every page shares: the store (one per process), the current project, and small display helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from string import Template
from urllib.parse import quote, unquote

import streamlit as st

from evalcore.auth.audit import authorize
from evalcore.auth.roles import LOCAL, Actor, job_permission
from evalcore.errors import EvalcoreError
from evalcore.generators.doc_qa.schema import CANNOTANSWER, is_cannot_answer
from evalcore.jobs import failed_units, request_stop, retry_failed
from evalcore.jobs.control import held_by
from evalcore.jobs.queue import enqueue
from evalcore.models import Run, RunStatus
from evalcore.models.wording import words
from evalcore.reports.status import run_state
from evalcore.store import Store, database_url
from evalcore.store.secrets import redact

PROJECT_KEY = "project_id"
# Every ASCII punctuation character: CommonMark lets each be backslash-escaped, and between them they start
# every construct that could make data live (links, images, HTML, autolinks, code, math, colour directives).
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Except bare web and mail addresses: markdown links them after escapes are resolved. A word joiner
# (invisible, no line break) after the scheme or 'www', and before '@', keeps them plain text.
_AUTOLINK = re.compile(r"(?i)(?<![^\W_])(https?|ftp|mailto|www)(?=[:.])|(?=@)")
WORD_JOINER = "\u2060"


def md(value: object) -> str:
    """Data (a document, a model's output, an imported id or title) as markdown that shows exactly its text.

    Pages put data into markdown (st.markdown, st.caption, st.info and the like, widget and expander
    labels) only through this: every punctuation character is escaped, so no image, link, HTML, math,
    heading or colour in the data is live. Line breaks stay line breaks; leading spaces stay visible
    spaces (not a code block); a bare web or mail address shows as text, not as a link. A credential
    value (an error held in memory, never stored) shows as '***'.
    """
    lines = redact(str(value)).replace("\r\n", "\n").split("\n")
    shown = []
    for line in lines:
        text = line.lstrip(" \t")
        text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, text))
        shown.append("\u00a0" * (len(line) - len(line.lstrip(" \t"))) + text)
    return "  \n".join(shown)


# In formatted text: what could load, run or link (HTML and entities, images and links, code that would
# show escapes verbatim, math, Streamlit's ':name[...]' directives, strikethrough that garbles '~10 km');
# emphasis, lists and headings stay.
_LIVE_MARKDOWN = re.compile(r"([\\`<>&\[\]$~:])")


def md_block(value: object) -> str:
    """Long text from a file or a model (a document, a passage, an answer) as markdown that keeps its
    formatting (emphasis, lists, headings, quotes) while nothing in it is live: no image, link, HTML,
    math or code span; a bare web or mail address shows as text; a credential value shows as '***'. For
    ids, names and short fields inside a sentence of ours, use `md`."""
    text = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, redact(str(value)).replace("\r\n", "\n"))
    return _LIVE_MARKDOWN.sub(r"\\\1", text)


def answer_block(content: str) -> str:
    """An expected answer as Markdown: seed 000's marker of an unanswerable question (CANNOTANSWER) in
    words, any other answer as its text."""
    if is_cannot_answer(content):
        return f"_{words(CANNOTANSWER)}: the documents do not answer this, and the assistant should say so._"
    return md_block(content)


def quoted(value: object) -> str:
    """`md_block(value)` as a markdown block quote, every line of it inside the quote."""
    return "\n".join("> " + line for line in md_block(value).split("\n"))


@st.cache_resource(show_spinner=False)
def _open_store(url: str) -> Store:
    return Store(url)


def store_or_stop() -> Store:
    """The process-wide store; if it cannot be opened, say why on the page and stop."""
    try:
        return _open_store(database_url())
    except Exception as exc:
        st.error(f"Cannot open the store: {md(exc)}")
        st.info("Set EVALCORE_DATABASE_URL to a reachable database, or unset it to use ./data/evalcore.db.")
        st.stop()


def project_picker(store: Store) -> str | None:
    """The sidebar's project selector, shared by all pages; returns the chosen project id."""
    projects = store.projects()
    if not projects:
        st.sidebar.info("No project yet: import one on Home.")
        return None
    ids = [p.id for p in projects]
    titles = {p.id: p.title for p in projects}
    if st.session_state.get(PROJECT_KEY) not in ids:
        st.session_state[PROJECT_KEY] = ids[0]
    shared = {t for t in titles.values() if list(titles.values()).count(t) > 1}
    return st.sidebar.selectbox(
        "Current project",
        ids,
        key=PROJECT_KEY,
        # The id only where two projects share a title: it is what tells them apart.
        format_func=lambda pid: f"{titles[pid]} ({pid})" if titles[pid] in shared else titles[pid],
    )


def current_project(store: Store) -> str | None:
    """The project chosen in the sidebar, if any exists."""
    pid = st.session_state.get(PROJECT_KEY)
    ids = [p.id for p in store.projects()]
    if pid in ids:
        return pid
    return ids[0] if ids else None


def show_error(exc: EvalcoreError) -> None:
    """An evalcore error on the page; validation problems as a table a user can scan."""
    problems = getattr(exc, "problems", None)
    if not problems:
        st.error(md(exc))
        return
    st.error(f"{len(problems)} problem(s) found; nothing was imported. Fix them and import again.")
    st.dataframe(
        [{"file": p.file, "line": p.line, "field": p.field or "", "problem": p.message} for p in problems],
        hide_index=True,
        width="stretch",
    )


USER_KEY = "user_name"
# The typed name is kept in a cookie of this browser, so a reload, a new tab or a link someone shared
# still knows who is acting (a name, no secret; a link carries no name, so it never makes you someone else).
USER_COOKIE = "evalcore_user"
_COOKIE_WRITTEN = "user_name_cookie"
_COOKIE_DAYS = 365


def _remembered_name() -> str:
    """The name this browser kept from an earlier session ('' if none)."""
    try:
        raw = st.context.cookies.get(USER_COOKIE)
    except Exception:  # no browser behind the session (a page test)
        return ""
    return unquote(raw).strip() if isinstance(raw, str) else ""


def _remember_name(name: str) -> None:
    """Keep `name` in this browser's cookie when it changed. Percent-encoding leaves only letters, digits
    and '%-._~' in the script, so nothing typed can break out of the string."""
    if st.session_state.get(_COOKIE_WRITTEN) == name:
        return
    st.session_state[_COOKIE_WRITTEN] = name
    run_script(
        "document.cookie = '$name=$value; path=/; max-age=$age; SameSite=Lax';",
        name=USER_COOKIE,
        value=quote(name, safe=""),
        age=_COOKIE_DAYS * 86400,
    )


_SCRIPT_TOKEN = re.compile(r"[A-Za-z0-9%._~-]*")


def run_script(template: str, **tokens: str | int) -> None:
    """Run a constant script with `$name` tokens filled in: the one way a page runs JavaScript.

    A token is an int or a string of letters, digits and '%._~-' (what percent-encoding leaves), so no
    value can end a string or a tag; anything else raises instead of reaching the browser."""
    for key, value in tokens.items():
        if not isinstance(value, int) and not _SCRIPT_TOKEN.fullmatch(value):
            raise ValueError(f"script token {key!r} holds characters a script must not receive")
    body = Template(template).substitute({k: str(v) for k, v in tokens.items()})
    st.html("<script>" + body + "</script>", unsafe_allow_javascript=True, width=1)


ACTOR_KEY = "signed_in_actor"  # set by the sign-in gate (pages/_auth.py) when sign-in is on


def identity_sidebar() -> str | None:
    """Who is acting: the signed-in person when sign-in is on (no name to type: nobody saves as someone
    else), else a name typed once per browser (kept in a cookie across reloads, tabs and shared links)."""
    signed_in = st.session_state.get(ACTOR_KEY)
    if signed_in is not None:
        return signed_in.name
    if USER_KEY not in st.session_state:
        st.session_state[USER_KEY] = st.session_state[_COOKIE_WRITTEN] = _remembered_name()
    name = st.sidebar.text_input(
        "Your name",
        key=USER_KEY,
        placeholder="e.g. dana",
        help="Every edit and verdict is saved under this name; this browser remembers it.",
    )
    with st.sidebar:
        _remember_name(name.strip())
    return name.strip() or None


def current_user() -> str | None:
    """The acting person's name: the signed-in one, else the typed one, if given."""
    signed_in = st.session_state.get(ACTOR_KEY)
    if signed_in is not None:
        return signed_in.name
    return (st.session_state.get(USER_KEY) or "").strip() or None


def current_actor() -> Actor:
    """Who acts, for every library call that changes something: the signed-in actor, else the local
    user (every role) under the typed name."""
    signed_in = st.session_state.get(ACTOR_KEY)
    if signed_in is not None:
        return signed_in
    return LOCAL.model_copy(update={"name": current_user() or LOCAL.name})


def require_user() -> str:
    """The acting person's name; without one, say how to give it and stop the page here."""
    name = current_user()
    if name is None:
        st.warning("Type your name in the sidebar first: every change is saved with who made it.")
        st.stop()
    return name


FLASH_KEY = "flash_message"


def flash(kind: str, message: str, *, rerun: bool = True) -> None:
    """Show `message` on the next run (kind success, info, warning, error, or toast), so the page can
    redraw with the new data and the user still sees what happened; by default rerun at once."""
    st.session_state[FLASH_KEY] = (kind, message)
    if rerun:
        st.rerun()


def show_flash() -> None:
    """The message left by `flash`, once."""
    kind, message = st.session_state.pop(FLASH_KEY, (None, None))
    if kind == "toast":
        st.toast(message, icon=":material/check_circle:")
    elif kind:
        getattr(st, kind)(message)


LIVE = (RunStatus.pending, RunStatus.running)  # a job queued or worked right now, by any process


def show_holders(store: Store, run_id: str) -> bool:
    """Which live workers hold the job's units and since when, one caption each; True when one does."""
    lines = held_by(store, run_id)
    for line in lines:
        st.caption(md(line))
    return bool(lines)


def show_workers(store: Store, run: Run) -> None:
    """Who works a queued or running job: the workers holding it since when, or why nobody does."""
    held = show_holders(store, run.id)
    if run.status == RunStatus.pending and not held:
        st.caption(
            "Waiting for a worker: `evalcore serve` runs one beside the dashboard, `evalcore worker` more."
        )
    elif run_state(store, run.id).word == "running" and not held:
        st.caption("No live worker holds it now: another worker takes it over once its claims expire.")


def job_panel(
    store: Store,
    run_id: str,
    noun: str,
    *,
    stop_label: str = "Stop",
    stop_help: str = "",
    resumable: bool = False,
) -> None:
    """A job's progress as the store has it, whoever works it: a bar of its `noun` (units), the workers
    holding it since when, and a Stop button while it is queued or running. With `resumable`, a stopped
    or failed job gets Resume and one with failed units Retry failed units, both handed to the workers
    (pages with buttons of their own leave it off). While it is live the panel redraws every second;
    when it ends the page reruns once, with a message saying how it ended. A job that finished before
    this session saw it live shows nothing but its failed units' retry: what it made is on the page."""
    status = store.run(run_id).status
    if status == RunStatus.finished and not st.session_state.get(f"job_was_live:{run_id}"):
        if resumable and failed_units(store, run_id):
            _resume_buttons(store, run_id, noun, finished=True)
        return
    live = status in LIVE
    st.fragment(run_every=1.0 if live else None)(_job_panel)(
        store, run_id, noun, stop_label, stop_help, resumable
    )


def guarded(action: Callable[[], object]) -> bool:
    """Do a page's action; an evalcore error (a refusal for the signed-in role, say) is shown on the
    page instead of a traceback. True when it was done."""
    try:
        action()
    except EvalcoreError as exc:
        show_error(exc)
        return False
    return True


def run_name_inputs() -> tuple[str, str]:
    """A run's name and notes, as every form that starts a run against a target asks them (a blank name
    gives the default: target, model and date)."""
    a, b = st.columns([1, 2])
    name = a.text_input(
        "Run name", placeholder="target · model · date", help="How pickers and tables name it."
    )
    notes = b.text_input("Notes", placeholder="what changed since the last run, why this one")
    return name, notes


def may_start(store: Store, kind: str) -> None:
    """Refuse (PermissionDenied, kept in the audit log) before a page records a job of `kind` that the
    acting person may not start: `enqueue` checks again, but a refused job would be left recorded."""
    authorize(store, current_actor(), job_permission(kind), "job.start", target=kind)


def retry_and_queue(store: Store, run_id: str) -> bool:
    """Give a job's failed units back and queue it, if the acting person may start it (asked first, so a
    refusal gives nothing back); a refusal is shown on the page. True when done."""

    def act() -> None:
        may_start(store, store.run(run_id).kind)
        retry_failed(store, run_id)
        enqueue(store, run_id, actor=current_actor())

    return guarded(act)


def _stop(store: Store, run_id: str, who: str, actor: Actor) -> None:
    """The Stop button's callback: a refusal is shown on the page, not as a traceback."""
    try:
        request_stop(store, run_id, who, actor=actor)
    except EvalcoreError as exc:
        flash("error", md(exc), rerun=False)


def _resume_buttons(store: Store, run_id: str, noun: str, *, finished: bool) -> None:
    """Resume (a job that did not finish) and Retry failed units (one with failed units), each putting
    the job back in the queue: units already done are kept, so neither redoes work or a paid call."""
    failed = failed_units(store, run_id)
    if failed:
        st.warning(f"{len(failed)} {noun} failed: " + md(", ".join(sorted(failed)[:5])))
    left, right = st.columns(2)
    resume = not finished and left.button(
        "Resume", key=f"panel_resume:{run_id}", type="primary", icon=":material/play_arrow:",
        help="Units already done are kept; the workers go on with the rest.",
    )  # fmt: skip
    if resume and guarded(lambda: enqueue(store, run_id, actor=current_actor())):
        st.rerun()
    retry = failed and right.button(
        "Retry failed units", key=f"panel_retry:{run_id}", icon=":material/replay:"
    )
    if retry and retry_and_queue(store, run_id):
        st.rerun()


def _job_panel(
    store: Store, run_id: str, noun: str, stop_label: str, stop_help: str, resumable: bool = False
) -> None:
    status = run_state(store, run_id)  # the one status every page shows
    run, done, total, live = status.run, status.done, status.total, status.live
    st.progress(min(done / total, 1.0) if total else 0.0, text=status.text(noun))
    show_workers(store, run)
    if run.stopped_reason:
        st.caption(f"Stopped: {md(run.stopped_reason)}")
    if live:
        st.button(stop_label, key=f"stop:{run_id}", help=stop_help or None, on_click=_stop,
                  args=(store, run_id, current_user() or "a user", current_actor()))  # fmt: skip
    elif resumable:
        _resume_buttons(store, run_id, noun, finished=run.status == RunStatus.finished)
    was_live = f"job_was_live:{run_id}"
    if not live and st.session_state.get(was_live):
        st.session_state[was_live] = False
        failed = len(failed_units(store, run_id))
        message = f"Run {run_id} {run.status.value}: {done}/{total} {noun}"
        message += f", {failed} failed" if failed else ""
        message += f" ({run.stopped_reason})" if run.stopped_reason else ""
        ok = run.status == RunStatus.finished and not failed
        flash("success" if ok else "warning", md(message))  # reruns the page, which shows what the job made
    st.session_state[was_live] = live


def lazy_expander(label: str, key: str, *, expanded: bool = False, **options: object):
    """An expander whose content a page draws only while it is open (`box.open`; opening or closing it
    reruns the page): a closed expander's tables, forms and uploaders otherwise cost the server and the
    browser their drawing on every visit (issue 28). `expanded` is its state on the first visit."""
    return st.expander(label, expanded=expanded, key=key, on_change="rerun", **options)


def next_step(page: str, label: str) -> None:
    """Where a user goes from here (issue 28: every page ends with the obvious next step), as a link."""
    st.divider()
    st.page_link(page, label=f"Next: {label}", icon=":material/arrow_forward:")
