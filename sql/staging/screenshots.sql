-- One row per distinct screenshot content: decoded once, whatever how many steps, runs or re-runs show it.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW screenshots AS
SELECT
    CAST(content_hash AS VARCHAR) AS content_hash,
    CAST(run_id AS VARCHAR)       AS run_id,
    CAST(benchmark AS VARCHAR)    AS benchmark,
    CAST(phash AS BIGINT)        AS phash,
    CAST(width AS INTEGER)        AS width,
    CAST(height AS INTEGER)       AS height,
    CAST(n_bytes AS BIGINT)      AS n_bytes,
    CAST(format AS VARCHAR)       AS format,
    CAST(status AS VARCHAR)       AS status
FROM raw_screenshots;
