"""The system description a doc-QA job gives the model (which specs it generates from: specs/choice.py)."""

from __future__ import annotations

from evalcore.store import Store


def system_description(store: Store, project_id: str) -> tuple[str, list[str]]:
    """S_desc for the prompt, and names never to link documents on (the business and assistant names)."""
    card = store.system_card(project_id)
    if card is None:
        return store.project(project_id).title, []
    info = card.chatbot_info
    text = f"{info.name}: {info.description}\nTask: {info.task}".strip()
    if info.constraints:
        text += "\nConstraints: " + "; ".join(info.constraints)
    ignore = [name for name in (info.business, info.name) if name]
    return text, ignore
