-- One row per source (archive, folder, URL) an ingest finished reading: what lets the next ingest skip it. Written once a whole ingest succeeded, so a killed ingest is redone.
-- Staging: rename and cast only; one row per row of the Parquet files.
CREATE OR REPLACE VIEW sources AS
SELECT
    CAST(source AS VARCHAR)        AS source,
    CAST(source_stamp AS VARCHAR)  AS source_stamp,
    CAST(benchmark AS VARCHAR)     AS benchmark,
    CAST(n_runs AS INTEGER)        AS n_runs,
    CAST(layout AS VARCHAR)        AS layout,
    CAST(agent AS VARCHAR)         AS agent,
    CAST(run_name AS VARCHAR)      AS run_name
FROM raw_sources;
