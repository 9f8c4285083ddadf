"""deskscore.pipelines."""
