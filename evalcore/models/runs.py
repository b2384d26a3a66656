"""Playing tests against a system: targets, runs and judgments."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from evalcore.models.common import Record, now_utc


class TargetKind(StrEnum):
    """How the system under test is reached."""

    openai = "openai"
    anthropic = "anthropic"
    http = "http"
    python = "python"
    demo = "demo"
    agent = "agent"  # the built-in offline procedure agents (evalcore.targets.acting)
    rasa = "rasa"  # a Rasa (or Rasa-compatible) assistant: REST webhook and tracker (reports events)
    http_events = "http_events"  # a JSON endpoint whose response also carries events
    demo_flows = "demo_flows"  # the built-in flow assistant over the project's procedures (reports events)


class Target(Record):
    """A system under test, configured per project. Secrets are named by environment variable only."""

    name: str = Field(description="Name used on the CLI and in reports.")
    kind: TargetKind = Field(
        description="openai, anthropic, http, python, demo, rasa, http_events or demo_flows."
    )
    model: str | None = Field(default=None, description="Model the target runs on, for the judge guard.")
    config: dict[str, Any] = Field(default_factory=dict, description="Base URL, system prompt, template ...")


class RunStatus(StrEnum):
    """Where a run or job stands."""

    pending = "pending"
    running = "running"
    finished = "finished"
    stopped = "stopped"
    failed = "failed"


class Run(Record):
    """One execution of a job: generation, simulation, or tests played against a target."""

    id: str = Field(description="Stable id.")
    kind: str = Field(description="What the job does, e.g. 'specs.generate', 'run'.")
    status: RunStatus = Field(default=RunStatus.pending, description="Where it stands.")
    params: dict[str, Any] = Field(default_factory=dict, description="Parameters it was started with.")
    target: str | None = Field(default=None, description="Target name, for runs against a target.")
    judge: str | None = Field(default=None, description="Judge model, for runs that judge.")
    budget: dict[str, float] = Field(default_factory=dict, description="Limits: 'usd' and/or 'tokens'.")
    stopped_reason: str | None = Field(default=None, description="Why it stopped early, e.g. 'budget'.")
    warnings: list[str] = Field(default_factory=list, description="Things the page must show.")
    code_version: str | None = Field(default=None, description="evalcore version (and git commit).")
    started_at: datetime = Field(default_factory=now_utc, description="When it started.")
    finished_at: datetime | None = Field(default=None, description="When it finished or stopped.")


class Judgment(Record):
    """A verdict on one target reply; an unparseable judge output is unscored (score None), never 0."""

    run_id: str = Field(description="Run it belongs to.")
    conversation_id: str | None = Field(default=None, description="Conversation played.")
    test_id: str | None = Field(default=None, description="Test played.")
    turn_index: int | None = Field(default=None, description="Turn judged.")
    score: float | None = Field(default=None, description="1 pass, 0 fail, None unscored.")
    error_type: str | None = Field(default=None, description="From the fixed list, when it failed.")
    rationale: str = Field(default="", description="Why the judge decided so.")
    reply: str = Field(default="", description="What the target said.")
    judge: str = Field(description="Judge model, or 'offline' or 'assertion'.")
    raw: str | None = Field(default=None, description="Raw judge output, kept when unparseable or repaired.")
    created_at: datetime = Field(default_factory=now_utc, description="When it was judged.")
