//! The control protocol: one request per line, one reply line per request.
//!
//! Requests (UTF-8, at most [`MAX_LINE`] bytes with the `\n`; words
//! separated by spaces; case matters):
//!
//! ```text
//! status                  rolling-window metrics, frames so far, log paths
//! hud on|off|toggle       show, hide or flip the HUD
//! preset N                show HUD preset N (0 one line … 3 detailed)
//! limit N|off             frame cap N fps (1..=1000) or none
//! mark TEXT               `# mark: TEXT at frame M` in every open session log
//! histogram               each window's totals and time histogram since start
//! help                    the request list
//! ```
//!
//! Replies: `ok {JSON object}` or `err MESSAGE`, each one line ending in
//! `\n`. A connection may send several requests; the server closes it after
//! an `err` about the connection itself (too long, not UTF-8, idle, busy,
//! refused peer).

use std::fmt;
use steadyhud_config::hud::PRESETS;

/// Longest request line accepted, in bytes including its `\n`.
pub const MAX_LINE: usize = 1024;
/// Longest mark text, in characters.
pub const MAX_MARK: usize = 200;
/// Highest frame cap `limit` takes (the config's).
pub const MAX_LIMIT: u32 = steadyhud_config::MAX_FPS_LIMIT;

/// A parsed request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Status,
    Hud(HudChange),
    /// A preset of `steadyhud_config::hud::PRESETS`.
    Preset(u8),
    /// `None`: no cap.
    Limit(Option<u32>),
    Mark(String),
    Histogram,
    Help,
}

/// What `hud` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HudChange {
    On,
    Off,
    Toggle,
}

/// A request line that is not one of the requests.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("empty request (try `help`)")]
    Empty,
    #[error("unknown request {0:?} (try `help`)")]
    Unknown(String),
    #[error("`hud` takes on, off or toggle, not {0:?}")]
    Hud(String),
    #[error("`preset` takes {}, not {:?}", preset_list(), .0)]
    Preset(String),
    #[error("`limit` takes a whole number of fps from 1 to {MAX_LIMIT} or `off`, not {0:?}")]
    Limit(String),
    #[error("`mark` needs a text")]
    MarkEmpty,
    #[error("mark text longer than {MAX_MARK} characters")]
    MarkTooLong,
    #[error("mark text holds a control character")]
    MarkControl,
    #[error("`{0}` takes no argument")]
    Extra(&'static str),
}

/// The texts the server answers `help` with.
pub const HELP: [&str; 7] = [
    "status",
    "hud on|off|toggle",
    "preset N",
    "limit N|off",
    "mark TEXT",
    "histogram",
    "help",
];

impl Request {
    /// Parses one request line (without its `\n`; a trailing `\r` and
    /// surrounding spaces are ignored).
    pub fn parse(line: &str) -> Result<Request, RequestError> {
        let line = line.trim();
        let (word, rest) = match line.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (line, ""),
        };
        let no_arg = |name: &'static str, r: Request| {
            if rest.is_empty() {
                Ok(r)
            } else {
                Err(RequestError::Extra(name))
            }
        };
        match word {
            "" => Err(RequestError::Empty),
            "status" => no_arg("status", Request::Status),
            "help" => no_arg("help", Request::Help),
            "histogram" => no_arg("histogram", Request::Histogram),
            "hud" => match rest {
                "on" => Ok(Request::Hud(HudChange::On)),
                "off" => Ok(Request::Hud(HudChange::Off)),
                "toggle" => Ok(Request::Hud(HudChange::Toggle)),
                other => Err(RequestError::Hud(clip(other))),
            },
            "preset" => match rest.parse::<u8>() {
                Ok(n) if usize::from(n) < PRESETS.len() => Ok(Request::Preset(n)),
                _ => Err(RequestError::Preset(clip(rest))),
            },
            "limit" => match rest {
                "off" | "0" => Ok(Request::Limit(None)),
                n => match n.parse::<u32>() {
                    Ok(v) if (1..=MAX_LIMIT).contains(&v) => Ok(Request::Limit(Some(v))),
                    _ => Err(RequestError::Limit(clip(n))),
                },
            },
            "mark" => mark_text(rest).map(Request::Mark),
            other => Err(RequestError::Unknown(clip(other))),
        }
    }

    /// The request as a line (without `\n`), as [`Request::parse`] reads it.
    pub fn to_line(&self) -> String {
        match self {
            Request::Status => "status".into(),
            Request::Help => "help".into(),
            Request::Histogram => "histogram".into(),
            Request::Hud(HudChange::On) => "hud on".into(),
            Request::Hud(HudChange::Off) => "hud off".into(),
            Request::Hud(HudChange::Toggle) => "hud toggle".into(),
            Request::Preset(n) => format!("preset {n}"),
            Request::Limit(None) => "limit off".into(),
            Request::Limit(Some(n)) => format!("limit {n}"),
            Request::Mark(t) => format!("mark {t}"),
        }
    }
}

/// Checks a mark text: 1 to [`MAX_MARK`] characters, no control characters
/// (a mark is one comment line of the CSV).
pub fn mark_text(text: &str) -> Result<String, RequestError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(RequestError::MarkEmpty);
    }
    if text.chars().count() > MAX_MARK {
        return Err(RequestError::MarkTooLong);
    }
    if text.chars().any(char::is_control) {
        return Err(RequestError::MarkControl);
    }
    Ok(text.to_string())
}

/// The presets as `preset` takes them: `0 (one line), 1 (compact), …`.
fn preset_list() -> String {
    let list: Vec<String> = PRESETS
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{i} ({})", p.name))
        .collect();
    list.join(", ")
}

/// The first 40 characters of a client's text, for an error message.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// A reply line.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Ok(serde_json::Value),
    Err(String),
}

impl fmt::Display for Reply {
    /// The line without its `\n`: `ok {…}` or `err …` (a message never
    /// holds a line break).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Ok(v) => write!(f, "ok {v}"),
            Reply::Err(m) => write!(f, "err {}", m.replace(['\n', '\r'], " ")),
        }
    }
}

/// The first word of the `err` a server with every connection slot taken
/// answers (`err busy: …`) before it closes the connection.
pub const BUSY: &str = "busy";

/// A reply line the client could not read.
#[derive(Debug, thiserror::Error)]
#[error("malformed reply {line:?}")]
pub struct BadReply {
    pub line: String,
}

impl Reply {
    /// Whether this is the server's `err busy: …`: it took no request on
    /// this connection, a later one may get through.
    pub fn is_busy(&self) -> bool {
        matches!(self, Reply::Err(m) if m.strip_prefix(BUSY).is_some_and(|r| r.is_empty() || r.starts_with(':')))
    }

    /// Parses a reply line (without its `\n`).
    pub fn parse(line: &str) -> Result<Reply, BadReply> {
        let bad = || BadReply {
            line: clip(line.trim_end()),
        };
        let line = line.trim_end();
        if let Some(json) = line.strip_prefix("ok ") {
            serde_json::from_str(json).map(Reply::Ok).map_err(|_| bad())
        } else if line == "ok" {
            Ok(Reply::Ok(serde_json::json!({})))
        } else if let Some(m) = line.strip_prefix("err ") {
            Ok(Reply::Err(m.to_string()))
        } else {
            Err(bad())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_print_back() {
        for line in [
            "status",
            "help",
            "hud on",
            "hud off",
            "hud toggle",
            "preset 0",
            "preset 3",
            "limit 60",
            "limit off",
            "mark boss fight",
            "histogram",
        ] {
            let r = Request::parse(line).unwrap();
            assert_eq!(r.to_line(), line);
        }
        assert_eq!(Request::parse("  limit 0 \r"), Ok(Request::Limit(None)));
        assert_eq!(
            Request::parse("mark  two  spaces "),
            Ok(Request::Mark("two  spaces".into()))
        );
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        assert_eq!(Request::parse(""), Err(RequestError::Empty));
        assert!(matches!(
            Request::parse("STATUS"),
            Err(RequestError::Unknown(_))
        ));
        assert!(matches!(Request::parse("hud"), Err(RequestError::Hud(_))));
        for bad in ["preset", "preset 4", "preset one"] {
            assert!(
                matches!(Request::parse(bad), Err(RequestError::Preset(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Request::parse("limit 1001"),
            Err(RequestError::Limit(_))
        ));
        assert!(matches!(
            Request::parse("limit -5"),
            Err(RequestError::Limit(_))
        ));
        assert_eq!(Request::parse("mark"), Err(RequestError::MarkEmpty));
        assert_eq!(
            Request::parse(&format!("mark {}", "x".repeat(MAX_MARK + 1))),
            Err(RequestError::MarkTooLong)
        );
        assert_eq!(
            Request::parse("mark a\u{7}b"),
            Err(RequestError::MarkControl)
        );
        assert_eq!(
            Request::parse("status now"),
            Err(RequestError::Extra("status"))
        );
        let long = Request::parse(&"z".repeat(500)).unwrap_err().to_string();
        assert!(long.len() < 120, "{long}");
    }

    #[test]
    fn busy_is_the_servers_turning_away() {
        assert!(Reply::Err("busy: 32 control connections are open; try again".into()).is_busy());
        assert!(Reply::Err("busy".into()).is_busy());
        assert!(!Reply::Err("busybody".into()).is_busy());
        assert!(!Reply::Err("no log is open yet".into()).is_busy());
        assert!(!Reply::Ok(serde_json::json!({"busy": true})).is_busy());
    }

    #[test]
    fn replies_round_trip() {
        let ok = Reply::Ok(serde_json::json!({"hud": "on"}));
        assert_eq!(Reply::parse(&ok.to_string()).unwrap(), ok);
        let err = Reply::Err("two\nlines".into());
        assert_eq!(err.to_string(), "err two lines");
        assert_eq!(
            Reply::parse("err two lines").unwrap(),
            Reply::Err("two lines".into())
        );
        assert!(Reply::parse("hello").is_err());
        assert!(Reply::parse("ok {not json").is_err());
    }
}
