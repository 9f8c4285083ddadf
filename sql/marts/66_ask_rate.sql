-- ask_rate: of each DeskCraft run's episodes whose task has an agent_asks phase (the user
-- waits for a question before saying more), how many asked (CALL_USER during that phase;
-- see deskcraft_episodes.asked), and how the askers fared against the others. The
-- denominator is every such episode, with or without a result: not asking is the behaviour
-- measured. n_questions_logged counts every CALL_USER question the run logged in its
-- interactive episodes, where a phase waited for it or not (DeskCraft's runner logs none).
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW ask_rate AS
WITH
expected AS (
    SELECT *
    FROM deskcraft_episodes
    WHERE asks_expected
),
questions AS (
    SELECT run_id, CAST(sum(n_questions) AS BIGINT) AS n_questions_logged
    FROM deskcraft_episodes
    WHERE split = 'interactive'
    GROUP BY run_id
),
grouped AS (
    SELECT
        agent,
        benchmark,
        run_id,
        count(*)                                          AS n_episodes,
        count(*) FILTER (WHERE asked)                     AS n_asked,
        count(reward) FILTER (WHERE asked)                AS n_run_asked,
        count(*) FILTER (WHERE asked AND solved)          AS n_solved_asked,
        count(reward) FILTER (WHERE NOT asked)            AS n_run_not_asked,
        count(*) FILTER (WHERE NOT asked AND solved)      AS n_solved_not_asked
    FROM expected
    GROUP BY agent, benchmark, run_id
),
final AS (
    SELECT
        g.agent,
        g.benchmark,
        g.run_id,
        g.n_episodes,
        g.n_asked,
        100.0 * g.n_asked / nullif(g.n_episodes, 0)       AS ask_rate_pct,
        100.0 * g.n_solved_asked / nullif(g.n_run_asked, 0)         AS strict_success_asked_pct,
        100.0 * g.n_solved_not_asked / nullif(g.n_run_not_asked, 0) AS strict_success_not_asked_pct,
        q.n_questions_logged
    FROM grouped AS g
    LEFT JOIN questions AS q USING (run_id)
)
SELECT * FROM final
ORDER BY agent, run_id;
