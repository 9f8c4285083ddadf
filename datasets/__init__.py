"""deskscore.datasets."""
