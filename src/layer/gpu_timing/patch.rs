//! Submit patching: the app's batches rebuilt with the layer's timestamp
//! command buffers around each run of timed batches ([`build_patched`]),
//! for `VkSubmitInfo` and `VkSubmitInfo2` alike ([`Batch`]), in reused
//! arrays ([`TimingScratch`]).

use super::policy::{chain_flags, untimed_reason};
use ash::vk;

/// Reused arrays of the patched submit (only the queue's submits use them,
/// and the app serializes those: never contended).
#[derive(Default)]
pub struct TimingScratch {
    infos: Vec<vk::SubmitInfo<'static>>,
    cmds: Vec<vk::CommandBuffer>,
    infos2: Vec<vk::SubmitInfo2<'static>>,
    cmds2: Vec<vk::CommandBufferSubmitInfo<'static>>,
    /// Slots reserved by the current call, stamped FAILED if it fails.
    pub(super) slots: Vec<usize>,
}

/// A batch of a submit call: `VkSubmitInfo` (`vkQueueSubmit`) or
/// `VkSubmitInfo2` (`vkQueueSubmit2`), so one patching routine serves both.
/// The `'static` lifetime stands for "valid during the call": the layer
/// keeps no pointer past it.
pub trait Batch: Copy {
    /// One element of its command buffer array.
    type Cmd: Copy;
    /// The app's command buffers.
    ///
    /// # Safety
    /// A valid batch of the app's.
    unsafe fn cmds(&self) -> &[Self::Cmd];
    /// Why the batch is not timed, if it is not.
    ///
    /// # Safety
    /// A valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str>;
    /// The element for one of the layer's command buffers.
    fn ours(cb: vk::CommandBuffer) -> Self::Cmd;
    /// This batch with another command buffer array.
    fn with_cmds(self, n: u32, p: *const Self::Cmd) -> Self;
    fn cmds_ptr(&self) -> *const Self::Cmd;
    fn cmds_len(&self) -> u32;
    /// The queue's reused arrays for this batch type.
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<Self::Cmd>);
}

/// A raw array of `n` elements (empty when null).
///
/// # Safety
/// `p` points to `n` valid elements, or `n` is 0.
unsafe fn array<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

impl Batch for vk::SubmitInfo<'static> {
    type Cmd = vk::CommandBuffer;
    /// # Safety
    /// As [`Batch::cmds`]: a valid batch of the app's.
    unsafe fn cmds(&self) -> &[vk::CommandBuffer] {
        // SAFETY: the app's array (caller).
        unsafe { array(self.p_command_buffers, self.command_buffer_count) }
    }
    /// # Safety
    /// As [`Batch::untimed`]: a valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str> {
        // SAFETY: the app's chain (caller).
        let (protected, group) = unsafe { chain_flags(self.p_next) };
        untimed_reason(self.command_buffer_count, protected, group)
    }
    fn ours(cb: vk::CommandBuffer) -> vk::CommandBuffer {
        cb
    }
    fn with_cmds(mut self, n: u32, p: *const vk::CommandBuffer) -> Self {
        self.command_buffer_count = n;
        self.p_command_buffers = p;
        self
    }
    fn cmds_ptr(&self) -> *const vk::CommandBuffer {
        self.p_command_buffers
    }
    fn cmds_len(&self) -> u32 {
        self.command_buffer_count
    }
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<vk::CommandBuffer>) {
        (&mut s.infos, &mut s.cmds)
    }
}

impl Batch for vk::SubmitInfo2<'static> {
    type Cmd = vk::CommandBufferSubmitInfo<'static>;
    /// # Safety
    /// As [`Batch::cmds`]: a valid batch of the app's.
    unsafe fn cmds(&self) -> &[Self::Cmd] {
        // SAFETY: the app's array (caller).
        unsafe { array(self.p_command_buffer_infos, self.command_buffer_info_count) }
    }
    /// # Safety
    /// As [`Batch::untimed`]: a valid batch (its `pNext` chain is read).
    unsafe fn untimed(&self) -> Option<&'static str> {
        // SAFETY: the app's chain (caller).
        let (_, group) = unsafe { chain_flags(self.p_next) };
        let protected = self.flags.contains(vk::SubmitFlags::PROTECTED);
        untimed_reason(self.command_buffer_info_count, protected, group)
    }
    fn ours(cb: vk::CommandBuffer) -> Self::Cmd {
        vk::CommandBufferSubmitInfo {
            command_buffer: cb,
            ..Default::default()
        }
    }
    fn with_cmds(mut self, n: u32, p: *const Self::Cmd) -> Self {
        self.command_buffer_info_count = n;
        self.p_command_buffer_infos = p;
        self
    }
    fn cmds_ptr(&self) -> *const Self::Cmd {
        self.p_command_buffer_infos
    }
    fn cmds_len(&self) -> u32 {
        self.command_buffer_info_count
    }
    fn scratch(s: &mut TimingScratch) -> (&mut Vec<Self>, &mut Vec<Self::Cmd>) {
        (&mut s.infos2, &mut s.cmds2)
    }
}

/// Fills `infos` and `cmds` with the app's `batches`, where each run of
/// consecutive batches that `timed` accepts gets one timestamp pair from
/// `reserve` (begin, end): the begin command buffer before the run's first
/// batch's command buffers, the end after its last batch's. So a call is
/// one interval (one pair, one slot), whatever number of batches it has;
/// an untimed batch (protected, device group, no command buffers) is never
/// patched and never inside an interval: it ends the run before it, and
/// the timable batches after it start another run with their own pair. A
/// run whose `reserve` gives nothing (ring full, no objects) is passed as
/// the app's. `timed` is asked once per batch. No allocation once `infos`
/// and `cmds` have grown.
///
/// # Safety
/// `batches` are valid per the Vulkan spec (their command buffer arrays are
/// read); the built `infos` point into `cmds`, valid until either changes.
pub(super) unsafe fn build_patched<B: Batch>(
    batches: &[B],
    timed: impl Fn(&B) -> bool,
    reserve: &mut dyn FnMut() -> Option<(B::Cmd, B::Cmd)>,
    infos: &mut Vec<B>,
    cmds: &mut Vec<B::Cmd>,
) {
    infos.clear();
    cmds.clear();
    // First the command buffer array (its pointers must not move), then
    // the batches pointing into it.
    let mut prev = false;
    let mut this = batches.first().is_some_and(&timed);
    // The end command buffer of the run in progress, if it got a pair.
    let mut end = None;
    for (i, b) in batches.iter().enumerate() {
        let next = batches.get(i + 1).is_some_and(&timed);
        let start = cmds.len();
        if this && !prev {
            end = reserve().map(|(begin, end)| {
                cmds.push(begin);
                end
            });
        }
        // SAFETY: the app's valid batch (caller).
        cmds.extend_from_slice(unsafe { b.cmds() });
        if this && !next {
            cmds.extend(end.take());
        }
        // The pointer holds the start index until `cmds` is complete.
        infos.push(b.with_cmds((cmds.len() - start) as u32, start as *const B::Cmd));
        (prev, this) = (this, next);
    }
    let base = cmds.as_ptr();
    for info in infos.iter_mut() {
        let start = info.cmds_ptr() as usize;
        // SAFETY: `start` is an index into `cmds` (set above).
        *info = info.with_cmds(info.cmds_len(), unsafe { base.add(start) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Raw handles standing for the layer's pair k (begin, end).
    const BEGIN: u64 = 1000;
    const END: u64 = 2000;

    /// Builds the patched batches of `batches` with a ring that has `free`
    /// slots; returns every batch's command buffers as raw handles and the
    /// slots reserved.
    fn patched<B: Batch>(
        batches: &[B],
        free: usize,
        raw: impl Fn(&B::Cmd) -> u64,
    ) -> (Vec<Vec<u64>>, usize) {
        let mut k = 0;
        let mut reserve = || {
            (k < free).then(|| {
                k += 1;
                let ours = |h| B::ours(vk::Handle::from_raw(h + k as u64 - 1));
                (ours(BEGIN), ours(END))
            })
        };
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        // SAFETY: the test's batches are valid (arrays alive, chains
        // well formed).
        unsafe {
            build_patched(
                batches,
                |b| b.untimed().is_none(),
                &mut reserve,
                &mut infos,
                &mut cmds,
            )
        };
        let got = infos
            .iter()
            // SAFETY: `infos` point into `cmds`, alive here.
            .map(|i| unsafe { i.cmds() }.iter().map(&raw).collect())
            .collect();
        (got, k)
    }

    fn cbs(raw: &[u64]) -> Vec<vk::CommandBuffer> {
        raw.iter().map(|&h| vk::Handle::from_raw(h)).collect()
    }

    /// One pair per call: the begin before the first batch's command
    /// buffers, the end after the last's; an untimed batch ends a run and
    /// is left as it is; a full ring leaves the run as the app's.
    #[test]
    fn one_pair_per_run_of_timed_batches() {
        let arrays = [cbs(&[1]), cbs(&[2, 3]), cbs(&[4]), cbs(&[5]), cbs(&[6])];
        let sem = [<vk::Semaphore as vk::Handle>::from_raw(77)];
        let info = |a: &[vk::CommandBuffer]| vk::SubmitInfo {
            command_buffer_count: a.len() as u32,
            p_command_buffers: a.as_ptr(),
            ..Default::default()
        };
        let raw = |c: &vk::CommandBuffer| vk::Handle::as_raw(*c);
        let (b0, e0, b1, e1, b2, e2) = (BEGIN, END, BEGIN + 1, END + 1, BEGIN + 2, END + 2);

        // Three batches, one wait semaphore on the second: one pair.
        let mut three = [info(&arrays[0]), info(&arrays[1]), info(&arrays[2])];
        three[1].wait_semaphore_count = 1;
        three[1].p_wait_semaphores = sem.as_ptr();
        let (got, slots) = patched(&three, 8, raw);
        assert_eq!(got, [vec![b0, 1], vec![2, 3], vec![4, e0]]);
        assert_eq!(slots, 1);
        // One batch: the pair around its command buffers.
        let (got, _) = patched(&three[1..2], 8, raw);
        assert_eq!(got, [vec![b0, 2, 3, e0]]);

        // Untimed batches in between: a protected one, one without command
        // buffers. Each run of timed batches gets its own pair.
        let protected = vk::ProtectedSubmitInfo {
            protected_submit: vk::TRUE,
            ..Default::default()
        };
        let mut prot = info(&arrays[1]);
        prot.p_next = (&protected as *const vk::ProtectedSubmitInfo<'_>).cast();
        let mixed = [
            info(&arrays[0]),
            prot,
            info(&arrays[2]),
            info(&[]),
            info(&arrays[3]),
            info(&arrays[4]),
        ];
        let (got, slots) = patched(&mixed, 8, raw);
        assert_eq!(
            got,
            [
                vec![b0, 1, e0],
                vec![2, 3],
                vec![b1, 4, e1],
                vec![],
                vec![b2, 5],
                vec![6, e2],
            ]
        );
        assert_eq!(slots, 3);
        // A ring with one free slot times the first run only.
        let (got, slots) = patched(&mixed, 1, raw);
        assert_eq!(
            got,
            [
                vec![b0, 1, e0],
                vec![2, 3],
                vec![4],
                vec![],
                vec![5],
                vec![6]
            ]
        );
        assert_eq!(slots, 1);
        // A full ring: the app's batches as they were.
        let (got, slots) = patched(&three, 0, raw);
        assert_eq!((got, slots), (vec![vec![1], vec![2, 3], vec![4]], 0));
        // Nothing timable: no pair.
        let (got, slots) = patched(&[prot, info(&[])], 8, raw);
        assert_eq!((got, slots), (vec![vec![2, 3], vec![]], 0));

        // The batches keep everything but their command buffer arrays.
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        let mut reserve = || None;
        // SAFETY: valid batches; `infos` point into `cmds`.
        unsafe {
            build_patched(&three, |_| true, &mut reserve, &mut infos, &mut cmds);
            assert_eq!(infos[1].wait_semaphore_count, 1);
            assert_eq!(infos[1].p_wait_semaphores, sem.as_ptr());
            assert_eq!(infos[1].p_command_buffers, cmds.as_ptr().add(1));
        }
    }

    /// `VkSubmitInfo2` goes through the same routine: its command buffer
    /// infos get the pair, a protected batch (a flag there) none.
    #[test]
    fn one_pair_per_run_of_timed_batches_submit2() {
        let cbi = |raw: &[u64]| -> Vec<vk::CommandBufferSubmitInfo<'static>> {
            raw.iter()
                .map(|&h| vk::CommandBufferSubmitInfo {
                    command_buffer: vk::Handle::from_raw(h),
                    device_mask: 1,
                    ..Default::default()
                })
                .collect()
        };
        let arrays = [cbi(&[1]), cbi(&[2]), cbi(&[3]), cbi(&[4])];
        let info = |a: &[vk::CommandBufferSubmitInfo<'static>]| vk::SubmitInfo2 {
            command_buffer_info_count: a.len() as u32,
            p_command_buffer_infos: a.as_ptr(),
            ..Default::default()
        };
        let mut prot = info(&arrays[2]);
        prot.flags = vk::SubmitFlags::PROTECTED;
        let batches = [info(&arrays[0]), info(&arrays[1]), prot, info(&arrays[3])];
        let raw = |c: &vk::CommandBufferSubmitInfo<'static>| vk::Handle::as_raw(c.command_buffer);
        let (got, slots) = patched(&batches, 8, raw);
        assert_eq!(
            got,
            [
                vec![BEGIN, 1],
                vec![2, END],
                vec![3],
                vec![BEGIN + 1, 4, END + 1]
            ]
        );
        assert_eq!(slots, 2);
        // The app's own entries are copied whole (device mask kept).
        let (mut infos, mut cmds) = (Vec::new(), Vec::new());
        let mut reserve = || None;
        // SAFETY: valid batches; `infos` point into `cmds`.
        unsafe {
            build_patched(&batches, |_| true, &mut reserve, &mut infos, &mut cmds);
            assert!(infos
                .iter()
                .all(|i| i.cmds().iter().all(|c| c.device_mask == 1)));
        }
    }
}
