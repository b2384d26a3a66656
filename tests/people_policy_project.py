"""A small project whose policy is written for people, not for the tools (issue 26, held-out check): it
names no tool, its rules sit under headings ("Renew loan") and in plain sentences ("authenticate the
patron by locating their patron id via email"), its tools are OpenAI function tools without return
schemas, and its statuses, codes and replacements live in tables. Written for these tests; the real
policies it stands for are kept out of the repository."""

from __future__ import annotations

import json
from pathlib import Path

POLICY = """# Library desk policy

- At the beginning of the conversation, authenticate the patron by locating their patron id via email.
- Before changing a loan (renew, swap), list the action detail and obtain explicit patron confirmation (yes).
- Transfer the patron to a librarian if and only if the request is outside these rules.

## Loan states

- Each loan is in status 'active', 'overdue' or 'returned'.

## Renew loan

- A loan can only be renewed if its status is 'active', and you should check its status first.
- After confirmation the loan status will be changed to 'overdue' until the library processes it.

## Swap copy

- The copies of a loan can only be swapped if its status is 'returned'.
- Each copy can be swapped for another copy of the same title.
"""


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _string(description: str) -> dict:
    return {"type": "string", "description": description}


def _ids(description: str) -> dict:
    return {"type": "array", "items": {"type": "string"}, "description": description}


TOOLS = [
    _tool(
        "find_patron_id_by_email", "Find a patron id by email.", {"email": _string("The email.")}, ["email"]
    ),
    _tool(
        "get_loan_details", "Get a loan.", {"loan_id": _string("The loan id, such as 'L-100'.")}, ["loan_id"]
    ),
    _tool(
        "renew_active_loan",
        "Renew a loan.",
        {"loan_id": _string("The loan id."), "weeks": {"type": "integer", "minimum": 1, "maximum": 4}},
        ["loan_id", "weeks"],
    ),
    _tool(
        "swap_loan_copies",
        "Swap copies of a loan.",
        {
            "loan_id": _string("The loan id."),
            "copy_ids": _ids("Copies."),
            "new_copy_ids": _ids("New copies."),
        },
        ["loan_id", "copy_ids", "new_copy_ids"],
    ),
    _tool("transfer_to_librarian", "Hand over.", {"summary": _string("A summary.")}, ["summary"]),
    _tool("think", "Think.", {"thought": _string("A thought to think about.")}, ["thought"]),
    _tool(
        "calculate",
        "Calculate.",
        {"expression": _string("The expression, such as '2 + 2'.")},
        ["expression"],
    ),
]

TABLES = {
    "patrons.csv": "patron_id,name,email,zip\nP-01,Ada Byrne,ada@example.org,02134\n"
    "P-02,Bo Chen,bo@example.org,10001\nP-03,Cy Diaz,cy@example.org,94110\n",
    "loans.csv": "loan_id,patron_id,status,fee\nL-100,P-01,active,0\nL-101,P-01,returned,2.5\n"
    "L-102,P-02,overdue,4\nL-103,P-03,active,0\nL-104,P-03,returned,1\n",
    "loan_copies.csv": "loan_id,copy_id\nL-100,C-1\nL-101,C-3\nL-102,C-5\nL-103,C-2\nL-104,C-6\n",
    "copies.csv": "copy_id,title_id,shelf\nC-1,T-1,A1\nC-2,T-1,A2\nC-3,T-2,B1\nC-4,T-2,B2\n"
    "C-5,T-3,C1\nC-6,T-3,C2\nC-7,T-3,C3\n",
}


def write_project(root: Path) -> Path:
    """The project folder under `root`."""
    (root / "policies").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "tables").mkdir()
    (root / "policies" / "desk.md").write_text(POLICY, encoding="utf-8")
    for tool in TOOLS:
        name = tool["function"]["name"]
        (root / "tools" / f"{name}.json").write_text(json.dumps(tool), encoding="utf-8")
    for name, text in TABLES.items():
        (root / "tables" / name).write_text(text, encoding="utf-8")
    (root / "system.yaml").write_text(
        "id: library_desk\nchatbot_info:\n  name: Desk\n  description: A library's loan desk.\n",
        encoding="utf-8",
    )
    return root
