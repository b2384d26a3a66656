"""Labelled tool-use conversations (seed 004, TRACE/SCOPE): the `tool_case` arrow of the data flow.

`catalog` holds the 26 situations of Appendix G with their four labels and a team's own situations;
`groups` splits the project's tools into tool groups and says which situations a group can produce;
`offline` realises a situation as a conversation from templates; `synthesis` is the model task;
`job` generates conversations as a job; `rubrics` (SPUR, Appendix D, and SCOPE, Appendix C) and
`evaluation` (Tables 3 and 4) evaluate labelled conversations with rubrics.
"""
