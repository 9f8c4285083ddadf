-- deskcraft_per_domain: each DeskCraft run's figures per DeskCraft domain (Office, Browser,
-- Development, Creative Design, Multimedia & 3D, and Multi-app for the multi-app workflows),
-- per split and over both. per_domain stays OSWorld's (per app, against OSWorld-Human).
-- The domains of one split add up to the run; strict success and mean score kept apart.
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW deskcraft_per_domain AS
WITH
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        CASE WHEN grouping(split) = 1 THEN 'all' ELSE split END AS split,
        category                                          AS domain,
        count(DISTINCT app)                               AS n_apps,
        count(*)                                          AS n_episodes,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward
    FROM deskcraft_episodes
    GROUP BY GROUPING SETS (
        (agent, benchmark, run_id, split, category),
        (agent, benchmark, run_id, category)
    )
),
final AS (
    SELECT
        agent,
        benchmark,
        run_id,
        split,
        domain,
        n_apps,
        n_episodes,
        n_tasks_run,
        n_strict_success,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct,
        sum_reward
    FROM grouped
)
SELECT * FROM final
ORDER BY agent, run_id, split, domain;
