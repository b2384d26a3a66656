"""ChatChecker run folders, both ways (seed 002's published runs; issue 18, item 6).

A run folder holds one subfolder per simulated user with its dialogues (`dialogue_<n>.yaml`) and a file
about the user whose name depends on its kind (`persona_info.yaml` for personas, `info.yaml` for testers,
`user_info.yaml` for users replayed from a corpus), and the run's own statistics:
`simulation_run_info.yaml`, `breakdown_detection_stats.yaml` and `evaluation_stats.yaml`. Only the
dialogues are required. Reading validates the whole folder and reports every problem with its file, line
and field (ValidationFailed) before anything is written. Writing produces the same layout, with the
statistics recomputed from the dialogues (evalcore.generators.simulation.stats) and every other field
kept as it was read, so reading what was written gives the same run back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError

from evalcore.errors import Problem, UsageError, ValidationFailed
from evalcore.generators.simulation import stats
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    BreakdownDecision,
    Dialogue,
    DialogueTurn,
    DimensionRating,
    FinishReason,
)
from evalcore.generators.simulation.taxonomy import is_task_oriented
from evalcore.inputs.paths import path_inside
from evalcore.inputs.sources import Located, parse_yaml, read_text, validation_problems
from evalcore.models import Persona, TurnRole
from evalcore.models.common import Record

RUN_INFO = "simulation_run_info.yaml"
BREAKDOWN_STATS = "breakdown_detection_stats.yaml"
EVALUATION_STATS = "evaluation_stats.yaml"
RUN_FILES = (RUN_INFO, BREAKDOWN_STATS, EVALUATION_STATS)
PERSONA_FILE = "persona_info.yaml"
USER_FILES = (PERSONA_FILE, "info.yaml", "user_info.yaml")
DIALOGUE_GLOB = "dialogue_*.yaml"
# Fields of a dialogue file kept as read (ChatChecker's order); export recomputes the statistics in them.
EXTRA_FIELDS = (
    "human_rating_annotations",
    "chat_statistics",
    "simulation_cost_statistics",
    "breakdown_stats",
    "eval_stats",
)
ROLE_IN_FILE = {TurnRole.user: "user", TurnRole.assistant: "dialogue_system"}


class FileTurn(Record):
    """A turn as ChatChecker writes it."""

    turn_id: int = Field(description="Position in the dialogue, counted from 1.")
    role: Literal["user", "dialogue_system"] = Field(description="Who spoke.")
    content: str = Field(description="What was said.")
    breakdown_annotation: BreakdownAnnotation | None = Field(default=None, description="Detector output.")


class FileDialogue(Record):
    """A dialogue file as ChatChecker writes it (its `Dialogue` model)."""

    dialogue_id: str = Field(description="Id of the dialogue.")
    user_name: str = Field(description="The simulated user.")
    chat_history: list[FileTurn] = Field(description="The turns.")
    finish_reason: FinishReason = Field(description="Why it ended.")
    error: str | None = Field(default=None, description="The error that ended it.")
    ratings: dict[str, DimensionRating] | None = Field(default=None, description="Rating per dimension.")
    human_rating_annotations: Any = Field(default=None, description="Human ratings, kept as given.")
    chat_statistics: dict[str, Any] | None = Field(default=None, description="Turn counts and lengths.")
    simulation_cost_statistics: dict[str, Any] | None = Field(default=None, description="Simulation cost.")
    breakdown_stats: dict[str, Any] | None = Field(default=None, description="Breakdown statistics.")
    eval_stats: dict[str, Any] | None = Field(default=None, description="Rating timings and cost.")


@dataclass
class ChatCheckerRun:
    """A run read from (or to be written as) a ChatChecker run folder."""

    run_id: str  # ChatChecker's run id (the folder's name when no file says)
    dialogues: list[Dialogue] = field(default_factory=list)
    personas: dict[str, Persona] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    task_oriented: bool = True
    # The order of the rated dimensions (ChatChecker's from the target's config); kept apart because a
    # PostgreSQL store does not keep the order of a mapping's keys.
    rating_dimensions: list[str] = field(default_factory=list)

    @property
    def chatbot_id(self) -> str | None:
        """The target's id, as the run's files name it."""
        for name in RUN_FILES:
            if isinstance(found := self.files.get(name, {}).get("chatbot_id"), str):
                return found
        return None


def _read_yaml(path: Path, shown: str, problems: list[Problem]) -> Located | None:
    """A YAML mapping from a file (the strict loader of evalcore.inputs), or None after a problem."""
    text = read_text(path, shown, problems)
    located = parse_yaml(text, shown, problems) if text is not None else None
    if located is not None and not isinstance(located.data, dict):
        problems.append(Problem(shown, "expected a mapping of fields", 1))
        return None
    return located


def _dialogue(path: Path, shown: str, folder: str, problems: list[Problem]) -> Dialogue | None:
    located = _read_yaml(path, shown, problems)
    if located is None:
        return None
    try:
        parsed = FileDialogue.model_validate(located.data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located))
        return None
    for i, turn in enumerate(parsed.chat_history):
        if turn.turn_id != i + 1:  # statistics count turn ids from 1 by position (first breakdown)
            problems.append(
                Problem(
                    shown,
                    f"turn_id {turn.turn_id} where {i + 1} was expected (turns are numbered from 1 in order)",
                    located.line_of(("chat_history", i, "turn_id")),
                    f"chat_history[{i}].turn_id",
                )
            )
            return None
    turns = [
        DialogueTurn(
            role=TurnRole.user if t.role == "user" else TurnRole.assistant,
            content=t.content,
            breakdown=t.breakdown_annotation,
        )
        for t in parsed.chat_history
    ]
    return Dialogue(
        dialogue_id=parsed.dialogue_id,
        user_name=folder,
        file=path.name,
        turns=turns,
        finish_reason=parsed.finish_reason,
        error=parsed.error,
        ratings=parsed.ratings,
        extra=parsed.model_dump(mode="json", include=set(EXTRA_FIELDS)) | {"user_name": parsed.user_name},
    )


def _persona(path: Path, shown: str, problems: list[Problem]) -> Persona | None:
    located = _read_yaml(path, shown, problems)
    if located is None:
        return None
    if not isinstance(located.data.get("persona"), dict):
        problems.append(
            Problem(shown, "expected a `persona` mapping", located.line_of(("persona",)), "persona")
        )
        return None
    try:
        return Persona.model_validate(located.data["persona"])
    except ValidationError as exc:
        problems.extend(validation_problems(exc, shown, located, ("persona",)))
        return None


def _inside(path: Path, root: Path, shown: str, problems: list[Problem]) -> bool:
    if path.resolve().is_relative_to(root):
        return True
    problems.append(Problem(shown, "a link to a file outside the run folder; refused"))
    return False


def _task_oriented(files: dict[str, dict[str, Any]], dialogues: list[Dialogue]) -> bool:
    """From the run info's chatbot type; without it, from the breakdown keys ChatChecker counted per
    dialogue (only task-oriented runs count `redundancy`); task-oriented when nothing says."""
    info = files.get(RUN_INFO, {}).get("chatbot_info")
    if isinstance(info, dict) and isinstance(info.get("type"), str):
        return is_task_oriented(info["type"])
    for dialogue in dialogues:
        counted = (dialogue.extra.get("breakdown_stats") or {}).get("counts_per_breakdown_type")
        if isinstance(counted, dict) and counted:
            return "redundancy" in counted
    return True


def _user_folder(
    sub: Path, root: Path, label: str, problems: list[Problem]
) -> tuple[list[Dialogue], Persona | None]:
    """A simulated user's dialogues, and its persona when its user file is a persona's."""
    found = [
        d
        for path in sorted(sub.glob(DIALOGUE_GLOB))
        if _inside(path, root, shown := f"{label}/{path.name}", problems)
        and (d := _dialogue(path, shown, sub.name, problems)) is not None
    ]
    user_file = next((sub / n for n in USER_FILES if (sub / n).is_file()), None)
    if user_file is None or not _inside(user_file, root, shown := f"{label}/{user_file.name}", problems):
        return found, None
    if user_file.name == PERSONA_FILE:
        return found, _persona(user_file, shown, problems)
    if (located := _read_yaml(user_file, shown, problems)) is not None:
        for d in found:  # a tester's or a corpus user's file: kept as read, written back on export
            d.user_file = {"name": user_file.name, "content": located.data}
    return found, None


def read_run(folder: Path) -> ChatCheckerRun:
    """Read and validate a whole ChatChecker run folder; ValidationFailed lists every problem."""
    root = folder.resolve()
    label = folder.name or str(folder)
    if not root.is_dir():
        raise ValidationFailed([Problem(str(folder), "no such folder")], f"ChatChecker run {label}")
    problems: list[Problem] = []
    files: dict[str, dict[str, Any]] = {}
    for name in RUN_FILES:
        path = root / name
        if path.is_file() and _inside(path, root, f"{label}/{name}", problems):
            located = _read_yaml(path, f"{label}/{name}", problems)
            if located is not None:
                files[name] = located.data
    dialogues: list[Dialogue] = []
    personas: dict[str, Persona] = {}
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found, persona = _user_folder(sub, root, f"{label}/{sub.name}", problems)
        dialogues += found
        if persona is not None:
            personas[sub.name] = persona
    seen: dict[str, str] = {}
    for d in dialogues:
        shown = f"{label}/{d.user_name}/{d.file}"
        if d.dialogue_id in seen:
            problems.append(
                Problem(shown, f"dialogue_id '{d.dialogue_id}' is also used by {seen[d.dialogue_id]}", 1)
            )
        seen.setdefault(d.dialogue_id, shown)
    if not dialogues and not problems:
        problems.append(
            Problem(label, f"no dialogue ({DIALOGUE_GLOB}) in any subfolder: not a ChatChecker run")
        )
    if problems:
        raise ValidationFailed(problems, f"ChatChecker run {label}")
    run_info = files.get(RUN_INFO, {})
    run_id = next((v for k in ("run_id", "run_id:") if isinstance(v := run_info.get(k), str)), label)
    breakdown = files.get(BREAKDOWN_STATS)
    if breakdown is not None:  # its excerpts repeat dialogue turns: recomputed on export, not stored twice
        files[BREAKDOWN_STATS] = {k: v for k, v in breakdown.items() if k != "breakdown_excerpts"}
    rated = files.get(EVALUATION_STATS, {}).get("stats", {})
    rated = rated.get("rating_stats") if isinstance(rated, dict) else None
    dimensions = list(rated) if isinstance(rated, dict) else stats.rating_dimensions(dialogues)
    return ChatCheckerRun(run_id, dialogues, personas, files, _task_oriented(files, dialogues), dimensions)


def read_dialogue_file(path: Path) -> Dialogue:
    """One ChatChecker dialogue file on its own (as the release's `example_dialogue.yaml`), its user named
    by the file's `user_name`; ValidationFailed lists every problem."""
    problems: list[Problem] = []
    dialogue = _dialogue(path, path.name, "", problems)
    if dialogue is None or problems:
        raise ValidationFailed(problems or [Problem(path.name, "not a dialogue")], "ChatChecker dialogue")
    return dialogue.model_copy(update={"user_name": dialogue.extra.get("user_name") or path.stem})


# ------------------------------------------------------------------------------------------------ writing


def file_turn(dialogue: Dialogue, index: int) -> dict[str, Any]:
    """A turn as ChatChecker writes it."""
    turn = dialogue.turns[index]
    return {
        "turn_id": index + 1,
        "role": ROLE_IN_FILE[turn.role],
        "content": turn.content,
        "breakdown_annotation": turn.breakdown.model_dump(mode="json") if turn.breakdown else None,
    }


def _timed(kept: Any, computed: dict[str, Any]) -> dict[str, Any]:
    """Computed statistics over those kept from the file (timings and costs stay, in their place)."""
    return {**kept, **computed} if isinstance(kept, dict) else computed


def _in_order(ratings: dict[str, Any], dimensions: list[str]) -> dict[str, Any]:
    order = {dim: i for i, dim in enumerate(dimensions)}
    return dict(sorted(ratings.items(), key=lambda item: order.get(item[0], len(order))))


def dialogue_file(dialogue: Dialogue, task_oriented: bool, dimensions: list[str]) -> dict[str, Any]:
    """A dialogue file's content, in ChatChecker's field order (ratings in the run's dimension order)."""
    extra = dialogue.extra
    annotated = any(t.breakdown is not None for t in dialogue.turns)
    breakdowns = stats.dialogue_breakdown_stats(dialogue, task_oriented)
    return {
        "dialogue_id": dialogue.dialogue_id,
        "user_name": extra.get("user_name", dialogue.user_name),
        "chat_history": [file_turn(dialogue, i) for i in range(len(dialogue.turns))],
        "finish_reason": dialogue.finish_reason.value,
        "error": dialogue.error,
        "ratings": _in_order({k: v.model_dump(mode="json") for k, v in dialogue.ratings.items()}, dimensions)
        if dialogue.ratings is not None
        else None,
        "human_rating_annotations": extra.get("human_rating_annotations"),
        "chat_statistics": _timed(extra.get("chat_statistics"), stats.chat_statistics(dialogue)),
        "simulation_cost_statistics": extra.get("simulation_cost_statistics"),
        "breakdown_stats": _timed(extra.get("breakdown_stats"), breakdowns)
        if annotated or extra.get("breakdown_stats") is not None
        else None,
        "eval_stats": extra.get("eval_stats"),
    }


def _breakdown_excerpts(dialogues: list[Dialogue]) -> list[dict[str, Any]]:
    out = []
    for d in dialogues:
        for i, turn in enumerate(d.turns):
            if turn.breakdown is not None and turn.breakdown.decision == BreakdownDecision.breakdown:
                previous = file_turn(d, i - 1) if i > 0 else None
                out.append(
                    {
                        "dialogue_id": d.dialogue_id,
                        "previous_turn": previous,
                        "breakdown_turn": file_turn(d, i),
                    }
                )
    return out


def run_files(run: ChatCheckerRun) -> dict[str, dict[str, Any]]:
    """The three run files, statistics recomputed, other fields as read (a file nobody made is left out:
    breakdown statistics without annotations, evaluation statistics without ratings)."""
    dialogues = sorted(run.dialogues, key=Dialogue.sort_key)
    files = {name: dict(content) for name, content in run.files.items()}
    base = {"chatbot_id": run.chatbot_id, "run_id": run.run_id}
    files[RUN_INFO] = {
        **(files.get(RUN_INFO) or base),
        "chat_statistics": stats.run_chat_statistics(dialogues),
    }
    if BREAKDOWN_STATS in files or any(t.breakdown for d in dialogues for t in d.turns):
        kept = files.get(BREAKDOWN_STATS) or base
        computed = stats.run_breakdown_stats(dialogues, run.task_oriented)
        files[BREAKDOWN_STATS] = {
            **kept,
            "stats": _timed(kept.get("stats"), computed),
            "breakdown_excerpts": _breakdown_excerpts(dialogues),
        }
    if EVALUATION_STATS in files or any(d.ratings for d in dialogues):
        kept = files.get(EVALUATION_STATS) or base
        chat = files[RUN_INFO]["chat_statistics"]
        computed = {
            "n_analyzed_dialogues": len(dialogues),
            "user_turn_mtld": chat.get("user_turn_mtld"),
            "chatbot_turn_mtld": chat.get("chatbot_turn_mtld"),
            "rating_stats": stats.rating_stats(dialogues, run.rating_dimensions or None),
        }
        files[EVALUATION_STATS] = {**kept, "stats": _timed(kept.get("stats"), computed)}
    return files


def _dump(content: dict[str, Any], path: Path) -> None:
    # ChatChecker's own settings, so an exported file reads like one it wrote.
    with path.open("w", encoding="utf-8") as handle:
        yaml.safe_dump(content, handle, indent=4, sort_keys=False, allow_unicode=True)


def write_run(run: ChatCheckerRun, out: Path) -> list[Path]:
    """Write the run as a ChatChecker run folder at `out` (new, or an empty folder); all or nothing.

    The files are written in a temporary folder beside `out`, which is then renamed into place.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} already exists and is not an empty folder: choose a new --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for dialogue in run.dialogues:
            folder = path_inside(staging, dialogue.user_name, "user name")  # ids from a store or an import
            folder.mkdir(exist_ok=True)
            dialogue_path = path_inside(folder, dialogue.file, "dialogue file")
            _dump(dialogue_file(dialogue, run.task_oriented, run.rating_dimensions), dialogue_path)
            if dialogue.user_name in run.personas:
                persona = run.personas[dialogue.user_name].model_dump(mode="json", exclude={"provenance"})
                _dump({"run_id": run.run_id, "persona": persona}, folder / PERSONA_FILE)
            elif dialogue.user_file is not None:
                user_path = path_inside(folder, dialogue.user_file["name"], "user file")
                _dump(dialogue.user_file["content"], user_path)
        for name, content in run_files(run).items():
            _dump(content, staging / name)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(p for p in out.rglob("*") if p.is_file())
