"""deskscore.collectors."""
