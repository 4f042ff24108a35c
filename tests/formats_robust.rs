//! No input makes a reader or the config parser panic: random bytes, and
//! real captures with random damage, through detection and every forced
//! format. Errors always point inside the file.

mod data;
use data::data_dir;

use proptest::prelude::*;
use std::path::PathBuf;
use steadyhud_config::{Config, Source};
use steadyhud_formats::{read_bytes, Format, ReadOptions};

/// The first 3 KiB of every shared capture, plus a session log and plain text.
fn seeds() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .map(|p| std::fs::read(p).unwrap().into_iter().take(3072).collect())
        .collect();
    v.push(b"# steadyhud 0.1.0 session log\n# exe: x\nframe,present_ns,frametime_ms\n0,1,16.666667\n1,2,16.666667\n".to_vec());
    v.push(b"# steadyhud 0.1.0 session log\nframe,present_ns,frametime_ms,cpu_busy_ms,gpu_busy_ms,gpu_wait_ms\n0,1,16.666667,16.0,15.5,0.25\n1,2,16.666667,16.0,,\n".to_vec());
    v.push(b"16.6\n17.1\n# c\n\n33.0\n".to_vec());
    v
}

fn check(bytes: &[u8]) {
    let lines = bytes.split(|&b| b == b'\n').count() as u64;
    let mut opts: Vec<ReadOptions> = vec![ReadOptions::default()];
    opts.extend(Format::ALL.iter().map(|&f| ReadOptions {
        format: Some(f),
        ..Default::default()
    }));
    for o in &opts {
        match read_bytes(bytes, o) {
            Ok(log) => {
                assert!(!log.durations_ns.is_empty());
                assert!(log.durations_ns.iter().all(|&d| d > 0));
                // GPU columns line up with the frames, and give a sane verdict.
                if let Some(g) = &log.meta.gpu {
                    let n = log.durations_ns.len();
                    assert_eq!(g.busy_ns.len(), n);
                    assert!(g.wait_ns.as_ref().is_none_or(|w| w.len() == n));
                    if let Some(v) = g.stats(&log.durations_ns) {
                        assert!((0.0..=100.0).contains(&v.gpu_bound_pct), "{v:?}");
                        assert!(v.gpu_busy_ms_avg >= 0.0 && v.frames as usize <= n);
                    }
                }
            }
            Err(e) => {
                if let Some(p) = e.pos {
                    assert!(
                        p.line >= 1 && p.line <= lines.max(1),
                        "line {} of {lines}: {}",
                        p.line,
                        e.kind
                    );
                    assert!(p.col >= 1);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&bytes);
    }

    #[test]
    fn random_text_lines_never_panic(lines in proptest::collection::vec("[-0-9a-zA-Z.,#/ \"=]{0,30}", 0..20)) {
        check(lines.join("\n").as_bytes());
    }

    #[test]
    fn damaged_captures_never_panic(
        which in 0usize..10,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..8),
        cut in any::<u16>(),
    ) {
        let seeds = seeds();
        let mut b = seeds[which % seeds.len()].clone();
        for (at, byte, op) in edits {
            let i = at as usize % (b.len() + 1);
            match op {
                0 if i < b.len() => b[i] = byte,
                1 => b.insert(i, byte),
                _ if i < b.len() => { b.remove(i); }
                _ => {}
            }
        }
        let keep = cut as usize % (b.len() + 1);
        check(&b[..keep.max(b.len() / 2)]);
    }

    #[test]
    fn config_text_never_panics(text in "\\PC{0,200}", env in "[a-z_=,0-9.+-]{0,80}") {
        let (_, w) = Config::parse(&text, &Source::File(PathBuf::from("f.conf")));
        prop_assert!(w.iter().all(|l| l.starts_with("f.conf:")));
        let (_, w) = Config::parse(&env, &Source::Env);
        prop_assert!(w.iter().all(|l| l.starts_with("STEADYHUD_CONFIG item ")));
    }
}

#[test]
fn undamaged_seeds_all_read() {
    for s in seeds() {
        let log = read_bytes(&s, &ReadOptions::default());
        // Cut at 3 KiB, a capture may end mid-row: that row's error is fine,
        // anything before it must parse.
        if let Err(e) = &log {
            let last = s.split(|&b| b == b'\n').count() as u64;
            assert!(e.pos.is_some_and(|p| p.line >= last - 1), "{}", e.kind);
        }
    }
}
