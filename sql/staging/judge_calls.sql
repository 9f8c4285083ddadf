-- One row per judging round sent to an LLM judge: its verdict and cost (also the judge's cache).
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW judge_calls AS
SELECT
    CAST(benchmark AS VARCHAR)          AS benchmark,
    CAST(run_id AS VARCHAR)             AS run_id,
    CAST(domain AS VARCHAR)             AS domain,
    CAST(task_id AS VARCHAR)            AS task_id,
    CAST(judge_model AS VARCHAR)        AS judge_model,
    CAST(prompt_hash AS VARCHAR)        AS prompt_hash,
    CAST(round AS INTEGER)              AS round,
    CAST(template_version AS VARCHAR)   AS template_version,
    CAST(status AS VARCHAR)             AS status,
    CAST(verdict AS VARCHAR)            AS verdict,
    CAST(passed AS BOOLEAN)             AS passed,
    CAST(reason AS VARCHAR)             AS reason,
    CAST(http_status AS INTEGER)        AS http_status,
    CAST(attempts AS INTEGER)           AS attempts,
    CAST(latency_s AS DOUBLE)           AS latency_s,
    CAST(prompt_tokens AS BIGINT)       AS prompt_tokens,
    CAST(completion_tokens AS BIGINT)   AS completion_tokens,
    CAST(total_tokens AS BIGINT)        AS total_tokens,
    CAST(response_model AS VARCHAR)     AS response_model,
    CAST(n_images AS INTEGER)           AS n_images,
    CAST(judged_at AS TIMESTAMPTZ)      AS judged_at
FROM raw_judge_calls;
