//! What both transports do the same to start the node, run its loop and
//! end it: parameters, workcell and guard loaded as the command line says
//! ([`build_node`]); the loop over a [`Transport`] until SIGINT or SIGTERM,
//! with the transport's parameter services beside it and a panic on any
//! thread caught ([`serve`]); the outcome, with the panic's report printed
//! once every stop is out ([`finish`]). Each transport only makes its
//! endpoints (from [`crate::topics`]) and leaves its robots stopped on its
//! own wire.

use crate::args::RosArgs;
use crate::event_loop::{LoopContext, Transport};
use crate::node::GuardNode;
use crate::params::{NodeParams, ParamError};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use workcell_guard_core::field::DistanceField;
use workcell_guard_description::workcell::{self, Workcell};

/// The default node name.
pub const NODE_NAME: &str = "workcell_guard";

/// A ROS environment variable with a value ROS would refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value}: {problem}")]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong.
    pub problem: &'static str,
}

/// The node could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad environment.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// Bad parameters.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No workcell file.
    #[error(
        "parameter `workcell_file` is not set (give --params-file config/workcell_guard.yaml or -p workcell_file:=…)"
    )]
    NoWorkcell,
    /// The workcell failed validation.
    #[error(transparent)]
    Workcell(#[from] workcell::ConfigError),
    /// The guard could not be built.
    #[error(transparent)]
    Guard(#[from] workcell_guard_core::guard::GuardError),
    /// A DDS entity could not be created.
    #[error("DDS: {0}")]
    Dds(String),
    /// A topic name is not a valid ROS name.
    #[error("topic `{name}`: {problem}")]
    Name {
        /// The name.
        name: String,
        /// Why.
        problem: String,
    },
    /// The async runtime could not start.
    #[error("runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The recording (`record_file`) could not be created.
    #[error(transparent)]
    Record(#[from] crate::bag::BagError),
    /// The node panicked; every stop was published true before it ended.
    #[error("panicked (every stop published true): {0}")]
    Panicked(String),
}

/// The environment variable that names a joint-state `frame_id` on which
/// the node panics (fault injection for tests; unset in production).
pub const PANIC_ON_FRAME_ID: &str = "WORKCELL_GUARD_PANIC_ON_FRAME_ID";

/// Loads parameters, the workcell and the guard as the command line says.
pub fn build_node(ros: &RosArgs, matrix_cache: Option<&std::path::Path>) -> Result<GuardNode, RunError> {
    let node_name = ros.node_name.as_deref().unwrap_or(NODE_NAME);
    let ns = ros.namespace.as_deref().unwrap_or("/");
    build_from(NodeParams::load(ros, node_name, ns)?, matrix_cache)
}

/// Loads the workcell `params` name and builds its guard.
pub fn build_from(params: NodeParams, matrix_cache: Option<&std::path::Path>) -> Result<GuardNode, RunError> {
    let file = params.workcell_file.clone().ok_or(RunError::NoWorkcell)?;
    let cell = workcell::load(&file)?;
    let field = DistanceField::from_workcell(&cell);
    let (guard, _) = workcell_guard_description::build_guard(&cell, field, matrix_cache)?;
    Ok(GuardNode::new(cell, guard, params)?)
}

/// A panic's message (its payload, when it is text).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

/// Installs the process's panic hook for the node's run: it raises `flag`
/// and keeps what the default hook would print (thread, place, message and,
/// with `RUST_BACKTRACE`, a backtrace left unresolved), so that the stops go
/// out true at once and the report is printed after (resolving a backtrace
/// takes long enough for a subscriber to discover the stale writers).
pub(crate) fn catch_panics(flag: Arc<AtomicBool>) -> Arc<Mutex<Option<PanicReport>>> {
    let report = Arc::new(Mutex::new(None::<PanicReport>));
    let keep = report.clone();
    std::panic::set_hook(Box::new(move |info| {
        // A third-party parser's panic, contained and refused as a bad file
        // (a mesh on a reload): the node runs on.
        if workcell_guard_description::contain::active() {
            return;
        }
        flag.store(true, Ordering::SeqCst);
        let thread = std::thread::current();
        let bt = std::backtrace::Backtrace::capture();
        let text = format!(
            "thread '{}' panicked at {}:\n{}",
            thread.name().unwrap_or("<unnamed>"),
            info.location().map_or_else(|| "?".to_string(), |l| l.to_string()),
            panic_message(info.payload())
        );
        if let Ok(mut r) = keep.try_lock()
            && r.is_none()
        {
            *r = Some(PanicReport { text, backtrace: bt });
        }
    }));
    report
}

/// What a panic hook keeps to print once the stops are out.
pub(crate) struct PanicReport {
    text: String,
    /// Resolved (slowly) only when printed.
    backtrace: std::backtrace::Backtrace,
}

impl std::fmt::Display for PanicReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)?;
        if self.backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            write!(f, "\nstack backtrace:\n{}", self.backtrace)?;
        }
        Ok(())
    }
}

/// SIGINT or SIGTERM, listened for once for the node's whole run.
pub struct Shutdown {
    int: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
}

impl Shutdown {
    /// Starts listening (inside a tokio runtime).
    pub fn new() -> Shutdown {
        use tokio::signal::unix::{SignalKind, signal};
        Shutdown { int: signal(SignalKind::interrupt()).ok(), term: signal(SignalKind::terminate()).ok() }
    }

    /// Resolves on the next SIGINT or SIGTERM.
    pub async fn requested(&mut self) {
        async fn next(s: Option<&mut tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = next(self.int.as_mut()) => {}
            _ = next(self.term.as_mut()) => {}
        }
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

/// Where the collision matrix is cached unless told: `$XDG_CACHE_HOME` or
/// `~/.cache`, under `workcell_guard/`.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("workcell_guard"))
}

/// The loop's context for a node whose parameter updates arrive on
/// `params`; a reload builds the new guard with `matrix_cache`.
pub(crate) fn loop_context(
    params: tokio::sync::mpsc::UnboundedReceiver<Vec<(String, Value)>>,
    checked_cell: Arc<Mutex<Arc<Workcell>>>,
    matrix_cache: Option<&std::path::Path>,
) -> LoopContext {
    let cache = matrix_cache.map(|p| p.to_path_buf());
    LoopContext {
        params,
        checked_cell,
        rebuild: Arc::new(move |params| build_from(params, cache.as_deref()).map_err(|e| e.to_string())),
        panicked: Arc::new(AtomicBool::new(false)),
    }
}

/// Runs the loop over `io` on `rt` until SIGINT or SIGTERM, or a panic on
/// any thread (which [`catch_panics`] reports through `cx.panicked`), with
/// `beside` (the transport's parameter services) polled alongside and the
/// recording `record_file` names written. A panic in the loop is caught and
/// returned, so that the transport can still leave every robot stopped.
pub(crate) fn serve<T: Transport>(
    rt: &tokio::runtime::Runtime,
    ros: &RosArgs,
    core: &mut GuardNode,
    io: &mut T,
    cx: &mut LoopContext,
    beside: impl std::future::Future<Output = ()>,
) -> Result<std::thread::Result<()>, RunError> {
    let (bag, recorded) = (crate::bag::record::open(core)?, crate::topics::Topics::new(ros, core.cell()));
    Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            let mut shutdown = Shutdown::new();
            let serving = crate::bag::record::serve(io, bag, recorded, core, cx, shutdown.requested());
            futures::pin_mut!(serving, beside);
            futures::future::select(serving, beside).await;
        })
    })))
}

/// How the run ended, once the transport has left every robot stopped:
/// the panic's report printed, and a panic in the loop (`ran`) or on
/// another thread (`panicked`) an error.
pub(crate) fn finish(
    ran: std::thread::Result<()>,
    panicked: &AtomicBool,
    report: &Mutex<Option<PanicReport>>,
) -> Result<(), RunError> {
    if let Some(r) = report.lock().ok().and_then(|mut r| r.take()) {
        eprintln!("{r}");
    }
    match ran {
        Err(p) => Err(RunError::Panicked(panic_message(p.as_ref()).to_string())),
        Ok(()) if panicked.load(Ordering::SeqCst) => Err(RunError::Panicked("in another thread".into())),
        Ok(()) => Ok(()),
    }
}
