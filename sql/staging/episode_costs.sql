-- Per-episode tokens, cost and time: sums of the episode's calls, and its wall time.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW episode_costs AS
SELECT
    CAST(run_id AS VARCHAR)                  AS run_id,
    CAST(benchmark AS VARCHAR)               AS benchmark,
    CAST(domain AS VARCHAR)                  AS domain,
    CAST(task_id AS VARCHAR)                 AS task_id,
    CAST(n_llm_calls AS INTEGER)             AS n_llm_calls,
    CAST(n_unpriced_calls AS INTEGER)        AS n_unpriced_calls,
    CAST(n_calls_without_latency AS INTEGER) AS n_calls_without_latency,
    CAST(prompt_tokens AS BIGINT)           AS prompt_tokens,
    CAST(cached_prompt_tokens AS BIGINT)    AS cached_prompt_tokens,
    CAST(cache_write_tokens AS BIGINT)      AS cache_write_tokens,
    CAST(completion_tokens AS BIGINT)       AS completion_tokens,
    CAST(reasoning_tokens AS BIGINT)        AS reasoning_tokens,
    CAST(cost_usd AS DOUBLE)                AS cost_usd,
    CAST(priced_cost_usd AS DOUBLE)         AS priced_cost_usd,
    CAST(llm_latency_s AS DOUBLE)           AS llm_latency_s,
    CAST(task_time_s AS DOUBLE)             AS task_time_s,
    CAST(n_turns AS INTEGER)                 AS n_turns
FROM raw_episode_costs;
