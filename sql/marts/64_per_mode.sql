-- per_mode: each DeskCraft run's figures on interactive tasks per collaboration mode (from
-- scenario_type: clarification, requirement_change, progressive_refinement, interruption,
-- correction, workflow; 'untyped' for the multi-app tasks that name none). The modes add up
-- to the run's interactive split. Questions and user turns show how much talking each mode
-- took; strict success and mean score kept apart.
-- Reads: deskcraft_slices.
CREATE OR REPLACE VIEW per_mode AS
WITH
final AS (
    SELECT
        agent, benchmark, run_id, slice AS mode,
        n_episodes, n_tasks_run, n_strict_success, strict_success_pct, mean_score_pct, sum_reward,
        n_questions, n_user_turns, mean_steps
    FROM deskcraft_slices
    WHERE slicing = 'mode' AND split = 'interactive'
)
SELECT * FROM final
ORDER BY agent, run_id, mode;
