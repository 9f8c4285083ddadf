-- per_mode: each DeskCraft run's figures on interactive tasks per collaboration mode (from
-- scenario_type: clarification, requirement_change, progressive_refinement, interruption,
-- correction, workflow; 'untyped' for the multi-app tasks that name none). The modes add up
-- to the run's interactive split. Questions and user turns show how much talking each mode
-- took; strict success and mean score kept apart.
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW per_mode AS
WITH
interactive AS (
    SELECT *
    FROM deskcraft_episodes
    WHERE split = 'interactive'
),
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        mode,
        count(*)                                          AS n_episodes,
        count(reward)                                     AS n_tasks_run,
        count(*) FILTER (WHERE solved)                    AS n_strict_success,
        coalesce(sum(reward), 0)                          AS sum_reward,
        sum(n_questions)                                  AS n_questions,
        sum(n_user_turns)                                 AS n_user_turns,
        avg(n_steps)                                      AS mean_steps
    FROM interactive
    GROUP BY agent, benchmark, run_id, mode
),
final AS (
    SELECT
        agent,
        benchmark,
        run_id,
        mode,
        n_episodes,
        n_tasks_run,
        n_strict_success,
        100.0 * n_strict_success / nullif(n_tasks_run, 0) AS strict_success_pct,
        100.0 * sum_reward / nullif(n_tasks_run, 0)       AS mean_score_pct,
        sum_reward,
        CAST(n_questions AS BIGINT)                       AS n_questions,
        CAST(n_user_turns AS BIGINT)                      AS n_user_turns,
        mean_steps
    FROM grouped
)
SELECT * FROM final
ORDER BY agent, run_id, mode;
