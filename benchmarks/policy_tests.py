"""Tool-use tests against a project's policy, offline (issue 26, "Done means"; seeds 001 and 004).

Imports each project folder named on the command line (default data/retail and data/bank) into a
temporary store, generates procedure tests (seed 001) and tool cases (seed 004) with the offline provider,
and prints:

- over the procedure conversations with a consequential action (a call to a tool that changes state):
  the share that identify the user before it, ask for and get an explicit confirmation before it, and
  act on a record whose status the policy allows for that tool;
- over every tool call (procedure conversations and tool cases): the share valid against the tool's
  parameter schema, the number of placeholder-looking values, and of consecutive identical calls where
  the procedure has no retry step;
- procedures with a branch, distinct paths per branching graph, the pairs of different tools called in
  order (a before b) in one conversation;
- tool cases: situations produced out of the catalogue's, with the reason for each one skipped, the
  share of POS conversations, and Table 11 (SPUR vs SCOPE on gold and on silver apart).

    .venv/bin/python benchmarks/policy_tests.py [PROJECT ...] [--paths N] [--per-situation N] [--folds K]

Without a project it runs on data/retail and then on data/bank, a project written after the figures were
tuned on data/retail.

Every heuristic below reads only the project's own files (tool names and descriptions, the tables, the
policy sentences), so the same command runs on any project folder. A project the procedure generator
cannot use (no procedures) is reported as such, with the generator's one-line reason, not a traceback.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["EVALCORE_OFFLINE"] = "1"  # every model call goes to the offline provider

import jsonschema  # noqa: E402

from evalcore.errors import EvalcoreError  # noqa: E402
from evalcore.generators.procedure.job import generate, list_graphs  # noqa: E402
from evalcore.generators.procedure.paths import has_branches  # noqa: E402
from evalcore.generators.tool_case.evaluation import compare_by_tier, tier_subsets, tier_table  # noqa: E402
from evalcore.generators.tool_case.filtering import filter_toolcases  # noqa: E402
from evalcore.generators.tool_case.job import generate_toolcases  # noqa: E402
from evalcore.generators.tool_case.records import GENERATOR as TOOL_CASES  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.items.store_ops import list_conversations  # noqa: E402
from evalcore.llm.client import ModelClient  # noqa: E402
from evalcore.models import Annotation, AnnotationLabel  # noqa: E402
from evalcore.store import Store  # noqa: E402

# A tool whose name starts with one of these reads and changes nothing; a hand-over changes no record.
READ_VERBS = {"get", "find", "lookup", "look", "search", "list", "check", "track", "read", "show", "view"}
HANDOVER = re.compile(r"transfer_to|hand_?over|escalate|human|staff|agent|officer", re.I)
IDENTIFY_NAME = re.compile(r"find|lookup|look_up|identify|verify|authenticate|user|customer", re.I)
IDENTIFY_DESCRIPTION = re.compile(r"\b(identify|verify|authenticate)", re.I)
CONFIRM_ASK = re.compile(r"confirm|shall i|should i|go ahead|is that (right|correct)|do you want me to", re.I)
CONFIRM_YES = re.compile(r"\b(yes|yep|yeah|confirm(ed)?|go ahead|please do|that's right|correct)\b", re.I)
RETRY = re.compile(r"\bretry|try again|call it again\b", re.I)
# values a writer puts where a real one belongs: PAYMENT-ID-807, <order_id>, {email}, "string", xxx
PLACEHOLDER = re.compile(
    r"^(<[^>]*>|\{[^}]*\}|\[[^\]]*\]|string|value|example|placeholder|tbd|n/?a|none|null|xxx+|foo|bar|"
    r"test|dummy|sample|unknown|your[ _].*)$",
    re.I,
)
PLACEHOLDER_ID = re.compile(r"\b[A-Z]+[-_]ID[-_]?\d*\b|\bID[-_]\d+\b")  # capitals only: not 'store_id'


def pct(hits: int, n: int) -> str:
    return f"{100 * hits / n:5.1f}% ({hits}/{n})" if n else "n/a (0)"


def consequential(tool) -> bool:
    """Whether calling the tool changes state: not a read (by its first word) and not a hand-over."""
    first = tool.name.lower().split("_")[0]
    return first not in READ_VERBS and not HANDOVER.search(tool.name)


def identifies(tool) -> bool:
    """Whether a call to the tool identifies the user (a read-only lookup of a user, customer or order)."""
    return not consequential(tool) and (
        bool(IDENTIFY_NAME.search(tool.name)) or bool(IDENTIFY_DESCRIPTION.search(tool.description))
    )


def status_rules(store: Store, pid: str, tools: dict, statuses: set[str]) -> dict[str, set[str]]:
    """Tool -> the statuses a policy sentence that names the tool and 'status' allows it for, or, for a
    tool whose name carries a status (`cancel_pending_order`: a policy written for people rarely names
    the tool), that status. Read apart from the procedure reader (which reads sections and verbs), so the
    figure is no echo of it."""
    rules: dict[str, set[str]] = {}
    for name in tools:
        carried = {s for s in statuses if s in name.lower().split("_")}
        if carried:
            rules[name] = carried
    for doc in store.documents(pid):
        for sentence in re.split(r"(?<=[.!?])\s+|\n", doc.text):
            if "status" not in sentence.lower():
                continue
            named = [name for name in tools if re.search(rf"\b{re.escape(name)}\b", sentence)]
            allowed = {s for s in statuses if re.search(rf"\b{re.escape(s)}\b", sentence.lower())}
            for name in named:
                if allowed:
                    rules.setdefault(name, set()).update(allowed)
    return rules


def status_index(project: Path) -> tuple[dict[str, str], set[str]]:
    """Every key (first column) of a table with a 'status' column -> that row's status, and the statuses."""
    index: dict[str, str] = {}
    for path in sorted((project / "tables").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        if rows and "status" in rows[0]:
            key = next(iter(rows[0]))
            for row in rows:
                index[row[key]] = row["status"].strip().lower()
    return index, set(index.values())


def tool_calls(conversation) -> list:
    return [t for t in conversation.turns if t.role == "tool_call" and t.tool_name]


def strings(value, name: str = ""):
    """(field name, string) of every string in a value, nested ones under their own field's name."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v, name)


def placeholder(name: str, text: str) -> bool:
    """A value that looks written in place of a real one: a generic pattern, or the field's own name in
    capitals with a number (PAYMENT-METHOD-783 for payment_method, NEW-SKU-304 for new_skus)."""
    own = name.upper().rstrip("S").replace("_", "-")
    return bool(PLACEHOLDER.search(text.strip()) or PLACEHOLDER_ID.search(text)) or bool(
        own and re.match(rf"^{re.escape(own)}S?-?\d+$", text)
    )


def result_placeholders(conversations) -> list[str]:
    """The placeholder-looking values of the tool results (tool: field=value)."""
    found = []
    for conversation in conversations:
        for turn in conversation.turns:
            if turn.role != "tool_result":
                continue
            try:
                output = json.loads(turn.content or "{}")
            except json.JSONDecodeError:
                continue
            found += [f"{turn.tool_name}: {k}={v[:30]!r}" for k, v in strings(output) if placeholder(k, v)]
    return found


def rejected(conversation, call) -> bool:
    """Whether the tool answered the call with an error: a tool case whose situation is an invalid call
    (the agent passed the user's vague words, or an option the tool does not have) makes it on purpose."""
    after = conversation.turns[conversation.turns.index(call) + 1 :]
    result = next((t for t in after if t.role == "tool_result"), None)
    return result is not None and '"error"' in (result.content or "")


def call_checks(conversations, tools: dict) -> tuple[int, int, list[str], int, list[str], int]:
    """(calls, schema-valid calls, first invalid reasons, placeholder values, examples of them, invalid
    calls the tool rejected, as the case intends)."""
    n = valid = placeholders = on_purpose = 0
    invalid: list[str] = []
    examples: list[str] = []
    for conversation in conversations:
        for call in tool_calls(conversation):
            n += 1
            tool = tools.get(call.tool_name)
            if tool is None:
                invalid.append(f"{conversation.id}: unknown tool {call.tool_name}")
                continue
            errors = list(
                jsonschema.Draft202012Validator(
                    tool.parameters, format_checker=jsonschema.FormatChecker()
                ).iter_errors(call.arguments or {})
            )
            if errors and rejected(conversation, call):
                on_purpose += 1
            elif errors:
                invalid.append(f"{call.tool_name}: {errors[0].message[:90]}")
            else:
                valid += 1
            for name, text in strings(call.arguments or {}):
                if placeholder(name, text):
                    placeholders += 1
                    examples.append(f"{call.tool_name}: {text[:40]!r}")
    return n, valid, invalid, placeholders, examples, on_purpose


def per_tool_text(conversations, tools: dict) -> str:
    """'cancel_order 4, return_items 3': the consequential calls by tool."""
    counts = Counter(
        t.tool_name
        for c in conversations
        for t in tool_calls(c)
        if t.tool_name in tools and consequential(tools[t.tool_name])
    )
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items())) or "none"


def procedure_figures(store: Store, pid: str, args, tools: dict) -> list:
    print("== procedure tests (seed 001) ==")
    try:
        outcome = generate(store, pid, paths=args.paths, seed=args.seed)
    except EvalcoreError as error:
        print(f"  not generated: {error}")
        return []
    procedures = {p.name: p for p in store.procedures(pid)}
    graphs = list_graphs(store, pid, outcome.run.id)
    conversations = [v.conversation for v in list_conversations(store, pid, generator="procedure")]
    print(f"  procedures {len(procedures)}, graphs {len(graphs)}, conversations {len(conversations)}")

    index, statuses = status_index(Path(args.project))
    rules = status_rules(store, pid, tools, statuses)
    acting = identified = confirmed = judged = allowed = 0
    for conversation in conversations:
        turns = conversation.turns
        for position, turn in enumerate(turns):
            tool = tools.get(turn.tool_name) if turn.role == "tool_call" else None
            if tool is None or not consequential(tool):
                continue
            acting += 1
            before = turns[:position]
            identified += any(
                t.role == "tool_call" and t.tool_name in tools and identifies(tools[t.tool_name])
                for t in before
            )
            asked = [
                i
                for i, t in enumerate(before)
                if t.role == "assistant" and CONFIRM_ASK.search(t.content or "")
            ]
            confirmed += bool(asked) and any(
                t.role == "user" and CONFIRM_YES.search(t.content or "") for t in before[asked[-1] + 1 :]
            )
            if tool.name in rules:
                # the record the action acts on is the one looked up before it (a transfer's account it
                # leaves, not the account it pays into); with no lookup, every record it names
                read = {
                    v
                    for t in before
                    if t.role == "tool_call"
                    and t.tool_name in tools
                    and not consequential(tools[t.tool_name])
                    for _, v in strings(t.arguments or {})
                }
                named = [v for _, v in strings(turn.arguments or {}) if v in index]
                records = [index[v] for v in ([v for v in named if v in read] or named)]
                if records:
                    judged += 1
                    allowed += all(status in rules[tool.name] for status in records)
    print(f"  conversations' consequential actions: {acting} ({per_tool_text(conversations, tools)})")
    print(f"  identify the user before it:           {pct(identified, acting)}")
    print(f"  explicit confirmation before it:       {pct(confirmed, acting)}")
    print(
        f"  record's status allows the action:     {pct(allowed, judged)}"
        f"  (actions with a status rule: {judged})"
    )
    print(f"  status rules read from the policy:     {rules or 'none'}")

    repeats = 0
    for conversation in conversations:
        procedure = procedures.get(conversation.metadata.get("procedure", ""))
        retry = procedure is not None and any(RETRY.search(s.text or "") for s in procedure.steps)
        calls = tool_calls(conversation)
        repeats += sum(
            (a.tool_name, a.arguments) == (b.tool_name, b.arguments) and not retry
            for a, b in itertools.pairwise(calls)
        )
    print(f"  consecutive identical calls, no retry step: {repeats}")

    branching = [g for g in graphs if has_branches(g.flowgraph)]
    print(f"  procedures with a branch:              {pct(len(branching), len(graphs))}")
    for g in graphs:
        if g.conversation_graph is not None and has_branches(g.conversation_graph):
            distinct = len({tuple(p) for p in g.paths})
            print(
                f"    {g.procedure:<28} flowgraph nodes {len(g.flowgraph.nodes):>3}, "
                f"distinct paths {distinct}/{len(g.paths)}"
            )
    pairs: Counter[tuple[str, str]] = Counter()
    for conversation in conversations:
        names = [c.tool_name for c in tool_calls(conversation)]
        pairs.update({(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if a != b})
    listed = ", ".join(f"{a}->{b} ({n})" for (a, b), n in sorted(pairs.items())) or "none"
    print(f"  pairs of different tools in order:     {len(pairs)}: {listed}")
    return conversations


def toolcase_figures(store: Store, pid: str, args) -> list:
    print("== tool cases (seed 004) ==")
    try:
        outcome = generate_toolcases(store, pid, per_situation=args.per_situation, seed=args.seed)
    except EvalcoreError as error:
        print(f"  not generated: {error}")
        return []
    params = outcome.run.params
    situations = params["situations"]
    produced = {u["situation"] for u in params["units"]}
    print(f"  situations produced: {len(produced)}/{len(situations)}; {len(outcome.failed)} units failed")
    for situation in params["unproduced"]:
        reasons = sorted({s["reason"] for s in params["skipped"] if s["situation"] == situation})
        print(f"    skipped {situation}: {'; '.join(reasons)}")
    conversations = [v.conversation for v in list_conversations(store, pid, generator=TOOL_CASES)]
    pos = sum((c.metadata.get("labels") or {}).get("overall") == "POS" for c in conversations)
    print(f"  POS share of conversations:            {pct(pos, len(conversations))}")
    table_11(store, pid, conversations, args)
    return conversations


def table_11(store: Store, pid: str, conversations: list, args) -> None:
    """Table 11 (seed 004): SPUR vs SCOPE on gold and silver apart. The offline judge makes silver; no
    person reviews here, so a scripted stand-in accepts every third conversation of each label as gold."""
    filter_toolcases(store, pid)
    for label in ("POS", "NEG"):
        for c in [c for c in conversations if c.metadata["labels"]["overall"] == label][::3]:
            note = Annotation(
                item_kind="conversation", item_id=c.id, label=AnnotationLabel.accept, author="ann"
            )
            store.annotate(c.id, [note], "ann", store.current(c.id).version)
    started, cpu = time.perf_counter(), time.process_time()
    found = compare_by_tier(
        ModelClient(store, pid), tier_subsets(store, pid), folds=args.folds, seed=args.seed
    )
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"  Table 11, SPUR vs SCOPE, {args.folds}-fold 40/60, Overall (gold: a scripted stand-in accepted "
        f"every third of each label; {wall:.1f} s wall, {used:.1f} s CPU)"
    )
    for line in tier_table(found):
        print(f"    {line}")


def project_figures(project: str, args) -> None:
    """Every figure on one project folder, in a store of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'store.db'}")
        try:
            pid = import_project(store, Path(project)).project_id
        except EvalcoreError as error:
            print(f"{project}: {error}")
            return
        args.project = project
        tools = {t.name: t for t in store.tools(pid)}
        print(f"project {pid} ({project}): {len(tools)} tools, {len(store.procedures(pid))} procedures")
        procedure_conversations = procedure_figures(store, pid, args, tools)
        case_conversations = toolcase_figures(store, pid, args)
        print("== every tool call ==")
        for label, conversations in (
            ("procedures", procedure_conversations),
            ("tool cases", case_conversations),
        ):
            n, valid, invalid, placeholders, examples, on_purpose = call_checks(conversations, tools)
            print(
                f"  {label:<11} schema-valid calls {pct(valid, n - on_purpose)} (besides {on_purpose} "
                f"invalid on purpose, rejected by the tool; of all calls {pct(valid, n)}); "
                f"placeholder-looking values {placeholders}"
            )
            for reason, count in Counter(invalid).most_common(5):
                print(f"    invalid x{count}: {reason}")
            for example, count in Counter(examples).most_common(5):
                print(f"    placeholder x{count}: {example}")
            in_results = result_placeholders(conversations)
            print(f"  {'':<11} placeholder-looking values in tool results {len(in_results)}")
            for example, count in Counter(in_results).most_common(3):
                print(f"    x{count}: {example}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "projects",
        nargs="*",
        default=[str(ROOT / "data" / "retail"), str(ROOT / "data" / "bank")],
        help="project folders (default: data/retail, then data/bank, which the figures were not tuned on)",
    )
    parser.add_argument(
        "--paths",
        type=int,
        default=30,
        help="paths (conversations) per graph (default 30: most paths end in a branch the policy names, "
        "so it takes this many for the consequential actions to number in the tens)",
    )
    parser.add_argument("--per-situation", type=int, default=3, help="tool cases per situation (default 3)")
    parser.add_argument("--folds", type=int, default=5, help="folds of Table 11 (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for i, project in enumerate(args.projects):
        if i:
            print()
        project_figures(project, args)


if __name__ == "__main__":
    main()
