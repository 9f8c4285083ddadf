"""deskscore.scorers."""
