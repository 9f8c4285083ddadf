-- per_trigger: each DeskCraft run's figures on interactive tasks per kind of phase trigger:
-- agent_done (the user speaks after DONE/FAIL), step_count (the user interrupts after a
-- number of steps), agent_asks (the user waits for a question). A task counts once under
-- each kind its phases use, so the rows overlap (most tasks end with an agent_done phase)
-- and do not add up to the run; n_phases is the number of phases of that kind.
-- Reads: deskcraft_slices.
CREATE OR REPLACE VIEW per_trigger AS
WITH
final AS (
    SELECT
        agent, benchmark, run_id, slice AS trigger,
        n_episodes, n_phases,
        n_tasks_run, n_strict_success, strict_success_pct, mean_score_pct, sum_reward
    FROM deskcraft_slices
    WHERE slicing = 'trigger' AND split = 'interactive'
)
SELECT * FROM final
ORDER BY agent, run_id, trigger;
