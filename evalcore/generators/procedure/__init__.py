"""Procedure-grounded tests for tool-using agents (seed 001, ALMITA): the `procedure` arrow.

intents -> procedures -> APIs -> flowgraph -> conversation graph (rule-checked in networkx) -> noise ->
weighted random-walk paths -> conversations -> tests (context, expected next action), and the seven
metrics of Table 2. Modules: intents (intents and generated procedures), graphs (the two graphs and their
rules), flowgraph, convgraph, noise, paths, values (arguments from tool schemas), conversations, cut
(tests), metrics, agents, job. Tools in other formats (OpenAI, Anthropic, MCP) are read by
evalcore.inputs.tool_formats; tests export and import as JSONL through evalcore.items.jsonl
(`evalcore conversations export --kind test`).
"""
