-- One row per run x task folder: what the archive says about the attempt, before any scoring.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW episodes AS
SELECT
    CAST(run_id AS VARCHAR)           AS run_id,
    CAST(benchmark AS VARCHAR)        AS benchmark,
    CAST(domain AS VARCHAR)           AS domain,
    CAST(task_id AS VARCHAR)          AS task_id,
    CAST(source_task_id AS VARCHAR)   AS source_task_id,
    CAST(task_path AS VARCHAR)        AS task_path,
    CAST(instruction AS VARCHAR)      AS instruction,
    CAST(traj_file AS VARCHAR)        AS traj_file,
    CAST(n_lines AS INTEGER)          AS n_lines,
    CAST(n_steps AS INTEGER)          AS n_steps,
    CAST(n_turns AS INTEGER)          AS n_turns,
    CAST(n_error_lines AS INTEGER)    AS n_error_lines,
    CAST(n_quarantined AS INTEGER)    AS n_quarantined,
    CAST(result_raw AS VARCHAR)       AS result_raw,
    CAST(result_status AS VARCHAR)    AS result_status,
    CAST(score AS DOUBLE)            AS score,
    CAST(last_action_kind AS VARCHAR) AS last_action_kind,
    CAST(ended_by AS VARCHAR)         AS ended_by,
    CAST(started_at AS TIMESTAMPTZ)       AS started_at,
    CAST(ended_at AS TIMESTAMPTZ)         AS ended_at,
    CAST(reported_score AS DOUBLE)   AS reported_score,
    CAST(reported_status AS VARCHAR)  AS reported_status,
    CAST(err_message AS VARCHAR)      AS err_message,
    CAST(metric_scores_json AS VARCHAR) AS metric_scores_json,
    CAST(total_time_s AS DOUBLE)      AS total_time_s,
    CAST(working_time_s AS DOUBLE)    AS working_time_s
FROM raw_episodes;
