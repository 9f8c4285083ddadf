-- One row per trajectory record: every executed action, plus runner error lines as kind 'error'.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW steps AS
SELECT
    CAST(run_id AS VARCHAR)           AS run_id,
    CAST(benchmark AS VARCHAR)        AS benchmark,
    CAST(domain AS VARCHAR)           AS domain,
    CAST(task_id AS VARCHAR)          AS task_id,
    CAST(step_idx AS INTEGER)         AS step_idx,
    CAST(line_no AS INTEGER)          AS line_no,
    CAST(step_num AS INTEGER)         AS step_num,
    CAST(action_text AS VARCHAR)      AS action_text,
    CAST(action_format AS VARCHAR)    AS action_format,
    CAST(action_kind AS VARCHAR)      AS action_kind,
    CAST(x AS DOUBLE)                AS x,
    CAST(y AS DOUBLE)                AS y,
    CAST(text AS VARCHAR)             AS text,
    CAST(response AS VARCHAR)         AS response,
    CAST(screenshot_file AS VARCHAR)  AS screenshot_file,
    CAST(screenshot_path AS VARCHAR)  AS screenshot_path,
    CAST(action_timestamp AS VARCHAR) AS action_timestamp,
    CAST(ts AS TIMESTAMPTZ)               AS ts,
    CAST(dt_s AS DOUBLE)             AS dt_s,
    CAST(screenshot_s AS DOUBLE)     AS screenshot_s,
    CAST(action_s AS DOUBLE)         AS action_s,
    CAST(reward AS DOUBLE)           AS reward,
    CAST(done AS BOOLEAN)             AS done,
    CAST(info_json AS VARCHAR)        AS info_json,
    CAST(phase AS INTEGER)            AS phase,
    CAST(extra AS VARCHAR)            AS extra
FROM raw_steps;
