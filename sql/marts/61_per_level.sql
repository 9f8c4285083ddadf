-- per_level: each DeskCraft run's figures per difficulty level, once per level source.
-- The sources disagree (REFERENCE section 3), so neither is picked silently: level_source
-- 'stem' reads the task file's stem prefix (L1_/L2_/L3_; interactive stems carry none, so
-- they are 'unlabelled'), 'difficulty' reads its difficulty field (35 standard and 63
-- interactive tasks lack one). The paper's own split exists only as totals and cannot
-- slice runs. split 'all' rows add both splits; for one source and split the levels add up
-- to the run (n_tasks_run, sum_reward, n_strict_success).
-- Strict success (score 1) and mean score (partial credit counted) are kept apart; both
-- are over the episodes with a usable result (n_tasks_run), as success_rate_run.
-- Reads: deskcraft_slices.
CREATE OR REPLACE VIEW per_level AS
WITH
final AS (
    SELECT
        agent, benchmark, run_id,
        CASE slicing WHEN 'level_stem' THEN 'stem' ELSE 'difficulty' END AS level_source,
        split,
        slice AS level,
        n_episodes, n_tasks_run, n_strict_success, strict_success_pct, mean_score_pct, sum_reward
    FROM deskcraft_slices
    WHERE slicing IN ('level_stem', 'level_difficulty')
)
SELECT * FROM final
ORDER BY agent, run_id, level_source, split, level;
