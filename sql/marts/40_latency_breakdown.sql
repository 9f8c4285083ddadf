-- latency_breakdown: where an agent's task time goes, per agent and application domain, and
-- over all its domains (domain '(all)'): OSWorld-Human's table of stage shares, for any run.
-- Task time is episode_costs.task_time_s (computed once by the pipeline). A stage's seconds
-- are the recorded latencies of its model calls (planning, reflection, judging, grounding,
-- retrieval, other), plus screenshot and action durations where the runner records them;
-- 'unattributed' is the rest of the task time (action execution, screenshots and the runner's
-- waits when not recorded). The shares of a group add up to 1. Where a call carries no
-- latency the time cannot be split: that group's seconds and shares are null (only its
-- model-free 'unattributed' row keeps none either) and `note` says so; a run without recorded
-- calls has only 'unattributed'.
-- Reads: episode_costs, runs, steps, llm_calls.
CREATE OR REPLACE VIEW latency_breakdown AS
WITH
timed AS (
    SELECT e.run_id, e.domain, e.task_id, e.task_time_s, r.agent, r.benchmark
    FROM episode_costs AS e
    JOIN runs AS r USING (run_id)
    WHERE e.task_time_s IS NOT NULL
),
step_parts AS (
    SELECT run_id, domain, task_id, 'screenshot' AS stage, sum(screenshot_s) AS seconds
    FROM steps
    WHERE screenshot_s IS NOT NULL
    GROUP BY run_id, domain, task_id
    UNION ALL
    SELECT run_id, domain, task_id, 'action' AS stage, sum(action_s) AS seconds
    FROM steps
    WHERE action_s IS NOT NULL
    GROUP BY run_id, domain, task_id
),
parts AS (
    SELECT
        t.agent, t.benchmark, t.domain, t.run_id, t.task_id, c.stage,
        sum(c.latency_s)                                  AS seconds,
        count(*)                                          AS n_calls,
        count(*) - count(c.latency_s)                     AS n_untimed
    FROM llm_calls AS c
    JOIN timed AS t USING (run_id, domain, task_id)
    GROUP BY ALL
    UNION ALL
    SELECT t.agent, t.benchmark, t.domain, t.run_id, t.task_id, p.stage, p.seconds, 0, 0
    FROM step_parts AS p
    JOIN timed AS t USING (run_id, domain, task_id)
),
attributed AS (
    SELECT run_id, domain, task_id, sum(seconds) AS seconds, sum(n_untimed) AS n_untimed
    FROM parts
    GROUP BY run_id, domain, task_id
),
all_parts AS (
    SELECT agent, benchmark, domain, stage, seconds, n_calls, n_untimed
    FROM parts
    UNION ALL
    SELECT
        t.agent, t.benchmark, t.domain, 'unattributed',
        t.task_time_s - coalesce(a.seconds, 0), 0, 0
    FROM timed AS t
    LEFT JOIN attributed AS a USING (run_id, domain, task_id)
),
by_stage AS (
    SELECT
        agent, benchmark, coalesce(domain, '(all)') AS domain, stage,
        sum(seconds)                                      AS seconds,
        CAST(sum(n_calls) AS BIGINT)                      AS n_calls,
        CAST(sum(n_untimed) AS BIGINT)                    AS n_calls_without_latency
    FROM all_parts
    GROUP BY GROUPING SETS ((agent, benchmark, domain, stage), (agent, benchmark, stage))
),
totals AS (
    SELECT
        agent, benchmark, coalesce(domain, '(all)') AS domain,
        count(*)                                          AS n_episodes,
        sum(task_time_s)                                  AS task_time_s
    FROM timed
    GROUP BY GROUPING SETS ((agent, benchmark, domain), (agent, benchmark))
),
group_calls AS (
    SELECT
        agent, benchmark, domain,
        sum(n_calls)                                      AS n_calls,
        sum(n_calls_without_latency)                      AS n_untimed
    FROM by_stage
    GROUP BY agent, benchmark, domain
),
final AS (
    SELECT
        s.agent,
        s.benchmark,
        s.domain,
        s.stage,
        CASE WHEN g.n_untimed = 0 THEN s.seconds END          AS seconds,
        CASE WHEN g.n_untimed = 0 THEN s.seconds / nullif(t.task_time_s, 0) END AS share,
        t.task_time_s,
        t.n_episodes,
        s.n_calls,
        s.n_calls_without_latency,
        CASE
            WHEN g.n_untimed > 0 THEN
                CAST(g.n_untimed AS VARCHAR) || ' of ' || CAST(g.n_calls AS VARCHAR)
                || ' model calls carry no latency: the time cannot be split by stage'
            WHEN g.n_calls = 0 THEN
                'no model calls recorded: the time cannot be split by stage'
        END                                                   AS note
    FROM by_stage AS s
    JOIN totals AS t USING (agent, benchmark, domain)
    JOIN group_calls AS g USING (agent, benchmark, domain)
)
SELECT * FROM final
ORDER BY agent, benchmark, domain = '(all)' DESC, domain,
         CASE stage WHEN 'planning' THEN 1 WHEN 'reflection' THEN 2 WHEN 'judging' THEN 3
                    WHEN 'grounding' THEN 4 WHEN 'retrieval' THEN 5 WHEN 'other' THEN 6
                    WHEN 'screenshot' THEN 7 WHEN 'action' THEN 8 ELSE 9 END;
