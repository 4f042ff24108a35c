//! Turning an app's `VK_NV_low_latency2` markers (`vkSetLatencyMarkerNV`,
//! NVIDIA Reflex) into per-frame times, as NVIDIA's PC latency terms do:
//! simulation (SIMULATION_START → _END), render submission
//! (RENDERSUBMIT_START → _END), frame start → present
//! (SIMULATION_START → PRESENT_START, NVIDIA's FS2P) and input sample →
//! present (INPUT_SAMPLE → PRESENT_START), each pair matched by the
//! marker's presentID. AMD Anti-Lag's stages (`vkAntiLagUpdateAMD`: input,
//! then present, matched by frameIndex) go through the same clock as
//! INPUT_SAMPLE and PRESENT_START. Games pipeline frames (frame N+1's
//! simulation starts before frame N's present), so the starts of the last
//! [`SLOTS`] ids are kept.
//!
//! The spans that end at PRESENT_START place the frame's start before its
//! present call: the analysis thread takes `present − span` as the game's
//! own frame start ([`FRAME_START_SPANS`], PC latency's frame start).

/// `nv_frame_start_to_present_ms`: SIMULATION_START → PRESENT_START.
pub const SIMULATION_TO_PRESENT: &str = "nv_frame_start_to_present_ms";
/// `nv_input_to_present_ms`: INPUT_SAMPLE → PRESENT_START.
pub const INPUT_SAMPLE_TO_PRESENT: &str = "nv_input_to_present_ms";
/// `al_input_to_present_ms`: Anti-Lag's input stage → its present stage.
pub const ANTI_LAG_INPUT_TO_PRESENT: &str = "al_input_to_present_ms";

/// Where a game says its frame began, each by the counter of its span to
/// the present (in PC latency's order of preference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameStartSpan {
    /// Reflex SIMULATION_START.
    Simulation,
    /// Reflex INPUT_SAMPLE.
    InputSample,
    /// Anti-Lag's input stage.
    AntiLagInput,
}

/// The counters whose frame value is the span from the game's own frame
/// start to its present, with what that start is.
pub const FRAME_START_SPANS: [(&str, FrameStartSpan); 3] = [
    (SIMULATION_TO_PRESENT, FrameStartSpan::Simulation),
    (INPUT_SAMPLE_TO_PRESENT, FrameStartSpan::InputSample),
    (ANTI_LAG_INPUT_TO_PRESENT, FrameStartSpan::AntiLagInput),
];

/// PresentIDs whose start markers are remembered at once.
pub const SLOTS: usize = 8;

/// A marker, by its `VkLatencyMarkerNV` value (0..=6; others, the
/// out-of-band and flash markers, are ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    SimulationStart,
    SimulationEnd,
    RenderSubmitStart,
    RenderSubmitEnd,
    PresentStart,
    PresentEnd,
    InputSample,
}

impl Marker {
    pub fn from_raw(v: i32) -> Option<Marker> {
        Some(match v {
            0 => Marker::SimulationStart,
            1 => Marker::SimulationEnd,
            2 => Marker::RenderSubmitStart,
            3 => Marker::RenderSubmitEnd,
            4 => Marker::PresentStart,
            5 => Marker::PresentEnd,
            6 => Marker::InputSample,
            _ => return None,
        })
    }
}

/// A span completed by a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// SIMULATION_START → SIMULATION_END, ns.
    Simulation(u64),
    /// RENDERSUBMIT_START → RENDERSUBMIT_END, ns.
    RenderSubmit(u64),
    /// SIMULATION_START → PRESENT_START, ns.
    FrameStartToPresent(u64),
    /// INPUT_SAMPLE → PRESENT_START, ns.
    InputToPresent(u64),
}

/// The spans one marker closes: PRESENT_START closes two.
pub type Spans = [Option<Span>; 2];

#[derive(Clone, Copy, Default)]
struct Slot {
    id: u64,
    sim_start: Option<u64>,
    submit_start: Option<u64>,
    input_sample: Option<u64>,
}

/// Start times per presentID (fixed memory).
#[derive(Default)]
pub struct MarkerClock {
    slots: [Slot; SLOTS],
}

impl MarkerClock {
    /// Records `marker` of `present_id` at `t_ns`; returns the spans it ends.
    pub fn mark(&mut self, marker: Marker, present_id: u64, t_ns: u64) -> Spans {
        let slot = &mut self.slots[(present_id % SLOTS as u64) as usize];
        if slot.id != present_id {
            *slot = Slot {
                id: present_id,
                ..Slot::default()
            };
        }
        let since = |start: Option<u64>| start.map(|s| t_ns.saturating_sub(s));
        let one = |span: Option<Span>| [span, None];
        match marker {
            Marker::SimulationStart => {
                slot.sim_start = Some(t_ns);
                one(None)
            }
            Marker::RenderSubmitStart => {
                slot.submit_start = Some(t_ns);
                one(None)
            }
            Marker::InputSample => {
                slot.input_sample = Some(t_ns);
                one(None)
            }
            Marker::SimulationEnd => one(since(slot.sim_start).map(Span::Simulation)),
            Marker::RenderSubmitEnd => one(since(slot.submit_start).map(Span::RenderSubmit)),
            Marker::PresentStart => [
                since(slot.sim_start).map(Span::FrameStartToPresent),
                since(slot.input_sample).map(Span::InputToPresent),
            ],
            Marker::PresentEnd => one(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_frames_pair_by_present_id() {
        let mut clock = MarkerClock::default();
        let mut c = |m, id, t| clock.mark(m, id, t)[0];
        assert_eq!(c(Marker::SimulationStart, 10, 1000), None);
        assert_eq!(
            c(Marker::SimulationEnd, 10, 3000),
            Some(Span::Simulation(2000))
        );
        assert_eq!(c(Marker::RenderSubmitStart, 10, 3100), None);
        // Frame 11's simulation starts before frame 10 is presented.
        assert_eq!(c(Marker::SimulationStart, 11, 3200), None);
        assert_eq!(
            c(Marker::RenderSubmitEnd, 10, 3600),
            Some(Span::RenderSubmit(500))
        );
        assert_eq!(
            c(Marker::PresentStart, 10, 4000),
            Some(Span::FrameStartToPresent(3000))
        );
        assert_eq!(
            c(Marker::PresentStart, 11, 9000),
            Some(Span::FrameStartToPresent(5800))
        );
        // An end without its start, or an id that reused a slot: nothing.
        assert_eq!(c(Marker::SimulationEnd, 12, 9100), None);
        assert_eq!(c(Marker::PresentStart, 11 + SLOTS as u64, 9200), None);
        assert_eq!(Marker::from_raw(7), None);
        assert_eq!(Marker::from_raw(4), Some(Marker::PresentStart));
    }

    #[test]
    fn input_sample_and_simulation_both_end_at_present_start() {
        let mut c = MarkerClock::default();
        assert_eq!(c.mark(Marker::InputSample, 3, 1500), [None, None]);
        assert_eq!(c.mark(Marker::SimulationStart, 3, 1000), [None, None]);
        assert_eq!(
            c.mark(Marker::PresentStart, 3, 5000),
            [
                Some(Span::FrameStartToPresent(4000)),
                Some(Span::InputToPresent(3500))
            ]
        );
        // Only an input sample (Anti-Lag's stages use the clock so).
        assert_eq!(c.mark(Marker::InputSample, 4, 6000), [None, None]);
        assert_eq!(
            c.mark(Marker::PresentStart, 4, 6250),
            [None, Some(Span::InputToPresent(250))]
        );
        assert_eq!(Marker::from_raw(6), Some(Marker::InputSample));
        assert_eq!(Marker::from_raw(8), None);
    }
}
