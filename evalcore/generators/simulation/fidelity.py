"""Simulator fidelity (issue 31, item 2 of the issue): how far the simulated users of a run are from the
personas they were given, per persona and per run, and how simulated users compare with other users
(an imported ChatChecker run's, people's in imported conversations) on the same statistics.

Per persona, over the user turns of its dialogues:
- type: the share of turns that behave as a challenging user does (impatient, rude, vague, contradicting,
  questioning: the signs user_faults reads); a standard persona should stay below `STANDARD_MAX`, a
  challenging one reach `CHALLENGING_MIN`; an adversarial one is read by its probes instead
  (adversarial.is_probe), of which it should make `ADVERSARIAL_MIN` or more (its pushy share is shown);
- OCEAN traits: each trait the persona was given, against the level its words show, by one observable
  sign per trait (seed 002 gives the traits to the simulator, not a way to read them back; these signs
  are ours): openness by the share of turns asking something, conscientiousness by goal coverage,
  extraversion by words per turn and exclamations, agreeableness by polite against hostile words,
  neuroticism by words of worry or upset; a level is low, medium or high by the thresholds below;
- turn length: the median user turn in words against the card's typical user turn length, and the turns
  longer than the card's maximum (seed 002 only tells the simulator to stay below it: such a turn is
  kept as written, and counted here);
- vocabulary: MTLD of the user's turns (ChatChecker's measure; short texts give unstable values);
- goal coverage: the share of the persona task's content words the user said at least once.
`distance` is the share of those checks the persona misses (0 = plays its persona, 1 = misses all).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalcore.generators.simulation import stats
from evalcore.generators.simulation.adversarial import is_probe
from evalcore.generators.simulation.chatchecker import RUN_INFO
from evalcore.generators.simulation.personas import OCEAN, persona_name
from evalcore.generators.simulation.records import Dialogue
from evalcore.generators.simulation.simulator import words_in
from evalcore.generators.simulation.store_ops import SimulationRun, load_simulation_run
from evalcore.generators.simulation.user_faults import content_words
from evalcore.models import Persona, TurnRole
from evalcore.store import Store

LEVELS = ("low", "medium", "high")
STANDARD_MAX = 0.3  # a standard user may push back now and then
CHALLENGING_MIN = 0.3  # a challenging user shows it in about one turn of three or more
# An adversarial user opens with its cover question and answers the bot now and then: a probe in one turn
# of five or more is playing the part (the offline user probes in about half of its later turns).
ADVERSARIAL_MIN = 0.2
# A median turn within this factor of the card's typical length is as long as the card says users write.
LENGTH_FACTOR = 2.0
# A user who said fewer than a fifth of its task's words did not pursue it; the words, not their meaning,
# are compared, so a user who says "land my first job" for "seek guidance on career goals" says few.
GOAL_MIN = 0.2
# (low below, high from) per trait, on the sign named in the module docstring.
THRESHOLDS = {
    "openness": (0.15, 0.5),
    "conscientiousness": (0.3, 0.7),
    "extraversion": (6.0, 15.0),
    "agreeableness": (0.0, 0.3),
    "neuroticism": (0.05, 0.25),
}
_CHALLENGING = re.compile(
    r"!!|\?\?|\b(?:hurry|quick(?:ly)?|faster|seriously|whatever|ugh|useless|annoying|again|wrong"
    r"|changed? my mind|huh|what\?|i already|not what i)\b|\b(?-i:[A-Z]{3,})\b",
    re.IGNORECASE,
)
_POLITE = re.compile(r"\b(?:please|thanks?|thank you|sorry|appreciate|great|perfect|lovely|kind)\b", re.I)
_HOSTILE = re.compile(
    r"\b(?:useless|stupid|ridiculous|annoying|whatever|ugh|seriously|terrible|awful)\b", re.I
)
_WORRY = re.compile(
    r"\b(?:worr(?:y|ied)|anxious|nervous|stress(?:ed)?|frustrat\w*|upset|afraid|scared|unsure|confus\w*"
    r"|overwhelm\w*|panic\w*|ugh)\b",
    re.IGNORECASE,
)


@dataclass
class PersonaFidelity:
    """How one persona was played."""

    persona_id: str
    name: str
    type: str
    dialogues: int
    user_turns: int
    challenging_share: float
    type_kept: bool
    traits: dict[str, tuple[str, str]] = field(default_factory=dict)  # trait -> (given, shown)
    median_turn_words: float | None = None
    typical_turn_words: int | None = None
    length_kept: bool | None = None
    max_turn_words: int | None = None  # the card's longest user turn, when it gives one
    over_max_turns: int | None = None  # user turns longer than that (None without a maximum)
    mtld: float = 0.0
    goal_coverage: float = 0.0
    probe_share: float = 0.0  # turns probing the bot's safety (adversarial.is_probe), of any persona

    @property
    def traits_kept(self) -> int:
        """Traits whose shown level is the given one."""
        return sum(given == shown for given, shown in self.traits.values())

    @property
    def distance(self) -> float:
        """Share of the checks (type, each trait, length when the card gives one, goal) missed."""
        checks = [self.type_kept, self.goal_coverage >= GOAL_MIN]
        checks += [given == shown for given, shown in self.traits.values()]
        if self.length_kept is not None:
            checks.append(self.length_kept)
        return sum(not c for c in checks) / len(checks)


def _level(trait: str, value: float) -> str:
    low, high = THRESHOLDS[trait]
    return "low" if value < low else "high" if value >= high else "medium"


def _share(texts: Sequence[str], pattern: re.Pattern[str]) -> float:
    return sum(bool(pattern.search(t)) for t in texts) / len(texts) if texts else 0.0


def goal_coverage(task: str, texts: Sequence[str]) -> float:
    """Share of the task's content words the user said at least once (1 for a task with none)."""
    wanted = content_words(task)
    said = content_words(" ".join(texts))
    return len(wanted & said) / len(wanted) if wanted else 1.0


def shown_traits(texts: Sequence[str], coverage: float) -> dict[str, str]:
    """The level of each OCEAN trait the user's turns show, by the signs of the module docstring."""
    words = statistics.median(stats.word_length(t) for t in texts) if texts else 0.0
    exclaiming = _share(texts, re.compile("!"))
    signs = {
        "openness": _share(texts, re.compile(r"\?")),
        "conscientiousness": coverage,
        "extraversion": words * (1 + exclaiming),
        "agreeableness": _share(texts, _POLITE) - _share(texts, _HOSTILE),
        "neuroticism": _share(texts, _WORRY),
    }
    return {trait: _level(trait, value) for trait, value in signs.items()}


def persona_fidelity(
    persona: Persona, dialogues: Sequence[Dialogue], typical: int | None, longest: int | None = None
) -> PersonaFidelity:
    """How the dialogues' simulated user played `persona` (`typical` and `longest`: the card's user turn
    lengths in words)."""
    texts = [t.content for d in dialogues for t in d.turns if t.role == TurnRole.user and t.content.strip()]
    challenging = _share(texts, _CHALLENGING)
    kept = challenging >= CHALLENGING_MIN if persona.type != "standard" else challenging <= STANDARD_MAX
    probing = sum(map(is_probe, texts)) / len(texts) if texts else 0.0
    if persona.type == "adversarial":
        kept = bool(texts) and probing >= ADVERSARIAL_MIN
    coverage = goal_coverage(persona.task, texts)
    given = persona.profile.personality if not isinstance(persona.profile, str) else {}
    shown = shown_traits(texts, coverage)
    median = float(statistics.median(stats.word_length(t) for t in texts)) if texts else None
    length_kept = None
    if typical and median is not None:
        length_kept = typical / LENGTH_FACTOR <= median <= typical * LENGTH_FACTOR
    return PersonaFidelity(
        persona_id=persona.persona_id,
        name=persona_name(persona),
        type=persona.type,
        dialogues=len(dialogues),
        user_turns=len(texts),
        challenging_share=challenging,
        type_kept=kept,
        traits={t: (given[t], shown[t]) for t in OCEAN if t in given},
        median_turn_words=median,
        typical_turn_words=typical,
        length_kept=length_kept,
        max_turn_words=longest,
        over_max_turns=sum(stats.word_length(t) > longest for t in texts) if longest else None,
        mtld=stats.mtld(texts) if texts else 0.0,
        goal_coverage=coverage,
        probe_share=probing,
    )


def run_fidelity(
    dialogues: Sequence[Dialogue],
    personas: dict[str, Persona],
    typical: int | None,
    longest: int | None = None,
) -> list[PersonaFidelity]:
    """One row per persona that played in the run (dialogues grouped by their user)."""
    by_user: dict[str, list[Dialogue]] = {}
    for dialogue in dialogues:
        by_user.setdefault(dialogue.user_name, []).append(dialogue)
    return [
        persona_fidelity(personas[user], found, typical, longest)
        for user, found in by_user.items()
        if user in personas
    ]


def run_summary(rows: Sequence[PersonaFidelity]) -> dict[str, float | int | None]:
    """The run's figures: mean distance, shares of personas keeping type and length, traits kept, goal."""
    if not rows:
        return {}
    lengths = [r.length_kept for r in rows if r.length_kept is not None]
    traits = sum(len(r.traits) for r in rows)
    over = [r.over_max_turns for r in rows if r.over_max_turns is not None]
    return {
        "personas": len(rows),
        "mean_distance": statistics.fmean(r.distance for r in rows),
        "type_kept": sum(r.type_kept for r in rows) / len(rows),
        "traits_kept": sum(r.traits_kept for r in rows) / traits if traits else None,
        "length_kept": sum(lengths) / len(lengths) if lengths else None,
        "goal_coverage": statistics.fmean(r.goal_coverage for r in rows),
        "over_max_turns": sum(over) if over else None,
    }


def user_side(dialogues: Sequence[Dialogue]) -> dict[str, float | int | None]:
    """The users of some dialogues on the statistics simulated and human users share: MTLD, mean and
    median turn length, questions per turn, and breakdowns per user turn (target turns with a breakdown
    verdict right after a user turn; None when no target turn has a verdict)."""
    texts = [t.content for d in dialogues for t in d.turns if t.role == TurnRole.user]
    judged = broken = 0
    for dialogue in dialogues:
        for before, turn in zip(dialogue.turns, dialogue.turns[1:], strict=False):
            if before.role == TurnRole.user and turn.breakdown is not None:
                judged += 1
                broken += turn.breakdown.decision == "breakdown"
    lengths = [stats.word_length(t) for t in texts]
    return {
        "dialogues": len(dialogues),
        "user turns": len(texts),
        "MTLD": stats.mtld(texts) if texts else None,
        "mean turn length": statistics.fmean(lengths) if lengths else None,
        "median turn length": float(statistics.median(lengths)) if lengths else None,
        "questions per turn": _share(texts, re.compile(r"\?")) if texts else None,
        "breakdowns per user turn": broken / judged if judged else None,
    }


def typical_words(sim: SimulationRun, which: str = "typical_user_turn_length") -> int | None:
    """The typical user turn length the run's users were given (`which`: or max_user_turn_length, the
    longest): its card's limits (simulated here) or its run file's (imported from ChatChecker)."""
    params = sim.run.params
    given = (params.get("limits") or {}).get(which)
    given = given or (params.get("files") or {}).get(RUN_INFO, {}).get(which)
    return words_in(given if isinstance(given, str) else None)


def fidelity_of(store: Store, run_id: str) -> tuple[list[PersonaFidelity], dict[str, float | int | None]]:
    """A simulation run's rows per persona and its summary."""
    sim = load_simulation_run(store, run_id)
    longest = typical_words(sim, "max_user_turn_length")
    rows = run_fidelity(sim.dialogues, sim.personas, typical_words(sim), longest)
    return rows, run_summary(rows)
