-- cost_pareto: the cost-accuracy trade-off across runs of a benchmark (HAL's frontier): a run
-- is on the front when no other run is at least as successful for at most the cost per task,
-- and strictly better in one of the two. Success is success_rate_run (deskscore rules);
-- cost is cost_per_task_usd. A run without a complete cost is listed with on_front null.
-- Reads: cost_per_run.
CREATE OR REPLACE VIEW cost_pareto AS
WITH
runs_priced AS (
    SELECT agent, benchmark, run_id, success_rate_run_pct, cost_per_task_usd
    FROM cost_per_run
),
dominators AS (
    SELECT
        a.run_id,
        list(b.agent ORDER BY b.cost_per_task_usd, b.agent) AS dominated_by
    FROM runs_priced AS a
    JOIN runs_priced AS b
      ON a.benchmark = b.benchmark
     AND a.run_id <> b.run_id
     AND b.success_rate_run_pct >= a.success_rate_run_pct
     AND b.cost_per_task_usd <= a.cost_per_task_usd
     AND (b.success_rate_run_pct > a.success_rate_run_pct
          OR b.cost_per_task_usd < a.cost_per_task_usd)
    GROUP BY a.run_id
),
final AS (
    SELECT
        p.agent,
        p.benchmark,
        p.success_rate_run_pct,
        p.cost_per_task_usd,
        CASE
            WHEN p.cost_per_task_usd IS NULL OR p.success_rate_run_pct IS NULL THEN NULL
            ELSE d.run_id IS NULL
        END                                               AS on_front,
        d.dominated_by,
        p.run_id
    FROM runs_priced AS p
    LEFT JOIN dominators AS d USING (run_id)
)
SELECT * FROM final
ORDER BY benchmark, on_front DESC NULLS LAST, cost_per_task_usd, agent;
