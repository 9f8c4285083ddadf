-- leaderboard_intervals: the uncertainty of each leaderboard figure, one row per run, scoring
-- configuration, figure and method, beside the run's label: the standard error and the 95%
-- interval the score pipeline computed (run_score_intervals), in the figure's own units (the
-- leaderboard shows the percent figures x 100; `deskscore leaderboard --ci` scales them alike).
-- method: bootstrap_domain (tasks resampled within their domain or app: what the leaderboard
-- and the report show), bootstrap (all tasks together), analytic_clustered (success rates).
-- half_width is half the interval's length, the "±" of `--ci pm`.
-- Reads: run_score_intervals, run_labels.
CREATE OR REPLACE VIEW leaderboard_intervals AS
WITH
final AS (
    SELECT
        l.label,
        i.benchmark,
        i.human_version,
        i.max_steps_scoring,
        i.compat,
        i.metric,
        i.method,
        i.estimate,
        i.se,
        i.ci_low,
        i.ci_high,
        (i.ci_high - i.ci_low) / 2 AS half_width,
        i.n_units,
        i.n_clusters,
        i.n_resamples,
        i.seed,
        i.run_id
    FROM run_score_intervals AS i
    JOIN run_labels AS l USING (run_id)
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, label, metric, method;
