"""Content a QA analyst would keep (issue 13): do the specs and conversations test what they claim to test?

    .venv/bin/python benchmarks/content.py [PROJECT_FOLDER] [--specs 60] [--per-spec 4] [--firsts 6]

Offline, on data/sample unless another project folder is given. It generates `--specs` candidate specs,
selects 15 with the greedy (seed 000, Algorithm 1), generates `--per-spec` conversations per selected
spec (Algorithm 2) and prints:
1. the share of conversations whose every answered turn is grounded in its spec's own documents (goal
   >= 90%), and the same per turn;
2. the share of conversations that mention their spec's subject: the code or name its title gives, else
   its key nouns (`doc_qa.subject`; the issue sets no goal), and distinct questions / all questions (goal
   >= 0.9 at the script's settings); first questions that put their subject in front ("About X: ...")
   and those whose X is no noun phrase (`documents.phrases.is_noun_phrase`), with `--firsts` of them
   printed beside their spec's title;
3. questions that quote a document title or an id-like code the system card does not expose (goal <= 2%);
4. Coverage (documents touched) of Random (mean of 10 seeds) vs Greedy at k = 8 and k = 15;
5. specs that come from the card's `behaviors`, against the number of behaviours;
6. conversations the generation-time verification passed (it must be able to fail);
7. with `--run-demo`: the built-in demo target plays them (offline judge, `--pairs`): failure rate of the
   same questions asked alone vs in context (seed 000, Table 11 right) and failures by the classes of its
   Table 10.

Figures 1-3 and 6 are printed twice: at the script's settings, and at the README's walk-through
(`specs select` k = 30, `conversations generate --per-spec 6 --d 2,3,4`).

No assertions: it prints. A "grounded" turn is an answer whose grounding documents are all among the
spec's documents; CANNOTANSWER turns are not counted (they have no grounding by design).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from evalcore.documents.naming import code_names  # noqa: E402
from evalcore.documents.phrases import is_noun_phrase, nouns  # noqa: E402
from evalcore.documents.retrieval import build_index  # noqa: E402
from evalcore.generators.doc_qa.generate import document_input, qa_pairs  # noqa: E402
from evalcore.generators.doc_qa.job import generate_conversations  # noqa: E402
from evalcore.generators.doc_qa.schema import is_cannot_answer  # noqa: E402
from evalcore.generators.doc_qa.specs import system_description  # noqa: E402
from evalcore.generators.doc_qa.subject import spec_subject  # noqa: E402
from evalcore.generators.doc_qa.verify import verify_conversation  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.items.store_ops import list_conversations  # noqa: E402
from evalcore.llm import ModelClient  # noqa: E402
from evalcore.reports import build_report  # noqa: E402
from evalcore.runs import run_target  # noqa: E402
from evalcore.specs.generation import generate_specs  # noqa: E402
from evalcore.specs.selecting import load_candidates, measure, pick, select_specs  # noqa: E402
from evalcore.specs.selection import DEFAULT_ALPHA, median_heuristic_gamma  # noqa: E402
from evalcore.specs.store_ops import list_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402

# A code a customer would not type unless shown it: capitals and digits joined by a hyphen (FEE-PP-REM1,
# GC-WHL-G30, RC-01). Codes that appear in the system card are exposed to customers and allowed.
ID_LIKE = re.compile(r"\b[A-Z][A-Z0-9]*-[A-Z0-9][A-Z0-9-]*\b")
# A first question that puts its subject in front of the question: "About cold: ...", "Regarding the
# late fees, ...", "I have a question about X: ..."; X is what the second group holds.
LEAD_IN = re.compile(r"^(About|Regarding|On|(?:I have a |A |Quick )?question about) (.+?)[:,] ", re.I)
SAMPLE_FIRST = 6  # first questions printed per setting, for a reader to judge
K_VALUES = (8, 15)
QUERY_TYPES = ("SINGLE-DOC", "MULTI-DOC", "PRE-FILLER", "FILLER", "SYNTHESIS", "CANNOTANSWER")
README_K = 30  # `specs select`'s default, as the README's walk-through runs it
RANDOM_SEEDS = range(10)


def _card_text(store: Store, project_id: str) -> str:
    card = store.system_card(project_id)
    return card.model_dump_json() if card is not None else ""


def _leaky(question: str, titles: list[str], card_text: str) -> bool:
    """Whether a question quotes a document title or an id the card does not expose."""
    lowered = question.lower()
    if any(title.lower() in lowered for title in titles):
        return True
    return any(code not in card_text for code in ID_LIKE.findall(question))


def coverage_table(store: Store, project_id: str) -> None:
    candidates = load_candidates(store, project_id)
    gamma = median_heuristic_gamma(candidates.embeddings)
    sizes = [len(d) for d in candidates.doc_sets]
    n_docs = len(store.documents(project_id))
    reachable = len(set().union(*candidates.doc_sets))
    print(f"\nCoverage (documents touched of {n_docs}; {reachable} in some candidate) on "
          f"{len(candidates.views)} candidates; "
          f"documents per spec: min {min(sizes)}, mean {np.mean(sizes):.2f}, max {max(sizes)}")  # fmt: skip
    for k in K_VALUES:
        greedy = measure(candidates, pick(candidates, k, "greedy", DEFAULT_ALPHA, gamma, 0)).coverage
        rand = [measure(candidates, pick(candidates, k, "random", DEFAULT_ALPHA, gamma, s)).coverage
                for s in RANDOM_SEEDS]  # fmt: skip
        print(f"  k={k:<3} Random (mean of 10) {np.mean(rand):5.1f}   Greedy {greedy:3d}")


def demo_run(store: Store, project_id: str) -> None:
    """Play the conversations against the demo target with single-turn pairs; print Tables 11 and 10."""
    outcome = run_target(store, project_id, "demo", judge="offline", single_turn_pairs=True)
    report = build_report(store, [outcome.run.id])
    print(f"\nDemo target, offline judge, {outcome.done} turns played (history own, with single-turn pairs)")
    for _, row in report.tables["by_pair"].iterrows():
        print(f"  {row['played']:<26} failure rate {row['failure_rate']:.1%} over {int(row['n'])} "
              f"(fails only this way: {int(row['fails_only_here'])})")  # fmt: skip
    for _, row in report.tables["by_error_class"].iterrows():
        print(f"  {row['error_class']:<45} {int(row['failures']):4d} ({row['share']:.0%})")


def conversation_figures(
    store: Store, project_id: str, views: list, k: int, per_spec: int, d: int | list[int] | None,
    goals: bool = True, chains: str | None = None, show: int = SAMPLE_FIRST,
) -> None:  # fmt: skip
    """Select k specs, generate `per_spec` conversations each (chain lengths d) and print their figures;
    `goals` says the issue's goals apply (they are set at the script's settings, not the README's);
    `show` first questions are printed, spread over the run, with their spec's title."""
    select_specs(store, project_id, k=k)
    extra = ({} if d is None else {"d": d}) | ({} if chains is None else {"chains": chains})
    outcome = generate_conversations(
        store, project_id, specs="selected", per_spec=per_spec, dense=False, **extra
    )
    specs = {v.spec.id: v.spec for v in views}
    titles = [d.title for d in store.documents(project_id) if len(d.title) > 3]
    card_text, ignore = system_description(store, project_id)
    names = code_names(store.documents(project_id), ignore)
    conversations = [v.conversation for v in list_conversations(store, project_id)]
    counts = Counter()
    known = nouns(d.text for d in store.documents(project_id))
    firsts: list[tuple[str, str]] = []  # (first question, spec title)
    on_subject = {True: [0, 0], False: [0, 0]}  # named subject or key nouns -> [mentioned, conversations]
    questions: list[str] = []
    types: Counter = Counter()
    lengths: Counter = Counter()
    for conversation in conversations:
        spec = specs[conversation.spec_id]
        own = set(spec.documents)
        chain = set((conversation.metadata.get("chain") or {}).get("documents", []))
        lengths[(conversation.metadata.get("chain") or {}).get("requested_length"), len(chain)] += 1
        pairs = qa_pairs(conversation)
        asked = [q.content for q, _ in pairs]
        questions.extend(asked)
        types.update("CANNOTANSWER" if is_cannot_answer(a.content) else a.query_type for _, a in pairs)
        subject = spec_subject(spec.scenario, names, ignore)
        on_subject[subject.named][0] += subject.count(asked) > 0
        on_subject[subject.named][1] += 1
        counts["first"] += bool(asked) and subject.said_in(asked[0])
        if asked:
            firsts.append((asked[0], spec.scenario))
            lead = LEAD_IN.match(asked[0])
            counts["lead_in"] += lead is not None
            counts["broken_lead_in"] += lead is not None and not is_noun_phrase(lead.group(2), known)
        answered = [a for _, a in pairs if not is_cannot_answer(a.content)]
        inside = [a for a in answered if a.grounding and set(a.grounding) <= own]
        in_chain = [a for a in answered if a.grounding and set(a.grounding) <= own | chain]
        verification = conversation.metadata.get("verification") or {}
        corrections = (verification.get("correction") or {}).get("turns") or []
        counts["corrected"] += sum(c.get("verdict") == "corrected" for c in corrections)
        counts["checked"] += len(corrections)
        counts["turns"] += len(answered)
        counts["own"] += len(inside)
        counts["chain"] += len(in_chain)
        counts["own_convs"] += bool(answered) and len(inside) == len(answered)
    leaky = [q for q in questions if _leaky(q, titles, card_text)]
    passed = sum(bool(c.metadata.get("judge_passed")) for c in conversations)
    n = len(conversations)
    shown = f"d={d}" if d is not None else "default d"
    print(f"\nConversations at k={k}, --per-spec {per_spec}, {shown}, chains {chains or 'default'}: {n} "
          f"({outcome.added} added, {outcome.left_out} left out as they could only repeat the run's "
          f"questions, {len(outcome.messages)} message(s))")  # fmt: skip
    print(f"  answers grounded in their spec's documents or its chain (goal >= 95%): "
          f"{_share(counts['chain'], counts['turns'])}; in the spec's own documents: "
          f"{_share(counts['own'], counts['turns'])} (conversations wholly: "
          f"{_share(counts['own_convs'], n)})")  # fmt: skip
    print(f"  first question names the spec's subject (goal >= 85%): {_share(counts['first'], n)}")
    print(f"  first questions with a lead-in ('About X: ...'): {_share(counts['lead_in'], len(firsts))}; "
          f"X not a noun phrase (`phrases.is_noun_phrase`): "
          f"{_share(counts['broken_lead_in'], len(firsts))}")  # fmt: skip
    for question, title in firsts[:: max(len(firsts) // max(show, 1), 1)][:show]:
        print(f"    first: {question}  [spec: {title}]")
    mentioned = on_subject[True][0] + on_subject[False][0]
    print(f"  some question names it: {_share(mentioned, n)} "
          f"(spec names a code or name: {on_subject[True][0]}/{on_subject[True][1]}; "
          f"key nouns: {on_subject[False][0]}/{on_subject[False][1]})")  # fmt: skip
    distinct = len({q.strip().lower() for q in questions})
    print(f"  distinct questions across the run (goal >= 0.9): {distinct}/{len(questions)} = "
          f"{distinct / max(len(questions), 1):.3f}")  # fmt: skip
    total = sum(types.values())
    print("  query types (goal: each of the seed's >= 5%): "
          + ", ".join(f"{t} {types[t] / max(total, 1):.1%}" for t in QUERY_TYPES))  # fmt: skip
    print("  chain length against d asked (d -> documents: conversations): "
          + "; ".join(f"{a} -> {got}: {c}" for (a, got), c in sorted(lengths.items(), key=str)))  # fmt: skip
    print(f"  answers corrected by the generation-time verification: "
          f"{_share(counts['corrected'], counts['checked'])}")  # fmt: skip
    print(f"  questions quoting a document title or an unexposed id: {_share(len(leaky), len(questions))}")
    print(f"  passed by the generation-time verification (offline judge): {passed}/{n}")
    for q in leaky[:3]:
        print(f"    e.g. {q}")
    for message in outcome.messages[:5]:
        print(f"  message: {message}")


def injected_corrections(store: Store, project_id: str, views: list, limit: int = 40) -> None:
    """Offline correction on wrong answers: in up to `limit` conversations, every answer is made slightly
    wrong (its last number changed, else its last word; its sources dropped); verification then keeps,
    corrects (rewrites from the passages) or flags each. Offline generation copies answers
    from the documents, so without injected errors the corrected share is ~0 by construction."""
    specs = {v.spec.id: v.spec for v in views}
    docs = {d.id: d for d in store.documents(project_id)}
    index = build_index(list(docs.values()))
    llm = ModelClient(store, project_id)
    verdicts: Counter = Counter()
    right = 0
    for view in list_conversations(store, project_id)[:limit]:
        conversation = view.conversation.model_copy(deep=True)
        answered = [a for _, a in qa_pairs(conversation) if not is_cannot_answer(a.content)]
        truth = [a.content for a in answered]
        for answer in answered:
            answer.content = _slightly_wrong(answer.content)
            answer.metadata["sources"] = []
        spec = specs[conversation.spec_id]
        chain = (conversation.metadata.get("chain") or {}).get("documents", [])
        context = {i: document_input(docs[i]) for i in chain if i in docs}
        spec_inputs = {"system_description": "", "probe": spec.scenario, "probe_given": spec.given,
                       "probe_when": spec.when, "probe_then": spec.then}  # fmt: skip
        turns = conversation.metadata.get("num_turns", 7)
        checked = verify_conversation(llm, conversation, spec_inputs, index, context, chain, turns)
        injected = {a.index for a in answered}
        after = [a for _, a in qa_pairs(checked.conversation) if a.index in injected]
        for answer, own in zip(after, truth, strict=True):
            verdicts[answer.metadata.get("correction", "none")] += 1
            right += answer.content == own
    total = sum(verdicts.values())
    print(f"\nInjected wrong answers (last number or word changed), offline correction: "
          f"corrected {_share(verdicts['corrected'], total)}, "
          f"flagged {_share(verdicts['unsupported'], total)}, "
          f"kept {_share(verdicts['supported'], total)}; corrected back to the document's own answer: "
          f"{_share(right, total)}")  # fmt: skip


def _slightly_wrong(answer: str) -> str:
    numbers = list(re.finditer(r"\d+", answer))
    if numbers:
        last = numbers[-1]
        return f"{answer[: last.start()]}{int(last.group()) + 7}{answer[last.end() :]}"
    words = answer.rstrip(".").split()
    return " ".join([*words[:-1], "unknown"]) + "."


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / max(whole, 1):.1%}"


def content(
    folder: Path, project: Path, m: int, per_spec: int, run_demo: bool = False, show: int = SAMPLE_FIRST
) -> None:
    """Print the figures of the module docstring for `project`, with its store in `folder`."""
    store = Store(f"sqlite:///{folder / 'content.db'}")
    project_id = import_project(store, project).project_id
    generated = generate_specs(store, project_id, m=m)
    views = list_specs(store, project_id)
    card = store.system_card(project_id)
    behaviours = list(card.behaviors) if card is not None else []
    from_card = [
        v
        for v in views
        if v.spec.provenance.task == "specs_from_card" and v.spec.category == "card behaviour"
    ]
    print(f"Project {project} (offline)")
    print(f"Specs: {len(views)} candidates from -m {m} ({generated.added} added)")
    print(f"Specs from the card's behaviours: {len(from_card)} of {len(behaviours)}")
    coverage_table(store, project_id)
    conversation_figures(store, project_id, views, max(K_VALUES), per_spec, None, show=show)
    injected_corrections(store, project_id, views)
    # At d=3, the chain-length goal (conversations with 3 documents >= 60% where the graph allows).
    at3 = Store(f"sqlite:///{folder / 'd3.db'}")
    at3_id = import_project(at3, project).project_id
    generate_specs(at3, at3_id, m=m)
    conversation_figures(at3, at3_id, list_specs(at3, at3_id), max(K_VALUES), per_spec, 3, show=show)
    if run_demo:
        demo_run(store, project_id)
    # The README's walk-through settings, in a store of their own (a new selection, new conversations).
    readme = Store(f"sqlite:///{folder / 'readme.db'}")
    readme_id = import_project(readme, project).project_id
    generate_specs(readme, readme_id, m=m)
    readme_views = list_specs(readme, readme_id)
    conversation_figures(readme, readme_id, readme_views, README_K, 6, [2, 3, 4], goals=False, show=show)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", type=Path, default=ROOT / "data" / "sample")
    parser.add_argument("--specs", type=int, default=60, help="candidate specs to generate (-m)")
    parser.add_argument("--per-spec", type=int, default=4, help="conversations per selected spec")
    parser.add_argument("--firsts", type=int, default=SAMPLE_FIRST, help="first questions to print")
    parser.add_argument("--run-demo", action="store_true", help="play them against the demo target too")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        content(Path(tmp), args.project, args.specs, args.per_spec, args.run_demo, args.firsts)


if __name__ == "__main__":
    main()
