-- compare: every pair of runs of one benchmark scored under the same configuration, on the
-- tasks both ran (a usable result in both: episode_scores.reward not null), per task: which
-- run did better (reward), and the strict-success outcomes McNemar's test reads (a_only: run
-- A succeeded and run B did not; b_only: the reverse). Each unordered pair appears twice, as
-- (A, B) and as (B, A), so a run can be looked up on either side. difference_pct is in
-- success rate (reward), strict_difference_pct in strict success, both A - B in points. The paired differences
-- with their intervals, McNemar's p and the verdict are `deskscore compare`'s
-- (deskscore.scorers.paired); this only counts.
-- Reads: episode_scores, run_labels.
CREATE OR REPLACE VIEW compare AS
WITH
ran AS (
    SELECT run_id, benchmark, human_version, max_steps_scoring, compat, domain, task_id,
           reward, success
    FROM episode_scores
    WHERE reward IS NOT NULL
),
paired AS (
    SELECT
        a.benchmark, a.human_version, a.max_steps_scoring, a.compat,
        a.run_id AS run_a, b.run_id AS run_b,
        a.reward AS reward_a, b.reward AS reward_b,
        a.success AS success_a, b.success AS success_b
    FROM ran AS a
    JOIN ran AS b
        ON  a.benchmark = b.benchmark
        AND a.human_version = b.human_version
        AND a.max_steps_scoring = b.max_steps_scoring
        AND a.compat = b.compat
        AND a.domain = b.domain
        AND a.task_id = b.task_id
        AND a.run_id <> b.run_id
),
counted AS (
    SELECT
        benchmark, human_version, max_steps_scoring, compat, run_a, run_b,
        count(*)                                           AS n_tasks,
        count(*) FILTER (WHERE reward_a > reward_b)        AS wins,
        count(*) FILTER (WHERE reward_a < reward_b)        AS losses,
        count(*) FILTER (WHERE reward_a = reward_b)        AS ties,
        count(*) FILTER (WHERE success_a AND success_b)    AS both_success,
        count(*) FILTER (WHERE success_a AND NOT success_b) AS a_only,
        count(*) FILTER (WHERE success_b AND NOT success_a) AS b_only,
        count(*) FILTER (WHERE NOT success_a AND NOT success_b) AS neither,
        avg(reward_a)                                      AS success_rate_a,
        avg(reward_b)                                      AS success_rate_b,
        avg(CAST(success_a AS DOUBLE))                     AS strict_success_a,
        avg(CAST(success_b AS DOUBLE))                     AS strict_success_b
    FROM paired
    GROUP BY ALL
),
final AS (
    SELECT
        la.label AS label_a,
        lb.label AS label_b,
        c.*,
        100 * (c.success_rate_a - c.success_rate_b)     AS difference_pct,
        100 * (c.strict_success_a - c.strict_success_b) AS strict_difference_pct
    FROM counted AS c
    JOIN run_labels AS la ON la.run_id = c.run_a
    JOIN run_labels AS lb ON lb.run_id = c.run_b
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, label_a, label_b;
