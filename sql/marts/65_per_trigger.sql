-- per_trigger: each DeskCraft run's figures on interactive tasks per kind of phase trigger:
-- agent_done (the user speaks after DONE/FAIL), step_count (the user interrupts after a
-- number of steps), agent_asks (the user waits for a question). A task counts once under
-- each kind its phases use, so the rows overlap (most tasks end with an agent_done phase)
-- and do not add up to the run; n_phases is the number of phases of that kind.
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW per_trigger AS
WITH
phases AS (
    SELECT
        agent,
        benchmark,
        run_id,
        task_id,
        app,
        split_part(unnest(triggers), ':', 1)              AS trigger,
        reward,
        solved
    FROM deskcraft_episodes
    WHERE split = 'interactive'
),
per_task AS (
    SELECT
        agent, benchmark, run_id, app, task_id, trigger,
        count(*)                                          AS n_phases,
        any_value(reward)                                 AS reward,
        any_value(solved)                                 AS solved
    FROM phases
    GROUP BY ALL
),
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        trigger,
        count(*)                                          AS n_episodes,
        sum(n_phases)                                     AS n_phases,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward
    FROM per_task
    GROUP BY agent, benchmark, run_id, trigger
),
final AS (
    SELECT
        agent,
        benchmark,
        run_id,
        trigger,
        n_episodes,
        CAST(n_phases AS BIGINT)                          AS n_phases,
        n_tasks_run,
        n_strict_success,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct,
        sum_reward
    FROM grouped
)
SELECT * FROM final
ORDER BY agent, run_id, trigger;
