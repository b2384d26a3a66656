"""Conversations and tests: one shape for every generator, stored as versioned items."""
