-- The uncertainty of each run figure: one row per run, score configuration, figure and method.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW run_score_intervals AS
SELECT
    CAST(run_id AS VARCHAR)            AS run_id,
    CAST(benchmark AS VARCHAR)         AS benchmark,
    CAST(human_version AS VARCHAR)     AS human_version,
    CAST(max_steps_scoring AS INTEGER) AS max_steps_scoring,
    CAST(compat AS VARCHAR)            AS compat,
    CAST(metric AS VARCHAR)            AS metric,
    CAST(method AS VARCHAR)            AS method,
    CAST(estimate AS DOUBLE)           AS estimate,
    CAST(se AS DOUBLE)                 AS se,
    CAST(ci_low AS DOUBLE)             AS ci_low,
    CAST(ci_high AS DOUBLE)            AS ci_high,
    CAST(n_units AS INTEGER)           AS n_units,
    CAST(n_clusters AS INTEGER)        AS n_clusters,
    CAST(n_resamples AS INTEGER)       AS n_resamples,
    CAST(seed AS BIGINT)               AS seed
FROM raw_run_score_intervals;
