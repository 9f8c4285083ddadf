-- deskcraft_per_domain: each DeskCraft run's figures per DeskCraft domain (Office, Browser,
-- Development, Creative Design, Multimedia & 3D, and Multi-app for the multi-app workflows),
-- per split and over both. per_domain stays OSWorld's (per app, against OSWorld-Human).
-- The domains of one split add up to the run; strict success and mean score kept apart.
-- Reads: deskcraft_slices.
CREATE OR REPLACE VIEW deskcraft_per_domain AS
WITH
final AS (
    SELECT
        agent, benchmark, run_id, split, slice AS domain, n_apps,
        n_episodes, n_tasks_run, n_strict_success, strict_success_pct, mean_score_pct, sum_reward
    FROM deskcraft_slices
    WHERE slicing = 'domain'
)
SELECT * FROM final
ORDER BY agent, run_id, split, domain;
