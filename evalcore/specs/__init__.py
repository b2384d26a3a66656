"""Specs: generation, selection, review and formats (seed 000, Section 3.1)."""
