"""Typed records that cross modules: inputs, generated items, runs and human actions."""

from evalcore.models.common import Provenance, Tier, now_utc
from evalcore.models.inputs import (
    ChatbotInfo,
    Document,
    DocumentKind,
    Procedure,
    ProcedureStep,
    SystemCard,
    Tool,
    UserSimulationConfig,
)
from evalcore.models.items import (
    Annotation,
    AnnotationLabel,
    Conversation,
    Persona,
    PersonaProfile,
    Spec,
    SpecStatus,
    Test,
    Turn,
    TurnRole,
)
from evalcore.models.runs import Judgment, Run, RunStatus, Target, TargetKind

__all__ = [
    "Annotation",
    "AnnotationLabel",
    "ChatbotInfo",
    "Conversation",
    "Document",
    "DocumentKind",
    "Judgment",
    "Persona",
    "PersonaProfile",
    "Procedure",
    "ProcedureStep",
    "Provenance",
    "Run",
    "RunStatus",
    "Spec",
    "SpecStatus",
    "SystemCard",
    "Target",
    "TargetKind",
    "Test",
    "Tier",
    "Tool",
    "Turn",
    "TurnRole",
    "UserSimulationConfig",
    "now_utc",
]
