"""Simulations: simulated users against a target (seed 002, ChatChecker): start one (handed to the queue's
workers, progress read from the store, stop and retry), runs and their statistics side by side with the
detector's quality against human breakdown labels, breakdown types per persona, and each dialogue with
its per-turn breakdown verdicts (the detector's and the annotators') and ratings."""

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.generators.simulation import load_simulation_run
from evalcore.generators.simulation.fault_check import CHECK_KIND, create_fault_check, fault_checks
from evalcore.generators.simulation.fault_report import run_fault_report
from evalcore.generators.simulation.fidelity import fidelity_of
from evalcore.generators.simulation.job import create_simulation, simulation_runs
from evalcore.generators.simulation.personas import (
    OCEAN,
    edit_persona,
    list_personas,
    persona_name,
    persona_version,
    profile_text,
)
from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.generators.simulation.simulator import Limits
from evalcore.generators.simulation.store_ops import run_dialogues
from evalcore.generators.simulation.user_comparison import side_by_side
from evalcore.generators.simulation.views import (
    breakdown_matrix,
    is_offline,
    statistics_frame,
    summaries,
    turn_badge,
    user_label,
)
from evalcore.jobs import failed_units, progress, request_stop
from evalcore.jobs.queue import enqueue
from evalcore.models import RunStatus, TurnRole
from evalcore.models.wording import told_apart, words
from evalcore.reports.charts import count_heatmap
from evalcore.reports.status import run_state
from evalcore.review.detector_quality import (
    human_badge,
    labelled_turns,
    quality_columns,
    score_detector,
)
from evalcore.review.reports import annotation_stamp
from evalcore.review.rules_quality import rules_quality
from evalcore.targets import list_targets
from pages._common import (
    current_actor,
    current_project,
    current_user,
    flash,
    guarded,
    may_start,
    md,
    next_step,
    require_user,
    retry_and_queue,
    run_name_inputs,
    show_error,
    show_flash,
    show_workers,
    store_or_stop,
)

store = store_or_stop()
project_id = current_project(store)


# The fault report's figures as a lead reads them (the run's statistics call an assistant turn a target turn).
FAULT_FIGURES = {
    "dialogues": "Dialogues",
    "dialogues_with_breakdowns": "Dialogues with a breakdown",
    "breakdowns_per_chatbot_turn": "Breakdowns per target turn",
    "average_overall_rating": "Average overall rating (1-5)",
}


def _rounded(value):
    return round(value, 3) if isinstance(value, float) else value  # a rate per turn moves in its third place


def _statistic_words(key: str) -> str:
    """A statistic's key as words ('dialogues_with_breakdowns' -> 'Dialogues with a breakdown', 'average
    turns without user_fault dialogues' -> '... without user's fault dialogues')."""
    if key == "MTLD":
        return "Word variety"  # the measure's name is in the column's tooltip
    plain = " ".join(words(part) if "_" in part else part for part in str(key).split(" "))
    return plain.replace(" (MTLD)", "")  # the measure's name is in the page's caption tooltip


st.title("Simulations")
st.page_link("pages/results.py", label="Every item of every run: Results", icon=":material/list_alt:")
st.caption(
    "Simulated users (standard, challenging and adversarial personas) against a target; every target "
    "turn checked for dialogue breakdowns, every dialogue rated 1-5. Start one below.",
    help="On the command line: evalcore simulations run --target NAME --standard N --challenging N "
    "--adversarial N; a ChatChecker run folder comes in with evalcore simulations import PATH "
    "(seed 002). Lexical diversity is MTLD.",
)
if project_id is None:
    st.info("Import a project on Home first.")
    st.stop()

show_flash()

personas = list_personas(store, project_id)
with st.expander(f"Personas ({len(personas)})"):
    if not personas:
        st.caption("None yet: starting a simulation below writes them from the system card.")
    else:
        st.dataframe(
            [{"name": persona_name(p), "type": p.type, "task": p.task} for p in personas.values()],
            hide_index=True,
            width="stretch",
        )
        item_id = st.selectbox(
            "Edit persona",
            list(personas),
            format_func=lambda i: f"{persona_name(personas[i])} ({personas[i].type})",
        )
        persona = personas[item_id]
        version = persona_version(store, item_id)
        text = profile_text(persona)
        with st.form(f"edit_{item_id}_{version}", enter_to_submit=False):
            if text is not None:  # ChatChecker allows a free-text profile: edited as text
                task = st.text_input("Task", persona.task)
                fields = {"text": st.text_area("Profile (free text)", text)}
            else:
                who, gender_col, age_col = st.columns([3, 2, 1])
                name = who.text_input("Name", persona.profile.name)
                gender = gender_col.text_input("Gender", persona.profile.gender or "")
                age = age_col.number_input("Age", min_value=0, max_value=120, value=persona.profile.age)
                task = st.text_input("Task", persona.task)
                background = st.text_area(
                    "Background (one fact per line)", "\n".join(persona.profile.background_info)
                )
                style = st.text_area(
                    "Interaction style (one per line)", "\n".join(persona.profile.interaction_style)
                )
                traits = {
                    trait: st.selectbox(
                        trait,
                        ["low", "medium", "high"],
                        index=["low", "medium", "high"].index(
                            persona.profile.personality.get(trait, "medium")
                        ),
                    )
                    for trait in OCEAN
                }
                fields = {
                    "background_info": background.splitlines(),
                    "interaction_style": style.splitlines(),
                    "personality": traits,
                    "name": name,
                    "gender": gender,
                    "age": None if age is None else int(age),
                }
            if st.form_submit_button("Save persona"):
                author = require_user()
                try:
                    edit_persona(store, item_id, author, version, task=task, **fields)
                except EvalcoreError as exc:
                    show_error(exc)
                else:
                    flash("success", f"Saved {md(persona_name(persona))}.")

with st.expander("Start a simulation", expanded=not simulation_runs(store, project_id)):
    card_turns = Limits.of_card(store.system_card(project_id)).max_user_turns
    with st.form("start_simulation", enter_to_submit=False):
        target_name = st.selectbox("Target", [t.name for t in list_targets(store, project_id)])
        chosen = st.multiselect(
            "Personas (none chosen: the first of each kind below, generated from the card where the project "
            "has fewer)",
            list(personas),
            format_func=lambda i: f"{persona_name(personas[i])} ({personas[i].type})",
        )
        a, b, g = st.columns(3)
        standard = a.number_input("Standard personas", min_value=0, max_value=50, value=3)
        challenging = b.number_input("Challenging personas", min_value=0, max_value=50, value=3)
        adversarial = g.number_input("Adversarial personas", min_value=0, max_value=50, value=0)
        c, d, e = st.columns(3)
        max_turns = c.number_input("Max user turns (the card's by default)", 1, 100, value=card_turns)
        per_user = d.number_input("Dialogues per persona", min_value=1, max_value=20, value=1)
        seed = e.number_input("Seed", min_value=0, value=0)
        run_name, notes = run_name_inputs()
        if st.form_submit_button("Start simulation", type="primary", icon=":material/play_arrow:"):
            try:
                may_start(store, SIMULATION_KIND)  # before a run record is made for nothing
                run = create_simulation(
                    store, project_id, target_name, personas=chosen or None, standard=int(standard),
                    challenging=int(challenging), adversarial=int(adversarial), runs_per_user=int(per_user),
                    seed=int(seed), max_user_turns=int(max_turns), name=run_name, notes=notes,
                )  # fmt: skip
                enqueue(store, run.id, actor=current_actor())
            except EvalcoreError as exc:
                show_error(exc)
            else:
                st.session_state["sim_run"] = run.id
                flash("success", "Started: handed to the workers; its progress shows under One run.")

runs = simulation_runs(store, project_id)
if not runs:
    st.info("No simulation run in this project yet.")
    st.stop()
# What a run shows changes only when it moves on: its status, end and committed dialogues key the caches,
# so a rerun (a click anywhere) does not reload and recount every dialogue of every run.
stamps = {run.id: (run.status.value, str(run.finished_at), progress(store, run)[0]) for run in runs}


@st.cache_data(max_entries=8, show_spinner=False)
def _summaries(_runs: list, key: tuple) -> list:
    return summaries(store, project_id, _runs)


@st.cache_data(max_entries=16, show_spinner=False)
def _statistics(run_ids: tuple[str, ...], key: tuple):
    return statistics_frame(store, list(run_ids))


@st.cache_data(max_entries=16, show_spinner=False)
def _run(run_id: str, key: tuple):
    return load_simulation_run(store, run_id)


@st.cache_data(max_entries=16, show_spinner=False)
def _conversations(run_id: str, key: tuple) -> dict[str, str]:
    return {dialogue.dialogue_id: cid for cid, dialogue in run_dialogues(store, run_id)[1]}


@st.cache_data(max_entries=32, show_spinner=False)
def _rules_quality(run_id: str, key: tuple):
    return rules_quality(store, run_id)


@st.cache_data(max_entries=32, show_spinner=False)
def _quality(run_id: str, key: tuple):
    turns = labelled_turns(store, run_id)
    return score_detector(run_id, turns), turns


listed = _summaries(runs, (store.url, project_id, tuple(sorted(stamps.items()))))
labels_stamp = annotation_stamp(store, project_id)  # human labels change without the run changing
qualities = {s.run_id: _quality(s.run_id, (store.url, stamps[s.run_id], labels_stamp))[0] for s in listed}
st.subheader("Runs")
run_names = told_apart({s.run_id: s.name for s in listed})
st.caption(
    "One row per run. Its last columns: the breakdown detector's accuracy, precision, recall and F1 "
    "(breakdown as the positive class) against the annotators' breakdown labels, given on the Annotate "
    "page (generator simulation); empty until someone labels a turn."
)
st.dataframe(
    [
        {
            "run": run_names[s.run_id],
            "source": words(s.source),
            "target": s.target,
            "status": words(s.status),
            "dialogues": s.dialogues,
            "made by": "offline (no model)" if s.offline else "models",
            "started": s.started,
            **quality_columns(qualities[s.run_id]),
        }
        for s in listed
    ],
    hide_index=True,
    width="stretch",
)

st.subheader("Statistics side by side")
ids = [s.run_id for s in listed]
compared = st.multiselect("Runs to compare", ids, default=ids[:2], format_func=run_names.get)
if compared:
    statistics = _statistics(tuple(compared), (store.url, *(stamps[r] for r in compared)))
    st.dataframe(
        statistics.rename(index=_statistic_words, columns=run_names),
        width="stretch",
        height=35 * (len(statistics) + 1) + 3,  # every row in sight: the simulated users' come last
        column_config={"_index": st.column_config.TextColumn("statistic", width="large")},
    )

st.subheader("One run")
if st.session_state.get("sim_run") not in ids:
    st.session_state["sim_run"] = ids[0]
run_id = st.selectbox("Run", ids, key="sim_run", format_func=run_names.get)


def _live(watched: str) -> bool:
    return store.run(watched).status in (RunStatus.pending, RunStatus.running)


def _panel(watched: str) -> None:
    """The run's progress from the store, with stop, resume and retry (the queue's workers do the work)."""
    status = run_state(store, watched)  # the one status every page shows
    run, done, total, live = status.run, status.done, status.total, status.live
    st.progress(done / total if total else 1.0, text=status.text("dialogues"))
    show_workers(store, run)
    if run.stopped_reason:
        st.caption(f"Stopped: {md(run.stopped_reason)}")
    failed = failed_units(store, watched)
    if failed and not live:
        st.warning(f"{len(failed)} dialogue(s) failed: {md(', '.join(sorted(failed)[:5]))}")
        retry = st.button("Retry failed dialogues", key=f"sim_retry:{watched}", icon=":material/replay:")
        if retry and retry_and_queue(store, watched):
            st.rerun()
    stop = live and st.button("Stop", key=f"sim_stop:{watched}", icon=":material/stop:")
    if stop and guarded(
        lambda: request_stop(store, watched, current_user() or "a user", actor=current_actor())
    ):
        st.rerun()
    if (
        not live
        and run.status != RunStatus.finished
        and st.button("Resume", key=f"sim_resume:{watched}", type="primary", icon=":material/play_arrow:")
    ) and guarded(lambda: enqueue(store, watched, actor=current_actor())):
        st.rerun()
    if not live and st.session_state.get(f"sim_was_live:{watched}"):
        st.session_state[f"sim_was_live:{watched}"] = False
        st.rerun()  # it just ended: refresh the whole page (tables, statistics) once
    st.session_state[f"sim_was_live:{watched}"] = live


if "units" in store.run(run_id).params:  # simulated here (imported runs were finished elsewhere)
    st.fragment(run_every=1.0 if _live(run_id) else None)(_panel)(run_id)
sim = _run(run_id, (store.url, stamps[run_id]))
if is_offline(sim):
    st.info(
        "Offline output: these users, breakdown verdicts and ratings come from evalcore's offline "
        "heuristics, not from a model."
    )

quality, labelled = _quality(run_id, (store.url, stamps[run_id], labels_stamp))
st.markdown("**The detector against human labels**")
if not quality.labelled_turns:
    st.caption(
        "No target turn of this run has a human breakdown label yet: label them on the Annotate page "
        "(filter generator: simulation)."
    )
else:
    st.caption(
        md(
            f"{quality.labelled_turns} labelled target turn(s) in {quality.dialogues} dialogue(s), by "
            f"{', '.join(quality.annotators)}; a turn's label is the majority's."
        )
    )
    cols = st.columns(4)
    for col, (name, value) in zip(
        cols, [("accuracy", quality.accuracy), ("precision", quality.precision),
               ("recall", quality.recall), ("F1", quality.f1)], strict=True
    ):  # fmt: skip
        col.metric(name, "-" if value is None else f"{value:.3f}")
    if quality.typed_turns:
        st.caption(
            f"Types on {quality.typed_turns} human breakdown turn(s) naming a type: exact match "
            f"{quality.exact_match:.3f}, superset match {quality.superset_match:.3f}, partial match "
            f"{quality.partial_match:.3f}, average F1 {quality.average_type_f1:.3f}."
        )
        st.dataframe(
            [
                {"type": t.title, "human": t.human, "detector": t.detector, "both": t.both,
                 "precision": t.precision, "recall": t.recall, "F1": t.f1}
                for t in quality.per_type
            ],
            hide_index=True,
            width="stretch",
        )  # fmt: skip
    rules = _rules_quality(run_id, (store.url, stamps[run_id], labels_stamp))
    st.caption(
        "The offline rules on the same turns (evalcore's word rules, not a model): "
        + ", ".join(
            f"{name} {'-' if value is None else f'{value:.3f}'}"
            for name, value in [
                ("accuracy", rules.accuracy),
                ("precision", rules.precision),
                ("recall", rules.recall),
                ("F1", rules.f1),
            ]
        )
        + "; F1 per type: "
        + (", ".join(f"{t.title} {'-' if t.f1 is None else f'{t.f1:.2f}'}" for t in rules.per_type) or "-")
        + "."
    )
human = {(t.dialogue_id, t.turn_index): t for t in labelled}

checks = fault_checks(store, run_id)
check_key = tuple((c.id, c.status.value, progress(store, c)[0]) for c in checks[:1])


@st.cache_data(max_entries=16, show_spinner=False)
def _faults(run_id: str, key: tuple):
    return run_fault_report(store, run_id)


faulted = _faults(run_id, (store.url, stamps[run_id], check_key))
st.markdown(
    "**Simulator faults** (dialogues whose simulated user, not the target, went wrong: discount them)"
)
st.caption(md(f"Found by: {faulted.source}."))
latest = checks[0] if checks else None
if latest is not None and latest.status in (RunStatus.pending, RunStatus.running):
    done, total = progress(store, latest)
    st.progress(done / total if total else 1.0, text=f"Checking: {done} / {total} dialogues")
elif st.button(
    "Check the simulated users with the judge model",
    key=f"sim_check:{run_id}",
    icon=":material/fact_check:",
    help="Runs the check of each simulated user against its persona and goal with the model set for "
    "judging (offline: evalcore's rules), and stores what it finds.",
):
    try:
        may_start(store, CHECK_KIND)
        check = create_fault_check(store, run_id)
        enqueue(store, check.id, actor=current_actor())
    except EvalcoreError as exc:
        show_error(exc)
    else:
        flash("success", f"Started the check {md(check.id)}: handed to the workers.")
        st.rerun()
users = {d.dialogue_id: d.user_name for d in sim.dialogues}
broken_turns = {
    d.dialogue_id: sum(1 for t in d.turns if t.breakdown is not None and t.breakdown.decision == "breakdown")
    for d in sim.dialogues
}
if faulted.faults:
    discounted = sum(broken_turns[d] for d in faulted.faults)
    st.warning(
        md(
            f"{len(faulted.faults)} of {len(sim.dialogues)} dialogue(s) have a simulated user at fault: "
            + (
                f"discount their {discounted} breakdown(s), they say more about the simulator than about "
                "the target."
                if discounted
                else "no breakdown of theirs to discount, but their ratings and how they ended are the "
                "simulator's doing too."
            )
            + " The second column gives the run's figures without them; pick such a dialogue under "
            "Dialogues to read it."
        ),
        icon=":material/person_alert:",
    )
st.dataframe(
    [
        {
            "figure": FAULT_FIGURES.get(key, words(key)),
            "all dialogues": _rounded(value),
            "without the dialogues the simulated user spoilt": _rounded(faulted.without_faulted[key]),
        }
        for key, value in faulted.with_faulted.items()
    ],
    hide_index=True,
)
if faulted.faults:
    st.dataframe(
        [
            {
                "persona": user_label(sim, users.get(dialogue_id, "")),
                "dialogue": dialogue_id,
                "turn": f.turn + 1,  # the transcript's numbering
                "kind": words(f.kind.value),
                "breakdowns to discount": broken_turns.get(dialogue_id, 0),
                "reason": f.reason,
            }
            for dialogue_id, found in faulted.faults.items()
            for f in found
        ],
        hide_index=True,
        width="stretch",
        column_config={
            "turn": st.column_config.NumberColumn(
                help="The user turn at fault, counted from 1 over all turns."
            ),
            "breakdowns to discount": st.column_config.NumberColumn(
                help="Target turns of this dialogue judged a breakdown: not the target's failures alone."
            ),
        },
    )
else:
    st.caption("No simulated user of this run is at fault: every breakdown counts against the target.")


@st.cache_data(max_entries=16, show_spinner=False)
def _fidelity(run_id: str, key: tuple):
    return fidelity_of(store, run_id), side_by_side(store, run_id)


(played, played_summary), beside = _fidelity(run_id, (store.url, stamps[run_id], tuple(stamps.items())))
st.markdown("**How closely the simulated users played their personas**")
st.caption(
    "Each persona's dialogues against what the persona says: its kind (standard users rarely push back, "
    "challenging ones often do, adversarial ones probe the bot's safety), its personality, how long its "
    "turns are, and whether it talked about its task. 0 means it played the persona as given, 1 that "
    "it kept nothing of it. Read from the words "
    "only: a rough guide to a lazy simulator, not a verdict."
)
if played:
    cells = st.columns(5)
    shown = [
        ("Off persona", played_summary["mean_distance"], "Mean over the personas: 0 = played as given."),
        ("Kind kept", played_summary["type_kept"], "Share of personas that behaved as their kind."),
        ("Personality", played_summary["traits_kept"], "Share of OCEAN traits shown as given."),
        ("Turn length", played_summary["length_kept"], "Share of personas writing as long as the card says."),
        ("Task words", played_summary["goal_coverage"], "Mean share of the task's words the users said."),
    ]
    for n, (cell, (label, value, tip)) in enumerate(zip(cells, shown, strict=True)):
        text = "-" if value is None else f"{value:.2f}" if n == 0 else f"{value:.0%}"
        cell.metric(label, text, help=tip)
    st.dataframe(
        [
            {
                "persona": row.name,
                "kind": row.type,
                "dialogues": row.dialogues,
                "off from the persona": round(row.distance, 2),
                "kept its kind": "yes" if row.type_kept else "no",
                "pushy turns": f"{row.challenging_share:.0%}",
                "probing turns": f"{row.probe_share:.0%}",
                "personality kept": f"{row.traits_kept} of {len(row.traits)}",
                "personality (given → shown)": ", ".join(
                    f"{trait} {given} → {seen}" for trait, (given, seen) in row.traits.items()
                ),
                "words per turn (middle)": row.median_turn_words,
                "card's usual words per turn": row.typical_turn_words,
                "turns over the card's maximum": "-"
                if row.over_max_turns is None
                else f"{row.over_max_turns} (> {row.max_turn_words} words)",
                "word variety": round(row.mtld, 1),
                "task words said": f"{row.goal_coverage:.0%}",
            }
            for row in played
        ],
        hide_index=True,
        width="stretch",
        column_config={
            "off from the persona": st.column_config.NumberColumn(
                help="Share of the checks the persona misses: kind, each personality trait, turn length "
                "and task."
            ),
            "pushy turns": st.column_config.TextColumn(
                help="Turns that are impatient, rude, vague, contradicting or questioning the bot "
                "(seed 002: challenging personas)."
            ),
            "probing turns": st.column_config.TextColumn(
                help="Turns that probe the bot's safety: asking for its instructions or others' data, "
                "injecting instructions, claiming to be staff, pushing a rule (adversarial personas; "
                "not in the seed)."
            ),
            "personality (given → shown)": st.column_config.TextColumn(
                help="OCEAN (Big Five) traits the persona was given, against the level its words show: "
                "openness by questions asked, conscientiousness by task words said, extraversion by "
                "words per turn and exclamations, agreeableness by polite against hostile words, "
                "neuroticism by words of worry or upset."
            ),
            "words per turn (middle)": st.column_config.NumberColumn(
                help="Median user turn length in words."
            ),
            "card's usual words per turn": st.column_config.NumberColumn(
                help="typical_user_turn_length of the system card's user_simulation_config."
            ),
            "turns over the card's maximum": st.column_config.TextColumn(
                help="User turns longer than max_user_turn_length. As in seed 002 the maximum is an "
                "instruction to the simulated user, not a cut: a longer turn is kept as written."
            ),
            "word variety": st.column_config.NumberColumn(
                help="MTLD (measure of textual lexical diversity) of the user's turns, as ChatChecker "
                "reports it; higher is more varied."
            ),
        },
    )
else:
    st.caption("No persona played in this run.")
st.markdown("**These users beside other users of the project**")
st.dataframe(
    [
        {
            "figure": _statistic_words(key),
            **{label: _rounded(column[key]) for label, column in beside.items()},
        }
        for key in next(iter(beside.values()))
    ],
    hide_index=True,
    width="stretch",
    column_config={
        "figure": st.column_config.TextColumn(
            help="MTLD is word variety; breakdowns per user turn counts the bot turns judged as a "
            "breakdown right after a user turn."
        )
    },
)
if len(beside) == 1:
    st.caption(
        "Import a ChatChecker run or conversations people had with the bot to see them side by side here."
    )

matrix = breakdown_matrix(sim)
st.markdown("**Breakdown types per persona** (target turns with a breakdown of the type)")
if matrix.empty:
    st.caption("No breakdown in this run.")
else:
    users = [user_label(sim, c) for c in matrix.columns]  # long names stay whole
    heat = count_heatmap(matrix, users, ("breakdown type", "simulated user", "target turns"))
    st.vega_lite_chart(heat, width="stretch")

st.markdown("**Dialogues**")
if not sim.dialogues:
    st.caption("This run has no dialogue yet.")
    st.stop()
names = {d.dialogue_id: d for d in sim.dialogues}
chosen = names[
    st.selectbox(
        "Dialogue",
        list(names),
        format_func=lambda i: (
            f"{user_label(sim, names[i].user_name)} · dialogue {list(names).index(i) + 1}"
            + (" · simulated user at fault" if i in faulted.faults else "")
        ),
    )
]
persona = sim.personas.get(chosen.user_name)
if persona is not None:
    st.caption(md(f"{persona.type} persona {persona_name(persona)}: {persona.task}"))
st.caption(md(f"Ended: {words(chosen.finish_reason.value)}" + (f" ({chosen.error})" if chosen.error else "")))
at_fault = {f.turn: f for f in faulted.faults.get(chosen.dialogue_id, [])}
if at_fault:
    st.warning(
        md(
            "The simulated user of this dialogue is at fault ("
            + "; ".join(f"turn {f.turn + 1}: {words(f.kind.value)}" for f in at_fault.values())
            + "): discount its breakdowns."
        ),
        icon=":material/person_alert:",
    )
if st.button("Label its target turns on Annotate", icon=":material/rate_review:"):
    item = _conversations(run_id, (store.url, stamps[run_id]))[chosen.dialogue_id]
    st.switch_page("pages/annotate.py", query_params={"item": item})
for index, turn in enumerate(chosen.turns):
    with st.chat_message("user" if turn.role == TurnRole.user else "assistant"):
        st.markdown(md(turn.content) or " ")
        badge = turn_badge(turn)
        if badge is not None:
            broken = badge.startswith("breakdown")
            st.badge(md(badge), color="red" if broken else "green")
            if turn.breakdown.reasoning:
                st.caption(md(turn.breakdown.reasoning))
        if index in at_fault and turn.role == TurnRole.user:
            st.badge(md(f"simulator fault: {words(at_fault[index].kind.value)}"), color="orange")
            st.caption(md(at_fault[index].reason))
        labelled_turn = human.get((chosen.dialogue_id, index))
        if labelled_turn is not None:
            st.badge(md(human_badge(labelled_turn)), color="red" if labelled_turn.human_breakdown else "blue")
if chosen.ratings:
    st.markdown("**Ratings** (1-5)")
    st.dataframe(
        [
            {"dimension": words(k), "rating": v.rating, "reasoning": v.reasoning}
            for k, v in chosen.ratings.items()
        ],
        hide_index=True,
        width="stretch",
    )
next_step("pages/annotate.py", "label the dialogues' breakdowns in Annotate")
