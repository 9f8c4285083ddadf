-- step_budget: accuracy against the step budget (DeskCraft's accuracy-vs-budget curves), per
-- run. A task counts as solved at budget b when it succeeded (score = 1) within b steps of
-- the benchmark's budget unit (steps_used <= b): the share a run would have reached had it
-- been stopped after b of them. The unit is what the runner's max_steps bounds: model turns
-- for OSWorld (n_turns), environment steps for DeskCraft (n_steps: executed actions over all
-- phases; CALL_USER questions are not steps). budget_unit names it.
-- Budgets are 5, 10, 15, ... up to the largest steps_used of the run, rounded up to a
-- multiple of 5. The denominator is the run's tasks with a usable result (result_status =
-- 'ok'), as success_rate_run; at the last budget accuracy_pct is the run's strict success rate.
-- Reads: runs, episodes.
CREATE OR REPLACE VIEW step_budget AS
WITH
units AS (
    SELECT
        run_id,
        CASE WHEN benchmark = 'deskcraft' OR format = 'deskcraft'
             THEN 'steps' ELSE 'turns' END               AS budget_unit
    FROM runs
),
tasks AS (
    SELECT
        e.run_id,
        u.budget_unit,
        CASE WHEN u.budget_unit = 'steps' THEN e.n_steps ELSE e.n_turns END AS steps_used,
        e.score = 1                                       AS solved
    FROM episodes AS e
    JOIN units AS u USING (run_id)
    WHERE e.result_status = 'ok'
),
run_sizes AS (
    SELECT
        run_id,
        any_value(budget_unit)                            AS budget_unit,
        count(*)                                          AS n_tasks,
        CAST(5 * ceil(greatest(max(steps_used), 1) / 5) AS INTEGER) AS max_budget
    FROM tasks
    GROUP BY run_id
),
budgets AS (
    SELECT run_id, budget_unit, n_tasks, CAST(b AS INTEGER) AS budget
    FROM run_sizes, range(5, max_budget + 1, 5) AS r(b)
),
solved AS (
    SELECT
        b.run_id,
        b.budget_unit,
        b.budget,
        b.n_tasks,
        count(t.run_id)                                   AS n_solved
    FROM budgets AS b
    LEFT JOIN tasks AS t
      ON t.run_id = b.run_id AND t.solved AND t.steps_used <= b.budget
    GROUP BY b.run_id, b.budget_unit, b.budget, b.n_tasks
),
final AS (
    SELECT
        r.agent,
        r.benchmark,
        s.run_id,
        s.budget,
        s.n_tasks,
        s.n_solved,
        100.0 * s.n_solved / s.n_tasks                    AS accuracy_pct,
        s.budget_unit
    FROM solved AS s
    JOIN runs AS r USING (run_id)
)
SELECT * FROM final
ORDER BY agent, benchmark, run_id, budget;
