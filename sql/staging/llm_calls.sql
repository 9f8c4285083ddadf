-- One row per model call an archive records: tokens, latency and stage, as the runner reported them (a field the format lacks stays null; nothing is estimated).
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW llm_calls AS
SELECT
    CAST(run_id AS VARCHAR)                  AS run_id,
    CAST(benchmark AS VARCHAR)               AS benchmark,
    CAST(domain AS VARCHAR)                  AS domain,
    CAST(task_id AS VARCHAR)                 AS task_id,
    CAST(call_idx AS INTEGER)                AS call_idx,
    CAST(step_num AS INTEGER)                AS step_num,
    CAST(step_idx AS INTEGER)                AS step_idx,
    CAST(stage AS VARCHAR)                   AS stage,
    CAST(stage_raw AS VARCHAR)               AS stage_raw,
    CAST(model AS VARCHAR)                   AS model,
    CAST(prompt_tokens AS BIGINT)           AS prompt_tokens,
    CAST(cached_prompt_tokens AS BIGINT)    AS cached_prompt_tokens,
    CAST(cache_write_tokens AS BIGINT)      AS cache_write_tokens,
    CAST(completion_tokens AS BIGINT)       AS completion_tokens,
    CAST(reasoning_tokens AS BIGINT)        AS reasoning_tokens,
    CAST(reasoning_in_completion AS BOOLEAN) AS reasoning_in_completion,
    CAST(latency_s AS DOUBLE)               AS latency_s,
    CAST(started_at AS TIMESTAMPTZ)              AS started_at,
    CAST(usage_format AS VARCHAR)            AS usage_format,
    CAST(source_file AS VARCHAR)             AS source_file,
    CAST(line_no AS INTEGER)                 AS line_no,
    CAST(usage_json AS VARCHAR)              AS usage_json
FROM raw_llm_calls;
