-- One row per call of a step's action, in order: each pyautogui (or sleep, subprocess, other) call of a code string, read with Python's ast; a dict action or special word is one row. Runner error lines and steps without an action have none.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW step_actions AS
SELECT
    CAST(run_id AS VARCHAR)     AS run_id,
    CAST(benchmark AS VARCHAR)  AS benchmark,
    CAST(domain AS VARCHAR)     AS domain,
    CAST(task_id AS VARCHAR)    AS task_id,
    CAST(step_idx AS INTEGER)   AS step_idx,
    CAST(action_idx AS INTEGER) AS action_idx,
    CAST(kind AS VARCHAR)       AS kind,
    CAST(func AS VARCHAR)       AS func,
    CAST(x AS DOUBLE)           AS x,
    CAST(y AS DOUBLE)           AS y,
    CAST(text AS VARCHAR)       AS text,
    CAST(keys AS VARCHAR[])     AS keys,
    CAST(button AS VARCHAR)     AS button,
    CAST(clicks AS INTEGER)     AS clicks,
    CAST(amount AS DOUBLE)      AS amount,
    CAST(seconds AS DOUBLE)     AS seconds,
    CAST(effective AS BOOLEAN)  AS effective,
    CAST(parser AS VARCHAR)     AS parser,
    CAST(call_text AS VARCHAR)  AS call_text
FROM raw_step_actions;
