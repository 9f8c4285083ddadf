-- loops_long_failures: OSWorld-Human's loop figure, per agent: among failed episodes of at
-- least 50 executed steps, the share of their steps spent looping, and how their loops end
-- (the paper: 66% of steps; recovered 54%, abandoned 37%, step limit 9%).
-- Failed = the episode has a usable result (result_status 'ok') and its score is below 1:
-- an episode without a result was not judged, so it is neither failed nor succeeded.
-- Reads: episode_loops.
CREATE OR REPLACE VIEW loops_long_failures AS
WITH
long_failures AS (
    SELECT *
    FROM episode_loops
    WHERE result_status = 'ok' AND score < 1 AND executed_steps >= 50
),
by_agent AS (
    SELECT
        agent,
        benchmark,
        count(*)                                          AS n_episodes,
        count(*) FILTER (WHERE n_spans > 0)               AS n_episodes_with_loops,
        CAST(sum(executed_steps) AS BIGINT)               AS executed_steps,
        CAST(sum(looping_steps) AS BIGINT)                AS looping_steps,
        avg(looping_share)                                AS mean_episode_looping_share,
        CAST(sum(n_spans) AS BIGINT)                      AS n_spans,
        CAST(sum(n_recovered) AS BIGINT)                  AS n_recovered,
        CAST(sum(n_abandoned) AS BIGINT)                  AS n_abandoned,
        CAST(sum(n_step_limit) AS BIGINT)                 AS n_step_limit
    FROM long_failures
    GROUP BY agent, benchmark
),
final AS (
    SELECT
        agent,
        benchmark,
        n_episodes,
        n_episodes_with_loops,
        executed_steps,
        looping_steps,
        looping_steps / nullif(executed_steps, 0)         AS looping_share,
        mean_episode_looping_share,
        n_spans,
        n_recovered / nullif(n_spans, 0)                  AS recovered_share,
        n_abandoned / nullif(n_spans, 0)                  AS abandoned_share,
        n_step_limit / nullif(n_spans, 0)                 AS step_limit_share,
        n_recovered,
        n_abandoned,
        n_step_limit
    FROM by_agent
)
SELECT * FROM final
ORDER BY agent, benchmark;
