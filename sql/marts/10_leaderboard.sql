-- leaderboard: one row per run and scoring configuration, best OSWorld-Human success first.
-- Figures come from run_scores and run_costs (computed once, by the pipeline); this only
-- slices and ranks. Cost per task and median task time are null until costs are computed,
-- and cost per task stays null for runs without usage data or with unpriced models.
-- Which figures, in which order, how they are shown and what ranks runs: the metric registry
-- (deskscore.scorers.metrics) says, and the loader renders the {{ }} expressions from it.
-- Reads: runs, episodes, quarantine, run_scores, run_costs.
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
    SELECT run_id, {{ board_columns(run_costs) }}
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
        c.* EXCLUDE (run_id)
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
            ORDER BY {{ rank_order }}
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
        {{ board_figures }},
        n_steps,
        n_without_result,
        n_quarantined,
        run_id,
        source
    FROM scored
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, rank, agent;
