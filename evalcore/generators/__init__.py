"""Generators (the arrow "conversations, four generators, all sharing one Conversation model").

One subpackage per generator, each a job over specs, documents and the model layer: `doc_qa` (seed 000)
today; `procedure`, `simulation`, `scenario` and `tool_case` join it. They write items through
`evalcore.items` and run through `evalcore.jobs`.
"""
