//! Recordings: samples written to MCAP files and read back.
//!
//! - [`mcap_file`]: the MCAP layout of a recording, written and read without I/O of its
//!   own (`weft record` and `weft replay` use it).
//! - [`config`] and [`recorder`]: recordings that run inside a process (weftd's
//!   `plugins.recorder`): each subscribes to its key expression and writes MCAP files
//!   named with their start time into its directory, rotated by size or age, from a thread
//!   of its own behind a bounded [`queue`] (which `weft record` uses too);
//!   [`RecordingStats`] counts what it wrote.

pub mod config;
pub mod mcap_file;
pub mod queue;
pub mod recorder;
mod rotation;
mod stats;

pub use config::{RecorderConfigError, RecordingConfig, Rotation, WhenFull};
pub use mcap_file::{
    ntp64_to_ns, Compression, Playback, Recorded, Recorder, RecordingError, SampleRef,
    ATTACHMENT_ENCODING,
};
pub use recorder::{start, RecorderError, Recording};
pub use stats::{RecordingStats, RecordingStatus};
