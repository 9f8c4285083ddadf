-- The standard error of a run group's mean strict success over its trials, split into its
-- between-task and within-task parts: one row per group of two trials or more and configuration.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW trial_variance AS
SELECT
    CAST(run_group AS VARCHAR)         AS run_group,
    CAST(benchmark AS VARCHAR)         AS benchmark,
    CAST(human_version AS VARCHAR)     AS human_version,
    CAST(max_steps_scoring AS INTEGER) AS max_steps_scoring,
    CAST(compat AS VARCHAR)            AS compat,
    CAST(n_trials AS INTEGER)          AS n_trials,
    CAST(n_tasks AS INTEGER)           AS n_tasks,
    CAST(mean_success AS DOUBLE)       AS mean_success,
    CAST(se AS DOUBLE)                 AS se,
    CAST(var_within AS DOUBLE)         AS var_within,
    CAST(var_between AS DOUBLE)        AS var_between,
    CAST(se_within AS DOUBLE)          AS se_within,
    CAST(se_between AS DOUBLE)         AS se_between
FROM raw_trial_variance;
