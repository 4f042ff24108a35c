//! The frame-pacing script: `16.6ms*300,120ms*1,16.6ms*300` parsed into the
//! list of gaps between consecutive presents, and the absolute schedule built
//! from it.

use std::time::Duration;

/// One `DURATION*COUNT` entry of a pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub gap: Duration,
    pub count: u64,
}

/// A parsed pacing script: the gaps between consecutive presents, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub entries: Vec<Entry>,
}

/// Why a pattern string was rejected.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PatternError {
    #[error("empty pattern")]
    Empty,
    #[error("entry {index} `{entry}`: {why}")]
    Entry {
        index: usize,
        entry: String,
        why: String,
    },
}

impl Pattern {
    /// Parses `GAP[*COUNT][,GAP[*COUNT]...]`; GAP is a number with unit `ns`,
    /// `us`, `ms` (default) or `s`; COUNT defaults to 1.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let mut entries = Vec::new();
        for (index, raw) in text.split(',').enumerate() {
            let entry = raw.trim();
            if entry.is_empty() {
                if text.trim().is_empty() {
                    return Err(PatternError::Empty);
                }
                return Err(PatternError::Entry {
                    index,
                    entry: raw.to_string(),
                    why: "empty entry".into(),
                });
            }
            let fail = |why: String| PatternError::Entry {
                index,
                entry: entry.to_string(),
                why,
            };
            let (gap_text, count) = match entry.split_once('*') {
                Some((g, c)) => {
                    let count: u64 = c
                        .trim()
                        .parse()
                        .map_err(|_| fail(format!("count `{}` is not a whole number", c.trim())))?;
                    (g.trim(), count)
                }
                None => (entry, 1),
            };
            if count == 0 {
                return Err(fail("count must be at least 1".into()));
            }
            let gap = parse_duration(gap_text).map_err(fail)?;
            entries.push(Entry { gap, count });
        }
        if entries.is_empty() {
            return Err(PatternError::Empty);
        }
        Ok(Pattern { entries })
    }

    /// A constant pattern of `frames` gaps of `gap`.
    pub fn constant(gap: Duration, frames: u64) -> Pattern {
        Pattern {
            entries: vec![Entry {
                gap,
                count: frames.max(1),
            }],
        }
    }

    /// Number of frames (gaps); the app presents one more than this.
    pub fn frames(&self) -> u64 {
        self.entries.iter().map(|e| e.count).sum()
    }

    /// Extends the last entry so that it lasts `extra` longer (rounded up to
    /// whole frames): the `--hold` option.
    pub fn hold(&mut self, extra: Duration) {
        if let Some(last) = self.entries.last_mut() {
            let gap = last.gap.as_nanos().max(1);
            let more = extra.as_nanos().div_ceil(gap) as u64;
            last.count += more;
        }
    }

    /// The gap before each present after the first, in order.
    pub fn gaps(&self) -> impl Iterator<Item = Duration> + '_ {
        self.entries
            .iter()
            .flat_map(|e| std::iter::repeat_n(e.gap, e.count as usize))
    }
}

/// Parses `16.6ms`, `500us`, `2s`, `1000000ns`, or a bare number of ms.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, scale_ns) = if let Some(n) = text.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e9)
    } else {
        (text, 1e6)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("duration `{text}` is not a number with unit ns/us/ms/s"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!(
            "duration `{text}` must be a finite non-negative number"
        ));
    }
    let ns = value * scale_ns;
    if ns > 3600e9 {
        return Err(format!("duration `{text}` is longer than an hour"));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_issue_example() {
        let p = Pattern::parse("16.6ms*300,120ms*1,16.6ms*300").unwrap();
        assert_eq!(p.frames(), 601);
        assert_eq!(p.entries[0].gap, Duration::from_micros(16_600));
        assert_eq!(
            p.entries[1],
            Entry {
                gap: Duration::from_millis(120),
                count: 1
            }
        );
        let gaps: Vec<_> = p.gaps().collect();
        assert_eq!(gaps.len(), 601);
        assert_eq!(gaps[300], Duration::from_millis(120));
        assert_eq!(gaps[299], Duration::from_micros(16_600));
    }

    #[test]
    fn units_and_defaults() {
        let p = Pattern::parse("1s, 500us*2 ,20, 7ns").unwrap();
        let gaps: Vec<_> = p.gaps().collect();
        assert_eq!(
            gaps,
            vec![
                Duration::from_secs(1),
                Duration::from_micros(500),
                Duration::from_micros(500),
                Duration::from_millis(20),
                Duration::from_nanos(7)
            ]
        );
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(Pattern::parse(""), Err(PatternError::Empty));
        assert!(Pattern::parse("16ms*").is_err());
        assert!(Pattern::parse("16ms*0").is_err());
        assert!(Pattern::parse("abc").is_err());
        assert!(Pattern::parse("-5ms").is_err());
        assert!(Pattern::parse("16ms,,16ms").is_err());
        let err = Pattern::parse("16ms*2,xms").unwrap_err().to_string();
        assert!(err.contains("entry 1"), "{err}");
    }

    #[test]
    fn hold_extends_last_entry() {
        let mut p = Pattern::parse("10ms*5,20ms*2").unwrap();
        p.hold(Duration::from_millis(100));
        assert_eq!(p.entries[1].count, 7);
        assert_eq!(p.frames(), 12);
    }
}
