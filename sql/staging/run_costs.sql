-- Per-run cost and time, beside the run's success: what `deskscore cost` prints.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW run_costs AS
SELECT
    CAST(run_id AS VARCHAR)                AS run_id,
    CAST(benchmark AS VARCHAR)             AS benchmark,
    CAST(n_episodes AS INTEGER)            AS n_episodes,
    CAST(n_episodes_with_usage AS INTEGER) AS n_episodes_with_usage,
    CAST(n_llm_calls AS BIGINT)           AS n_llm_calls,
    CAST(n_unpriced_calls AS BIGINT)      AS n_unpriced_calls,
    CAST(unpriced_models AS VARCHAR[])       AS unpriced_models,
    CAST(prompt_tokens AS BIGINT)         AS prompt_tokens,
    CAST(cached_prompt_tokens AS BIGINT)  AS cached_prompt_tokens,
    CAST(cache_write_tokens AS BIGINT)    AS cache_write_tokens,
    CAST(completion_tokens AS BIGINT)     AS completion_tokens,
    CAST(reasoning_tokens AS BIGINT)      AS reasoning_tokens,
    CAST(cost_usd AS DOUBLE)              AS cost_usd,
    CAST(priced_cost_usd AS DOUBLE)       AS priced_cost_usd,
    CAST(cost_per_task_usd AS DOUBLE)     AS cost_per_task_usd,
    CAST(n_tasks_run AS INTEGER)           AS n_tasks_run,
    CAST(n_successes AS INTEGER)           AS n_successes,
    CAST(success_rate_run AS DOUBLE)      AS success_rate_run,
    CAST(cost_per_success_usd AS DOUBLE)  AS cost_per_success_usd,
    CAST(llm_latency_s AS DOUBLE)         AS llm_latency_s,
    CAST(median_task_s AS DOUBLE)         AS median_task_s,
    CAST(mean_task_s AS DOUBLE)           AS mean_task_s,
    CAST(prices AS VARCHAR)                AS prices
FROM raw_run_costs;
