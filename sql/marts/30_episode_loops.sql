-- episode_loops: per episode, how much of it the agent spent repeating itself.
-- A span's looping steps are its steps after the first (each repeats the step before it);
-- the share is over executed steps (episodes.n_steps, deskscore's t_agent). Every episode
-- appears, those without a span with 0 looping steps; an episode without executed steps
-- has no share (null). Outcome counts are of the episode's spans.
-- Reads: loop_spans, episodes, runs.
CREATE OR REPLACE VIEW episode_loops AS
WITH
span_facts AS (
    SELECT
        run_id,
        domain,
        task_id,
        count(*)                                          AS n_spans,
        CAST(sum(looping_steps) AS BIGINT)                AS looping_steps,
        max(length)                                       AS longest_span,
        count(*) FILTER (WHERE outcome = 'recovered')     AS n_recovered,
        count(*) FILTER (WHERE outcome = 'abandoned')     AS n_abandoned,
        count(*) FILTER (WHERE outcome = 'step_limit')    AS n_step_limit,
        min(detector_version)                             AS detector_version
    FROM loop_spans
    GROUP BY run_id, domain, task_id
),
final AS (
    SELECT
        e.run_id,
        e.benchmark,
        r.agent,
        e.domain,
        e.task_id,
        e.n_steps                                         AS executed_steps,
        e.n_turns,
        r.max_steps,
        coalesce(s.looping_steps, 0)                      AS looping_steps,
        CASE WHEN e.n_steps > 0
             THEN coalesce(s.looping_steps, 0) / e.n_steps END AS looping_share,
        coalesce(s.n_spans, 0)                            AS n_spans,
        coalesce(s.longest_span, 0)                       AS longest_span,
        coalesce(s.n_recovered, 0)                        AS n_recovered,
        coalesce(s.n_abandoned, 0)                        AS n_abandoned,
        coalesce(s.n_step_limit, 0)                       AS n_step_limit,
        e.ended_by,
        e.result_status,
        e.score,
        s.detector_version
    FROM episodes AS e
    LEFT JOIN runs AS r USING (run_id)
    LEFT JOIN span_facts AS s USING (run_id, domain, task_id)
)
SELECT * FROM final
ORDER BY run_id, domain, task_id;
