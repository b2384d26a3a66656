"""Tool cases (seed 004, TRACE/SCOPE): the situation catalog with its labels and what each tool group cannot
produce; the synthesized conversations per situation with their intended labels; gold and silver with the
judge's threshold tuned on gold; SCOPE rubric sets, viewed and edited as versions; the SPUR vs SCOPE
comparison (Tables 3 and 4) and a target's conversations scored by rubrics, both read from stored jobs."""

import streamlit as st

from evalcore.errors import EvalcoreError, StaleVersionError, ValidationFailed
from evalcore.generators.simulation.job import simulation_runs
from evalcore.generators.tool_case.evaluation import (
    DEFAULT_FOLDS,
    MIN_PER_LABEL,
    comparison_runs,
    create_comparison,
    labelled_conversations,
    missing_labels,
    stored_comparison,
    variant_names,
)
from evalcore.generators.tool_case.evaluation import RUN_KIND as COMPARISON_KIND
from evalcore.generators.tool_case.filtering import RUN_KIND as FILTER_KIND
from evalcore.generators.tool_case.filtering import TARGET_PRECISION, calibrate_toolcases, create_filter
from evalcore.generators.tool_case.job import RUN_KIND as GENERATE_KIND
from evalcore.generators.tool_case.job import create_toolcases
from evalcore.generators.tool_case.overview import (
    catalog_rows,
    group_skips,
    silver_sets,
    situation_conversations,
)
from evalcore.generators.tool_case.records import intended_labels
from evalcore.generators.tool_case.rubrics import (
    MAKE_OR_BREAK,
    edit_rubric_set,
    project_rubric_sets,
    rubric_history,
    rubric_yaml,
    with_rubric,
)
from evalcore.items.state import project_policy, set_policy
from evalcore.jobs import progress
from evalcore.jobs.queue import enqueue
from evalcore.models import TurnRole
from evalcore.models.wording import TIER_HELP, term, term_help, words
from evalcore.models.wording import tier as tier_word
from evalcore.reports.charts import calibration_chart
from evalcore.reports.failures import provenance
from evalcore.reports.rubric_tables import (
    area_table,
    drill_down,
    export_rubric_tables,
    label_table,
    rubric_report,
    rubric_table,
)
from evalcore.review import filter_options
from evalcore.runs.rubric_scoring import RUN_KIND as SCORING_KIND
from evalcore.runs.rubric_scoring import create_rubric_scoring, scoring_runs
from pages._common import (
    current_actor,
    current_project,
    current_user,
    flash,
    job_panel,
    may_start,
    md,
    md_block,
    next_step,
    require_user,
    show_error,
    show_flash,
    store_or_stop,
)
from pages._rubric_discovery import discovery_form

store = store_or_stop()
project_id = current_project(store)
st.title("Tool cases")
st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
st.caption(
    "Conversations where an assistant uses tools, each written for a situation: the tool works or fails, "
    "the assistant behaves well or not, the user ends satisfied or not, and the conversation as a whole is "
    "handled well or badly. Generate them under Conversations below.",
    help=term_help("seed 004", "TRACE", "POS", "NEG")
    + " A team adds its own situations with: evalcore toolcases situations --add FILE.",
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()
show_flash()
EXTENSIONS = {"md": "md", "csv": "csv", "jsonl": "jsonl", "latex": "tex"}
NEEDS_NAME = "Type your name in the sidebar to change this: every change is saved with who made it."


def _refused(exc: ValidationFailed) -> None:
    """An edit the rules refuse: every problem with its field; nothing was saved."""
    st.error(f"Refused, nothing was saved: {len(exc.problems)} problem(s).")
    st.dataframe(
        [{"field": p.field or "", "line": p.line, "problem": p.message} for p in exc.problems],
        hide_index=True,
        width="stretch",
    )


def _status(run) -> str:
    done, total = progress(store, run)
    return f"{run.started_at:%Y-%m-%d %H:%M} · {words(run.status.value)} · {done}/{total}"


def _job(kind: str, label: str, start, noun: str) -> None:
    """A button starting a job on a worker (`start()` records the run), and the last one's progress."""
    user = current_user()
    if st.button(label, disabled=not user, help=None if user else NEEDS_NAME, key=f"start:{kind}"):
        try:
            run = start()
            enqueue(store, run.id, actor=current_actor())
        except EvalcoreError as exc:
            show_error(exc)
        else:
            flash("success", f"{label}: queued. A worker picks it up; its progress shows here.")
    if runs := store.runs(project_id, kind=kind):
        job_panel(store, runs[0].id, noun, resumable=True)


def _catalog_section() -> None:
    rows = catalog_rows(store, project_id)
    team = sum(r["origin"] == "team" for r in rows)
    st.caption(
        f"{len(rows) - team} situations of the standard catalog and {team} of the team's.",
        help=term_help("Appendix G"),
    )
    plain = [
        {**r, **{k: words(r[k]) for k in ("tool execution", "overall", "origin")}}
        | {"origin": "standard" if r["origin"] == "seed" else "team"}
        for r in rows
    ]
    st.dataframe(
        plain,
        hide_index=True,
        width="stretch",
        column_config={
            "situation": None,  # the situation's id: its name says which
            "name": st.column_config.TextColumn("situation"),
            "overall": st.column_config.TextColumn("overall", help=term_help("POS", "NEG")),
            "description": st.column_config.TextColumn(width="large"),
        },
    )
    st.subheader("What each tool group cannot produce")
    try:
        skips = group_skips(store, project_id)
    except EvalcoreError as exc:
        show_error(exc)
        return
    if not store.tools(project_id):
        st.info("This project has no tools: import a project with tools/*.json.")
    elif not skips:
        st.success("Every tool group can produce every situation.")
    else:
        st.caption("A situation is generated only from a group whose schemas allow it; others skip it.")
        names = {r["situation"]: r["name"] for r in rows}
        skips = [{**r, "situation": names.get(r["situation"], words(r["situation"]))} for r in skips]
        st.dataframe(skips, hide_index=True, width="stretch")


def _turn(turn) -> None:
    tool = turn.role in (TurnRole.tool_call, TurnRole.tool_result)
    with st.chat_message(turn.role.value, avatar=":material/build:" if tool else None):
        if turn.role == TurnRole.tool_call:
            st.caption(f"Turn {turn.index} · calls {md(turn.tool_name)}")
            st.json(turn.arguments or {}, expanded=True)
        elif turn.role == TurnRole.tool_result:
            st.caption(f"Turn {turn.index} · {md(turn.tool_name)} answers")
            st.text(turn.content)
        else:
            st.caption(f"Turn {turn.index} · {turn.role.value}")
            st.markdown(md_block(turn.content) if turn.content else "_(empty)_")


def _conversations_section() -> None:
    per_situation = st.number_input(
        "Conversations per situation",
        1,
        50,
        MIN_PER_LABEL,  # the rubric comparison needs this many of the one situation handled well
        key="tc_per_situation",
        width=220,
        help=f"The comparison of rubric methods needs at least {MIN_PER_LABEL} conversations handled well "
        "and as many handled badly.",
    )
    _job(
        GENERATE_KIND,
        "Generate for every situation",
        lambda: create_toolcases(store, project_id, per_situation=int(per_situation)),
        "conversations",
    )
    rows = [r for r in catalog_rows(store, project_id) if r["conversations"]]
    if not rows:
        st.info("No tool-use conversations yet: generate them with the button above.")
        return
    names = {r["situation"]: f"{r['name']} ({r['conversations']})" for r in rows}
    situation = st.selectbox("Situation", list(names), format_func=names.get, key="tc_situation")
    by_id = {c.id: c for c in situation_conversations(store, project_id, situation)}
    chosen = st.selectbox(
        "Conversation",
        list(by_id),
        format_func=lambda i: (
            f"Conversation {list(by_id).index(i) + 1} · tools: {words(by_id[i].metadata.get('tool_group'))}"
        ),
        key=f"tc_conversation:{situation}",
    )
    conversation = by_id[chosen]
    if conversation.provenance.is_offline:
        st.info("Offline output: written by a template of the offline provider, not by a model.")
    st.markdown(f"**Intended:** {md(intended_labels(conversation))}")
    if defect := conversation.metadata.get("defect"):
        st.caption(f"Where it happens: {md(defect)}")
    for turn in conversation.turns:
        _turn(turn)


def _gold_silver_section() -> None:
    st.caption(
        "Annotators confirm or reject each conversation's intended labels in Annotate (accepted by a "
        "person); the judge checks the rest with the button below: what it accepts above its threshold and "
        "nobody decided is accepted by the judge, not by a person.",
        help=TIER_HELP,
    )
    target = st.number_input(
        "Target precision on gold", 0.5, 1.0, TARGET_PRECISION, 0.01, key="tc_target", width=220
    )
    found = calibrate_toolcases(store, project_id, target)
    columns = st.columns(len(found.tiers))
    for column, (tier, n) in zip(columns, found.tiers.items(), strict=True):
        column.metric(tier_word(tier), n, help=TIER_HELP)
    _job(
        FILTER_KIND,
        "Judge the conversations not judged yet",
        lambda: create_filter(store, project_id),
        "conversations judged",
    )
    if st.button("Review tool cases in Annotate", icon=":material/rate_review:"):
        st.session_state.update(q_gen="tool_case", q_mine=False)
        st.switch_page("pages/annotate.py")
    sets = silver_sets(store, project_id)
    if sets:
        st.dataframe(
            [
                {
                    "judge": s.judge,
                    "accepted by the judge": s.silver,
                    "judged": s.judged,
                    "precision on gold": "—" if s.precision_on_gold is None else f"{s.precision_on_gold:.2f}",
                    "gold it rests on": f"{s.passed_decided} passed of {s.decided} decided",
                }
                for s in sets
            ],
            hide_index=True,
        )
    else:
        st.info("No judge has checked these conversations yet: use the button above.")
    policy = project_policy(store, project_id)
    now = "the judge's own verdict" if policy.judge_threshold is None else f"{policy.judge_threshold:.3f}"
    if found.n == 0:
        st.info(
            f"The threshold is tuned on conversations people decided that have a judge score; none yet. "
            f"Silver threshold now: {now}."
        )
        return
    if found.choice is None:
        st.warning(f"No threshold reaches precision {target:.2f} on the {found.n} decided conversations.")
    else:
        c = found.choice
        st.markdown(
            f"Threshold for precision ≥ {target:.2f}: **{c.threshold:.3f}** (precision on gold "
            f"{c.precision:.2f}, recall {c.recall:.2f}, on {found.n} decided conversations). Silver "
            f"threshold now: **{now}**."
        )
    chosen_threshold = found.choice.threshold if found.choice else None
    st.vega_lite_chart(calibration_chart(found.points, target, chosen_threshold), width="stretch")
    user = current_user()
    if found.choice and st.button(
        f"Use {found.choice.threshold:.3f} for silver", disabled=not user, help=None if user else NEEDS_NAME
    ):
        try:
            set_policy(store, project_id, judge_threshold=found.choice.threshold, actor=current_actor())
        except EvalcoreError as exc:
            show_error(exc)
        else:
            flash("success", f"Silver threshold set to {found.choice.threshold:.3f}; tiers re-derived.")


def _pick_rubric_set():
    sets = project_rubric_sets(store, project_id)
    if not sets:
        st.info("No rubric set yet: find one above, in the labelled conversations.")
        return None
    by_id = {s.item_id: s for s in sets}
    chosen = st.selectbox(
        "Rubric set",
        list(by_id),
        format_func=lambda i: (
            f"{i} · {by_id[i].rubrics.method} · v{by_id[i].version} · {len(by_id[i].rubrics.rubrics)} rubrics"
        ),
        key="tc_rubric_set",
    )
    return by_id[chosen]


def _save(item_id: str, edited, version: int) -> None:
    author = require_user()
    try:
        saved = edit_rubric_set(store, item_id, edited, author, version)
    except ValidationFailed as exc:
        _refused(exc)
    except StaleVersionError as exc:
        st.error(md(exc))
    else:
        flash("success", f"Saved version {saved} of {md(item_id)}.")


def _rubrics_section() -> None:
    discovery_form(store, project_id, NEEDS_NAME)
    stored = _pick_rubric_set()
    if stored is None:
        return
    rubrics, item_id, version = stored.rubrics, stored.item_id, stored.version
    st.caption(
        f"{rubrics.method.upper()} by {md(rubrics.producer)}, trained on {len(rubrics.trained_on)} "
        f"conversations; version {version} saved by {md(stored.author)}. Weights are 1-10; a make-or-break "
        f"NEG rubric weighs {MAKE_OR_BREAK}; every set needs a POS and a NEG rubric."
    )
    st.dataframe([a.model_dump() for a in rubrics.areas], hide_index=True, width="stretch")
    st.dataframe(
        [r.model_dump(exclude={"support"}) for r in rubrics.rubrics],
        hide_index=True,
        width="stretch",
        column_order=["id", "area", "polarity", "weight", "make_or_break", "text"],
    )
    st.subheader("Edit a rubric")
    ids = [r.id for r in rubrics.rubrics]
    rubric_id = st.selectbox("Rubric", ids, key=f"tc_edit_rubric:{item_id}")
    rubric = rubrics.rubrics[ids.index(rubric_id)]
    areas = [a.name for a in rubrics.areas]
    with st.form(f"tc_rubric:{item_id}:{version}:{rubric_id}", enter_to_submit=False):
        text = st.text_area("Text", rubric.text)
        left, middle, right = st.columns(3)
        area = left.selectbox("Area", areas, index=areas.index(rubric.area) if rubric.area in areas else 0)
        polarity = middle.selectbox("Polarity", ["POS", "NEG"], index=["POS", "NEG"].index(rubric.polarity))
        weight = right.number_input("Weight", 0, 1000, rubric.weight, 1)
        make_or_break = st.checkbox("Make-or-break (NEG, weight 100)", rubric.make_or_break)
        remove = st.checkbox("Remove this rubric")
        if st.form_submit_button(f"Save as version {version + 1}", type="primary"):
            changes = None if remove else {
                "text": text, "area": area, "polarity": polarity, "weight": int(weight),
                "make_or_break": make_or_break,
            }  # fmt: skip
            _save(item_id, with_rubric(rubrics, rubric_id, changes), version)
    with (
        st.expander("Edit the whole set as YAML (areas, adding and removing rubrics)"),
        st.form(f"tc_yaml:{item_id}:{version}", enter_to_submit=False),
    ):
        text = st.text_area("Rubric set", rubric_yaml(rubrics), height=400)
        if st.form_submit_button(f"Save as version {version + 1}"):
            _save(item_id, text, version)
    with st.expander("History"):
        st.dataframe(rubric_history(store, item_id), hide_index=True, width="stretch")


def _comparison_section() -> None:
    st.caption(
        "Two ways of learning rubrics, compared on labelled conversations they were not trained on: "
        "rubrics from user satisfaction alone against rubrics per area. Each round trains on 40% of the "
        "conversations and tests on the rest. Easy: the user's satisfaction agrees with the label; "
        "satisfied but handled badly: the hard ones. It uses the conversations accepted by people or by "
        "the judge unless told to use all; a worker computes it.",
        help=term_help("SPUR", "SCOPE", "Table 3"),
    )
    _comparison_needs()
    with st.form("tc_compare", enter_to_submit=False):
        left, middle, right = st.columns(3)
        folds = left.number_input("Rounds", 1, 20, DEFAULT_FOLDS, help="Folds of cross-validation.")
        seed = middle.number_input("Seed", 0, 1_000_000, 0, help="Seed of the 40/60 splits.")
        ablations = right.checkbox(
            "Also without each part of the per-area method", True, help=term_help("Table 4")
        )
        everything = right.checkbox(
            "Every conversation",
            False,
            help="Also the conversations people or the judge rejected and those nobody reviewed yet.",
        )
        if st.form_submit_button(
            "Start the comparison", disabled=not current_user(), help=None if current_user() else NEEDS_NAME
        ):
            try:
                may_start(store, COMPARISON_KIND)  # before a run record is made for nothing
                run = create_comparison(
                    store,
                    project_id,
                    folds=int(folds),
                    seed=int(seed),
                    ablations=ablations,
                    all_conversations=everything,
                )
                enqueue(store, run.id, actor=current_actor())
            except EvalcoreError as exc:
                show_error(exc)
            else:
                flash("success", "Comparison queued: a worker computes its rounds.")
    runs = comparison_runs(store, project_id)
    if not runs:
        st.info("No comparison yet.")
        return
    by_id = {r.id: r for r in runs}
    run = by_id[
        st.selectbox("Comparison run", list(by_id), format_func=lambda i: _status(by_id[i]), key="tc_cmp")
    ]
    job_panel(store, run.id, "folds", resumable=True)
    result = stored_comparison(store, run.id)
    if not result.folds:
        st.info(
            f"No round computed yet ({words(run.status.value).lower()}). A worker computes them; a stopped "
            "comparison goes on with Resume above."
        )
        return
    sizes = ", ".join(f"{k} {v}" for k, v in result.sizes.items())
    st.caption(
        f"{md(result.data_line())}. Mean (standard deviation) over {result.folds} fold(s); test "
        f"conversations summed: {md(sizes)}."
    )
    if provenance([run])["offline"] != "no":
        st.info("Offline output: rubrics learnt and scored by the offline heuristics, not by a model.")
    main, ablated = variant_names(run)
    st.markdown(f"**{term('Table 3')}**", help=term_help("Table 3", "SPUR", "SCOPE"))
    st.dataframe(_method_words(result.rows(main)), hide_index=True, width="stretch")
    if ablated:
        st.markdown(f"**{term('Table 4')}**", help=term_help("Table 4"))
        st.dataframe(_method_words(result.rows(["SCOPE", *ablated])), hide_index=True, width="stretch")


def _method_words(rows: list[dict]) -> list[dict]:
    """The comparison's rows with its methods and subsets in plain words (the terms in the tooltips)."""
    methods = {
        "SPUR": term("SPUR"),
        "SCOPE": term("SCOPE"),
        "SCOPE w/o AD": "Per area, areas not discovered",
        "SCOPE w/o RW": "Per area, rubrics not weighted",
        "SCOPE w/o MB": "Per area, no make-or-break rubrics",
    }
    subsets = {"Hard Neg.": "Satisfied but handled badly"}
    plain = []
    for row in rows:
        subset, method = row["Data Subset"], row["Model"]
        rest = {k: v for k, v in row.items() if k not in ("Data Subset", "Model")}
        plain.append(
            {"Conversations": subsets.get(subset, subset), "Method": methods.get(method, method)} | rest
        )
    return plain


def _comparison_needs() -> None:
    """Say plainly what the comparison lacks, before the form (instead of an error after it)."""
    try:
        conversations = labelled_conversations(store, project_id)
    except EvalcoreError:
        st.info(
            "The comparison needs conversations accepted by people or by the judge: generate them under "
            "Conversations, then have the judge check them under Gold and silver."
        )
        return
    if lacking := missing_labels(conversations):
        st.warning(lacking[0].upper() + lacking[1:] + ".")


def _scores_section() -> None:
    st.caption(
        "An assistant's own conversations (from a simulation, or imported) scored by a rubric set: how many "
        "each rubric and area applies to, and which conversations."
    )
    sets = project_rubric_sets(store, project_id)
    # What to score, as (source run, generator): a simulation or ChatChecker import run, or a generator's
    # conversations (imported JSONL keeps its own generator).
    sources = {
        f"Simulation of {r.target} · {r.started_at:%Y-%m-%d %H:%M}": (r.id, None)
        for r in simulation_runs(store, project_id)
    }
    generators = filter_options(store, project_id).generators
    sources |= {f"Every conversation of: {words(g)}": (None, g) for g in generators}
    if sets and sources:
        with st.form("tc_score", enter_to_submit=False):
            left, right = st.columns(2)
            rubric_set = left.selectbox("Rubric set", [s.item_id for s in sets])
            source_run, generator = sources[right.selectbox("Conversations", list(sources))]
            if st.form_submit_button(
                "Score them", disabled=not current_user(), help=None if current_user() else NEEDS_NAME
            ):
                try:
                    may_start(store, SCORING_KIND)  # before a run record is made for nothing
                    run = create_rubric_scoring(
                        store, project_id, rubric_set, source_run=source_run, generator=generator
                    )
                    enqueue(store, run.id, actor=current_actor())
                except EvalcoreError as exc:
                    show_error(exc)
                else:
                    flash("success", "Scoring queued: a worker scores the conversations.")
    runs = scoring_runs(store, project_id)
    if not runs:
        st.info("No scoring run yet.")
        return
    by_id = {r.id: r for r in runs}
    run_id = st.selectbox(
        "Scoring run", list(by_id), format_func=lambda i: _status(by_id[i]), key="tc_scoring"
    )
    job_panel(store, run_id, "conversations scored", resumable=True)
    report = rubric_report(store, run_id)
    st.caption(" · ".join(f"{k}: {md(v)}" for k, v in report.about.items()))
    st.caption(f"{report.scored} conversation(s) scored, {report.failed} failed.")
    for warning in report.run.warnings:
        st.warning(md(warning))
    if report.about.get("offline", "no") != "no":
        st.info("Offline output: scored by the offline heuristics, not by a model.")
    st.dataframe(label_table(report), hide_index=True)
    st.dataframe(rubric_table(report), hide_index=True, width="stretch")
    st.dataframe(area_table(report), hide_index=True, width="stretch")
    left, right = st.columns(2)
    rubric = left.selectbox(
        "Drill down: rubric",
        [None, *(r.id for r in report.rubrics.rubrics)],
        format_func=lambda x: x or "none",
        key=f"tc_dr:{run_id}",
    )
    area = right.selectbox(
        "or area",
        [None, *(a.name for a in report.rubrics.areas)],
        format_func=lambda x: x or "none",
        key=f"tc_da:{run_id}",
    )
    if rubric or area:
        drilled = drill_down(report, rubric=rubric, area=None if rubric else area)
        st.caption("Pick a conversation to open it in Annotate.")
        event = st.dataframe(
            drilled,
            hide_index=True,
            width="stretch",
            on_select="rerun",
            selection_mode="single-row",
            key=f"tc_drilled:{run_id}:{rubric}:{area}",
        )
        if event.selection.rows:
            chosen = drilled.iloc[event.selection.rows[0]]["conversation"]
            st.switch_page("pages/annotate.py", query_params={"item": chosen})
    fmt = st.segmented_control(
        "Export", ["md", "csv", "jsonl", "latex"], default="md", key=f"tc_fmt:{run_id}"
    )
    st.download_button(
        "Download the tables",
        data="\n".join(export_rubric_tables(report, fmt or "md").values()),
        file_name=f"{run_id}-rubrics.{EXTENSIONS[fmt or 'md']}",
        icon=":material/download:",
        on_click="ignore",
    )


SECTIONS = {
    "Catalog": _catalog_section,
    "Conversations": _conversations_section,
    "Gold and silver": _gold_silver_section,
    "Rubrics": _rubrics_section,
    "Rubric methods compared": _comparison_section,
    "Rubric scores": _scores_section,
}
tabs = st.tabs(list(SECTIONS), key="tool_cases_tab", on_change="rerun")
for tab, section in zip(tabs, SECTIONS.values(), strict=True):
    if tab.open:
        with tab:
            section()
next_step("pages/runs.py", "run tests against your assistant on Runs")
