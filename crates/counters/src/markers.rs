//! Turning an app's `VK_NV_low_latency2` markers (`vkSetLatencyMarkerNV`,
//! NVIDIA Reflex) into per-frame times, as NVIDIA's PC latency terms do:
//! simulation (SIMULATION_START → _END), render submission
//! (RENDERSUBMIT_START → _END) and frame start → present
//! (SIMULATION_START → PRESENT_START, NVIDIA's FS2P), each pair matched by
//! the marker's presentID. Games pipeline frames (frame N+1's simulation
//! starts before frame N's present), so the starts of the last
//! [`SLOTS`] presentIDs are kept.

/// PresentIDs whose start markers are remembered at once.
pub const SLOTS: usize = 8;

/// A marker, by its `VkLatencyMarkerNV` value (0..=5; others are ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    SimulationStart,
    SimulationEnd,
    RenderSubmitStart,
    RenderSubmitEnd,
    PresentStart,
    PresentEnd,
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
}

#[derive(Clone, Copy, Default)]
struct Slot {
    id: u64,
    sim_start: Option<u64>,
    submit_start: Option<u64>,
}

/// Start times per presentID (fixed memory).
#[derive(Default)]
pub struct MarkerClock {
    slots: [Slot; SLOTS],
}

impl MarkerClock {
    /// Records `marker` of `present_id` at `t_ns`; returns the span it ends.
    pub fn mark(&mut self, marker: Marker, present_id: u64, t_ns: u64) -> Option<Span> {
        let slot = &mut self.slots[(present_id % SLOTS as u64) as usize];
        if slot.id != present_id {
            *slot = Slot {
                id: present_id,
                ..Slot::default()
            };
        }
        let since = |start: Option<u64>| start.map(|s| t_ns.saturating_sub(s));
        match marker {
            Marker::SimulationStart => {
                slot.sim_start = Some(t_ns);
                None
            }
            Marker::RenderSubmitStart => {
                slot.submit_start = Some(t_ns);
                None
            }
            Marker::SimulationEnd => since(slot.sim_start).map(Span::Simulation),
            Marker::RenderSubmitEnd => since(slot.submit_start).map(Span::RenderSubmit),
            Marker::PresentStart => since(slot.sim_start).map(Span::FrameStartToPresent),
            Marker::PresentEnd => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_frames_pair_by_present_id() {
        let mut c = MarkerClock::default();
        assert_eq!(c.mark(Marker::SimulationStart, 10, 1000), None);
        assert_eq!(
            c.mark(Marker::SimulationEnd, 10, 3000),
            Some(Span::Simulation(2000))
        );
        assert_eq!(c.mark(Marker::RenderSubmitStart, 10, 3100), None);
        // Frame 11's simulation starts before frame 10 is presented.
        assert_eq!(c.mark(Marker::SimulationStart, 11, 3200), None);
        assert_eq!(
            c.mark(Marker::RenderSubmitEnd, 10, 3600),
            Some(Span::RenderSubmit(500))
        );
        assert_eq!(
            c.mark(Marker::PresentStart, 10, 4000),
            Some(Span::FrameStartToPresent(3000))
        );
        assert_eq!(
            c.mark(Marker::PresentStart, 11, 9000),
            Some(Span::FrameStartToPresent(5800))
        );
        // An end without its start, or an id that reused a slot: nothing.
        assert_eq!(c.mark(Marker::SimulationEnd, 12, 9100), None);
        assert_eq!(c.mark(Marker::PresentStart, 11 + SLOTS as u64, 9200), None);
        assert_eq!(Marker::from_raw(7), None);
        assert_eq!(Marker::from_raw(4), Some(Marker::PresentStart));
    }
}
