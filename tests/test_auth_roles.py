"""Roles enforced in the library, on SQLite and PostgreSQL: what each role may do at the entry points a
page or the CLI calls, refusals that name the role needed and change nothing but the audit log, nobody
saving as someone else, and the local user (no sign-in) acting as before with every role."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.auth import audit
from evalcore.auth.roles import (
    LOCAL,
    Actor,
    Permission,
    PermissionDenied,
    Role,
    job_permission,
    require,
    require_signed_in_actors,
)
from evalcore.errors import EvalcoreError
from evalcore.inputs import import_project
from evalcore.jobs import request_stop
from evalcore.jobs.queue import enqueue
from evalcore.llm import status
from evalcore.models import Run
from evalcore.review.verdicts import ItemVerdict, adjudicate, save_review
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.store_ops import add_human_spec, review_spec
from evalcore.store import Store
from tests.annotation_data import add_conversations

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
VIEWER = Actor(name="vic", role=Role.viewer)
ANNOTATOR = Actor(name="alice", role=Role.annotator)
ANALYST = Actor(name="ana", role=Role.analyst)
LEAD = Actor(name="lena", role=Role.lead)
ACCEPT = ItemVerdict(label="accept")


@pytest.fixture
def project(store: Store) -> str:
    return import_project(store, SAMPLE).project_id


def without_audit(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: values for name, values in rows.items() if name != "audit_log"}


def refusals(store: Store) -> list[tuple[str, str]]:
    return [(e.actor, e.action) for e in audit.trail(store) if e.outcome == "refused"]


def test_each_role_holds_the_permissions_of_the_roles_below_it():
    granted = {role: {p for p in Permission if Actor(name="x", role=role).may(p)} for role in Role}
    assert granted[Role.viewer] == set()
    assert granted[Role.annotator] == {Permission.annotate}
    assert granted[Role.analyst] == {
        Permission.annotate, Permission.review_specs, Permission.start_generation, Permission.stop_generation
    }  # fmt: skip
    assert granted[Role.lead] == set(Permission) == granted[Role.admin]
    assert job_permission("run") == Permission.start_run
    assert job_permission("simulation", stop=True) == Permission.stop_run
    assert job_permission("specs.generate") == Permission.start_generation


def test_a_refusal_names_the_role_needed_and_the_actors_own():
    with pytest.raises(PermissionDenied) as caught:
        require(ANNOTATOR, Permission.start_run)
    assert str(caught.value) == "starting a run against a target needs the lead role; alice is an annotator"
    assert require(None, Permission.manage_users) == LOCAL, "no actor: the local user, every role"


def test_a_process_serving_signed_in_people_refuses_calls_that_name_no_actor():
    require_signed_in_actors()
    try:
        with pytest.raises(PermissionDenied, match="nobody is signed in"):
            require(None, Permission.annotate)
        assert require(ANNOTATOR, Permission.annotate) == ANNOTATOR
    finally:
        require_signed_in_actors(False)


def test_an_annotator_cannot_start_or_stop_a_paid_run(store: Store, project: str, snapshot):
    run = store.start_run(project, Run(id="run-paid", kind="run", params={"job": "x:y"}), pending=True)
    before = without_audit(snapshot(store))
    for attempt in (
        lambda: enqueue(store, run.id, actor=ANNOTATOR),
        lambda: enqueue(store, run.id, actor=ANALYST),
        lambda: request_stop(store, run.id, "alice", actor=ANNOTATOR),
    ):
        with pytest.raises(PermissionDenied, match="run against a target needs the lead role"):
            attempt()
    assert without_audit(snapshot(store)) == before
    assert refusals(store) == [("alice", "job.stop"), ("ana", "job.start"), ("alice", "job.start")]


def test_an_analyst_starts_generation_an_annotator_does_not(store: Store, project: str):
    run = store.start_run(project, Run(id="run-gen", kind="specs.generate", params={}), pending=True)
    with pytest.raises(PermissionDenied, match="starting a generation job needs the analyst role"):
        enqueue(store, run.id, actor=ANNOTATOR)
    # Allowed: the next check is the job's own (this test run records no job function).
    with pytest.raises(EvalcoreError, match="records no job function"):
        enqueue(store, run.id, actor=ANALYST)
    stopped = request_stop(store, run.id, "typed name", actor=ANALYST)
    assert stopped.stopped_reason == "stopped by ana", "a signed-in actor is who stopped it"
    assert ("ana", "job.stop", "done") in [(e.actor, e.action, e.outcome) for e in audit.trail(store)]


def test_an_annotator_cannot_change_models_budgets_or_import(store: Store, project: str, snapshot):
    before = without_audit(snapshot(store))
    for attempt in (
        lambda: status.set_budget(store, project, usd=5.0, actor=ANNOTATOR),
        lambda: status.set_role_model(store, project, "judge", "offline/x", actor=ANNOTATOR),
        lambda: status.set_llm_options(store, project, concurrency=8, actor=ANALYST),
        lambda: import_project(store, SAMPLE, actor=ANALYST),
    ):
        with pytest.raises(PermissionDenied, match="needs the lead role"):
            attempt()
    assert without_audit(snapshot(store)) == before
    status.set_budget(store, project, usd=5.0, actor=LEAD)
    assert store.project(project).settings["budget"] == {"usd": 5.0}
    assert ("lena", "settings.budget", "done") in [(e.actor, e.action, e.outcome) for e in audit.trail(store)]


def test_nobody_signed_in_saves_as_someone_else(store: Store, project: str, snapshot):
    item = add_conversations(store, project, 1)[0]
    before = without_audit(snapshot(store))
    with pytest.raises(PermissionDenied, match="alice cannot save as bob"):
        save_review(store, item, "bob", 1, item=ACCEPT, actor=ANNOTATOR)
    with pytest.raises(PermissionDenied, match="saving a review needs the annotator role; vic is a viewer"):
        save_review(store, item, "vic", 1, item=ACCEPT, actor=VIEWER)
    with pytest.raises(PermissionDenied, match="adjudicating an item needs the lead role"):
        adjudicate(store, item, "alice", 1, ACCEPT, actor=ANNOTATOR)
    assert without_audit(snapshot(store)) == before

    saved = save_review(store, item, "alice", 1, item=ACCEPT, actor=ANNOTATOR)
    assert [a.author for a in store.annotations(item)] == ["alice"]
    assert saved.version == 2
    # The local user (no sign-in) saves under the typed name, as before sign-in existed.
    save_review(store, item, "bea", 2, item=ACCEPT)
    assert [a.author for a in store.annotations(item)] == ["alice", "bea"]


def test_spec_review_is_an_analysts(store: Store, project: str):
    draft = SpecDraft(scenario="s", given="g", when="w", then="t", category="policy")
    with pytest.raises(PermissionDenied, match="changing a spec needs the analyst role"):
        add_human_spec(store, project, draft, "alice", actor=ANNOTATOR)
    spec_id = add_human_spec(store, project, draft, "", actor=ANALYST)
    assert store.current(spec_id).author == "ana", "an empty name is the signed-in one"
    with pytest.raises(PermissionDenied, match="ana cannot save as lena"):
        review_spec(store, spec_id, "lena", 1, "accepted", actor=ANALYST)
    assert review_spec(store, spec_id, "ana", 1, "accepted", actor=ANALYST) == 2
    trail = audit.trail(store, project_id=project, limit=None)
    assert ("ana", "spec.saved") in [(e.actor, e.action) for e in trail], "versions are in the trail"


def test_assigning_work_naming_leads_and_the_tier_policy_are_a_leads(store: Store, project: str, snapshot):
    from evalcore.items.state import set_policy
    from evalcore.review.assignments import assign_items, set_leads, unassign

    add_conversations(store, project, 2)
    before = without_audit(snapshot(store))
    for attempt in (
        lambda: assign_items(store, project, ["alice"], 1, "alice", actor=ANNOTATOR),
        lambda: unassign(store, project, "bea", actor=ANALYST),
        lambda: set_leads(store, project, ["alice"], actor=ANNOTATOR),
        lambda: set_policy(store, project, required_agreement=1, actor=ANNOTATOR),
    ):
        with pytest.raises(PermissionDenied, match="assigning work, naming leads or setting the tier policy"):
            attempt()
    assert without_audit(snapshot(store)) == before
    assert assign_items(store, project, ["alice"], 1, "lena", actor=LEAD).items == 2
    assert set_leads(store, project, ["lena"], actor=LEAD) == ["lena"]
