-- deskcraft_slice_units: the units the DeskCraft slice marts' rates sum over (per_level,
-- per_app, deskcraft_per_domain, per_mode, through deskcraft_slices), one row per episode
-- and slice, for resampling them (`leaderboard --by ... --ci`): strict % is
-- sum(num_strict) / sum(den) and mean score % sum(num_score) / sum(den) over a slice's rows
-- (of one split, or of both for split 'all').
-- Reads: deskcraft_slice_members.
CREATE OR REPLACE VIEW deskcraft_slice_units AS
WITH
final AS (
    SELECT
        run_id, slicing, slice, split, app, task_id,
        CASE WHEN solved THEN 1 ELSE 0 END         AS num_strict,
        coalesce(reward, 0)                        AS num_score,
        CASE WHEN reward IS NULL THEN 0 ELSE 1 END AS den
    FROM deskcraft_slice_members
)
SELECT * FROM final;
