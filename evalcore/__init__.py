"""evalcore: behavior-driven evaluation data for conversational and compound AI systems."""

__version__ = "0.1.0"
