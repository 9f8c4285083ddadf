-- Per-episode figures against one human data version and step budget S.
-- Staging: rename and cast only; one row per row of the Parquet files. The metric columns are
-- the metric registry's (deskscore.scorers.metrics), rendered by the loader.
CREATE OR REPLACE VIEW episode_scores AS
SELECT
    CAST(run_id AS VARCHAR)             AS run_id,
    CAST(benchmark AS VARCHAR)          AS benchmark,
    CAST(domain AS VARCHAR)             AS domain,
    CAST(task_id AS VARCHAR)            AS task_id,
    CAST(human_version AS VARCHAR)      AS human_version,
    CAST(max_steps_scoring AS INTEGER)  AS max_steps_scoring,
    CAST(step_budget AS INTEGER)        AS step_budget,
    CAST(has_human_ref AS BOOLEAN)      AS has_human_ref,
    CAST(scored AS BOOLEAN)             AS scored,
    CAST(reward AS DOUBLE)             AS reward,
    CAST(success AS BOOLEAN)            AS success,
    CAST(t_agent AS INTEGER)            AS t_agent,
    CAST(t_human_single AS INTEGER)     AS t_human_single,
    CAST(t_human_grouped AS INTEGER)    AS t_human_grouped,
    {{ metric_casts(episode_scores) }},
    CAST(compat AS VARCHAR)             AS compat
FROM raw_episode_scores;
