-- Figures over the trials of one configuration (the runs sharing a run_group), under one score configuration: one row per k = 1 .. n_trials.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW trial_scores AS
SELECT
    CAST(run_group AS VARCHAR)         AS run_group,
    CAST(benchmark AS VARCHAR)         AS benchmark,
    CAST(human_version AS VARCHAR)     AS human_version,
    CAST(max_steps_scoring AS INTEGER) AS max_steps_scoring,
    CAST(compat AS VARCHAR)            AS compat,
    CAST(n_trials AS INTEGER)          AS n_trials,
    CAST(run_ids AS VARCHAR[])         AS run_ids,
    CAST(trials AS VARCHAR[])          AS trials,
    CAST(n_tasks AS INTEGER)           AS n_tasks,
    CAST(mean_reward AS DOUBLE)        AS mean_reward,
    CAST(k AS INTEGER)                 AS k,
    CAST(n_tasks_k AS INTEGER)         AS n_tasks_k,
    CAST(pass_at_k AS DOUBLE)          AS pass_at_k,
    CAST(pass_hat_k AS DOUBLE)         AS pass_hat_k
FROM raw_trial_scores;
