"""How many sloppy model replies are read without a re-ask, with one, or lost: before and after issue 14.

A corpus of constructed replies per task: valid outputs of each task (in the shapes the sample project's
pipelines produce) written with the faults small and local models make, alone and combined: reasoning
blocks, fences, prose, comments, Python literals, trailing commas, truncation, a bare list, a wrapper
key, keys in the singular or in camelCase or under a synonym, enums in another case or with other
separators, "" or "none" for null, ids as one string, PASS/FAIL scores, Prometheus "[RESULT] n", unknown
error types; and slips no repair can fix (a missing key, prose only, the schema echoed back).

Each reply is parsed by the parser before issue 14 (its source read from git) and by the current one, in
the same harness. A reply counts as read only if it gives the intended output (a truncated list without
its half-written last element; an unknown error type as `other`); one read otherwise is "misread".
What the model sends after a re-ask: a formatting habit is repeated; a slip is corrected; a reply cut
at the token limit is cut again at the same limit (before), and complete with twice the limit (after).
A judge score is "lost to a secondary field" when only the error type or rationale was off and the
verdict ended unscored.

Then the same on a real small model's replies, where recorded (benchmarks/record_small_model.py writes
them to tests/fixtures/small_model/): the first reply of each unit read without a re-ask before and
after, and at which recorded attempt each unit was read by the current parser (or never); each file
labelled REAL with the model, its package and the date it was recorded, and a last table of the read rate
without a re-ask on the SYNTHETIC corpus beside each REAL file. Recorded with
`benchmarks/record_small_model.py` (Qwen2.5-Coder 0.5B: `--local-caps` against `evalcore models serve-local`).

    .venv/bin/python benchmarks/model_robustness.py [--before REV] [--per-task 240] [--kinds]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import subprocess
import sys
import types
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalcore.generators.doc_qa.schema import AdherenceCheck, Corrections, QAConversation  # noqa: E402
from evalcore.llm import parsing  # noqa: E402
from evalcore.runs.judges import JudgeVerdict  # noqa: E402
from evalcore.specs.drafts import SpecDrafts  # noqa: E402


def _entities_schema() -> type[BaseModel]:
    """The extract_entities output, wherever the task lives now (it moves between packages)."""
    for module in ("evalcore.documents.entity_task", "evalcore.llm.entities"):
        try:
            return __import__(module, fromlist=["Entities"]).Entities
        except ImportError:
            continue
    raise ImportError("no Entities model found")


Entities = _entities_schema()

# ------------------------------------------------------------------------------------- valid outputs

TURNS = [
    {"question": "Which store has no workshop?", "answer": "Westbrook Station has no workshop.",
     "document_ids": ["about-us-and-stores"], "query_type": "PRE-FILLER",
     "bridging_entity": "Westbrook Station", "theme_relation": "store services",
     "resolved_question": "Which store has no workshop?",
     "sources": [{"document_id": "about-us-and-stores", "passage_id": "about-us-and-stores#p2",
                  "sentence": "Westbrook Station has no workshop.", "row": None, "cells": []}]},
    {"question": "Can I pick up a repaired bike there?",
     "answer": "No, repairs are collected at Alder Creek.",
     "document_ids": ["workshop-services"], "query_type": "FILLER", "bridging_entity": "Westbrook Station",
     "theme_relation": "repairs", "resolved_question": "Can I pick up a repaired bike at Westbrook Station?",
     "sources": [{"document_id": "workshop-services", "passage_id": "workshop-services#r3", "sentence": None,
                  "row": 3, "cells": [["store", "Alder Creek"], ["pickup", "yes"]]}]},
    {"question": "Does it sell used batteries?", "answer": "CANNOTANSWER", "document_ids": [],
     "query_type": "SINGLE-DOC", "bridging_entity": None, "theme_relation": "products",
     "resolved_question": "Does Westbrook Station sell used batteries?", "sources": []},
    {"question": "So where do I go for a repair and a pickup?",
     "answer": "Go to Alder Creek: Westbrook Station has no workshop.",
     "document_ids": ["about-us-and-stores", "workshop-services"], "query_type": "SYNTHESIS",
     "bridging_entity": None, "theme_relation": "store services",
     "resolved_question": "Where should I go for a repair and a pickup?", "sources": []},
]  # fmt: skip

BASES: dict[str, tuple[type[BaseModel], list[dict[str, Any]]]] = {
    "extract_entities": (Entities, [
        {"entities": [{"text": "Voltra Metro E8", "kind": "name"}, {"text": "25 km", "kind": "quantity"},
                      {"text": "RT-2291", "kind": "identifier"}, {"text": "14 March 2025", "kind": "date"}]},
        {"entities": [{"text": "Alder Creek", "kind": "name"}, {"text": "$15", "kind": "quantity"},
                      {"text": "30 days", "kind": "quantity"}]},
    ]),
    "generate_specs": (SpecDrafts, [
        {"specs": [
            {"scenario": "Return of an e-bike after a short ride", "given": "a customer bought an e-bike",
             "when": "they ask to return it after 10 days", "then": "the assistant should explain the "
             "14-day window and the 25 km limit", "category": "policy",
             "documents": ["return-policy", "e-bikes"]},
            {"scenario": "Late rental return", "given": "a rental was due at noon",
             "when": "the customer returns it at 2 pm", "then": "the assistant should state the late fee",
             "category": "policy", "documents": ["rental-terms"]},
            {"scenario": "Workshop booking", "given": "a customer's brakes squeal",
             "when": "they ask for a repair slot", "then": "the assistant should offer the booking tool",
             "category": "tool use", "documents": ["workshop-services"]},
        ]},
    ]),
    "doc_qa_conversation": (QAConversation, [{"turns": TURNS}, {"turns": TURNS[:2] + TURNS[3:]}]),
    "doc_qa_correct": (Corrections, [
        {"turns": [
            {"pair": 0, "verdict": "supported", "answer": "Westbrook Station has no workshop.",
             "passage_ids": ["about-us-and-stores#p2"], "note": ""},
            {"pair": 1, "verdict": "corrected", "answer": "No, repaired bikes are collected at Alder Creek.",
             "passage_ids": ["workshop-services#r3"], "note": "named the wrong store"},
            {"pair": 2, "verdict": "unsupported", "answer": "CANNOTANSWER", "passage_ids": [],
             "note": "a passage does answer it"},
        ]},
    ]),
    "doc_qa_check": (AdherenceCheck, [
        {"adheres": True, "coherent": False, "score": 0.6,
         "problems": ["Turn 3 says 'it' where two stores were named", "The synthesis misses a document"],
         "rationale": "On theme, but one reference is ambiguous."},
        {"adheres": True, "coherent": True, "score": 0.9, "problems": [], "rationale": "Flows well."},
    ]),
    "judge_turn": (JudgeVerdict, [
        {"rationale": "Gives the 14 days and the 25 km limit.", "score": 1, "error_type": None},
        {"rationale": "Says 30 days where the policy says 14.", "score": 0, "error_type": "wrong_fact"},
        {"rationale": "Gives the 14 days but not the 25 km limit.", "score": 0, "error_type": "incomplete"},
    ]),
}  # fmt: skip

# ------------------------------------------------------------------------------------- faults

# A data fault: (task, output, rng) -> the output as the model wrote it, or None where it does not apply.
Fault = Callable[[str, Any, random.Random], Any]


def _walk(value: Any, change: Callable[[str, Any], tuple[str, Any]]) -> Any:
    """Apply change(key, value) -> (key, value) to every key of every object, depth first."""
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    if isinstance(value, dict):
        return dict(change(k, _walk(v, change)) for k, v in value.items())
    return value


ENUM_KEYS = {"query_type", "kind", "verdict", "error_type"}
ID_LISTS = {"document_ids", "passage_ids", "documents"}
SYNONYMS = {"rationale": ["reasoning", "explanation", "feedback"], "answer": ["response"],
            "problems": ["issues"]}  # fmt: skip


def singular_keys(task, data, rng):
    lists = [False]

    def change(k, v):
        if isinstance(v, list) and k.endswith("s") and k != "cells":
            lists[0] = True
            return (k[:-3] + "y" if k.endswith("ies") else k[:-1]), v
        return k, v

    out = _walk(data, change)
    return out if lists[0] else None


def camel_keys(task, data, rng):
    out = _walk(data, lambda k, v: (re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k), v))
    return out if out != data else None


def synonym_keys(task, data, rng):
    hit = [False]

    def change(k, v):
        if k in SYNONYMS:
            hit[0] = True
            return rng.choice(SYNONYMS[k]), v
        return k, v

    out = _walk(data, change)
    return out if hit[0] else None


def _enum_faults(style: Callable[[str], str]) -> Fault:
    def fault(task, data, rng):
        hit = [False]

        def change(k, v):
            if k in ENUM_KEYS and isinstance(v, str):
                hit[0] = True
                return k, style(v)
            return k, v

        out = _walk(data, change)
        return out if hit[0] else None

    return fault


enum_snake = _enum_faults(lambda v: v.lower().replace("-", "_"))
enum_title = _enum_faults(lambda v: re.sub(r"[-_]", " ", v).title().replace(" ", "-"))
enum_words = _enum_faults(lambda v: re.sub(r"[-_]", " ", v).title())


def empty_as_null(task, data, rng):
    hit = [False]

    def change(k, v):
        if v is None and k in ("bridging_entity", "sentence", "row", "error_type"):
            hit[0] = True
            return k, rng.choice(["", "none", "None", "N/A", "null"])
        return k, v

    out = _walk(data, change)
    return out if hit[0] else None


def ids_as_string(task, data, rng):
    hit = [False]

    def change(k, v):
        if k in ID_LISTS and isinstance(v, list) and v:
            hit[0] = True
            return k, ", ".join(v)
        if k == "problems" and isinstance(v, list) and len(v) == 1:
            hit[0] = True
            return k, v[0]
        return k, v

    out = _walk(data, change)
    return out if hit[0] else None


def score_words(task, data, rng):
    if task == "judge_turn":
        words = {1: ["PASS", "pass", "Yes", "correct"], 0: ["FAIL", "fail", "No", "incorrect"]}
        return {**data, "score": rng.choice(words[data["score"]])}
    if task == "doc_qa_check":
        return {**data, "score": f"{data['score']} / 1"}
    return None


def unknown_error_type(task, data, rng):
    if task != "judge_turn" or data["score"] != 0:
        return None
    return {**data, "error_type": rng.choice(["rude", "factual error", "missing info", "hallucination"])}


def extra_keys(task, data, rng):
    return {**data, "confidence": 0.9, "notes": "none"}


def wrapper_key(task, data, rng):
    schema = BASES[task][0]
    return {rng.choice([schema.__name__, "output", "result"]): data}


def bare_list(task, data, rng):
    if not isinstance(data, dict) or len(data) != 1 or not isinstance(next(iter(data.values())), list):
        return None
    return next(iter(data.values()))


DATA_FAULTS: dict[str, Fault] = {
    "singular_key": singular_keys,
    "camel_case_keys": camel_keys,
    "synonym_keys": synonym_keys,
    "enum_snake_case": enum_snake,
    "enum_title_case": enum_title,
    "enum_words": enum_words,
    "empty_as_null": empty_as_null,
    "ids_as_string": ids_as_string,
    "score_words": score_words,
    "unknown_error_type": unknown_error_type,
    "extra_keys": extra_keys,
    "wrapper_key": wrapper_key,
    "bare_list": bare_list,
}
# The output intended despite a fault, where it is not the valid output itself.
INTENDED = {"unknown_error_type": lambda out: {**out, "error_type": "other"}}
# Faults that touch only a judge's secondary fields (its score must survive them).
SECONDARY = {"unknown_error_type", "empty_as_null", "enum_snake_case", "enum_title_case", "enum_words",
             "synonym_keys"}  # fmt: skip


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


TEXT_FAULTS: dict[str, Callable[[Any, random.Random], str]] = {
    "clean": lambda d, rng: json.dumps(d),
    "code_fence": lambda d, rng: "```json\n" + _dumps(d) + "\n```",
    "prose": lambda d, rng: (
        "Here is the JSON you asked for:\n" + json.dumps(d) + "\nLet me know if that helps!"
    ),
    "think_block": lambda d, rng: (
        '<think>\nThe schema wants an object like {"key": value}; list [each] item once. {Careful}.\n'
        "</think>\n" + _dumps(d)
    ),
    "line_comments": lambda d, rng: re.sub(r",\n", ",  // checked\n", _dumps(d), count=3),
    "block_comment": lambda d, rng: "/* output */\n" + _dumps(d),
    "python_literals": lambda d, rng: repr(d),
    "trailing_commas": lambda d, rng: re.sub(r"([^\[{\s])(\n\s*[}\]])", r"\1,\2", _dumps(d)),
}


def truncated(task: str, data: dict[str, Any], rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    """Cut inside the last element of the output's main list: the intended output drops that element."""
    key = next((k for k, v in data.items() if isinstance(v, list) and len(v) >= 2), None)
    if key is None or task == "doc_qa_check":
        return None
    text = json.dumps(data)
    last = json.dumps(data[key][-1])
    start = text.rindex(last)
    cut = text[: start + rng.randint(3, max(4, len(last) - 2))]
    return cut, {**data, key: data[key][:-1]}


def prometheus(task, data, rng):
    if task != "judge_turn":
        return None
    text = f"Feedback: {data['rationale']}\n[RESULT] {data['score']}"
    return text, {**data, "error_type": None}


def missing_key(task: str, data: dict[str, Any]) -> str:
    """The first required key left out (the re-ask names it)."""
    schema = BASES[task][0]
    required = next(name for name, f in schema.model_fields.items() if f.is_required())
    return json.dumps({k: v for k, v in data.items() if k != required})


# Slips no repair can fix; corrected after a re-ask.
SLIPS: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "missing_required_key": missing_key,
    "prose_only": lambda task, d: "I'm sorry, I can only answer in plain text. The answer looks right to me.",
    "schema_echo": lambda task, d: json.dumps(BASES[task][0].model_json_schema()),
}


def corpus(per_task: int, seed: int = 14) -> list[dict[str, Any]]:
    """Items {task, kind, first, second_before, second_after, expected, secondary}, per_task per task."""
    rng = random.Random(seed)
    return [item for task in BASES for item in _task_corpus(task, per_task, rng)]


def _task_corpus(task: str, per_task: int, rng: random.Random) -> list[dict[str, Any]]:
    """Every fault alone on every valid output, then random combinations up to `per_task` replies."""
    bases = BASES[task][1]
    items: list[dict[str, Any]] = []

    def add(kind: str, first: str, expected: Any, after: str, before: str | None = None, secondary=False):
        items.append({"task": task, "kind": kind, "first": first, "expected": expected, "second_after": after,
                      "second_before": before or after, "secondary": secondary})  # fmt: skip

    def habit(kind: str, data_faults: list[str], text_fault: str, base: dict[str, Any]) -> None:
        """A formatting habit: the same reply again after a re-ask."""
        data, intended = copy.deepcopy(base), base
        for name in data_faults:
            data = DATA_FAULTS[name](task, data, rng)
            if data is None:
                return
            intended = INTENDED.get(name, lambda out: out)(intended)
        text = TEXT_FAULTS[text_fault](data, rng)
        secondary = task == "judge_turn" and bool(data_faults) and set(data_faults) <= SECONDARY
        add(kind, text, intended, text, secondary=secondary)

    for base in bases:
        for name in DATA_FAULTS:
            habit(name, [name], "clean", base)
        for name in TEXT_FAULTS:
            if name != "clean":
                habit(name, [], name, base)
        cut = truncated(task, base, rng)
        if cut:
            add("truncated", cut[0], cut[1], json.dumps(base), before=cut[0])
        made = prometheus(task, base, rng)
        if made:
            add("prometheus_result", made[0], made[1], made[0])
        for name, slip in SLIPS.items():
            add(name, slip(task, base), base, json.dumps(base))
    while len(items) < per_task:
        base = rng.choice(bases)
        if rng.random() < 0.1:
            cut = truncated(task, base, rng)
            if cut:
                add("truncated", cut[0], cut[1], json.dumps(base), before=cut[0])
            continue
        data_faults = sorted(rng.sample(list(DATA_FAULTS), rng.choice([1, 2, 2, 3])), key=_order)
        if not {"bare_list", "wrapper_key"} <= set(data_faults):
            habit("combined", data_faults, rng.choice(list(TEXT_FAULTS)), base)
    return items[:per_task]


def _order(name: str) -> int:
    # Structure-changing faults last: keys are renamed before the object is wrapped or unwrapped.
    return {"wrapper_key": 2, "bare_list": 2}.get(name, 1)


# ------------------------------------------------------------------------------------- parsing


def old_parser(rev: str) -> Callable[[str, type[BaseModel]], Any] | None:
    """parse_output of evalcore/llm/parsing.py at `rev`, or None when git cannot show it."""
    try:
        source = subprocess.run(
            ["git", "show", f"{rev}:evalcore/llm/parsing.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("parsing_before")
    sys.modules[module.__name__] = module  # dataclasses look their module up while the class is built
    exec(compile(source, f"{rev}:evalcore/llm/parsing.py", "exec"), module.__dict__)
    return module.parse_output


def default_before() -> str:
    """The parent of the first issue-14 commit that changed the parser."""
    log = subprocess.run(
        ["git", "log", "--format=%H", "--grep=issue 14", "--", "evalcore/llm/parsing.py"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return (log[-1] + "^") if log else "HEAD"


def outcome(parse: Callable[[str, type[BaseModel]], Any], item: dict[str, Any], after: bool) -> str:
    schema = BASES[item["task"]][0]
    expected = schema.model_validate(item["expected"]).model_dump()
    replies = [item["first"], item["second_after" if after else "second_before"]]
    for attempt, text in enumerate(replies):
        parsed = parse(text, schema)
        if parsed.value is not None:
            if parsed.value.model_dump() != expected:
                return "misread"
            return "no re-ask" if attempt == 0 else "one re-ask"
    return "lost"


RECORDED = ROOT / "tests" / "fixtures" / "small_model"


# Tasks whose output has the schema of a task in BASES (the card's specs are SpecDrafts too).
SAME_SCHEMA = {"specs_from_card": "generate_specs"}


def recorded_figures(
    path: Path, parsers: dict[str, Callable[[str, type[BaseModel]], Any]]
) -> dict[str, tuple[int, int]]:
    """Print, per task, the recorded first replies read without a re-ask, and how the units ended;
    return, per task, (first replies read by the current parser, units)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    units: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        units[row["unit"]].append(row)
    modes = sorted({r["structured"] for r in rows})
    origin = rows[0] if rows else {}
    source = "model as the file name says; package and date not recorded"
    if "model" in origin:
        package = origin.get("package") or "package not recorded"
        source = f"{origin['model']}, {package}, recorded {origin['recorded']}"
    print(f"\nREAL replies, {path.name}: {len(rows)} replies in {len(units)} units (structured mode "
          f"{', '.join(modes)}; {source})")  # fmt: skip
    labels = list(parsers)
    print(f"{'task':<24}{'units':>6}" + "".join(f"{'first read, ' + label[:6]:>22}" for label in labels)
          + f"{'attempts recorded: read at 1/2/3, never':>44}")  # fmt: skip
    read_first: dict[str, tuple[int, int]] = {}
    for task in sorted({a[0]["task"] for a in units.values()}):
        base = SAME_SCHEMA.get(task, task)
        if base not in BASES:
            continue
        mine = [attempts for attempts in units.values() if attempts[0]["task"] == task]
        schema = BASES[base][0]
        row = f"{task:<24}{len(mine):>6}"
        for parse in parsers.values():
            read = sum(parse(a[0]["reply"], schema).value is not None for a in mine)
            row += f"{read:>14} ({read / len(mine):4.0%})"
        read_first[task] = (read, len(mine))  # the last parser is the current one
        ended: Counter[str] = Counter()
        for attempts in mine:
            ok = next(
                (i for i, a in enumerate(attempts, 1) if parsing.parse_output(a["reply"], schema).value), 0
            )
            ended[str(ok) if ok else "lost"] += 1
        row += f"{ended['1']:>24} / {ended['2']} / {ended['3']}, {ended['lost']}"
        print(row)
    return read_first


def side_by_side(synthetic: dict[str, Counter[str]], real: dict[str, dict[str, tuple[int, int]]]) -> None:
    """Read without a re-ask by the current parser: SYNTHETIC (constructed faults) beside each REAL file."""
    names = list(real)
    print(
        "\nread without a re-ask, current parser: SYNTHETIC = constructed faults, REAL = a recorded model's"
    )
    for i, name in enumerate(names, start=1):
        print(f"  REAL {i}: {name}")
    print(f"{'task':<24}{'SYNTHETIC':>12}" + "".join(f"{f'REAL {i}':>14}" for i in range(1, len(names) + 1)))
    for task in sorted({*BASES, *(t for r in real.values() for t in r)}):
        counts = synthetic.get(SAME_SCHEMA.get(task, task))
        total = sum(counts.values()) if counts and task in BASES else 0
        row = f"{task:<24}" + (f"{counts['no re-ask'] / total:>12.1%}" if total else f"{'-':>12}")
        for name in names:
            read, n = real[name].get(task, (0, 0))
            row += f"{f'{read}/{n} ({read / n:.0%})' if n else '-':>14}"
        print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="git revision of the parser before (default: found)")
    parser.add_argument("--per-task", type=int, default=240)
    parser.add_argument("--kinds", action="store_true", help="also print the outcome per fault kind")
    args = parser.parse_args()
    items = corpus(args.per_task)
    rev = args.before or default_before()
    before = old_parser(rev)
    parsers = {"after": parsing.parse_output}
    if before is not None:
        parsers = {f"before ({rev[:12]})": before, **parsers}
    print(f"SYNTHETIC replies (constructed faults): {len(items)}, {args.per_task} per task; outcome: read "
          "without a re-ask / with one / "
          "lost / misread (read, but not as intended)\n")  # fmt: skip
    columns = ["no re-ask", "one re-ask", "lost", "misread"]
    results: dict[str, dict[str, Counter[str]]] = {}
    kinds: dict[str, dict[str, Counter[str]]] = {}
    for label, parse in parsers.items():
        per_task: dict[str, Counter[str]] = defaultdict(Counter)
        per_kind: dict[str, Counter[str]] = defaultdict(Counter)
        for item in items:
            result = outcome(parse, item, after=label == "after")
            per_task[item["task"]][result] += 1
            per_task["all"][result] += 1
            per_kind["combined" if "+" in item["kind"] else item["kind"]][result] += 1
            if item["secondary"] and result in ("lost", "misread"):
                per_task["judge scores lost to secondary fields"]["lost"] += 1
        results[label], kinds[label] = per_task, per_kind
    header = f"{'task':<24}" + "".join(f"{label:>40}" for label in parsers)
    print(header)
    print(f"{'':<24}" + "".join(f"{'  '.join(c[:8].rjust(8) for c in columns):>40}" for _ in parsers))
    for task in [*BASES, "all"]:
        row = f"{task:<24}"
        for label in parsers:
            counts = results[label][task]
            total = sum(counts.values())
            row += f"{'  '.join(f'{counts[c] / total:8.1%}' for c in columns):>40}"
        print(row)
    print()
    for label in parsers:
        lost = results[label]["judge scores lost to secondary fields"]["lost"]
        secondary = sum(1 for i in items if i["secondary"])
        print(f"judge scores lost to secondary fields, {label}: {lost} of {secondary}")
    if args.kinds:
        print(f"\n{'fault kind':<24}" + "".join(f"{label:>40}" for label in parsers))
        for kind in sorted(kinds["after"]):
            row = f"{kind:<24}"
            for label in parsers:
                counts = kinds[label][kind]
                total = sum(counts.values())
                row += f"{'  '.join(f'{counts[c] / total:8.1%}' for c in columns):>40}"
            print(row + f"   (n={sum(kinds['after'][kind].values())})")
    real = {path.name: recorded_figures(path, parsers) for path in sorted(RECORDED.glob("*.jsonl"))}
    side_by_side(results["after"], real)


if __name__ == "__main__":
    main()
