-- Human reference trajectories (OSWorld-Human): step counts t_human per task and granularity.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW human_refs AS
SELECT
    CAST(human_version AS VARCHAR)   AS human_version,
    CAST(domain AS VARCHAR)          AS domain,
    CAST(task_id AS VARCHAR)         AS task_id,
    CAST(alias_task_id AS VARCHAR)   AS alias_task_id,
    CAST(single_steps AS INTEGER)    AS single_steps,
    CAST(grouped_steps AS INTEGER)   AS grouped_steps,
    CAST(single_actions AS VARCHAR[])  AS single_actions,
    CAST(grouped_actions AS VARCHAR[][]) AS grouped_actions
FROM raw_human_refs;
