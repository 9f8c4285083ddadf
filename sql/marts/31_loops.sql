-- loops: per agent and application domain, how often and how much agents loop, and how
-- their loops end. Built on episode_loops, so the figures add up to it: the looping share
-- of steps is sum(looping steps) / sum(executed steps) (a step-weighted share, not a mean
-- of episode shares); outcome shares are over the spans.
-- Reads: episode_loops.
CREATE OR REPLACE VIEW loops AS
WITH
by_agent_domain AS (
    SELECT
        agent,
        benchmark,
        domain,
        count(DISTINCT run_id)                            AS n_runs,
        count(*)                                          AS n_episodes,
        count(*) FILTER (WHERE n_spans > 0)               AS n_episodes_with_loops,
        CAST(sum(executed_steps) AS BIGINT)               AS executed_steps,
        CAST(sum(looping_steps) AS BIGINT)                AS looping_steps,
        CAST(sum(n_spans) AS BIGINT)                      AS n_spans,
        CAST(sum(n_recovered) AS BIGINT)                  AS n_recovered,
        CAST(sum(n_abandoned) AS BIGINT)                  AS n_abandoned,
        CAST(sum(n_step_limit) AS BIGINT)                 AS n_step_limit
    FROM episode_loops
    GROUP BY agent, benchmark, domain
),
final AS (
    SELECT
        agent,
        benchmark,
        domain,
        n_runs,
        n_episodes,
        n_episodes_with_loops,
        n_episodes_with_loops / n_episodes                AS episodes_with_loops_share,
        executed_steps,
        looping_steps,
        looping_steps / nullif(executed_steps, 0)         AS looping_share,
        n_spans,
        n_recovered,
        n_abandoned,
        n_step_limit,
        n_recovered / nullif(n_spans, 0)                  AS recovered_share,
        n_abandoned / nullif(n_spans, 0)                  AS abandoned_share,
        n_step_limit / nullif(n_spans, 0)                 AS step_limit_share
    FROM by_agent_domain
)
SELECT * FROM final
ORDER BY agent, benchmark, domain;
