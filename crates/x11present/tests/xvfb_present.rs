//! The mechanism on a real X server: a private Xvfb (Present, no DRI3:
//! its fake CRTC completes presents in Copy mode). A "game" client of this
//! test makes a window and presents pixmaps with `xcb_present_pixmap`,
//! numbering them as Mesa does (1, 2, 3, … per chain), and reads its own
//! `CompleteNotify`s; the [`Observer`], on a connection of its own,
//! selects the same window and must answer every present with that
//! present's own record: the same ust, Skip for the one present replaced
//! before its msc, and the refresh from the game's own Δust/Δmsc.
//! Nothing here depends on timing: every target msc is explicit, and the
//! deadlines only stop a hung server from hanging the test.

#[path = "../../../tests/common/xvfb.rs"]
mod xvfb;

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use steadyhud_sys::clock::now_ns;
use steadyhud_x11::Displays;
use steadyhud_x11present::ffi::{complete_notify, event_len, QueryExtensionReply, VoidCookie};
use steadyhud_x11present::matcher::{Chain, Complete, Mode, Outcome};
use steadyhud_x11present::observer::{Observer, Sink};
use xvfb::Xvfb;

/// Our X connections, one per display, as the client record keeps them.
static DISPLAYS: Displays = Displays::new();

type Conn = c_void;

#[repr(C)]
struct ScreenIterator {
    data: *const u8,
    rem: c_int,
    index: c_int,
}

/// The game's side: the libxcb calls a Present client makes.
struct Game {
    c: *mut Conn,
    opcode: u8,
    window: u32,
    pixmaps: [u32; 2],
    wait_for_event: unsafe extern "C" fn(*mut Conn) -> *mut u8,
    flush: unsafe extern "C" fn(*mut Conn) -> c_int,
    present_pixmap: unsafe extern "C" fn(
        *mut Conn,
        u32,
        u32,
        u32,
        u32,
        u32,
        i16,
        i16,
        u32,
        u32,
        u32,
        u32,
        u64,
        u64,
        u64,
        u32,
        *const c_void,
    ) -> VoidCookie,
    _libs: (libloading::Library, libloading::Library),
}

unsafe fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> T {
    // SAFETY: the caller names the symbol's true type.
    unsafe { *lib.get::<T>(name.as_bytes()).expect(name) }
}

impl Game {
    /// Connects to `display`, makes and maps a 64x64 window, two pixmaps,
    /// and selects its own CompleteNotify (as Mesa's WSI does).
    fn new(display: &str) -> Game {
        // SAFETY: the system libxcb; every symbol below is given its
        // xcb.h / present.h prototype, and called on our live connection.
        unsafe {
            let x = libloading::Library::new("libxcb.so.1").expect("libxcb");
            let p = libloading::Library::new("libxcb-present.so.0").expect("libxcb-present");
            let connect: unsafe extern "C" fn(*const c_char, *mut c_int) -> *mut Conn =
                sym(&x, "xcb_connect\0");
            let has_error: unsafe extern "C" fn(*mut Conn) -> c_int =
                sym(&x, "xcb_connection_has_error\0");
            let get_setup: unsafe extern "C" fn(*mut Conn) -> *const c_void =
                sym(&x, "xcb_get_setup\0");
            let roots: unsafe extern "C" fn(*const c_void) -> ScreenIterator =
                sym(&x, "xcb_setup_roots_iterator\0");
            let generate_id: unsafe extern "C" fn(*mut Conn) -> u32 = sym(&x, "xcb_generate_id\0");
            let create_window: unsafe extern "C" fn(
                *mut Conn,
                u8,
                u32,
                u32,
                i16,
                i16,
                u16,
                u16,
                u16,
                u16,
                u32,
                u32,
                *const c_void,
            ) -> VoidCookie = sym(&x, "xcb_create_window\0");
            let map_window: unsafe extern "C" fn(*mut Conn, u32) -> VoidCookie =
                sym(&x, "xcb_map_window\0");
            let create_pixmap: unsafe extern "C" fn(
                *mut Conn,
                u8,
                u32,
                u32,
                u16,
                u16,
            ) -> VoidCookie = sym(&x, "xcb_create_pixmap\0");
            let ext_data: unsafe extern "C" fn(
                *mut Conn,
                *mut c_void,
            ) -> *const QueryExtensionReply = sym(&x, "xcb_get_extension_data\0");
            let select: unsafe extern "C" fn(*mut Conn, u32, u32, u32) -> VoidCookie =
                sym(&p, "xcb_present_select_input\0");
            let present_id: *mut c_void = sym(&p, "xcb_present_id\0");
            let name = CString::new(display).unwrap();
            let c = connect(name.as_ptr(), std::ptr::null_mut());
            assert_eq!(has_error(c), 0, "connect to {display}");
            let screen = roots(get_setup(c)).data;
            let root =
                u32::from_ne_bytes(std::slice::from_raw_parts(screen, 4).try_into().unwrap());
            let depth = *screen.add(38); // xcb_screen_t.root_depth
            let window = generate_id(c);
            // depth and visual 0: CopyFromParent; class 1: InputOutput.
            create_window(
                c,
                0,
                window,
                root,
                0,
                0,
                64,
                64,
                0,
                1,
                0,
                0,
                std::ptr::null(),
            );
            map_window(c, window);
            let pixmaps = [generate_id(c), generate_id(c)];
            for &pm in &pixmaps {
                create_pixmap(c, depth, pm, window, 64, 64);
            }
            let ext = ext_data(c, present_id).as_ref().expect("QueryExtension");
            assert_ne!(ext.present, 0, "Xvfb has Present");
            select(c, generate_id(c), window, 2);
            let game = Game {
                c,
                opcode: ext.major_opcode,
                window,
                pixmaps,
                wait_for_event: sym(&x, "xcb_wait_for_event\0"),
                flush: sym(&x, "xcb_flush\0"),
                present_pixmap: sym(&p, "xcb_present_pixmap\0"),
                _libs: (x, p),
            };
            (game.flush)(c);
            game
        }
    }

    /// Presents pixmap `serial % 2` with `serial` at `target_msc`
    /// (0: the next msc).
    fn present(&self, serial: u32, target_msc: u64) {
        let pm = self.pixmaps[serial as usize % 2];
        // SAFETY: our live connection, window and pixmap; no notifies.
        unsafe {
            (self.present_pixmap)(
                self.c,
                self.window,
                pm,
                serial,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                target_msc,
                0,
                0,
                0,
                std::ptr::null(),
            );
            (self.flush)(self.c);
        }
    }

    /// The game's own next CompleteNotify (waits).
    fn next_complete(&self) -> Complete {
        loop {
            // SAFETY: our live connection; the event is freed once, after
            // it is decoded.
            let got = unsafe {
                let ev = (self.wait_for_event)(self.c);
                assert!(!ev.is_null(), "the game's connection broke");
                let c = complete_notify(std::slice::from_raw_parts(ev, event_len(ev)), self.opcode);
                libc::free(ev.cast());
                c
            };
            if let Some((_, window, c)) = got {
                assert_eq!(window, self.window);
                return c;
            }
        }
    }
}

#[derive(Default)]
struct Answers(Mutex<Vec<(u64, Outcome)>>);

impl Sink for Answers {
    fn x11_answer(&self, present_t: u64, outcome: Outcome) {
        self.0.lock().unwrap().push((present_t, outcome));
    }
}

/// Polls `obs` until `answers` holds `n` (a deadline only against a hung
/// server).
fn poll_until(obs: &Observer, answers: &Answers, n: usize) -> Vec<(u64, Outcome)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        obs.poll(&DISPLAYS, now_ns());
        let got = answers.0.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What the matcher must have said of a present the game saw complete as
/// `c`: Skip is dropped; a shown one is at its ust, with the refresh
/// period from the game's own Δust/Δmsc since the previous shown complete
/// `prev` (kept from before when the msc did not move: a server that
/// completes several presents in one vblank).
fn expected(c: &Complete, prev: Option<&Complete>, refresh_ns: &mut u64) -> Outcome {
    if c.mode == Mode::Skip {
        return Outcome::Skipped;
    }
    if let Some(p) = prev {
        if c.msc > p.msc && c.ust_us > p.ust_us {
            *refresh_ns = (c.ust_us - p.ust_us) * 1000 / (c.msc - p.msc);
        }
    }
    Outcome::Shown {
        displayed_ns: c.ust_us * 1000,
        refresh_ns: *refresh_ns,
    }
}

#[test]
fn observer_matches_every_present_on_xvfb() {
    let x = Xvfb::start(640, 480);
    let game = Game::new(&x.display());
    let obs = Observer::new();
    obs.surface_created(1, 7, Some(&x.display()), game.window);
    assert!(obs.knows(7));
    let answers = Arc::new(Answers::default());
    let chain: Arc<Chain> = obs
        .follow(&DISPLAYS, 7, answers.clone(), now_ns())
        .expect("our connection follows the game's window");
    let mut presents = Vec::new(); // (serial, present_t)
    let present = |presents: &mut Vec<(u32, u64)>, chain: &Chain, serial: u32, target: u64| {
        let t = now_ns();
        assert!(chain.record(t));
        game.present(serial, target);
        presents.push((serial, t));
    };
    // Serial 1 at the next msc: the game learns the msc from it.
    present(&mut presents, &chain, 1, 0);
    let first = game.next_complete();
    assert_eq!((first.serial, first.mode), (1, Mode::Copy));
    let m = first.msc;
    // 2 and 3 both at m + 8 (sent together, some 130 ms ahead): 2 is
    // replaced before its msc (Skip).
    present(&mut presents, &chain, 2, m + 8);
    present(&mut presents, &chain, 3, m + 8);
    for s in 4..=12u32 {
        present(&mut presents, &chain, s, m + 5 + u64::from(s));
    }
    let mut seen = vec![first];
    for _ in 2..=12 {
        seen.push(game.next_complete());
    }
    let arrival = seen.clone(); // the server's order, which ours shares
    seen.sort_by_key(|c| c.serial);
    let modes: Vec<&str> = seen.iter().map(|c| c.mode.name()).collect();
    eprintln!(
        "game's own completes: {:?}",
        seen.iter()
            .map(|c| (c.serial, c.mode.name(), c.msc - m))
            .collect::<Vec<_>>()
    );
    assert_eq!(modes[1], "skip", "serial 2 was replaced at m+8");
    assert!(modes
        .iter()
        .enumerate()
        .all(|(i, &md)| i == 1 || md == "copy"));

    let got = poll_until(&obs, &answers, 12);
    assert_eq!(got.len(), 12, "every serial answered: {got:?}");
    eprintln!("observer's answers: {got:?}");
    // Each answer is its own present's, with the game's own ust and the
    // refresh from the game's own Δust/Δmsc of consecutive shown completes.
    let mut prev: Option<&Complete> = None;
    let mut refresh_ns = 0;
    let mut want = Vec::new();
    for c in &arrival {
        let t = presents.iter().find(|p| p.0 == c.serial).unwrap().1;
        want.push((t, expected(c, prev, &mut refresh_ns)));
        if c.mode != Mode::Skip {
            prev = Some(c);
        }
    }
    let mut got_sorted = got.clone();
    got_sorted.sort_by_key(|a| a.0);
    want.sort_by_key(|a| a.0);
    assert_eq!(got_sorted, want);
    for (t, o) in &got {
        if let Outcome::Shown { displayed_ns, .. } = o {
            assert!(displayed_ns >= t, "shown after it was presented");
        }
    }

    // A new chain on the same window (a recreated swapchain): serials
    // start at 1 again and are the new chain's.
    let chain2 = obs
        .follow(&DISPLAYS, 7, answers.clone(), now_ns())
        .expect("a new chain");
    let before = presents.len();
    for s in 1..=3u32 {
        present(&mut presents, &chain2, s, m + 30 + u64::from(s));
    }
    for _ in 0..3 {
        game.next_complete();
    }
    let got = poll_until(&obs, &answers, 15);
    let new: Vec<u64> = got[12..].iter().map(|a| a.0).collect();
    let want: Vec<u64> = presents[before..].iter().map(|p| p.1).collect();
    assert_eq!(new, want, "the new chain's presents");
    assert!(got[12..]
        .iter()
        .all(|a| matches!(a.1, Outcome::Shown { .. })));

    obs.surface_destroyed(&DISPLAYS, 7);
    assert!(!obs.knows(7));
    assert!(obs.take_notes().is_empty(), "nothing to say");
}

/// A window whose presents never use Present (the software WSIs on a
/// server without DRI3) is turned off after SILENT_AFTER presents with
/// one note, and records nothing more.
#[test]
fn silent_window_is_turned_off_with_one_note() {
    let x = Xvfb::start(640, 480);
    let game = Game::new(&x.display());
    let obs = Observer::new();
    obs.surface_created(1, 9, Some(&x.display()), game.window);
    let answers = Arc::new(Answers::default());
    let chain = obs
        .follow(&DISPLAYS, 9, answers.clone(), now_ns())
        .expect("followed");
    for t in 1..steadyhud_x11present::matcher::SILENT_AFTER {
        assert!(chain.record(t));
    }
    obs.poll(&DISPLAYS, now_ns());
    assert!(obs.take_notes().is_empty());
    assert!(chain.record(1_000_000));
    obs.poll(&DISPLAYS, now_ns());
    let notes = obs.take_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("do not go through X11 Present"),
        "{notes:?}"
    );
    assert!(!chain.record(2_000_000));
    obs.poll(&DISPLAYS, now_ns());
    assert!(obs.take_notes().is_empty(), "said once");
    assert!(answers.0.lock().unwrap().is_empty(), "nothing invented");
}

/// A window that does not exist: one note, no chain; adopted (the GL
/// swap's way, followed on the next poll), its chain is turned off there.
#[test]
fn bad_window_is_one_note() {
    let x = Xvfb::start(640, 480);
    let obs = Observer::new();
    obs.surface_created(1, 3, Some(&x.display()), 0x7fff_fff0);
    assert!(obs
        .follow(&DISPLAYS, 3, Arc::new(Answers::default()), 0)
        .is_none());
    let notes = obs.take_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("PresentSelectInput"), "{notes:?}");
    let chain = Arc::new(Chain::new());
    obs.adopt(3, chain.clone(), Arc::new(Answers::default()));
    assert!(chain.record(1), "recorded until the poll");
    obs.poll(&DISPLAYS, now_ns());
    assert!(!chain.record(2), "turned off by the poll");
    assert_eq!(obs.take_notes().len(), 1);
}

/// Adopted, a live window is followed from the next poll on: its presents
/// (recorded before and after) are answered.
#[test]
fn adopted_window_is_followed_at_the_next_poll() {
    let x = Xvfb::start(640, 480);
    let game = Game::new(&x.display());
    let obs = Observer::new();
    obs.surface_created(1, 5, Some(&x.display()), game.window);
    let answers = Arc::new(Answers::default());
    let chain = Arc::new(Chain::new());
    obs.adopt(5, chain.clone(), answers.clone());
    obs.poll(&DISPLAYS, now_ns()); // connects and selects
    let mut ts = Vec::new();
    for s in 1..=10u32 {
        let t = now_ns();
        assert!(chain.record(t));
        game.present(s, 0);
        game.next_complete();
        ts.push(t);
    }
    let got = poll_until(&obs, &answers, 10);
    assert_eq!(got.iter().map(|a| a.0).collect::<Vec<_>>(), ts);
    assert!(got.iter().all(|a| matches!(a.1, Outcome::Shown { .. })));
}
