"""Labelled tool-use conversations (seed 004, TRACE/SCOPE): the `tool_case` arrow of the data flow.

`catalog` holds the 26 situations of Appendix G with their four labels and a team's own situations;
`groups` splits the project's tools into tool groups and says which situations a group can produce;
`offline` (with `values`) realises a situation as a conversation from templates; `synthesis` is the model
task and `job` generates conversations as a job (`records` maps them onto Conversation); `signals` is
what the offline judges see in the turns; `judge` and `filtering` make silver and tune the judge on gold;
`rubrics` (records and rules), `scope` (SPUR, Appendix D, and SCOPE, Appendix C), `evaluation` (Tables 3
and 4) and `rubric_runs` (a target's conversations scored by a rubric set) evaluate with rubrics.
"""
