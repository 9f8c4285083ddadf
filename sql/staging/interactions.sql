-- One row per user/agent exchange of an interactive (DeskCraft) episode, in order.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW interactions AS
SELECT
    CAST(benchmark AS VARCHAR)      AS benchmark,
    CAST(run_id AS VARCHAR)         AS run_id,
    CAST(domain AS VARCHAR)         AS domain,
    CAST(task_id AS VARCHAR)        AS task_id,
    CAST(seq AS INTEGER)            AS seq,
    CAST(step AS INTEGER)           AS step,
    CAST(phase AS INTEGER)          AS phase,
    CAST(type AS VARCHAR)           AS type,
    CAST(message AS VARCHAR)        AS message,
    CAST(phase_complete AS BOOLEAN) AS phase_complete,
    CAST(reason AS VARCHAR)         AS reason,
    CAST(timestamp AS TIMESTAMPTZ)  AS timestamp,
    CAST(timestamp_raw AS VARCHAR)  AS timestamp_raw
FROM raw_interactions;
