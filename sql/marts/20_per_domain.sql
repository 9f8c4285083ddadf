-- per_domain: each run's figures per application domain, from the episode scores.
-- The human-task denominators come from human_refs, so a domain's rows add up to the
-- run's figure in run_scores (a test holds SQL and pipeline to that).
-- Reads: human_refs, episode_scores, runs.
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
        median(s.step_ratio_single) FILTER (WHERE s.scored AND s.success) AS median_step_ratio_single
    FROM episode_scores AS s
    GROUP BY ALL
),
final AS (
    SELECT
        r.agent,
        d.benchmark,
        d.human_version,
        d.max_steps_scoring,
        d.compat,
        d.domain,
        d.n_tasks_run,
        h.n_human_tasks,
        100 * d.sum_reward_run / nullif(d.n_tasks_run, 0)          AS success_rate_run_pct,
        100 * d.sum_reward_matched / nullif(h.n_human_tasks, 0)    AS success_rate_human_pct,
        100 * d.sum_wes_plus_single / nullif(h.n_human_tasks, 0)   AS wes_plus_single_pct,
        100 * d.sum_wes_plus_grouped / nullif(h.n_human_tasks, 0)  AS wes_plus_grouped_pct,
        d.sum_wes_minus / nullif(h.n_human_tasks, 0)               AS wes_minus,
        100 * d.sum_wes_single / nullif(h.n_human_tasks, 0)        AS wes_single_pct,
        100 * d.sum_wes_grouped / nullif(h.n_human_tasks, 0)       AS wes_grouped_pct,
        d.median_step_ratio_single,
        d.n_strict_success,
        d.n_tasks_matched,
        d.sum_reward_matched,
        d.sum_wes_plus_single,
        d.sum_wes_plus_grouped,
        d.sum_wes_minus,
        d.run_id
    FROM by_domain AS d
    JOIN runs AS r USING (run_id)
    LEFT JOIN human_per_domain AS h USING (human_version, domain)
)
SELECT * FROM final
ORDER BY agent, human_version, max_steps_scoring, compat, domain;
