-- leaderboard: one row per run and scoring configuration, best OSWorld-Human success first.
-- Figures come from run_scores and run_costs (computed once, by the pipeline); this only
-- slices and ranks. Cost per task and median task time are null until costs are computed,
-- and cost per task stays null for runs without usage data or with unpriced models.
CREATE OR REPLACE VIEW leaderboard AS
WITH
run_facts AS (
    SELECT run_id, agent, model, benchmark, source, run_path, max_steps, n_task_folders
    FROM runs
),
episode_facts AS (
    SELECT
        run_id,
        count(*)                                  AS n_episodes,
        sum(n_steps)                              AS n_steps,
        sum(n_error_lines)                        AS n_error_lines,
        count(*) FILTER (WHERE result_status <> 'ok') AS n_without_result
    FROM episodes
    GROUP BY run_id
),
quarantined AS (
    SELECT run_id, count(*) AS n_quarantined
    FROM quarantine
    GROUP BY run_id
),
cost_facts AS (
    SELECT run_id, cost_per_task_usd, median_task_s
    FROM run_costs
),
scored AS (
    SELECT
        s.*,
        r.agent,
        r.model,
        r.run_path,
        r.source,
        r.max_steps,
        e.n_episodes,
        e.n_steps,
        e.n_without_result,
        coalesce(q.n_quarantined, 0) AS n_quarantined,
        c.cost_per_task_usd,
        c.median_task_s
    FROM run_scores AS s
    JOIN run_facts AS r USING (run_id)
    LEFT JOIN episode_facts AS e USING (run_id)
    LEFT JOIN quarantined AS q USING (run_id)
    LEFT JOIN cost_facts AS c USING (run_id)
),
final AS (
    SELECT
        rank() OVER (
            PARTITION BY benchmark, human_version, max_steps_scoring, compat
            ORDER BY success_rate_human DESC NULLS LAST, wes_plus_single DESC NULLS LAST
        )                                       AS rank,
        agent,
        benchmark,
        run_path,
        human_version,
        max_steps_scoring,
        step_budget,
        compat,
        n_tasks_run,
        n_human_tasks,
        100 * success_rate_run                  AS success_rate_run_pct,
        100 * success_rate_human                AS success_rate_human_pct,
        100 * strict_success_rate_run           AS strict_success_run_pct,
        100 * wes_plus_single                   AS wes_plus_single_pct,
        100 * wes_plus_grouped                  AS wes_plus_grouped_pct,
        wes_minus,
        100 * wes_single                        AS wes_single_pct,
        100 * wes_grouped                       AS wes_grouped_pct,
        mean_step_ratio_single,
        mean_step_ratio_grouped,
        mean_t_fail,
        cost_per_task_usd,
        median_task_s,
        n_steps,
        n_without_result,
        n_quarantined,
        run_id,
        source
    FROM scored
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, rank, agent;
