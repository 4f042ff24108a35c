//! `steadyhud export`: the running games' numbers for Prometheus, live.
//! The games are found through their control sockets (as `ctl list` finds
//! them) and read over them; the game processes open no network socket.
//! Served as the Prometheus text format at `/metrics` on `--listen`
//! (loopback unless another address is asked for), or written atomically
//! into `--textfile DIR` every `--interval` seconds for node_exporter's
//! textfile collector. Modules: `families` (every metric, declared once),
//! `gather` (reading the games), `render` (the text, counters kept
//! monotonic), `http` (the hardened endpoint). docs/fleet.md has the
//! scrape config and the queries.

mod families;
mod gather;
mod http;
mod render;

pub use families::{all as families, le_bounds, metric_gauges, Family, Kind, MetricGauge, LE_STEP};
pub use http::parse_head;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The default scrape address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9464";
/// The file `--textfile` writes in its folder.
pub const TEXTFILE_NAME: &str = "steadyhud.prom";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to serve /metrics on (another than loopback only when
    /// given here; port 0 picks a free one, printed at start).
    #[arg(long, value_name = "ADDR:PORT", default_value = DEFAULT_LISTEN, conflicts_with = "textfile")]
    pub listen: String,
    /// Write the metrics to DIR/steadyhud.prom every --interval seconds
    /// (for node_exporter's textfile collector) instead of serving them.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// Seconds between --textfile writes.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub interval: f64,
    /// With --textfile: write once and exit.
    #[arg(long, requires = "textfile")]
    pub once: bool,
}

pub fn run(args: &Args) -> ExitCode {
    let dir = match steadyhud_control::socket_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("steadyhud export: {e}");
            return ExitCode::from(2);
        }
    };
    let mut gatherer = gather::Gatherer::new(dir);
    let mut monotonic = render::Monotonic::default();
    let mut server = http::Server::default();
    let accept_errors = std::sync::Arc::clone(&server.accept_errors);
    let mut scrape = move || {
        let games = gatherer.gather();
        let accepts = accept_errors.load(std::sync::atomic::Ordering::Relaxed);
        monotonic.render(&games, gatherer.errors, accepts)
    };
    if let Some(folder) = &args.textfile {
        if !(args.interval.is_finite() && args.interval >= 0.1) {
            eprintln!(
                "steadyhud export: --interval {}: at least 0.1 s",
                args.interval
            );
            return ExitCode::from(2);
        }
        if !folder.is_dir() {
            eprintln!(
                "steadyhud export: --textfile {}: not a folder",
                folder.display()
            );
            return ExitCode::from(2);
        }
        if !args.once {
            eprintln!(
                "steadyhud export: writing {} every {} s",
                folder.join(TEXTFILE_NAME).display(),
                args.interval
            );
        }
        loop {
            if let Err(e) = write_atomically(folder, &scrape()) {
                eprintln!("steadyhud export: {e}");
                return ExitCode::from(1);
            }
            if args.once {
                return ExitCode::SUCCESS;
            }
            std::thread::sleep(Duration::from_secs_f64(args.interval));
        }
    }
    let listener = match TcpListener::bind(&args.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("steadyhud export: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(2);
        }
    };
    match listener.local_addr() {
        Ok(a) => {
            server.hosts = std::sync::Arc::new(http::Hosts::new(&args.listen, a));
            if !a.ip().is_loopback() {
                eprintln!(
                    "steadyhud export: listening on {a}, which is not loopback: every host that reaches it can read these games' numbers"
                );
            }
            eprintln!("steadyhud export: serving http://{a}/metrics");
        }
        Err(e) => eprintln!("steadyhud export: {e}"),
    }
    server.serve(listener, Box::new(scrape));
    ExitCode::SUCCESS
}

/// Writes `text` to `folder/steadyhud.prom` through a temporary file and a
/// rename, so a reader never sees half a file.
fn write_atomically(folder: &Path, text: &str) -> Result<(), String> {
    let target = folder.join(TEXTFILE_NAME);
    let tmp = folder.join(format!(".{TEXTFILE_NAME}.{}.tmp", std::process::id()));
    // A link planted under the temporary name is replaced, never written
    // through (the folder is often shared with node_exporter).
    steadyhud_sys::private_dir::replace_file(&target, &tmp, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// node_exporter's folder is often writable by others: a link planted
    /// under our temporary name is not written through.
    #[test]
    fn a_symlinked_temporary_textfile_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let tmp = dir
            .path()
            .join(format!(".{TEXTFILE_NAME}.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomically(dir.path(), "m 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let got = std::fs::read_to_string(dir.path().join(TEXTFILE_NAME)).unwrap();
        assert_eq!(got, "m 1\n");
    }
}
