-- cost_per_run: each run's tokens, cost and time beside its success, from run_costs (computed
-- once by the pipeline, exact to the cent): total, per task worked on, per strict success.
-- A run with calls of a model the price table lacks has no total (never a partial sum shown
-- as one): priced_cost_usd is the lower bound, unpriced_models says what to add with
-- --prices FILE. Success follows the deskscore rules (success_rate_run: mean reward over the
-- tasks with a usable result; n_successes: tasks with r == 1). llm_time_share is the share of
-- the timed episodes' task time spent in model calls, where calls record latency.
-- Reads: episode_costs, run_costs, runs.
CREATE OR REPLACE VIEW cost_per_run AS
WITH
time_facts AS (
    SELECT
        run_id,
        sum(task_time_s)                                  AS task_time_s,
        sum(llm_latency_s) FILTER (WHERE task_time_s IS NOT NULL) AS llm_latency_s,
        sum(n_calls_without_latency)                      AS n_calls_without_latency
    FROM episode_costs
    GROUP BY run_id
),
final AS (
    SELECT
        r.agent,
        r.model,
        c.benchmark,
        c.n_episodes,
        c.n_episodes_with_usage,
        c.n_llm_calls,
        c.prompt_tokens,
        c.cached_prompt_tokens,
        c.cached_prompt_tokens / nullif(c.prompt_tokens, 0) AS cached_share,
        c.completion_tokens,
        c.reasoning_tokens,
        c.cost_usd,
        c.priced_cost_usd,
        c.cost_per_task_usd,
        c.n_tasks_run,
        c.n_successes,
        100 * c.success_rate_run                          AS success_rate_run_pct,
        c.cost_per_success_usd,
        c.median_task_s,
        c.mean_task_s,
        CASE WHEN c.n_llm_calls > 0 AND t.n_calls_without_latency = 0
             THEN t.llm_latency_s / nullif(t.task_time_s, 0) END AS llm_time_share,
        c.n_unpriced_calls,
        c.unpriced_models,
        c.prices,
        c.run_id
    FROM run_costs AS c
    JOIN runs AS r USING (run_id)
    LEFT JOIN time_facts AS t USING (run_id)
)
SELECT * FROM final
ORDER BY benchmark, cost_per_task_usd NULLS LAST, agent;
