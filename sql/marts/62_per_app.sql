-- per_app: each DeskCraft run's figures per app (the task folder's app key: calc, gimp,
-- multi_app, ...), per split and over both (split 'all'); the apps of one split add up to
-- the run. Strict success (score 1) and mean score are kept apart, both over the episodes
-- with a usable result.
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW per_app AS
WITH
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        CASE WHEN grouping(split) = 1 THEN 'all' ELSE split END AS split,
        app,
        any_value(category)                               AS category,
        count(*)                                          AS n_episodes,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward,
        median(n_steps) FILTER (WHERE solved)             AS median_steps_solved
    FROM deskcraft_episodes
    GROUP BY GROUPING SETS (
        (agent, benchmark, run_id, split, app),
        (agent, benchmark, run_id, app)
    )
),
final AS (
    SELECT
        agent,
        benchmark,
        run_id,
        split,
        app,
        category,
        n_episodes,
        n_tasks_run,
        n_strict_success,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct,
        sum_reward,
        median_steps_solved
    FROM grouped
)
SELECT * FROM final
ORDER BY agent, run_id, split, app;
