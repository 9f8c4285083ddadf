-- Per-run figures against one human data version and step budget.
-- Staging: rename and cast only; one row per row of the Parquet files. The metric columns are
-- the metric registry's (deskscore.scorers.metrics), rendered by the loader.
CREATE OR REPLACE VIEW run_scores AS
SELECT
    CAST(run_id AS VARCHAR)                  AS run_id,
    CAST(benchmark AS VARCHAR)               AS benchmark,
    CAST(human_version AS VARCHAR)           AS human_version,
    CAST(max_steps_scoring AS INTEGER)       AS max_steps_scoring,
    CAST(step_budget AS INTEGER)             AS step_budget,
    CAST(compat AS VARCHAR)                  AS compat,
    CAST(n_human_tasks AS INTEGER)           AS n_human_tasks,
    CAST(n_tasks_run AS INTEGER)             AS n_tasks_run,
    CAST(n_tasks_matched AS INTEGER)         AS n_tasks_matched,
    {{ metric_casts(run_scores) }}
FROM raw_run_scores;
