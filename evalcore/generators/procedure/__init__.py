"""Procedure-grounded tests for tool-using agents (seed 001, ALMITA): the `procedure` arrow.

intents -> procedures -> APIs -> flowgraph -> conversation graph (rule-checked in networkx) -> noise ->
weighted random-walk paths -> conversations -> tests (context, expected next action), and the seven
metrics of Table 2. Modules: intents (intents and generated procedures), apis (APIs a generated
procedure needs that the project lacks, marked generated), graphs (the two graphs and their rules),
flowgraph, convgraph, noise, paths, conversations, cut (tests), metrics, agents (the offline agents,
one of them following the procedures), job. Argument values come from evalcore.inputs.tool_values;
tools in other formats (OpenAI, Anthropic, MCP) are read by evalcore.inputs.tool_formats; tests export
and import as JSONL through evalcore.items.jsonl (`evalcore conversations export --kind test`). Playing
the tests against targets that act is evalcore.runs.procedure_tests.
"""
