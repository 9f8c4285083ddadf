-- per_level: each DeskCraft run's figures per difficulty level, once per level source.
-- The sources disagree (REFERENCE section 3), so neither is picked silently: level_source
-- 'stem' reads the task file's stem prefix (L1_/L2_/L3_; interactive stems carry none, so
-- they are 'unlabelled'), 'difficulty' reads its difficulty field (35 standard and 63
-- interactive tasks lack one). The paper's own split exists only as totals and cannot
-- slice runs. split 'all' rows add both splits; for one source and split the levels add up
-- to the run (n_tasks_run, sum_reward, n_strict_success).
-- Strict success (score 1) and mean score (partial credit counted) are kept apart; both
-- are over the episodes with a usable result (n_tasks_run), as success_rate_run.
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW per_level AS
WITH
levelled AS (
    SELECT agent, benchmark, run_id, split, 'stem' AS level_source, level_stem AS level,
           reward, solved
    FROM deskcraft_episodes
    UNION ALL
    SELECT agent, benchmark, run_id, split, 'difficulty' AS level_source,
           level_difficulty AS level, reward, solved
    FROM deskcraft_episodes
),
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        level_source,
        CASE WHEN grouping(split) = 1 THEN 'all' ELSE split END AS split,
        level,
        count(*)                                          AS n_episodes,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward
    FROM levelled
    GROUP BY GROUPING SETS (
        (agent, benchmark, run_id, level_source, split, level),
        (agent, benchmark, run_id, level_source, level)
    )
),
final AS (
    SELECT
        agent,
        benchmark,
        run_id,
        level_source,
        split,
        level,
        n_episodes,
        n_tasks_run,
        n_strict_success,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct,
        sum_reward
    FROM grouped
)
SELECT * FROM final
ORDER BY agent, run_id, level_source, split, level;
