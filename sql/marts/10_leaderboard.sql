-- leaderboard: one row per run and scoring configuration, best OSWorld-Human success first
-- (`deskscore leaderboard` shows one configuration). Runs are shown by their label
-- (run_labels: the run name or agent, told apart from namesakes by the part of the path that
-- differs). Figures come from run_scores and run_costs (computed once, by the pipeline);
-- this only slices and ranks. Cost per task and median task time are null until costs are
-- computed, and cost per task stays null for runs without usage data or with unpriced models.
-- n_tasks_matched counts the tasks run that are tasks of the human data; when it is 0 the
-- figures over the N human tasks are null under the deskscore rules (0 under osworld-human,
-- as the original computes them), and `note` says why (no usable result, or which domains
-- ran instead: Sec-Eval's scenarios, DeskCraft's tasks); it also says when trajectory lines
-- past a reading cap were counted but not read, which leaves those tasks' step counts short.
-- Which figures, in which order, how they are shown and what ranks runs: the metric registry
-- (deskscore.scorers.metrics) says, and the loader renders the {{ }} expressions from it.
-- Reads: runs, run_labels, episodes, episode_scores, quarantine, run_scores, run_costs.
CREATE OR REPLACE VIEW leaderboard AS
WITH
run_facts AS (
    SELECT
        r.run_id, l.label, r.agent, r.run_name, r.model, r.benchmark, r.format, r.source,
        r.run_path, r.max_steps, r.n_task_folders
    FROM runs AS r
    JOIN run_labels AS l USING (run_id)
),
domains_run AS (
    -- the domains of the tasks run, to name them when none matched the human data
    SELECT
        run_id, human_version, max_steps_scoring, compat,
        list(DISTINCT domain ORDER BY domain) AS domains
    FROM episode_scores
    WHERE reward IS NOT NULL
    GROUP BY ALL
),
episode_facts AS (
    SELECT
        run_id,
        count(*)                                  AS n_episodes,
        sum(n_steps)                              AS n_steps,
        sum(n_error_lines)                        AS n_error_lines,
        count(*) FILTER (WHERE result_status <> 'ok') AS n_without_result
    FROM episodes
    GROUP BY run_id
),
quarantined AS (
    -- items quarantined: a row of consecutive lines counts each of its lines; those past a
    -- reading cap were counted, not read, so their tasks' step counts are short
    SELECT
        run_id,
        sum(coalesce(n_lines, 1)) AS n_quarantined,
        sum(coalesce(n_lines, 1)) FILTER (
            WHERE reason IN ('over_run_cap', 'over_trajectory_cap')
        ) AS n_lines_over_cap,
        count(DISTINCT location) FILTER (
            WHERE reason IN ('over_run_cap', 'over_trajectory_cap')
        ) AS n_files_over_cap
    FROM quarantine
    GROUP BY run_id
),
cost_facts AS (
    SELECT run_id, {{ board_columns(run_costs) }}
    FROM run_costs
),
scored AS (
    SELECT
        s.*,
        r.label,
        r.agent,
        r.run_name,
        r.format,
        d.domains,
        r.model,
        r.run_path,
        r.source,
        r.max_steps,
        e.n_episodes,
        e.n_steps,
        e.n_without_result,
        coalesce(q.n_quarantined, 0) AS n_quarantined,
        q.n_lines_over_cap,
        q.n_files_over_cap,
        c.* EXCLUDE (run_id)
    FROM run_scores AS s
    JOIN run_facts AS r USING (run_id)
    LEFT JOIN episode_facts AS e USING (run_id)
    LEFT JOIN quarantined AS q USING (run_id)
    LEFT JOIN cost_facts AS c USING (run_id)
    LEFT JOIN domains_run AS d USING (run_id, human_version, max_steps_scoring, compat)
),
noted AS (
    SELECT
        *,
        nullif(concat_ws('; ', CASE
            WHEN n_tasks_matched > 0 THEN NULL
            ELSE
                CASE
                    WHEN n_tasks_run = 0 THEN 'no task has a usable result'
                    WHEN benchmark = 'deskcraft' OR format = 'deskcraft'
                        THEN 'DeskCraft tasks are not OSWorld-Human tasks'
                    ELSE 'none of the ' || n_tasks_run || ' task(s) run is a task of OSWorld-Human '
                        || human_version || ' (domains: '
                        || array_to_string(list_slice(domains, 1, 4), ', ')
                        || CASE WHEN len(domains) > 4 THEN ', ...' ELSE '' END || ')'
                END
                || CASE
                    WHEN compat = 'osworld-human'
                        THEN ': the figures over the N human tasks are 0, as OSWorld-Human''s score.py computes them'
                    ELSE ': the figures over the N human tasks (OSWorld-Human %, WES+, WES-, WES) are empty'
                END
        END, CASE
            WHEN n_lines_over_cap > 0 THEN
                n_lines_over_cap || ' trajectory line(s) of ' || n_files_over_cap
                || ' file(s) were past a reading cap, counted but not read (see quarantine):'
                || ' those tasks'' step counts are short'
        END), '') AS note
    FROM scored
),
final AS (
    SELECT
        rank() OVER (
            PARTITION BY benchmark, human_version, max_steps_scoring, compat
            ORDER BY {{ rank_order }}
        )                                       AS rank,
        label,
        agent,
        run_name,
        benchmark,
        run_path,
        human_version,
        max_steps_scoring,
        step_budget,
        compat,
        n_tasks_run,
        n_tasks_matched,
        n_human_tasks,
        {{ board_figures }},
        n_steps,
        n_without_result,
        n_quarantined,
        note,
        run_id,
        source
    FROM noted
)
SELECT * FROM final
ORDER BY benchmark, human_version, max_steps_scoring, compat, rank, label;
