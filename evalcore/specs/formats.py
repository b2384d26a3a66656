"""Specs as YAML and as Gherkin `.feature` text, both ways; imports report file:line for every problem."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import ConfigDict, ValidationError

from evalcore.errors import Problem, ValidationFailed
from evalcore.inputs.sources import parse_yaml, validation_problems
from evalcore.models import Spec
from evalcore.specs.drafts import SpecDraft


class SpecImport(SpecDraft):
    """A spec read from a file: a draft, plus the id of the stored spec it updates, if any."""

    model_config = ConfigDict(extra="forbid")  # a misspelt field in a file is an error, not ignored

    id: str | None = None
    category: str = "general"


def _producer(spec: Spec) -> str:
    """Who or what wrote a spec, as its export says it (the offline provider is not passed off as a model);
    on one line, so a name cannot end the comment it is written in."""
    p = spec.provenance
    if p.is_offline:
        return "the offline provider (no model)"
    return " ".join((p.producer if p.is_human else f"{p.producer} ({p.provider})").split())


def provenance_header(specs: Sequence[Spec], project: str) -> list[str]:
    """Comment lines opening a spec export (YAML and Gherkin alike ignore them on import): the project,
    how many specs each producer wrote, and whether any were produced offline (DESIGN: exports carry what
    produced them, and offline output is marked as such)."""
    counts = Counter(_producer(s) for s in specs)
    offline = sum(1 for s in specs if s.provenance.is_offline)
    return [
        f"# evalcore spec export · project {project} · {len(specs)} spec(s)",
        "# produced by: " + ("; ".join(f"{who}: {n}" for who, n in counts.most_common()) or "nobody"),
        f"# offline: {'yes' if offline else 'no'}"
        + (f" ({offline} of {len(specs)} produced by the offline provider, not a model)" if offline else ""),
    ]


def to_yaml(specs: Sequence[Spec], header: Sequence[str] = ()) -> str:
    """Specs as a YAML list, in the order given, after the `header` comment lines."""
    rows = [
        {
            "id": s.id,
            "scenario": s.scenario,
            "given": s.given,
            "when": s.when,
            "then": s.then,
            "category": s.category,
            "documents": list(s.documents),
        }
        for s in specs
    ]
    body = yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=100)
    return "".join(line + "\n" for line in header) + body


def from_yaml(text: str, file: str) -> list[SpecImport]:
    """Specs from a YAML list; raise ValidationFailed naming file, line and field of every problem."""
    problems: list[Problem] = []
    located = parse_yaml(text, file, problems)
    if located is None:
        raise ValidationFailed(problems, file)
    if not isinstance(located.data, list):
        raise ValidationFailed([Problem(file, "expected a list of specs", 1)], file)
    specs = []
    for i, entry in enumerate(located.data):
        if not isinstance(entry, dict):
            problems.append(Problem(file, "each spec must be a mapping", located.line_of((i,)), f"[{i}]"))
            continue
        try:
            specs.append(SpecImport.model_validate(entry))
        except ValidationError as exc:
            problems.extend(validation_problems(exc, file, located, prefix=(i,)))
    if problems:
        raise ValidationFailed(problems, file)
    return specs


def _tag(text: str) -> str:
    return re.sub(r"\s+", "_", text.strip())


def to_gherkin(specs: Sequence[Spec], feature: str, header: Sequence[str] = ()) -> str:
    """Specs as a Gherkin feature after the `header` comment lines: tags carry the category and documents,
    comments the id and who produced the spec."""
    lines = [*header, f"Feature: {feature}", ""]
    for s in specs:
        tags = [f"@category:{_tag(s.category)}", *(f"@doc:{d}" for d in s.documents)]
        lines += [
            f"  # id: {s.id}",
            f"  # produced by: {_producer(s)}",
            f"  {' '.join(tags)}",
            f"  Scenario: {s.scenario}",
            f"    Given {s.given}",
            f"    When {s.when}",
            f"    Then {s.then}",
            "",
        ]
    return "\n".join(lines)


_STEP = re.compile(r"^(Given|When|Then|And|But)\s+(.*)$")


def from_gherkin(text: str, file: str) -> list[SpecImport]:
    """Specs from Gherkin text; each Scenario needs Given, When and Then. All problems are reported."""
    problems: list[Problem] = []
    specs: list[SpecImport] = []
    current: dict | None = None
    pending_id: str | None = None
    pending_tags: list[str] = []
    last_step: str | None = None

    def close() -> None:
        spec = _closed(current, file, problems)
        if spec is not None:
            specs.append(spec)

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            match = re.match(r"#\s*id:\s*(\S+)", line)
            if match:
                pending_id = match.group(1)
            continue
        if line.startswith("@"):
            pending_tags += line.split()
            continue
        if line.startswith("Feature:"):
            continue
        if line.startswith(("Scenario:", "Scenario Outline:")):
            close()
            current = _scenario(line, number, pending_id, pending_tags, file, problems)
            pending_id, pending_tags, last_step = None, [], None
            continue
        step = _STEP.match(line)
        if step is None:
            problems.append(Problem(file, f"not a Gherkin line: '{line[:60]}'", number))
            continue
        if current is None:
            problems.append(Problem(file, "step before any Scenario", number, step.group(1)))
            continue
        last_step = _add_step(current, step, last_step, number, file, problems)
    close()
    if problems:
        raise ValidationFailed(problems, file)
    if not specs:
        raise ValidationFailed([Problem(file, "no Scenario found", 1)], file)
    return specs


def _scenario(
    line: str, number: int, pending_id: str | None, tags: list[str], file: str, problems: list[Problem]
) -> dict[str, Any]:
    """A scenario begun at `line`, with the id and the category and document tags written above it."""
    title = line.split(":", 1)[1].strip()
    if not title:
        problems.append(Problem(file, "scenario has no title", number, "Scenario"))
    current: dict[str, Any] = {"scenario": title or "(untitled)", "line": number, "id": pending_id}
    for tag in tags:
        if tag.startswith("@category:"):
            current["category"] = tag.split(":", 1)[1].replace("_", " ")
        elif tag.startswith("@doc:"):
            current.setdefault("documents", []).append(tag.split(":", 1)[1])
    return current


def _add_step(
    current: dict[str, Any], step: re.Match[str], last_step: str | None, number: int, file: str,
    problems: list[Problem],
) -> str | None:  # fmt: skip
    """Add a step line to the scenario: And/But continue the last step, a repeated keyword is joined
    with "; ". The step that And/But now continue."""
    keyword, body = step.group(1).lower(), step.group(2).strip()
    if keyword in ("and", "but"):
        if last_step is None:
            problems.append(Problem(file, f"'{step.group(1)}' with no step before it", number, step.group(1)))
            return None
        current[last_step] += f" {keyword} {body}"
    elif current.get(keyword):
        current[keyword] += f"; {body}"
    else:
        current[keyword] = body
        return keyword
    return last_step


def _closed(current: dict[str, Any] | None, file: str, problems: list[Problem]) -> SpecImport | None:
    """The spec of a finished scenario, or None (and a problem) when it lacks a Given, When or Then."""
    if current is None:
        return None
    missing = [k for k in ("given", "when", "then") if not current.get(k)]
    if missing:
        problems.append(
            Problem(
                file,
                f"scenario has no {', '.join(m.capitalize() for m in missing)} step",
                current["line"],
            )
        )
        return None
    return SpecImport(
        id=current.get("id"),
        scenario=current["scenario"],
        given=current["given"],
        when=current["when"],
        then=current["then"],
        category=current.get("category", "general"),
        documents=current.get("documents", []),
    )


def read_specs(text: str, file: str) -> list[SpecImport]:
    """Specs from a `.yaml`/`.yml` or `.feature` file's text, by its name."""
    if file.endswith((".yaml", ".yml")):
        return from_yaml(text, file)
    if file.endswith(".feature"):
        return from_gherkin(text, file)
    raise ValidationFailed([Problem(file, "unsupported spec file: use .yaml, .yml or .feature")], file)
