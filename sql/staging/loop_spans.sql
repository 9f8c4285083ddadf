-- Runs of consecutive steps in which the agent repeats itself (OSWorld-Human's loop signals).
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW loop_spans AS
SELECT
    CAST(run_id AS VARCHAR)             AS run_id,
    CAST(benchmark AS VARCHAR)          AS benchmark,
    CAST(domain AS VARCHAR)             AS domain,
    CAST(task_id AS VARCHAR)            AS task_id,
    CAST(first_step AS INTEGER)         AS first_step,
    CAST(last_step AS INTEGER)          AS last_step,
    CAST(length AS INTEGER)             AS length,
    CAST(looping_steps AS INTEGER)      AS looping_steps,
    CAST(signals AS VARCHAR[])            AS signals,
    CAST(signal_counts_json AS VARCHAR) AS signal_counts_json,
    CAST(outcome AS VARCHAR)            AS outcome,
    CAST(detector_version AS VARCHAR)   AS detector_version
FROM raw_loop_spans;
