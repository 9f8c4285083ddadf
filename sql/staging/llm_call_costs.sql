-- The price of each llm_calls row under the price table of the last cost computation.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW llm_call_costs AS
SELECT
    CAST(run_id AS VARCHAR)                AS run_id,
    CAST(benchmark AS VARCHAR)             AS benchmark,
    CAST(domain AS VARCHAR)                AS domain,
    CAST(task_id AS VARCHAR)               AS task_id,
    CAST(call_idx AS INTEGER)              AS call_idx,
    CAST(step_num AS INTEGER)              AS step_num,
    CAST(stage AS VARCHAR)                 AS stage,
    CAST(model AS VARCHAR)                 AS model,
    CAST(model_source AS VARCHAR)          AS model_source,
    CAST(price_model AS VARCHAR)           AS price_model,
    CAST(price_match AS VARCHAR)           AS price_match,
    CAST(price_read_on AS VARCHAR)         AS price_read_on,
    CAST(input_cost_usd AS DOUBLE)        AS input_cost_usd,
    CAST(cached_input_cost_usd AS DOUBLE) AS cached_input_cost_usd,
    CAST(cache_write_cost_usd AS DOUBLE)  AS cache_write_cost_usd,
    CAST(output_cost_usd AS DOUBLE)       AS output_cost_usd,
    CAST(cost_usd AS DOUBLE)              AS cost_usd,
    CAST(unpriced_reason AS VARCHAR)       AS unpriced_reason
FROM raw_llm_call_costs;
