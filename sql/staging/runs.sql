-- One row per agent run: the folder (or archive prefix) that holds one agent's task folders.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW runs AS
SELECT
    CAST(run_id AS VARCHAR)           AS run_id,
    CAST(benchmark AS VARCHAR)        AS benchmark,
    CAST(source AS VARCHAR)           AS source,
    CAST(run_path AS VARCHAR)         AS run_path,
    CAST(format AS VARCHAR)           AS format,
    CAST(action_space AS VARCHAR)     AS action_space,
    CAST(observation_type AS VARCHAR) AS observation_type,
    CAST(model AS VARCHAR)            AS model,
    CAST(agent AS VARCHAR)            AS agent,
    CAST(run_name AS VARCHAR)         AS run_name,
    CAST(max_steps AS INTEGER)        AS max_steps,
    CAST(args_json AS VARCHAR)        AS args_json,
    CAST(n_task_folders AS INTEGER)   AS n_task_folders,
    CAST(layout AS VARCHAR)           AS layout,
    CAST(summary_source AS VARCHAR)   AS summary_source,
    CAST(fingerprint AS VARCHAR)      AS fingerprint,
    CAST(source_stamp AS VARCHAR)     AS source_stamp,
    CAST(content_hash AS VARCHAR)     AS content_hash,
    CAST(trial AS VARCHAR)            AS trial,
    CAST(run_group AS VARCHAR)        AS run_group
FROM raw_runs;
