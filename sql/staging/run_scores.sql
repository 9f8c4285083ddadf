-- Per-run figures against one human data version and step budget.
-- Staging: rename and cast only; one row per row of the Parquet files.
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
    CAST(success_rate_run AS DOUBLE)        AS success_rate_run,
    CAST(success_rate_human AS DOUBLE)      AS success_rate_human,
    CAST(strict_success_rate_run AS DOUBLE) AS strict_success_rate_run,
    CAST(wes_plus_single AS DOUBLE)         AS wes_plus_single,
    CAST(wes_plus_grouped AS DOUBLE)        AS wes_plus_grouped,
    CAST(wes_minus AS DOUBLE)               AS wes_minus,
    CAST(mean_t_fail AS DOUBLE)             AS mean_t_fail,
    CAST(wes_single AS DOUBLE)              AS wes_single,
    CAST(wes_grouped AS DOUBLE)             AS wes_grouped,
    CAST(mean_step_ratio_single AS DOUBLE)  AS mean_step_ratio_single,
    CAST(mean_step_ratio_grouped AS DOUBLE) AS mean_step_ratio_grouped
FROM raw_run_scores;
