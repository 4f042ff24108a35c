//! The fleet query of docs/cli.md (`docs/fleet.sql`) run for real in DuckDB
//! over `summarize --csv --histogram` output from two "machines", and
//! checked against `steadyhud merge` of the same files: the same frames,
//! the same Steady / Mostly Steady / Typical FPS, the same percentiles.
//!
//! Needs Python with the `duckdb` package: `.venv-duckdb/` in the checkout
//! (what `.ci/run` creates) or `$STEADYHUD_DUCKDB_PYTHON`. Without it the
//! test prints a SKIPPED line and passes, unless `STEADYHUD_REQUIRE_TOOLS=1`
//! (set by `.ci/run`; tests/require), where a missing DuckDB is a failure.

#[path = "../../../tests/data/mod.rs"]
mod data;
use data::data_dir;
#[path = "../../../tests/require/mod.rs"]
mod require;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("layer-manifest").is_dir())
        .expect("the test runs inside the checkout")
}

/// Python with duckdb importable, or why not.
fn duckdb_python() -> Result<PathBuf, String> {
    let python = std::env::var_os("STEADYHUD_DUCKDB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv-duckdb/bin/python"));
    let out = Command::new(&python)
        .args(["-c", "import duckdb; print(duckdb.__version__)"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if out.status.success() {
        Ok(python)
    } else {
        Err(format!(
            "{}: import duckdb failed: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn steadyhud(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(args)
        .output()
        .expect("run steadyhud");
    assert!(
        out.status.success(),
        "steadyhud {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A log's name and its frame time (ms) by frame index.
type Shape = (&'static str, fn(usize) -> f64);

/// Plain-text logs of different shapes, so the fleet has buckets that
/// straddle frame budgets and a tail of hitches.
fn generated(dir: &Path) -> Vec<PathBuf> {
    let shapes: [Shape; 3] = [
        ("at60.txt", |i| 16.6 + ((i * 31) % 7) as f64 * 0.02),
        ("at144.txt", |i| 6.9 + ((i * 7919) % 13) as f64 * 0.05),
        ("hitches.txt", |i| if i % 61 == 0 { 95.0 } else { 11.1 }),
    ];
    shapes
        .iter()
        .map(|(name, f)| {
            let p = dir.join(name);
            let text: String = (0..5000).map(|i| format!("{:.6}\n", f(i))).collect();
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect()
}

#[test]
fn fleet_sql_in_duckdb_equals_merge() {
    // The snippet shown in docs/cli.md is this file.
    let sql = std::fs::read_to_string(repo().join("docs/fleet.sql")).unwrap();
    let cli_md = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    assert!(cli_md.contains("docs/fleet.sql") || cli_md.contains("(fleet.sql)"));
    // Its head, from the view through the merge to the percentiles, is
    // quoted there verbatim.
    let head = sql
        .lines()
        .skip_while(|l| !l.starts_with("CREATE OR REPLACE VIEW"))
        .take_while(|l| !l.contains("AS p50_ms"));
    for line in head {
        assert!(cli_md.contains(line), "docs/cli.md lacks {line:?}");
    }

    let python = match duckdb_python() {
        Ok(p) => p,
        Err(why) => {
            require::skip_or_fail(&format!(
                "no Python duckdb ({why}); run .ci/run or: python3 -m venv .venv-duckdb && \
                 .venv-duckdb/bin/pip install duckdb (apt-get install python3-venv)"
            ));
            return;
        }
    };

    // Two machines upload their summarize output to one folder.
    let dir = tempfile::tempdir().unwrap();
    let uploads = dir.path().join("histograms");
    std::fs::create_dir(&uploads).unwrap();
    let mut captures: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        // MangoHud 0.6 rows are log intervals, one of them 195 s: half the
        // fleet's time, which would pin every FPS metric at 0.
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mangohud")
        })
        .collect();
    captures.sort();
    let machines = [captures, generated(dir.path())];
    let mut files = Vec::new();
    for (i, logs) in machines.iter().enumerate() {
        let mut args = vec!["summarize", "--csv", "--histogram"];
        args.extend(logs.iter().map(|p| p.to_str().unwrap()));
        let f = uploads.join(format!("machine{i}.csv"));
        std::fs::write(&f, steadyhud(&args)).unwrap();
        files.push(f);
    }

    let glob = format!("{}/*.csv", uploads.display());
    let query = sql.replace("histograms/*.csv", &glob);
    assert_ne!(query, sql, "the snippet reads 'histograms/*.csv'");
    let script = r#"
import duckdb, json, sys
con = duckdb.connect()
cur = con.execute(sys.stdin.read())
names = [d[0] for d in cur.description]
row = cur.fetchone()
print(json.dumps({k: (int(v) if type(v).__name__ in ("int", "Decimal") else v) for k, v in zip(names, row)}))
"#;
    let mut child = Command::new(&python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(query.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let duck: Value = serde_json::from_slice(&out.stdout).unwrap();

    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    let merged: Value = serde_json::from_str(&steadyhud(&args)).unwrap();
    let logs = machines.iter().map(Vec::len).sum::<usize>();
    assert_eq!(merged["logs"], logs);
    for k in ["frames", "steady_fps", "mostly_steady_fps", "typical_fps"] {
        assert_eq!(
            duck[k], merged[k],
            "{k}: duckdb {} merge {}",
            duck[k], merged[k]
        );
    }
    for k in [
        "duration_s",
        "average_fps",
        "p50_ms",
        "p90_ms",
        "p95_ms",
        "p99_ms",
        "p99_9_ms",
    ] {
        let (d, m) = (duck[k].as_f64().unwrap(), merged[k].as_f64().unwrap());
        assert!(
            (d - m).abs() <= 1e-12 * m.abs(),
            "{k}: duckdb {d} merge {m}"
        );
    }
    // A fleet with something to say: not every metric pinned at 0.
    for k in ["steady_fps", "mostly_steady_fps", "typical_fps"] {
        assert!(merged[k].as_u64().unwrap() > 0, "{k}: {}", merged[k]);
    }
}
