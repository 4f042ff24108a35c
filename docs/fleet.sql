-- Fleet-wide time-weighted metrics from the time histograms of any number
-- of logs: `steadyhud summarize LOG... --csv --histogram` output, columns
-- file,bucket,lo_ns,hi_ns,frames,time_ns (one file per machine, or one
-- for all). DuckDB SQL; the merge itself is the plain SUM … GROUP BY bucket
-- of `buckets`, which any engine (Spark, BigQuery) runs as is. All
-- comparisons are exact integer arithmetic, so the numbers equal those of
-- `steadyhud merge` (error bound: docs/metrics.md#fleet-histogram).
CREATE OR REPLACE VIEW hist AS
  SELECT * FROM read_csv('histograms/*.csv',
    types = {'bucket': 'INTEGER', 'frames': 'BIGINT', 'time_ns': 'HUGEINT'});

WITH buckets AS (      -- the merge: frames and time per bucket, all logs
  SELECT bucket, SUM(frames)::HUGEINT AS frames, SUM(time_ns)::HUGEINT AS time_ns
  FROM hist GROUP BY bucket
),
fleet AS (SELECT SUM(frames) AS n, SUM(time_ns) AS t FROM buckets),
running AS (           -- time in frames of this bucket or shorter
  SELECT bucket, frames, time_ns, SUM(time_ns) OVER (ORDER BY bucket) AS cum_ns
  FROM buckets
),
percentiles AS (       -- P(p): mean frame of the first bucket whose running time reaches p·T
  SELECT
    arg_min(time_ns / frames, bucket) FILTER (WHERE cum_ns * 1000 >= 500 * t) / 1e6 AS p50_ms,
    arg_min(time_ns / frames, bucket) FILTER (WHERE cum_ns * 1000 >= 900 * t) / 1e6 AS p90_ms,
    arg_min(time_ns / frames, bucket) FILTER (WHERE cum_ns * 1000 >= 950 * t) / 1e6 AS p95_ms,
    arg_min(time_ns / frames, bucket) FILTER (WHERE cum_ns * 1000 >= 990 * t) / 1e6 AS p99_ms,
    arg_min(time_ns / frames, bucket) FILTER (WHERE cum_ns * 1000 >= 999 * t) / 1e6 AS p99_9_ms
  FROM running, fleet
),
steps AS (             -- a bucket (its frames at their mean) is slow for a target
                       -- f ≥ f_from = ⌊1e9·frames/time⌋ + 1; slow time S and
                       -- count C change only at these steps
  SELECT f_from, LEAD(f_from) OVER (ORDER BY f_from) - 1 AS f_to,
         SUM(s) OVER (ORDER BY f_from) AS slow_ns, SUM(c) OVER (ORDER BY f_from) AS slow_frames
  FROM (SELECT 1000000000 * frames // time_ns + 1 AS f_from, SUM(time_ns) AS s, SUM(frames) AS c
        FROM buckets WHERE time_ns > 0 GROUP BY ALL)
),
bounds(metric, slow_pm, excess_pm) AS (  -- slow share < slow_pm/1000, excess share < excess_pm/1000
  VALUES ('steady_fps', 10, 1), ('mostly_steady_fps', 120, 20), ('typical_fps', 500, 100)
),
best AS (              -- per step, the largest f meeting both bounds: excess share
                       -- (f·S − 1e9·C)/(f·T) < b/1000  ⇔  f·(1000·S − b·T) < 1e12·C
  SELECT metric, f_from,
    CASE WHEN 1000 * slow_ns >= slow_pm * t THEN NULL
         WHEN 1000 * slow_ns <= excess_pm * t THEN f_to
         ELSE LEAST(COALESCE(f_to, (1000000000000 * slow_frames - 1) // (1000 * slow_ns - excess_pm * t)),
                    (1000000000000 * slow_frames - 1) // (1000 * slow_ns - excess_pm * t))
    END AS f_hi
  FROM steps, bounds, fleet
),
stk AS (               -- below the first step no frame is slow: every f there meets
  SELECT metric, GREATEST((SELECT MIN(f_from) - 1 FROM steps),
                          COALESCE(MAX(f_hi) FILTER (WHERE f_hi >= f_from), 0)) AS fps
  FROM best GROUP BY metric
)
SELECT n AS frames, t / 1e9 AS duration_s, n * 1e9 / t AS average_fps, percentiles.*,
  (SELECT fps FROM stk WHERE metric = 'steady_fps') AS steady_fps,
  (SELECT fps FROM stk WHERE metric = 'mostly_steady_fps') AS mostly_steady_fps,
  (SELECT fps FROM stk WHERE metric = 'typical_fps') AS typical_fps
FROM fleet, percentiles;
