"""The self-preference guard: a run's judge is never the target's own model when another is configured.

Models prefer their own outputs, so judging a target with its own model inflates its scores. The judge
role's model is used unless it is the target's model; then the first other configured model is taken
(project setting `judge_candidates`, then the models of the other roles). Only when none exists is the
target's model used, and the run records a warning that the page shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalcore.llm.registry import Registry

if TYPE_CHECKING:
    from evalcore.llm.client import ModelClient

_VERSION_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|:latest|@[\w.-]+)$")


@dataclass(frozen=True)
class JudgeChoice:
    """The judge picked for a target, and the warning to show when it is the target's own model."""

    model: str
    target_model: str | None
    warning: str | None = None

    @property
    def self_preference(self) -> bool:
        """True when the judge is the target's own model."""
        return self.warning is not None


def model_family(name: str) -> str:
    """The model part of 'provider/model', lower-cased, without a date or tag suffix."""
    model = name.split("/", 1)[1] if "/" in name else name
    return _VERSION_SUFFIX.sub("", model.strip().lower())


def same_model(a: str, b: str) -> bool:
    """True when two names denote the same model, whatever provider serves it ('gpt-4o' ~ 'openai/gpt-4o')."""
    return model_family(a) == model_family(b)


def choose_judge(registry: Registry, target_model: str | None, judge: str | None = None) -> JudgeChoice:
    """The judge for a target whose model is `target_model` (None or offline: no constraint)."""
    first = registry.choose("judge", judge).model
    if not target_model or not same_model(first, target_model) or _offline(first):
        return JudgeChoice(first, target_model)
    for candidate in registry.configured_models():
        if not same_model(candidate, target_model) and not _offline(candidate):
            return JudgeChoice(candidate, target_model)
    warning = (
        f"self-preference: the judge {first} is the target's own model ({target_model}) because no other "
        "model is configured; its verdicts may favour the target. Configure another judge model in Settings."
    )
    return JudgeChoice(first, target_model, warning)


def guard_judge(client: ModelClient, target_model: str | None, judge: str | None = None) -> JudgeChoice:
    """Choose the judge with the client's settings and record the choice (and any warning) on its run."""
    choice = choose_judge(client.registry, target_model, judge)
    run = client.current_run()
    if run is not None and run.judge != choice.model:
        client.store.set_run_judge(run.id, choice.model)
    if choice.warning:
        client.warn(choice.warning)
    return choice


def _offline(name: str) -> bool:
    return name.startswith("offline/")
