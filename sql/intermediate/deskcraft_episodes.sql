-- deskcraft_episodes: one row per episode of a DeskCraft run, beside its task's slices (app,
-- DeskCraft domain, split, both level sources, collaboration mode, phase triggers) and what
-- the agent did (environment steps, questions). The base of the DeskCraft marts, so they all
-- count the same episodes the same way.
-- reward is the pipeline's r (episode_scores, deskscore rules: result.txt clamped into
-- [0, 1]; null when the task counts as not run), the same figure run_scores averages, so
-- each mart's slices add up to the run's success_rate_run and strict_success_rate_run.
-- asked: the agent asked the user (CALL_USER) during a phase whose trigger is agent_asks;
-- seen as a call_user interaction, or as a user reply logged in such a phase (DeskCraft's
-- runner logs the reply, not the question, and its user speaks in such a phase only when
-- asked).
-- Reads: runs, tasks, episode_scores, interactions, episodes.
CREATE OR REPLACE VIEW deskcraft_episodes AS
WITH
deskcraft_runs AS (
    SELECT run_id, agent, max_steps
    FROM runs
    WHERE benchmark = 'deskcraft' OR format = 'deskcraft'
),
deskcraft_tasks AS (
    SELECT
        domain,
        task_id,
        category,
        split,
        level_stem,
        level_difficulty,
        mode,
        coalesce(triggers, [])                            AS triggers,
        n_phases,
        n_evaluators,
        n_rule_atoms
    FROM tasks
    WHERE benchmark = 'deskcraft'
),
rewards AS (
    SELECT run_id, domain, task_id, any_value(reward) AS reward
    FROM episode_scores
    WHERE compat = 'deskscore'
    GROUP BY run_id, domain, task_id
),
exchanges AS (
    SELECT
        i.run_id,
        i.domain,
        i.task_id,
        count(*) FILTER (WHERE i.type = 'call_user')     AS n_questions,
        count(*) FILTER (WHERE i.type NOT IN ('initial_instruction', 'call_user'))
                                                          AS n_user_turns,
        bool_or(
            i.type <> 'initial_instruction'
            AND t.triggers[i.phase] = 'agent_asks'
        )                                                 AS asked
    FROM interactions AS i
    JOIN deskcraft_tasks AS t USING (domain, task_id)
    GROUP BY i.run_id, i.domain, i.task_id
),
final AS (
    SELECT
        r.agent,
        e.benchmark,
        e.run_id,
        e.domain                                          AS app,
        coalesce(t.category, '(unknown task)')            AS category,
        e.task_id,
        coalesce(t.split, '(unknown task)')               AS split,
        coalesce(t.level_stem, 'unlabelled')              AS level_stem,
        coalesce(t.level_difficulty, 'unlabelled')        AS level_difficulty,
        coalesce(t.mode, CASE WHEN t.split = 'interactive' THEN 'untyped' END) AS mode,
        t.triggers,
        t.n_phases,
        list_contains(t.triggers, 'agent_asks')           AS asks_expected,
        coalesce(x.asked, false)                          AS asked,
        coalesce(x.n_questions, 0)                        AS n_questions,
        coalesce(x.n_user_turns, 0)                       AS n_user_turns,
        e.n_steps,
        e.n_turns,
        r.max_steps,
        e.result_status,
        s.reward,
        s.reward = 1                                      AS solved
    FROM episodes AS e
    JOIN deskcraft_runs AS r USING (run_id)
    LEFT JOIN deskcraft_tasks AS t USING (domain, task_id)
    LEFT JOIN rewards AS s USING (run_id, domain, task_id)
    LEFT JOIN exchanges AS x USING (run_id, domain, task_id)
)
SELECT * FROM final;
