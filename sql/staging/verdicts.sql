-- One row per episode x verdict source x rule: archived, recomputed offline, LLM-judged.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW verdicts AS
SELECT
    CAST(benchmark AS VARCHAR)             AS benchmark,
    CAST(run_id AS VARCHAR)                AS run_id,
    CAST(domain AS VARCHAR)                AS domain,
    CAST(task_id AS VARCHAR)               AS task_id,
    CAST(source AS VARCHAR)                AS source,
    CAST(rule AS VARCHAR)                  AS rule,
    CAST(score AS DOUBLE)                  AS score,
    CAST(passed AS BOOLEAN)                AS passed,
    CAST(agrees_with_archived AS BOOLEAN)  AS agrees_with_archived,
    CAST(details AS VARCHAR)               AS details,
    CAST(judge_model AS VARCHAR)           AS judge_model,
    CAST(prompt_hash AS VARCHAR)           AS prompt_hash
FROM raw_verdicts;
