-- latency_by_step: how long a turn takes as an episode goes on, per agent, in buckets of five
-- turns (1-5, 6-10, ...), to show the growth OSWorld-Human reports (up to 3x late in a task,
-- as prompts carry the history). A turn's time is the sum of its step rows' dt_s: from the
-- previous turn's last action to this turn's last one (model calls, then actions); it works
-- for every run with timestamps, and is null for a turn with a missing timestamp (the first
-- turn has none before it). Where calls record latency, llm_s is the turn's model time.
-- growth_vs_first divides a bucket's median by the first bucket's.
-- Reads: steps, llm_calls, runs.
CREATE OR REPLACE VIEW latency_by_step AS
WITH
turns AS (
    SELECT
        run_id, domain, task_id, step_num                 AS turn,
        CASE WHEN count(dt_s) = count(*) THEN sum(dt_s) END AS turn_s
    FROM steps
    WHERE step_num IS NOT NULL AND action_kind <> 'error'
    GROUP BY run_id, domain, task_id, step_num
),
turn_llm AS (
    SELECT
        run_id, domain, task_id, step_num                 AS turn,
        CASE WHEN count(latency_s) = count(*) THEN sum(latency_s) END AS llm_s
    FROM llm_calls
    WHERE step_num IS NOT NULL
    GROUP BY run_id, domain, task_id, step_num
),
bucketed AS (
    SELECT
        r.agent,
        r.benchmark,
        (t.turn - 1) // 5                                 AS bucket,
        t.turn_s,
        l.llm_s
    FROM turns AS t
    JOIN runs AS r USING (run_id)
    LEFT JOIN turn_llm AS l USING (run_id, domain, task_id, turn)
    WHERE t.turn >= 1
),
by_bucket AS (
    SELECT
        agent,
        benchmark,
        bucket,
        count(*)                                          AS n_turns,
        count(turn_s)                                     AS n_timed_turns,
        median(turn_s)                                    AS median_turn_s,
        median(llm_s)                                     AS median_llm_s,
        count(llm_s)                                      AS n_turns_with_llm_latency
    FROM bucketed
    GROUP BY agent, benchmark, bucket
),
final AS (
    SELECT
        agent,
        benchmark,
        CAST(5 * bucket + 1 AS INTEGER)                   AS first_turn,
        CAST(5 * bucket + 5 AS INTEGER)                   AS last_turn,
        n_turns,
        n_timed_turns,
        median_turn_s,
        median_turn_s / nullif(first_value(median_turn_s IGNORE NULLS) OVER w, 0)
                                                          AS growth_vs_first,
        median_llm_s,
        median_llm_s / nullif(first_value(median_llm_s IGNORE NULLS) OVER w, 0)
                                                          AS llm_growth_vs_first,
        n_turns_with_llm_latency
    FROM by_bucket
    WINDOW w AS (PARTITION BY agent, benchmark ORDER BY bucket
                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
)
SELECT * FROM final
ORDER BY agent, benchmark, first_turn;
