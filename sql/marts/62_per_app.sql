-- per_app: each DeskCraft run's figures per app (the task folder's app key: calc, gimp,
-- multi_app, ...), per split and over both (split 'all'); the apps of one split add up to
-- the run. Strict success (score 1) and mean score are kept apart, both over the episodes
-- with a usable result.
-- Reads: deskcraft_slices.
CREATE OR REPLACE VIEW per_app AS
WITH
final AS (
    SELECT
        agent, benchmark, run_id, split, slice AS app, category,
        n_episodes, n_tasks_run, n_strict_success, strict_success_pct, mean_score_pct, sum_reward,
        median_steps_solved
    FROM deskcraft_slices
    WHERE slicing = 'app'
)
SELECT * FROM final
ORDER BY agent, run_id, split, app;
