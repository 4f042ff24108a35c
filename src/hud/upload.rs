//! The font atlas upload's state, shared by every swapchain that uses one
//! cache entry. Nothing may be submitted outside a present, so the upload
//! rides in the first draw's command buffer; until that submission is known
//! to have completed, only draws on the same queue may sample the font
//! (queue submission order plus the upload's barrier make that safe).
//!
//! NotUploaded → Pending { queue, fence of the slot that carries it } →
//! Ready. The swapchain that carried it marks it Ready when it next waits
//! that slot's fence, or at its destroy; a draw on another queue checks the
//! fence without blocking and is skipped while it is unsignalled.

use ash::vk;

/// Where the font upload stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upload {
    /// Not recorded yet (or its submission failed).
    NotUploaded,
    /// Submitted on `queue` with `fence` (reset before the upload was recorded).
    Pending { queue: vk::Queue, fence: vk::Fence },
    /// Executed: any queue may sample the font.
    Ready,
}

/// What a draw does about the font.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Record the upload into this draw's command buffer, then
    /// [`Upload::recorded`].
    Record,
    /// Draw.
    Go,
    /// Nothing may be submitted yet: the upload is pending on another queue.
    Skip,
}

impl Upload {
    /// The step for a draw on `queue`; `fence_signalled` asks (without
    /// blocking) whether a pending upload's fence is signalled. Returns the
    /// step and whether the upload just became Ready (the staging buffer may
    /// be freed).
    pub fn step(
        &mut self,
        queue: vk::Queue,
        fence_signalled: impl FnOnce(vk::Fence) -> bool,
    ) -> (Step, bool) {
        match *self {
            Upload::NotUploaded => (Step::Record, false),
            Upload::Ready => (Step::Go, false),
            Upload::Pending { queue: q, .. } if q == queue => (Step::Go, false),
            Upload::Pending { fence, .. } => {
                if fence_signalled(fence) {
                    *self = Upload::Ready;
                    (Step::Go, true)
                } else {
                    (Step::Skip, false)
                }
            }
        }
    }

    /// The upload was recorded into a command buffer that will be submitted
    /// on `queue` with `fence` (already reset).
    pub fn recorded(&mut self, queue: vk::Queue, fence: vk::Fence) {
        *self = Upload::Pending { queue, fence };
    }

    /// `fence` was waited and is signalled (about to be reset or
    /// destroyed): an upload it carried is done. Returns true when the
    /// upload just became Ready.
    pub fn fence_signalled(&mut self, fence: vk::Fence) -> bool {
        match *self {
            Upload::Pending { fence: f, .. } if f == fence => {
                *self = Upload::Ready;
                true
            }
            _ => false,
        }
    }

    /// The submission that was to carry the upload with `fence` never
    /// happened (or its fence is going away unsignalled): upload again.
    pub fn abandoned(&mut self, fence: vk::Fence) {
        if matches!(*self, Upload::Pending { fence: f, .. } if f == fence) {
            *self = Upload::NotUploaded;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn q(n: u64) -> vk::Queue {
        vk::Queue::from_raw(n)
    }
    fn f(n: u64) -> vk::Fence {
        vk::Fence::from_raw(n)
    }
    fn never(_: vk::Fence) -> bool {
        panic!("fence status asked")
    }

    #[test]
    fn first_draw_records_then_same_queue_goes_ahead() {
        let mut u = Upload::NotUploaded;
        assert_eq!(u.step(q(1), never), (Step::Record, false));
        u.recorded(q(1), f(7));
        // Same queue: submission order and the upload's barrier suffice.
        assert_eq!(u.step(q(1), never), (Step::Go, false));
        assert_eq!(
            u,
            Upload::Pending {
                queue: q(1),
                fence: f(7)
            }
        );
    }

    #[test]
    fn other_queue_waits_for_the_fence_without_blocking() {
        let mut u = Upload::Pending {
            queue: q(1),
            fence: f(7),
        };
        assert_eq!(
            u.step(q(2), |fence| {
                assert_eq!(fence, f(7));
                false
            }),
            (Step::Skip, false)
        );
        assert_eq!(u.step(q(2), |_| true), (Step::Go, true));
        assert_eq!(u, Upload::Ready);
        assert_eq!(u.step(q(3), never), (Step::Go, false));
    }

    #[test]
    fn the_carrier_marks_it_ready_on_its_fence_only() {
        let mut u = Upload::Pending {
            queue: q(1),
            fence: f(7),
        };
        assert!(!u.fence_signalled(f(8)));
        assert!(matches!(u, Upload::Pending { .. }));
        assert!(u.fence_signalled(f(7)));
        assert_eq!(u, Upload::Ready);
        assert!(!u.fence_signalled(f(7)));
    }

    #[test]
    fn a_failed_submission_uploads_again() {
        let mut u = Upload::Pending {
            queue: q(1),
            fence: f(7),
        };
        u.abandoned(f(8));
        assert!(matches!(u, Upload::Pending { .. }));
        u.abandoned(f(7));
        assert_eq!(u, Upload::NotUploaded);
        assert_eq!(u.step(q(2), never), (Step::Record, false));
        let mut ready = Upload::Ready;
        ready.abandoned(f(7));
        assert_eq!(ready, Upload::Ready);
    }
}
