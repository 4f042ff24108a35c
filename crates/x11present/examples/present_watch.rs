//! Watches one window's X11 Present completes from a connection of its
//! own, as the layer's observer does, and prints what came: an
//! independent check of whether a program presents through Present.
//!
//! `present_watch WINDOW SECONDS` (WINDOW in hex or decimal, on
//! `$DISPLAY`). Used for docs/design.md "X11 Present": vkcube (lavapipe)
//! and glxgears (llvmpipe) on Xvfb give no complete at all.

use std::time::{Duration, Instant};
use steadyhud_x11::ffi::Xcb;
use steadyhud_x11present::ffi::{self, Present};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: present_watch WINDOW SECONDS";
    let w = args.next().ok_or(usage)?;
    let window = match w.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => w.parse(),
    }
    .map_err(|e| format!("window {w:?}: {e}"))?;
    let secs: u64 = args
        .next()
        .ok_or(usage)?
        .parse()
        .map_err(|e| format!("seconds: {e}"))?;
    let xcb = Xcb::load().map_err(|e| e.to_string())?;
    let present = Present::load().map_err(|e| e.to_string())?;
    // SAFETY: libxcb's and libxcb-present's prototypes (ffi); our own connection to $DISPLAY,
    // each event freed once after it is decoded.
    unsafe {
        let c = (xcb.connect)(std::ptr::null(), std::ptr::null_mut());
        if (xcb.connection_has_error)(c) != 0 {
            return Err("cannot connect to $DISPLAY".into());
        }
        let ext = (xcb.get_extension_data)(c, present.present_id)
            .as_ref()
            .filter(|r| r.present != 0)
            .ok_or("no Present extension")?;
        let opcode = ext.major_opcode;
        let eid = (xcb.generate_id)(c);
        let err = (xcb.request_check)(
            c,
            (present.select_input_checked)(c, eid, window, ffi::COMPLETE_NOTIFY_MASK),
        );
        if !err.is_null() {
            libc::free(err);
            return Err(format!("PresentSelectInput on {window:#x} failed"));
        }
        let (mut n, mut modes, mut first, mut last) = (0u64, [0u64; 5], None, None);
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            let ev = (xcb.poll_for_event)(c);
            if ev.is_null() {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            let got =
                ffi::complete_notify(std::slice::from_raw_parts(ev, ffi::event_len(ev)), opcode);
            libc::free(ev.cast());
            if let Some((_, _, cn)) = got {
                n += 1;
                let m = match cn.mode {
                    steadyhud_x11present::matcher::Mode::Copy => 0,
                    steadyhud_x11present::matcher::Mode::Flip => 1,
                    steadyhud_x11present::matcher::Mode::Skip => 2,
                    steadyhud_x11present::matcher::Mode::SuboptimalCopy => 3,
                    steadyhud_x11present::matcher::Mode::Other(_) => 4,
                };
                modes[m] += 1;
                first.get_or_insert(cn.serial);
                last = Some(cn.serial);
            }
        }
        println!(
            "window {window:#x}: {n} completes in {secs} s (copy {}, flip {}, skip {}, suboptimal {}, other {}); serials {first:?}..{last:?}",
            modes[0], modes[1], modes[2], modes[3], modes[4]
        );
        (xcb.disconnect)(c);
    }
    Ok(())
}
