-- Which screenshot file each step points to, and its content hash: the join between steps and screenshots.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW screenshot_refs AS
SELECT
    CAST(run_id AS VARCHAR)          AS run_id,
    CAST(benchmark AS VARCHAR)       AS benchmark,
    CAST(domain AS VARCHAR)          AS domain,
    CAST(task_id AS VARCHAR)         AS task_id,
    CAST(step_idx AS INTEGER)        AS step_idx,
    CAST(screenshot_path AS VARCHAR) AS screenshot_path,
    CAST(content_hash AS VARCHAR)    AS content_hash
FROM raw_screenshot_refs;
