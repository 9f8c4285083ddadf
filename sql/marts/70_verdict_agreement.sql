-- verdict_agreement: per run, verdict source and rule, how many episodes each verdict
-- covers, how many it passes (strict success), its mean score, and how often it agrees with
-- result.txt. Disagreements are the point: a recomputed rule that disagrees means the runner
-- wrote a score its own evaluator could not have given (see verdict_disagreements).
-- Reads: verdicts, runs.
CREATE OR REPLACE VIEW verdict_agreement AS
WITH
grouped AS (
    SELECT
        run_id,
        benchmark,
        source,
        rule,
        count(*)                                          AS n_verdicts,
        count(score)                                      AS n_scored,
        count(*) FILTER (WHERE passed)                    AS n_passed,
        avg(score)                                        AS mean_score,
        count(*) FILTER (WHERE agrees_with_archived)      AS n_agree,
        count(*) FILTER (WHERE NOT agrees_with_archived)  AS n_disagree,
        count(*) FILTER (WHERE agrees_with_archived IS NULL) AS n_not_compared
    FROM verdicts
    GROUP BY run_id, benchmark, source, rule
),
final AS (
    SELECT
        r.agent,
        g.benchmark,
        g.run_id,
        g.source,
        g.rule,
        g.n_verdicts,
        g.n_scored,
        g.n_passed,
        100.0 * g.n_passed / nullif(g.n_scored, 0)        AS pass_pct,
        100.0 * g.mean_score                              AS mean_score_pct,
        g.n_agree,
        g.n_disagree,
        g.n_not_compared
    FROM grouped AS g
    LEFT JOIN runs AS r USING (run_id)
)
SELECT * FROM final
ORDER BY agent, run_id, source, rule;
