"""Other tools' formats, through our own code: every item kind each format holds survives a round trip
(export, import into another store) unchanged; records written by hand in each tool's shape map onto
the items they mean; what does not map is kept in metadata and reported once per kind."""

from __future__ import annotations

import json

import pytest
import yaml
from runs_support import sample_project

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.errors import UsageError, ValidationFailed
from evalcore.inputs import import_project
from evalcore.items.current import iter_items
from evalcore.items.exports import write_lines
from evalcore.items.interop import import_file, import_text
from evalcore.items.store_ops import add_test
from evalcore.models import Annotation, Provenance, Turn
from evalcore.models import Test as ItemTest
from evalcore.reports.formats import WRITERS, check_export, export_format, export_results
from evalcore.runs.job import run_target
from evalcore.specs.transfer import export_specs, import_specs
from evalcore.store import Store

TOOL_TEST = ItemTest(
    id="test-tool",
    generator="procedure",
    context=[
        Turn(index=0, role="user", content="Where is my order 1042?"),
        Turn(index=1, role="assistant", content="Let me look it up."),
        Turn(index=2, role="user", content="It is order 1042, placed last week."),
    ],
    expected=Turn(index=3, role="tool_call", tool_name="lookup_order", arguments={"order_id": "1042"}),
    provenance=Provenance(producer="gpt-4o-mini", provider="openai", task="procedure"),
)
REPLY_TEST = ItemTest(
    id="test-reply",
    generator="doc_qa",
    context=[Turn(index=0, role="user", content="How long is the return window for e-bikes?")],
    expected=Turn(
        index=1, role="assistant", content="14 days, under 25 km ridden.", grounding=["return-policy"]
    ),
    assertions=[
        {"kind": "contains", "text": "14 days"},
        {"kind": "not_regex", "pattern": "guaranteed"},
        {"kind": "contains_any", "texts": ["25 km", "25km"]},
        {"kind": "max_words", "value": 60},
        {"kind": "answers"},
    ],
    provenance=Provenance(producer="offline", task="doc_qa"),
)


@pytest.fixture
def filled(sqlite_store) -> tuple[Store, str]:
    """The sample project with its sample specs and conversations, two tests, and a rejected item."""
    store = sqlite_store
    project_id, ids = sample_project(store)
    add_test(store, project_id, TOOL_TEST)
    add_test(store, project_id, REPLY_TEST)
    version = store.current(ids[0]).version
    rejection = Annotation(item_kind="conversation", item_id=ids[0], label="reject", reason="wrong answer",
                           author="dana")  # fmt: skip
    store.annotate(ids[0], [rejection], "dana", version)
    return store, project_id


def _fresh(tmp_path, source: Store, project_id: str) -> Store:
    other = Store(f"sqlite:///{tmp_path / 'other.db'}")
    import_project(other, SAMPLE_PROJECT)
    import_specs(other, project_id, export_specs(source, project_id, "yaml"), "specs.yaml", "ana")
    return other


def _contents(store: Store, project_id: str, kind: str) -> dict[str, dict]:
    return {i.id: i.content for i in iter_items(store, project_id, kind)}


def _stored(store: Store, project_id: str, kind: str) -> dict[str, dict]:
    """What the store holds of each item (the tier as written: the read model derives it from reviews)."""
    return {i.id: store.current(i.id).body for i in iter_items(store, project_id, kind)}


@pytest.mark.parametrize(
    ("fmt", "kind"),
    [(f, k) for f, w in WRITERS.items() if f != "hf" for k in w.kinds if k not in ("spec", "persona")],
)
def test_round_trip_keeps_every_item_whole(filled, tmp_path, fmt, kind):
    store, project_id = filled
    path = tmp_path / f"out.{WRITERS[fmt].suffix}"
    write_lines(export_format(store, project_id, fmt, kind), path)
    other = _fresh(tmp_path, store, project_id)
    done = import_file(other, project_id, fmt, path)
    before, after = _contents(store, project_id, kind), _stored(other, project_id, kind)
    for key in before:
        for field in before[key]:
            assert after[key][field] == before[key][field], (key, field)
    assert after == before  # ids, turns, grounding, tiers (a rejection included), provenance, metadata
    assert len(done.result.conversations) + len(done.result.tests) == len(before)
    assert any(c["tier"] == "rejected" for c in after.values()) or kind == "test"


@pytest.mark.parametrize("fmt", [f for f, w in WRITERS.items() if "spec" in w.kinds and f != "hf"])
def test_specs_exported_come_back_as_a_note_not_as_items(filled, tmp_path, fmt):
    store, project_id = filled
    path = tmp_path / f"specs.{WRITERS[fmt].suffix}"
    write_lines(export_format(store, project_id, fmt, "spec"), path)
    other = _fresh(tmp_path, store, project_id)
    with pytest.raises(ValidationFailed, match=r"no .* record in the file"):
        import_file(other, project_id, fmt, path)


def test_an_edit_made_in_the_other_tool_wins_and_ours_stay(filled, tmp_path):
    store, project_id = filled
    lines = list(export_format(store, project_id, "promptfoo", "test"))
    tests = yaml.safe_load("\n".join(lines))
    reply = next(t for t in tests if t["metadata"]["evalcore"]["id"] == "test-reply")
    reply["vars"]["input"] = "What is the return window for an e-bike?"
    reply["assert"] = [a for a in reply["assert"] if a["type"] != "llm-rubric"]
    reply["assert"].append({"type": "llm-rubric", "value": "Fourteen days."})
    other = _fresh(tmp_path, store, project_id)
    import_text(other, project_id, "promptfoo", yaml.safe_dump([reply]), "tests.yaml")
    test = next(iter_items(other, project_id, "test")).test()
    assert test.context[0].content == "What is the return window for an e-bike?"
    assert test.expected.content == "Fourteen days."
    assert test.expected.grounding == ["return-policy"]  # ours, where promptfoo has no place for it
    assert test.provenance == REPLY_TEST.provenance


def test_promptfoo_file_of_another_team_maps_and_reports_what_it_keeps(filled):
    store, project_id = filled
    text = """\
- description: return window
  vars: {question: "How long can I return an e-bike?", locale: en}
  assert:
    - {type: icontains, value: 14 days}
    - {type: contains-any, value: "25 km, 25km"}
    - {type: equals, value: "14 days"}
    - {type: similar, value: Within 14 days., threshold: 0.8}
    - {type: javascript, value: "output.length < 400"}
    - {type: javascript, value: "output.includes('km')"}
    - {type: is-json}
- vars: {input: Book a repair, history: [{role: system, content: Be brief.}, {role: user, content: Hi}]}
  assert: [{type: tool-call-f1, value: [book_repair]}]
"""
    done = import_text(store, project_id, "promptfoo", text, "team.yaml")
    assert done.notes == [
        "1 promptfoo assertions of type is-json kept as metadata: not evaluable here",
        "2 promptfoo assertions of type javascript kept as metadata: not evaluable here",
        "1 promptfoo system messages kept as metadata: a target here has its own system prompt",
    ]
    first, second = (read_test(store, i) for i in done.result.tests)
    assert [t.content for t in first.context] == ["How long can I return an e-bike?"]
    assert first.expected.content == "Within 14 days."
    assert first.assertions == [
        {"kind": "contains", "text": "14 days"},
        {"kind": "contains_any", "texts": ["25 km", "25km"]},
        {"kind": "regex", "pattern": r"^\s*14\ days\s*$"},
    ]
    assert first.expected.metadata["promptfoo"]["vars"] == {"locale": "en"}
    assert first.generator == "promptfoo" and first.provenance.producer == "import:promptfoo"
    assert [t.role for t in second.context] == ["user", "user"]
    assert (second.expected.role, second.expected.tool_name) == ("tool_call", "book_repair")


def read_test(store: Store, item_id: str) -> ItemTest:
    from evalcore.items.current import read_item

    return read_item(store, item_id).test()


def test_deepeval_ragas_tau2_and_dataset_records_of_other_teams(filled):
    store, project_id = filled
    goldens = [
        {"input": "Can I rent a bike?", "expected_output": "Yes, from 25 EUR a day.",
         "retrieval_context": ["rental prices"], "name": "rent"},
        {"scenario": "A customer returns a battery", "expected_outcome": "Return accepted",
         "turns": [{"role": "user", "content": "My battery is dead."},
                   {"role": "assistant", "content": "Let me check.",
                    "tools_called": [{"name": "lookup_order", "input_parameters": {"order_id": "7"},
                                      "output": "found"}]}]},
        {"scenario": "Only a scenario"},
    ]  # fmt: skip
    done = import_text(store, project_id, "deepeval", json.dumps(goldens, indent=2), "goldens.json")
    assert done.notes == [
        "1 DeepEval 'retrieval_context' fields kept as metadata: DeepEval's RAG and cost fields, "
        "not played here",
        "1 DeepEval conversational goldens without turns skipped: a scenario alone is no conversation",
    ]
    (conversation_id,) = done.result.conversations
    from evalcore.items.current import read_item

    conversation = read_item(store, conversation_id).conversation()
    assert [t.role for t in conversation.turns] == ["user", "tool_call", "tool_result", "assistant"]
    assert conversation.metadata["deepeval"]["scenario"] == "A customer returns a battery"

    rows = [
        {"user_input": "What does a repair cost?", "reference": "From 40 EUR.", "reference_contexts": ["x"],
         "synthesizer_name": "single_hop"},
        {"user_input": [{"content": "Is order 9 shipped?", "type": "human"}],
         "reference_tool_calls": [{"name": "lookup_order", "args": {"order_id": "9"}}],
         "synthesizer_name": "multi"},
    ]  # fmt: skip
    done = import_text(store, project_id, "ragas", "\n".join(json.dumps(r) for r in rows), "testset.jsonl")
    tests = [read_test(store, i) for i in done.result.tests]
    assert tests[0].expected.content == "From 40 EUR."
    assert (tests[1].expected.tool_name, tests[1].expected.arguments) == ("lookup_order", {"order_id": "9"})

    task = {"id": "7", "user_scenario": {"persona": "calm", "instructions": {
        "domain": "retail", "reason_for_call": "I want my order 3 status", "task_instructions": "ask"}},
        "evaluation_criteria": {"actions": [{"action_id": "a", "name": "lookup_order",
                                             "arguments": {"order_id": "3"}}],
                                "communicate_info": ["shipped"], "nl_assertions": ["polite"]}}  # fmt: skip
    done = import_text(store, project_id, "tau2", json.dumps([task]), "tasks.json")
    tau = read_test(store, done.result.tests[0])
    assert tau.id == "tau2-7" and tau.assertions == [{"kind": "contains", "text": "shipped"}]
    assert tau.expected.tool_name == "lookup_order"
    assert "1 tau2 nl_assertions beside the expected turn kept as metadata" in done.notes[0]

    samples = '{"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], ' \
              '"ideal": ["Hello", "Hi there"]}\n'  # fmt: skip
    done = import_text(store, project_id, "openai-evals", samples, "samples.jsonl")
    assert read_test(store, done.result.tests[0]).expected.content == "Hello"
    assert len(done.notes) == 2

    items = [
        {
            "id": "lf-1",
            "input": {"question": "Hours?"},
            "expectedOutput": {"answer": "9 to 6"},
            "metadata": {"source": "prod"},
        },
        {"input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
    ]
    done = import_text(store, project_id, "langfuse", "\n".join(map(json.dumps, items)), "items.jsonl")
    assert (len(done.result.tests), len(done.result.conversations)) == (1, 1)
    assert read_test(store, "langfuse-lf-1").expected.content == "9 to 6"

    examples = [{"inputs": {"question": "Open Sunday?"}, "outputs": {"answer": "No."}, "split": "test"}]
    done = import_text(store, project_id, "langsmith", json.dumps(examples), "examples.json")
    assert done.notes == ["1 LangSmith splits kept as metadata: a dataset split has no place here"]


BROKEN = [  # (format, file name, text, the problem's first words: file:line [field]: why)
    ("deepeval", "g.json", '[{"expected_output": "x"}]', r"g.json:1 \[\[0\].input\]: required field"),
    ("deepeval", "g.json", '[\n{"name": "a",\n "input": 3}\n]', r"g.json:3 \[\[0\].input\]: Input should"),
    ("promptfoo", "t.yaml", "- vars: {a: 1, b: 2}\n", r"t.yaml:1 \[vars\]: cannot tell which var"),
    (
        "promptfoo",
        "t.yaml",
        "- vars: {input: hi}\n  assert: [{value: x}]\n",
        r"t.yaml:2 \[\[0\].assert\[0\].type\]",
    ),
    ("ragas", "r.jsonl", '{"reference": "x"}\n{"user_input": 3}\n', r"r.jsonl:1 \[user_input\]"),
    (
        "tau2",
        "t.json",
        '[{"id": "1", "user_scenario": {}}]',
        r"t.json:1 \[\[0\].user_scenario.instructions\]",
    ),
    ("langfuse", "i.jsonl", '{"input": {"x": 1}}\n', r"i.jsonl:1 \[input\]: cannot tell the user's"),
    ("langsmith", "e.jsonl", '{"inputs": "hi"}\n', r"e.jsonl:1 \[inputs\]"),
    ("openai-evals", "s.jsonl", '\n{"input": [{"content": "hi"}]}\n', r"s.jsonl:2 \[input\[0\]\]: a message"),
    ("inspect", "s.jsonl", '{"input": "hi", "target": 4}\n', r"s.jsonl:1 \[target"),
    (
        "langsmith",
        "e.jsonl",
        '{"inputs": {"input": "a"}, "metadata": {"evalcore": {"kind": "x"}}}',
        r"e.jsonl:1 \[metadata.evalcore.kind\]",
    ),
]


@pytest.mark.parametrize(("fmt", "name", "text", "problem"), BROKEN)
def test_a_broken_record_is_named_by_file_line_and_field_and_nothing_is_written(
    filled, fmt, name, text, problem
):
    store, project_id = filled
    before = {k: len(_contents(store, project_id, k)) for k in ("conversation", "test")}
    with pytest.raises(ValidationFailed, match=problem):
        import_text(store, project_id, fmt, text, name)
    assert {k: len(_contents(store, project_id, k)) for k in ("conversation", "test")} == before


def test_unknown_formats_and_kinds_are_usage_errors(filled):
    store, project_id = filled
    with pytest.raises(UsageError, match="one of deepeval, ragas"):
        import_text(store, project_id, "csv", "", "x.csv")
    with pytest.raises(UsageError, match="'tau2' has no place for conversations"):
        check_export("tau2", "conversation")
    with pytest.raises(UsageError, match="Inspect's eval log"):
        check_export("deepeval", "results")


def test_a_run_exports_as_an_inspect_eval_log(filled):
    store, project_id = filled
    outcome = run_target(store, project_id, "demo", judge="offline", keys=["conversation:conv-sample-1"])
    log = json.loads("".join(export_results(store, outcome.run.id)))
    (sample,) = log["samples"]
    assert sample["id"] == "conv-sample-1" and sample["scores"]["evalcore"]["value"] in ("C", "I")
    score = log["results"]["scores"][0]
    assert score["metrics"]["accuracy"]["value"] == (
        1.0 if sample["scores"]["evalcore"]["value"] == "C" else 0.0
    )
    assert sample["metadata"]["evalcore"]["judgments"]


def test_hugging_face_rows_hold_every_turn_as_a_message_and_ours_as_json_text(filled):
    store, project_id = filled
    rows = [json.loads(line) for line in export_format(store, project_id, "hf", "test")]
    tool = next(r for r in rows if r["id"] == "test-tool")
    assert [m["role"] for m in tool["messages"]] == ["user", "assistant", "user", "assistant"]
    call = tool["messages"][-1]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("lookup_order", {"order_id": "1042"})
    ours = json.loads(tool["evalcore"])
    assert (ours["id"], ours["offline"], ours["provenance"]["provider"]) == ("test-tool", False, "openai")
    assert json.loads(next(r for r in rows if r["id"] == "test-reply")["evalcore"])["offline"] is True


def test_the_cli_exports_and_imports_each_format_and_refuses_misuse(filled, tmp_path):
    from import_cases import cli

    store, project_id = filled
    db = store.url
    out = tmp_path / "tests.yaml"
    result = cli("export", "test", "--format", "promptfoo", "-o", str(out), "--db", db)
    assert result.exit_code == 0, result.output
    assert len(yaml.safe_load(out.read_text())) == 2
    other = _fresh(tmp_path, store, project_id)
    result = cli("import", "--format", "promptfoo", str(out), "--db", other.url)
    assert result.exit_code == 0, result.output
    assert "0 conversation(s), 2 test(s) imported from tests.yaml" in result.output
    again = cli("import", "--format", "promptfoo", str(out), "--db", other.url)
    assert again.exit_code == 1 and "tests.yaml:" in again.output and "already in the store" in again.output
    assert cli("export", "test", "--format", "csv", "--db", db).exit_code == 2
    assert cli("export", "results", "--format", "inspect", "--db", db).exit_code == 2  # no --run
    assert cli("export", "test", "--run", "r1", "--db", db).exit_code == 2  # --run without a format
    assert cli("import", "--format", "hf", str(out), "--db", db).exit_code == 2  # written, not read


def test_imported_items_are_played_judged_and_reported_like_ours(filled):
    from evalcore.reports.failures import build_report

    store, project_id = filled
    items = [
        {"id": "faq-1", "input": "How long can I return an e-bike?", "expectedOutput": "Within 14 days."},
        {"id": "faq-2", "input": [{"role": "user", "content": "Do you rent e-bikes?"},
                                  {"role": "assistant", "content": "Yes, from the shop."}]},
    ]  # fmt: skip
    done = import_text(store, project_id, "langfuse", "\n".join(map(json.dumps, items)), "items.jsonl")
    keys = [f"test:{i}" for i in done.result.tests] + [f"conversation:{i}" for i in done.result.conversations]
    outcome = run_target(store, project_id, "demo", judge="offline", keys=keys)
    assert outcome.played == 2 and outcome.crashed == 0
    log = json.loads("".join(export_results(store, outcome.run.id)))
    assert {s["id"] for s in log["samples"]} == {"langfuse-faq-1", "langfuse-faq-2"}
    report = build_report(store, [outcome.run.id])
    assert report.overall["n"] == 2  # the test's expected reply and the conversation's assistant turn


def test_personas_go_to_promptfoos_simulated_user_and_come_back_as_a_note(filled):
    from evalcore.generators.simulation.personas import add_persona
    from evalcore.models import Persona

    store, project_id = filled
    persona = Persona(persona_id="hurried-rider", type="challenging", task="get a refund for a late bike",
                      profile={"name": "Mo", "interaction_style": ["short messages"]})  # fmt: skip
    item_id = add_persona(store, project_id, persona, "ana")
    text = "\n".join(export_format(store, project_id, "promptfoo", "persona"))
    (test,) = yaml.safe_load(text)
    assert "get a refund for a late bike" in test["vars"]["instructions"]
    assert "short messages" in test["vars"]["instructions"]
    assert test["metadata"]["evalcore"] == {
        "kind": "persona",
        "id": item_id,
        "persona": persona.model_dump(mode="json"),
    }
    with pytest.raises(ValidationFailed, match="no promptfoo record"):
        import_text(store, project_id, "promptfoo", text, "personas.yaml")
    with pytest.raises(UsageError, match="'deepeval' has no place for personas"):
        check_export("deepeval", "persona")


def test_an_import_and_its_refusal_on_both_backends(store):
    """On PostgreSQL too (it enforces column lengths where SQLite does not): a good file is written
    whole, and a file with an id longer than the store's column is refused before anything is written."""
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    good = (
        '{"input": "Hours?", "ideal": "9 to 6"}\n'
        '{"input": [{"role": "user", "content": "Hi"}], "ideal": "Hello"}\n'
    )
    done = import_text(store, project_id, "openai-evals", good, "samples.jsonl")
    assert len(done.result.tests) == 2
    ours = {"kind": "test", "id": "x" * 65}
    bad = good.replace('"ideal": "9 to 6"}', '"ideal": "9 to 6", "evalcore": ' + json.dumps(ours) + "}")
    bad = bad.replace("Hours?", "Opening hours?")
    with pytest.raises(
        ValidationFailed, match=r"samples.jsonl:1 \[id\]: too long: 65 characters, at most 64"
    ):
        import_text(store, project_id, "openai-evals", bad, "samples.jsonl")
    assert len(store.list_current(project_id, "test")) == 2
