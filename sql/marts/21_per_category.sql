-- per_category: each OSWorld run's per_domain figures summed into show_result.py's domain
-- groups (Office: the LibreOffice apps; Daily: vlc, thunderbird, chrome; Professional: gimp,
-- vs_code; scorers/success.py CATEGORIES), the app families OSWorld users compare. Domains
-- in no group (os, multi_apps, and any other) keep a row of their own, named by the domain,
-- so a run's rows still add up to its run_scores figures. DeskCraft runs have their own
-- slices (per_app, deskcraft_per_domain) and are left out.
-- Reads: per_domain, runs.
CREATE OR REPLACE VIEW per_category AS
WITH
categories AS (
    SELECT domain, category
    FROM (
        VALUES
            {{ domain_categories }}
    ) AS listed (domain, category)
),
osworld_domains AS (
    SELECT d.*, coalesce(c.category, d.domain) AS category, c.category IS NOT NULL AS grouped
    FROM per_domain AS d
    JOIN runs AS r USING (run_id)
    LEFT JOIN categories AS c USING (domain)
    WHERE NOT (r.benchmark = 'deskcraft' OR r.format = 'deskcraft')
),
by_category AS (
    SELECT
        run_id,
        any_value(label)                                  AS label,
        any_value(agent)                                  AS agent,
        benchmark,
        human_version,
        max_steps_scoring,
        compat,
        category,
        bool_and(grouped)                                 AS is_show_result_group,
        string_agg(domain, ', ' ORDER BY domain)          AS domains,
        sum(n_tasks_run)                                  AS n_tasks_run,
        sum(n_human_tasks)                                AS n_human_tasks,
        sum(n_tasks_matched)                              AS n_tasks_matched,
        sum(n_strict_success)                             AS n_strict_success,
        sum(sum_reward_run)                               AS sum_reward_run,
        sum(sum_reward_matched)                           AS sum_reward_matched,
        sum(sum_wes_plus_single)                          AS sum_wes_plus_single,
        sum(sum_step_ratio_single)                        AS sum_step_ratio_single,
        sum(n_step_ratio_single)                          AS n_step_ratio_single
    FROM osworld_domains
    GROUP BY run_id, benchmark, human_version, max_steps_scoring, compat, category
),
final AS (
    SELECT
        label,
        agent,
        benchmark,
        human_version,
        max_steps_scoring,
        compat,
        category,
        is_show_result_group,
        domains,
        n_tasks_run,
        n_strict_success,
        n_human_tasks,
        n_tasks_matched,
        100 * sum_reward_run / nullif(n_tasks_run, 0)               AS success_rate_run_pct,
        CASE WHEN n_tasks_matched > 0 OR compat = 'osworld-human'
            THEN 100 * sum_reward_matched / nullif(n_human_tasks, 0)
        END                                                         AS success_rate_human_pct,
        CASE WHEN n_tasks_matched > 0 OR compat = 'osworld-human'
            THEN 100 * sum_wes_plus_single / nullif(n_human_tasks, 0)
        END                                                         AS wes_plus_single_pct,
        sum_step_ratio_single / nullif(n_step_ratio_single, 0)      AS mean_step_ratio_single,
        sum_reward_run,
        sum_reward_matched,
        sum_wes_plus_single,
        sum_step_ratio_single,
        n_step_ratio_single,
        run_id
    FROM by_category
)
SELECT * FROM final
ORDER BY label, human_version, max_steps_scoring, compat, NOT is_show_result_group, category;
