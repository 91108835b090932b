//! How a budget of CPU threads is spent on a local model: how many inference workers (sessions, each with
//! its own batches out at once) and how many ONNX Runtime threads inside each.
//!
//! A search sends small batches, often of one row: ONNX Runtime's threads then share too little work to
//! gain, while independent sessions each compute a batch of their own, as lc0 runs one search thread per
//! core, each computing its own batches. Measured with `mavboard bench search --in-flight` on 2 cores, 800
//! simulations from 4 positions: two single-threaded workers against one worker of two threads give 1.77×
//! (batch 1) and 1.13× (batch 16) the simulations per second on maia-1900, and 1.52× and 1.33× on
//! mav-enc-tiny. So a CPU's threads become workers of one thread each, except for a large model file: each
//! session holds its own copy of the weights, and a large net's rows are work enough to share, so it gets
//! one worker with every thread. An accelerator (or `auto` where one is compiled in) keeps one worker with
//! the threads for what runs on the CPU.

use super::device::{Device, SessionThreads};

/// From this size of `model.onnx` up, one session takes all the threads rather than one each.
pub const SHARED_SESSION_BYTES: u64 = 256 << 20;

/// Inference workers and each one's session threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadPlan {
    /// Inference workers: sessions, each with one batch out at a time.
    pub workers: usize,
    /// Each session's ONNX Runtime threads.
    pub threads: SessionThreads,
}

impl ThreadPlan {
    /// The plan for `total` CPU threads (0: the automatic count, [`SessionThreads::default`]'s) and a model
    /// file of `model_bytes` (`None`: unknown, e.g. no file) on `device`.
    pub fn new(device: Device, total: usize, model_bytes: Option<u64>) -> ThreadPlan {
        let total = if total == 0 { SessionThreads::default().intra_op } else { total };
        let accelerator = match device {
            Device::Cpu => false,
            Device::Cuda | Device::CoreMl => true,
            Device::Auto => cfg!(any(feature = "cuda", feature = "coreml")),
        };
        let large = model_bytes.is_some_and(|b| b >= SHARED_SESSION_BYTES);
        if accelerator || large {
            ThreadPlan { workers: 1, threads: SessionThreads { intra_op: total } }
        } else {
            ThreadPlan { workers: total, threads: SessionThreads { intra_op: 1 } }
        }
    }

    /// The plan for the package in `dir`: [`ThreadPlan::new`] with the size of its `model.onnx` and of the
    /// weights stored beside it (`model.onnx.data`, ONNX's external data, where the largest models keep them).
    pub fn for_package(device: Device, total: usize, dir: &std::path::Path) -> ThreadPlan {
        let size = |name: &str| std::fs::metadata(dir.join(name)).ok().map(|m| m.len());
        let bytes = size("model.onnx").map(|graph| graph + size("model.onnx.data").unwrap_or(0));
        ThreadPlan::new(device, total, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_gets_one_worker_per_thread() {
        let p = ThreadPlan::new(Device::Cpu, 4, Some(3 << 20));
        assert_eq!((p.workers, p.threads.intra_op), (4, 1));
        let p = ThreadPlan::new(Device::Cpu, 1, None);
        assert_eq!((p.workers, p.threads.intra_op), (1, 1));
    }

    #[test]
    fn zero_is_the_automatic_count() {
        let auto = SessionThreads::default().intra_op;
        let p = ThreadPlan::new(Device::Cpu, 0, Some(1 << 20));
        assert_eq!((p.workers, p.threads.intra_op), (auto, 1));
    }

    #[test]
    fn a_large_model_shares_one_session() {
        let p = ThreadPlan::new(Device::Cpu, 4, Some(SHARED_SESSION_BYTES));
        assert_eq!((p.workers, p.threads.intra_op), (1, 4));
        let p = ThreadPlan::new(Device::Cpu, 4, Some(SHARED_SESSION_BYTES - 1));
        assert_eq!((p.workers, p.threads.intra_op), (4, 1));
    }

    #[test]
    fn an_accelerator_keeps_one_worker() {
        let p = ThreadPlan::new(Device::Cuda, 3, Some(1 << 20));
        assert_eq!((p.workers, p.threads.intra_op), (1, 3));
        let auto = ThreadPlan::new(Device::Auto, 2, Some(1 << 20));
        let expect = if cfg!(any(feature = "cuda", feature = "coreml")) { (1, 2) } else { (2, 1) };
        assert_eq!((auto.workers, auto.threads.intra_op), expect);
    }

    #[test]
    fn a_package_is_sized_by_its_model_file() {
        let dir = std::env::temp_dir().join(format!("mavboard-thread-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("model.onnx"), [0u8; 16]).expect("write");
        let p = ThreadPlan::for_package(Device::Cpu, 2, &dir);
        assert_eq!((p.workers, p.threads.intra_op), (2, 1));
        let none = ThreadPlan::for_package(Device::Cpu, 2, &dir.join("absent"));
        assert_eq!(none.workers, 2);
        // Weights stored beside the graph count: a sparse file as large as a big net's.
        let data = std::fs::File::create(dir.join("model.onnx.data")).expect("create");
        data.set_len(SHARED_SESSION_BYTES).expect("sparse length");
        let p = ThreadPlan::for_package(Device::Cpu, 2, &dir);
        assert_eq!((p.workers, p.threads.intra_op), (1, 2));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
