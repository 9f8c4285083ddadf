-- per_domain: each run's figures per application domain, from the episode scores, the way
-- show_result.py users read per-domain results: tasks run, tasks solved (r = 1), the success
-- rate both ways (over the domain's tasks run, as show_result.py; over the domain's human
-- tasks, as OSWorld-Human), WES+ and the step ratio of successful tasks.
-- The human-task denominators come from human_refs, and each domain keeps its sums, so a
-- domain's rows add up to the run's figure in run_scores (a test holds SQL and pipeline to
-- that); the mean step ratio adds up through its sum and count. As in run_scores, a figure
-- over human tasks is null under the deskscore rules when none of the domain's tasks
-- matched one (0 under osworld-human).
-- Reads: human_refs, episode_scores, runs, run_labels.
CREATE OR REPLACE VIEW per_domain AS
WITH
human_per_domain AS (
    SELECT human_version, domain, count(*) AS n_human_tasks
    FROM human_refs
    GROUP BY human_version, domain
),
by_domain AS (
    SELECT
        s.run_id,
        s.benchmark,
        s.human_version,
        s.max_steps_scoring,
        s.compat,
        s.domain,
        count(s.reward)                                   AS n_tasks_run,
        sum(s.reward)                                     AS sum_reward_run,
        count(*) FILTER (WHERE s.success)                 AS n_strict_success,
        count(*) FILTER (WHERE s.scored)                  AS n_tasks_matched,
        coalesce(sum(s.reward) FILTER (WHERE s.scored), 0)            AS sum_reward_matched,
        coalesce(sum(s.wes_plus_single) FILTER (WHERE s.scored), 0)   AS sum_wes_plus_single,
        coalesce(sum(s.wes_plus_grouped) FILTER (WHERE s.scored), 0)  AS sum_wes_plus_grouped,
        coalesce(sum(s.wes_minus) FILTER (WHERE s.scored), 0)         AS sum_wes_minus,
        coalesce(sum(s.wes_single) FILTER (WHERE s.scored), 0)        AS sum_wes_single,
        coalesce(sum(s.wes_grouped) FILTER (WHERE s.scored), 0)       AS sum_wes_grouped,
        median(s.step_ratio_single) FILTER (WHERE s.scored AND s.success) AS median_step_ratio_single,
        coalesce(sum(s.step_ratio_single) FILTER (WHERE s.scored AND s.success), 0)
                                                          AS sum_step_ratio_single,
        count(s.step_ratio_single) FILTER (WHERE s.scored AND s.success)
                                                          AS n_step_ratio_single
    FROM episode_scores AS s
    GROUP BY ALL
),
measured AS (
    -- the human-task denominator, or null where it would measure nothing
    SELECT
        d.*,
        h.n_human_tasks,
        CASE
            WHEN d.n_tasks_matched = 0 AND d.compat <> 'osworld-human' THEN NULL
            ELSE h.n_human_tasks
        END AS n_over
    FROM by_domain AS d
    LEFT JOIN human_per_domain AS h USING (human_version, domain)
),
final AS (
    SELECT
        l.label,
        r.agent,
        d.benchmark,
        d.human_version,
        d.max_steps_scoring,
        d.compat,
        d.domain,
        d.n_tasks_run,
        d.n_human_tasks,
        100 * d.sum_reward_run / nullif(d.n_tasks_run, 0)          AS success_rate_run_pct,
        100 * d.sum_reward_matched / nullif(d.n_over, 0)           AS success_rate_human_pct,
        100 * d.sum_wes_plus_single / nullif(d.n_over, 0)          AS wes_plus_single_pct,
        100 * d.sum_wes_plus_grouped / nullif(d.n_over, 0)         AS wes_plus_grouped_pct,
        d.sum_wes_minus / nullif(d.n_over, 0)                      AS wes_minus,
        100 * d.sum_wes_single / nullif(d.n_over, 0)               AS wes_single_pct,
        100 * d.sum_wes_grouped / nullif(d.n_over, 0)              AS wes_grouped_pct,
        d.median_step_ratio_single,
        d.sum_step_ratio_single / nullif(d.n_step_ratio_single, 0) AS mean_step_ratio_single,
        d.n_strict_success,
        d.n_tasks_matched,
        d.sum_reward_run,
        d.sum_reward_matched,
        d.sum_wes_plus_single,
        d.sum_wes_plus_grouped,
        d.sum_wes_minus,
        d.sum_step_ratio_single,
        d.n_step_ratio_single,
        d.run_id
    FROM measured AS d
    JOIN runs AS r USING (run_id)
    JOIN run_labels AS l USING (run_id)
)
SELECT * FROM final
ORDER BY label, human_version, max_steps_scoring, compat, domain;
