"""Specs in the store: generation offline, review as versions, stale saves refused, selection, import."""

import pytest

from evalcore.errors import EvalcoreError, StaleVersionError, ValidationFailed
from evalcore.inputs import import_project
from evalcore.models import SpecStatus
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.generation import generate_specs
from evalcore.specs.selecting import load_candidates, metrics_by_k, select_specs
from evalcore.specs.store_ops import (
    add_human_spec,
    current_selection,
    edit_spec,
    get_spec,
    list_specs,
    lock_spec,
    review_spec,
    version_diffs,
)
from evalcore.specs.transfer import export_specs, import_specs

PROJECT = "ridgeline_support"


@pytest.fixture
def project(store):
    import_project(store, "data/sample")
    return store


def test_offline_generation_is_grounded_varied_and_marked(project):
    outcome = generate_specs(project, PROJECT, m=40, seed=3)
    views = list_specs(project, PROJECT)
    assert outcome.added == len(views) >= 30
    assert outcome.run.status.value == "finished"
    documents = {d.id for d in project.documents(PROJECT)}
    assert all(set(v.spec.documents) <= documents for v in views)
    # a spec from the documents cites them; one citing none keeps only documents relevant to it, maybe none
    assert all(v.spec.documents for v in views if v.spec.category in ("policy", "product information"))
    assert len({v.spec.category for v in views}) >= 5
    assert len({v.spec.scenario for v in views}) == len(views)
    tasks = {"generate_spec", "specs_from_card"}  # one spec per call by default, as in the seed
    assert all(v.spec.provenance.is_offline and v.spec.provenance.task in tasks for v in views)


def test_generation_is_deterministic_per_seed(tmp_path):
    from evalcore.store import Store

    titles = []
    for name in ("a", "b"):
        store = Store(f"sqlite:///{tmp_path / name}.db")
        import_project(store, "data/sample")
        generate_specs(store, PROJECT, m=20, seed=7)
        titles.append(sorted(v.spec.scenario for v in list_specs(store, PROJECT)))
    assert titles[0] == titles[1]


def test_a_stopped_generation_resumes_without_redoing_finished_units(project, monkeypatch):
    import evalcore.specs.generation as generation

    real = generation.add_specs
    calls = {"n": 0}

    def crash_on_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(generation, "add_specs", crash_on_third)
    with pytest.raises(RuntimeError):
        generate_specs(project, PROJECT, m=25, batch=5)
    run = generation.latest_generation(project, PROJECT)
    done_before = set(project.finished_units(run.id))
    assert len(done_before) == 2  # the card unit and the first batch
    kept = len(list_specs(project, PROJECT))
    monkeypatch.setattr(generation, "add_specs", real)
    outcome = generate_specs(project, PROJECT, run_id=run.id)
    assert outcome.skipped == 2
    assert outcome.run.status.value == "finished"
    assert len(project.finished_units(run.id)) == 4  # 14 specs from the card, then 11 in 3 batches
    assert len(list_specs(project, PROJECT)) == kept + outcome.added


def test_review_edits_are_versions_and_a_stale_save_is_refused(project):
    spec_id = add_human_spec(
        project,
        PROJECT,
        SpecDraft(scenario="Late rental", given="g", when="w", then="t", category="policy"),
        "ana",
    )
    assert get_spec(project, PROJECT, spec_id).version == 1
    assert edit_spec(project, spec_id, "ana", 1, then="the assistant should quote the late fee") == 2
    with pytest.raises(StaleVersionError) as err:
        edit_spec(project, spec_id, "ben", 1, then="something else")
    assert "Late rental" in str(err.value) and "ana" in str(err.value)
    assert review_spec(project, spec_id, "ben", 2, SpecStatus.accepted) == 3
    with pytest.raises(EvalcoreError, match="reason"):
        review_spec(project, spec_id, "ben", 3, SpecStatus.rejected, "  ")
    assert lock_spec(project, spec_id, "ana", 3) == 4
    view = get_spec(project, PROJECT, spec_id)
    assert view.spec.locked and view.spec.status == SpecStatus.accepted
    assert view.spec.then == "the assistant should quote the late fee"
    diffs = version_diffs(project, spec_id)
    assert [rev.author for rev, _ in diffs] == ["ana", "ana", "ben", "ana"]
    assert "+Then the assistant should quote the late fee" in diffs[1][1]


def test_selection_keeps_locked_and_human_specs_and_skips_rejected(project):
    generate_specs(project, PROJECT, m=40)
    views = list_specs(project, PROJECT)
    locked = views[5].spec.id
    rejected = views[6].spec.id
    lock_spec(project, locked, "ana", 1)
    review_spec(project, rejected, "ana", 1, SpecStatus.rejected, "duplicate")
    human = add_human_spec(project, PROJECT, SpecDraft(scenario="Human", given="g", when="w", then="t",
                                                        category="policy"), "ana")  # fmt: skip
    outcome = select_specs(project, PROJECT, k=10)
    assert outcome.selected[:2] == [locked, human]
    assert rejected not in outcome.selected
    assert len(outcome.selected) == 10
    assert current_selection(project, PROJECT) == outcome.selected
    assert sum(v.spec.selected for v in list_specs(project, PROJECT)) == 10
    assert outcome.metrics.coverage >= 10


def test_greedy_beats_random_on_the_sample_candidates(project):
    generate_specs(project, PROJECT, m=120)
    points = {(p.method, p.k): p for p in metrics_by_k(load_candidates(project, PROJECT), [10, 20])}
    for k in (10, 20):
        assert points[("greedy", k)].spwd > points[("random", k)].spwd
        assert points[("greedy", k)].coverage >= points[("random", k)].coverage


def test_export_and_import_specs(project):
    generate_specs(project, PROJECT, m=10)
    select_specs(project, PROJECT, k=4)
    yaml_text = export_specs(project, PROJECT, "yaml", selected_only=True)
    assert yaml_text.count("- id:") == 4
    feature = export_specs(project, PROJECT, "gherkin")
    assert feature.count("Scenario:") == len(list_specs(project, PROJECT))

    new = (
        "- scenario: Asking for the Alder Creek phone\n  given: a customer\n  when: asks\n  then: gives it\n"
    )
    result = import_specs(project, PROJECT, new, "mine.yaml", "ana")
    assert len(result.added) == 1
    added = get_spec(project, PROJECT, result.added[0])
    assert added.spec.provenance.is_human and added.saved_by == "ana"


def test_a_bad_spec_file_changes_nothing(project, snapshot):
    before = snapshot(project)
    bad = "- scenario: a\n  given: b\n  when: c\n  then: d\n  documents: [no-such-doc]\n"
    with pytest.raises(ValidationFailed, match="no-such-doc"):
        import_specs(project, PROJECT, bad, "bad.yaml", "ana")
    assert snapshot(project) == before


def test_the_kernel_width_is_set_from_the_command_line_or_found_from_the_candidates(project):
    from typer.testing import CliRunner

    from evalcore.cli.main import app
    from evalcore.specs.selection import median_heuristic_gamma

    generate_specs(project, PROJECT, m=20, seed=1)
    db = ["--db", project.url]
    given = CliRunner().invoke(app, ["specs", "select", "-k", "5", "--gamma", "2.5", *db])
    assert given.exit_code == 0, given.output
    assert given.output.strip().endswith("gamma 2.5")
    auto = CliRunner().invoke(app, ["specs", "select", "-k", "5", *db])
    found = median_heuristic_gamma(load_candidates(project, PROJECT).embeddings)
    assert auto.output.strip().endswith(f"gamma {found:.4g}")
    refused = CliRunner().invoke(app, ["specs", "select", "--gamma", "-1", *db])
    assert refused.exit_code == 2


def test_status_counts_match_the_listed_specs_after_reviews_and_edits(project):
    from collections import Counter

    from evalcore.specs.store_ops import spec_status_counts

    generate_specs(project, PROJECT, m=12, seed=5)
    views = list_specs(project, PROJECT)
    review_spec(project, views[0].spec.id, "ana", views[0].version, SpecStatus.accepted)
    review_spec(project, views[1].spec.id, "ana", views[1].version, SpecStatus.rejected, "off topic")
    view = get_spec(project, PROJECT, views[1].spec.id)
    edit_spec(project, view.spec.id, "bo", view.version, scenario="Reworded after the rejection")
    counts = spec_status_counts(project, PROJECT)
    assert counts == Counter(v.spec.status.value for v in list_specs(project, PROJECT))
    assert counts["accepted"] == 1 and counts["rejected"] == 1 and sum(counts.values()) == len(views)
