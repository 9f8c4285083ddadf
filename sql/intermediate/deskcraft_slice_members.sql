-- deskcraft_slice_members: which slices each DeskCraft episode belongs to, one row per
-- (slicing, slice, episode), for every way the DeskCraft marts slice tasks (see
-- deskcraft_slices, which sums these rows, and `leaderboard --by ... --ci`, which resamples
-- them): level_stem, level_difficulty, app, domain (the task's category), mode and trigger
-- (a task is in each trigger kind its phases use, its n_phases being the phases of that kind).
-- Reads: deskcraft_episodes.
CREATE OR REPLACE VIEW deskcraft_slice_members AS
WITH
trigger_phases AS (
    SELECT run_id, app, task_id, split_part(unnest(triggers), ':', 1) AS trigger
    FROM deskcraft_episodes
),
trigger_kinds AS (
    SELECT run_id, app, task_id, trigger, count(*) AS n_phases
    FROM trigger_phases
    GROUP BY ALL
),
sliced AS (
    SELECT 'level_stem' AS slicing, level_stem AS slice, * FROM deskcraft_episodes
    UNION ALL
    SELECT 'level_difficulty', level_difficulty, * FROM deskcraft_episodes
    UNION ALL
    SELECT 'app', app, * FROM deskcraft_episodes
    UNION ALL
    SELECT 'domain', category, * FROM deskcraft_episodes
    UNION ALL
    SELECT 'mode', mode, * FROM deskcraft_episodes
    UNION ALL
    SELECT 'trigger', k.trigger, e.* REPLACE (k.n_phases AS n_phases)
    FROM deskcraft_episodes AS e
    JOIN trigger_kinds AS k USING (run_id, app, task_id)
)
SELECT * FROM sliced;
