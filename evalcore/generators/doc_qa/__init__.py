"""Document-grounded conversations from specs (seed 000, Section 3.2, Algorithm 2), with verification.

The stages, one module each:
- retrieval_per_spec: D_text, D_table, D_policy per spec (BM25 + embeddings, by kind);
- graph_build: the document graph over text and table documents (entities offline or through the model);
- evalcore.documents.chains: chains of length d per spec, shorter with a message when none exists;
- generate (+ offline, schema): the L-turn conversation task, stored as user/assistant turns;
- verify (+ verify_offline, rules): retrieval-augmented correction, spec-adherence check, seed rules;
- job: the resumable job, one unit per (spec, conversation index); specs: which specs it uses;
- browse: what the Conversations page shows.

Entry point: `generate_conversations(store, project_id, specs="selected", d=5, turns=7, per_spec=10)`.
"""

from evalcore.generators.doc_qa.job import RUN_KIND, DocQAOutcome, generate_conversations

__all__ = ["RUN_KIND", "DocQAOutcome", "generate_conversations"]
