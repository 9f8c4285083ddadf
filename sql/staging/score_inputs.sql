-- One row per run and score configuration that a whole `deskscore score` finished: the digest of what its figures, verdicts, loops and costs were computed from, so the next score skips it when nothing changed. Written after the job succeeded, so a killed job is redone.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW score_inputs AS
SELECT
    CAST(run_id AS VARCHAR)            AS run_id,
    CAST(benchmark AS VARCHAR)         AS benchmark,
    CAST(human_version AS VARCHAR)     AS human_version,
    CAST(max_steps_scoring AS INTEGER) AS max_steps_scoring,
    CAST(compat AS VARCHAR)            AS compat,
    CAST(inputs_digest AS VARCHAR)     AS inputs_digest
FROM raw_score_inputs;
