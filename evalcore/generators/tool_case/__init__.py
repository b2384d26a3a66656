"""Labelled tool-use conversations (seed 004, TRACE/SCOPE): the `tool_case` arrow of the data flow.

`catalog` holds the 26 situations of Appendix G with their four labels and a team's own situations;
`groups` splits the project's tools into tool groups and says which situations a group can produce;
`offline` (with `values`) realises a situation as a conversation from templates; `synthesis` is the model
task and `job` generates conversations as a job (`records` maps them onto Conversation); `signals` is
what the offline judges see in the turns; `judge` and `filtering` make silver and tune the judge on gold;
`rubrics` (records, rules, versioned storage and edits), `scope` (SPUR, Appendix D, and SCOPE, Appendix C)
and `evaluation` (Tables 3 and 4, computed by a job) evaluate with rubrics; `overview` is what the Tool
cases page reads. A target's own conversations scored by a rubric set are a run (evalcore.runs.
rubric_scoring), reported by evalcore.reports.rubric_tables.
"""
