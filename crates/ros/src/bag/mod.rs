//! Recordings as rosbag2 writes them: MCAP files of profile `ros2`, each
//! channel a topic with its message definition (schema encoding
//! `ros2msg`) and CDR messages (the RTPS encapsulation header, then the
//! payload), readable by `ros2 bag info` / `ros2 bag play` and by
//! anything that reads rosbag2's MCAP storage.
//!
//! [`BagWriter`] writes any message this crate defines; [`read`] reads a
//! bag written by anyone into the messages of a cell's topics
//! ([`crate::topics::Topics`]), in log-time order, counting what it skips (topics
//! the cell has no role for) and refusing, with what it had read, a file
//! it cannot read (truncated, not MCAP, a topic of the cell in another
//! encoding or type).

pub mod record;
pub mod schema;

use crate::msg::{
    Bool, Float64, JointState, JointTrajectory, ManipulatorGrant, PlatenGrant, PlatenMoveRequest, PlatenPathRequest,
    PointCloud2, PoseStamped, RosMessage, SpeedScalingFactor, Time,
};
use crate::topics::{Role, Topics};
use byteorder::{BigEndian, LittleEndian};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use workcell_guard_description::workcell::ScalingMessage;

/// The RTPS encapsulation header of a little-endian plain CDR payload.
const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

#[cfg(test)]
mod tests;

/// Why a bag could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The MCAP structure is broken (truncated, not MCAP, a bad record).
    #[error("{path}: not a readable MCAP file after {messages} messages: {why}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Messages read before the fault.
        messages: usize,
        /// What the MCAP reader said.
        why: String,
    },
    /// A topic of the cell recorded in an encoding this reader cannot decode.
    #[error("{path}: topic {topic} is recorded as {what} `{found}`; expected {expected}")]
    Encoding {
        /// The file.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// Which encoding ("message encoding", "schema", "CDR representation").
        what: &'static str,
        /// What the file says.
        found: String,
        /// What would do.
        expected: String,
    },
    /// A message that does not decode as its type.
    #[error("{path}: message {index} on {topic} ({type_name}) does not decode: {why}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// Its type.
        type_name: &'static str,
        /// Its index among the file's messages.
        index: usize,
        /// What the decoder said.
        why: String,
    },
    /// The MCAP writer refused (a closed or failing file).
    #[error("{path}: writing the recording failed: {why}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the writer said.
        why: String,
    },
}

/// A recorded message of a cell's topic.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    /// A joint state.
    JointState(JointState),
    /// A plan, or a command to a controller.
    Trajectory(JointTrajectory),
    /// A platen unit's pose.
    Pose(PoseStamped),
    /// A platen move request.
    Move(PlatenMoveRequest),
    /// A platen path request.
    Path(PlatenPathRequest),
    /// Sensed obstacles.
    Cloud(PointCloud2),
    /// A stop flag.
    Bool(Bool),
    /// A speed scaling as `std_msgs/Float64`.
    Float64(Float64),
    /// A speed scaling as `control_msgs/SpeedScalingFactor`.
    SpeedScaling(SpeedScalingFactor),
    /// A manipulator's grant.
    ArmGrant(ManipulatorGrant),
    /// A platen unit's grant.
    PlatenGrant(PlatenGrant),
    /// A cycle's instant.
    Time(Time),
}

impl Msg {
    /// A speed scaling as `role` carries it.
    pub fn speed(role: Role, scaling: f64) -> Msg {
        match role {
            Role::Speed(_, ScalingMessage::Float64) => Msg::Float64(Float64 { data: scaling }),
            _ => Msg::SpeedScaling(SpeedScalingFactor { factor: scaling }),
        }
    }

    /// The speed scaling, for either of its types.
    pub fn scaling(&self) -> Option<f64> {
        match self {
            Msg::Float64(f) => Some(f.data),
            Msg::SpeedScaling(f) => Some(f.factor),
            _ => None,
        }
    }
}

/// One recorded message.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// When it was logged, ns since the epoch.
    pub log_time_ns: u64,
    /// Its topic's role in the cell.
    pub role: Role,
    /// The message.
    pub msg: Msg,
}

pub use crate::event_loop::Call;

/// The name of the metadata records that hold [`Call`]s.
pub const CALL: &str = "workcell_guard/call";

impl Call {
    fn pairs(&self, ns: u64) -> BTreeMap<String, String> {
        let mut m = BTreeMap::from([("time_ns".to_string(), ns.to_string())]);
        let mut put = |k: &str, v: String| m.insert(k.to_string(), v);
        match self {
            Call::Param { name, value } => {
                put("call", "parameter".into());
                put("name", name.clone());
                put("value", value.clone());
            }
            Call::SetPriority { robot, priority } => {
                put("call", "set_priority".into());
                put("robot", robot.clone());
                put("priority", priority.to_string());
            }
            Call::SetContact { a, b, allowed } => {
                put("call", "set_contact".into());
                put("body_a", a.clone());
                put("body_b", b.clone());
                put("allowed", allowed.to_string());
            }
            Call::ResetStop => {
                put("call", "reset_stop".into());
            }
            Call::Reload => {
                put("call", "reload".into());
            }
        }
        m
    }

    fn parse(m: &BTreeMap<String, String>) -> Option<(u64, Call)> {
        let get = |k: &str| m.get(k).cloned();
        let ns = get("time_ns")?.parse().ok()?;
        let call = match get("call")?.as_str() {
            "parameter" => Call::Param { name: get("name")?, value: get("value")? },
            "set_priority" => Call::SetPriority { robot: get("robot")?, priority: get("priority")?.parse().ok()? },
            "set_contact" => {
                Call::SetContact { a: get("body_a")?, b: get("body_b")?, allowed: get("allowed")?.parse().ok()? }
            }
            "reset_stop" => Call::ResetStop,
            "reload" => Call::Reload,
            _ => return None,
        };
        Some((ns, call))
    }
}

/// What [`read`] found.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// The cell's messages, in log-time order (file order among equal times).
    pub entries: Vec<Entry>,
    /// Messages of topics the cell has no role for, per topic.
    pub skipped: BTreeMap<String, usize>,
    /// The file's metadata records, by name (but [`CALL`]s).
    pub metadata: BTreeMap<String, BTreeMap<String, String>>,
    /// The calls on the node, by instant (ns).
    pub calls: Vec<(u64, Call)>,
    /// The file's profile (`ros2` for rosbag2).
    pub profile: String,
}

/// Writes a rosbag2 MCAP file, a channel per topic as messages come.
pub struct BagWriter<W: Write + Seek = BufWriter<std::fs::File>> {
    out: mcap::Writer<W>,
    path: PathBuf,
    channels: HashMap<String, u16>,
    sequence: u32,
    buf: Vec<u8>,
}

impl BagWriter {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> Result<BagWriter, BagError> {
        let file = std::fs::File::create(path).map_err(|source| BagError::Io { path: path.into(), source })?;
        BagWriter::new(BufWriter::new(file), path)
    }
}

impl<W: Write + Seek> BagWriter<W> {
    /// A writer on `w` (`path` names it in errors).
    pub fn new(w: W, path: &Path) -> Result<BagWriter<W>, BagError> {
        BagWriter::with_chunk_size(w, path, 1 << 20)
    }

    /// A writer on `w` whose chunks close at `chunk` bytes (uncompressed).
    pub fn with_chunk_size(w: W, path: &Path, chunk: u64) -> Result<BagWriter<W>, BagError> {
        let out = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("workcell_guard ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd))
            .chunk_size(Some(chunk))
            .create(w)
            .map_err(|e| BagError::Write { path: path.into(), why: e.to_string() })?;
        Ok(BagWriter { out, path: path.into(), channels: HashMap::new(), sequence: 0, buf: Vec::new() })
    }

    fn fail(&self, e: impl std::fmt::Display) -> BagError {
        BagError::Write { path: self.path.clone(), why: e.to_string() }
    }

    /// Writes `msg` on `topic`, logged at `log_time_ns`.
    pub fn write<M: Serialize + RosMessage>(&mut self, topic: &str, log_time_ns: u64, msg: &M) -> Result<(), BagError> {
        let channel = match self.channels.get(topic) {
            Some(&c) => c,
            None => {
                let name = format!("{}/{}", M::PACKAGE, M::NAME);
                let text = schema::definition(&name).ok_or_else(|| self.fail(format!("no definition for {name}")))?;
                let s = self
                    .out
                    .add_schema(&schema::bag_name(&name), "ros2msg", text.as_bytes())
                    .map_err(|e| self.fail(e))?;
                let c = self.out.add_channel(s, topic, "cdr", &BTreeMap::new()).map_err(|e| self.fail(e))?;
                self.channels.insert(topic.to_string(), c);
                c
            }
        };
        self.buf.clear();
        self.buf.extend_from_slice(&CDR_LE);
        cdr_encoding::to_writer::<M, LittleEndian, _>(&mut self.buf, msg).map_err(|e| self.fail(e))?;
        self.sequence = self.sequence.wrapping_add(1);
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: log_time_ns,
            publish_time: log_time_ns,
        };
        self.out.write_to_known_channel(&header, &self.buf).map_err(|e| self.fail(e))
    }

    /// Writes `msg` on `topic`, logged at `log_time_ns`, as its type.
    pub fn write_msg(&mut self, topic: &str, log_time_ns: u64, msg: &Msg) -> Result<(), BagError> {
        match msg {
            Msg::JointState(m) => self.write(topic, log_time_ns, m),
            Msg::Trajectory(m) => self.write(topic, log_time_ns, m),
            Msg::Pose(m) => self.write(topic, log_time_ns, m),
            Msg::Move(m) => self.write(topic, log_time_ns, m),
            Msg::Path(m) => self.write(topic, log_time_ns, m),
            Msg::Cloud(m) => self.write(topic, log_time_ns, m),
            Msg::Bool(m) => self.write(topic, log_time_ns, m),
            Msg::Float64(m) => self.write(topic, log_time_ns, m),
            Msg::SpeedScaling(m) => self.write(topic, log_time_ns, m),
            Msg::ArmGrant(m) => self.write(topic, log_time_ns, m),
            Msg::PlatenGrant(m) => self.write(topic, log_time_ns, m),
            Msg::Time(m) => self.write(topic, log_time_ns, m),
        }
    }

    /// Writes a metadata record `name` (key-value pairs).
    pub fn metadata(&mut self, name: &str, pairs: BTreeMap<String, String>) -> Result<(), BagError> {
        let m = mcap::records::Metadata { name: name.to_string(), metadata: pairs };
        self.out.write_metadata(&m).map_err(|e| self.fail(e))
    }

    /// Writes `call` down, made at `ns`.
    pub fn call(&mut self, ns: u64, call: &Call) -> Result<(), BagError> {
        self.metadata(CALL, call.pairs(ns))
    }

    /// Closes the current chunk and flushes it to the file: a process that
    /// dies later leaves a file whose messages up to here can be read.
    pub fn flush(&mut self) -> Result<(), BagError> {
        self.out.flush().map_err(|e| self.fail(e))
    }

    /// Writes the summary and flushes: the file is complete.
    pub fn finish(mut self) -> Result<(), BagError> {
        self.out.finish().map(drop).map_err(|e| self.fail(e))
    }
}

fn decode<M: DeserializeOwned>(data: &[u8]) -> Result<M, String> {
    if data.len() < 4 {
        return Err(format!("{} bytes, shorter than the encapsulation header", data.len()));
    }
    let body = &data[4..];
    let r = match (data[0], data[1]) {
        (0x00, 0x01) => cdr_encoding::from_bytes::<M, LittleEndian>(body),
        (0x00, 0x00) => cdr_encoding::from_bytes::<M, BigEndian>(body),
        (a, b) => return Err(format!("representation {a:#04x}{b:02x} is not plain CDR (XCDR1)")),
    };
    r.map(|(m, _)| m).map_err(|e| e.to_string())
}

/// Decodes one serialized message (CDR with its encapsulation header, as
/// on the wire and in a bag) as the type of `role`.
pub fn decode_as(role: Role, data: &[u8]) -> Result<Msg, String> {
    Ok(match role {
        Role::JointState(_) => Msg::JointState(decode(data)?),
        Role::Plan(_) | Role::Command(_) => Msg::Trajectory(decode(data)?),
        Role::PlatenPose(_) => Msg::Pose(decode(data)?),
        Role::MoveRequest(_) => Msg::Move(decode(data)?),
        Role::PathRequest(_) => Msg::Path(decode(data)?),
        Role::Points => Msg::Cloud(decode(data)?),
        Role::Stop(_) => Msg::Bool(decode(data)?),
        Role::Speed(_, ScalingMessage::Float64) => Msg::Float64(decode(data)?),
        Role::Speed(_, ScalingMessage::SpeedScalingFactor) => Msg::SpeedScaling(decode(data)?),
        Role::ArmGrant(_) => Msg::ArmGrant(decode(data)?),
        Role::PlatenGrant(_) => Msg::PlatenGrant(decode(data)?),
        Role::Cycle => Msg::Time(decode(data)?),
        Role::State(_) | Role::Diagnostics | Role::Markers | Role::Display(_) | Role::Clock => {
            return Err(format!("{} is not recorded", role.type_name()));
        }
    })
}

/// Reads the messages of `topics` from the bag at `path` (module text).
pub fn read(path: &Path, topics: &Topics) -> Result<Recording, BagError> {
    let bytes = std::fs::read(path).map_err(|source| BagError::Io { path: path.into(), source })?;
    read_bytes(&bytes, path, topics)
}

/// [`read`] on a bag's bytes (`path` names it in errors).
///
/// Records are read with a bound on their length ([`MAX_RECORD_BYTES`]):
/// `mcap`'s own message stream trusts the lengths inside a compressed chunk
/// and reserves what they claim (a fuzzed bag asked for 192 PiB and aborted
/// the process).
pub fn read_bytes(bytes: &[u8], path: &Path, topics: &Topics) -> Result<Recording, BagError> {
    // mcap's linear reader panics on some malformed chunks too (an
    // arithmetic overflow, found by fuzzing with overflow checks on):
    // contained, such a file is corrupt.
    workcell_guard_description::contain::contain(|| read_records(bytes, path, topics)).unwrap_or_else(|p| {
        Err(BagError::Corrupt {
            path: path.into(),
            messages: 0,
            why: format!("a malformed chunk (the reader failed: {p})"),
        })
    })
}

fn read_records(bytes: &[u8], path: &Path, topics: &Topics) -> Result<Recording, BagError> {
    use mcap::records::Record;
    let corrupt = |messages: usize, why: String| BagError::Corrupt { path: path.into(), messages, why };
    let mut rec = Recording::default();
    let mut schemas: HashMap<u16, String> = HashMap::new();
    let mut channels: HashMap<u16, ChannelInfo> = HashMap::new();
    let mut index = 0;
    let options = mcap::sans_io::LinearReaderOptions::default().with_record_length_limit(MAX_RECORD_BYTES);
    let mut reader = mcap::sans_io::LinearReader::new_with_options(options);
    let mut rest = bytes;
    while let Some(event) = reader.next_event() {
        let (opcode, data) = match event.map_err(|e| corrupt(index, e.to_string()))? {
            mcap::sans_io::LinearReadEvent::ReadRequest(n) => {
                let n = n.min(rest.len());
                reader.insert(n).copy_from_slice(&rest[..n]);
                reader.notify_read(n);
                rest = &rest[n..];
                continue;
            }
            mcap::sans_io::LinearReadEvent::Record { opcode, data } => (opcode, data),
        };
        // mcap's record parser panics on some malformed records (found by
        // fuzzing): contained, such a record is a corrupt file.
        let record = workcell_guard_description::contain::contain(|| mcap::parse_record(opcode, data))
            .map_err(|p| corrupt(index, format!("a malformed record (the parser failed: {p})")))?;
        match record.map_err(|e| corrupt(index, e.to_string()))? {
            Record::Header(h) => rec.profile = h.profile,
            Record::Metadata(m) if m.name == CALL => rec.calls.extend(Call::parse(&m.metadata)),
            Record::Metadata(m) => {
                rec.metadata.insert(m.name, m.metadata);
            }
            Record::Schema { header, .. } => {
                schemas.insert(header.id, header.name);
            }
            Record::Channel(c) => {
                let schema = schemas.get(&c.schema_id).cloned();
                let role = check_channel(&c.topic, &c.message_encoding, schema.as_deref(), topics, path)?;
                channels.insert(c.id, ChannelInfo { topic: c.topic, role });
            }
            Record::Message { header, data } => {
                let Some(c) = channels.get(&header.channel_id) else {
                    return Err(corrupt(index, format!("a message on channel {}, never declared", header.channel_id)));
                };
                match c.role {
                    None => *rec.skipped.entry(c.topic.clone()).or_default() += 1,
                    Some(role) => {
                        let msg = decode_as(role, &data).map_err(|why| BagError::Decode {
                            path: path.into(),
                            topic: c.topic.clone(),
                            type_name: role.type_name(),
                            index,
                            why,
                        })?;
                        rec.entries.push(Entry { log_time_ns: header.log_time, role, msg });
                    }
                }
                index += 1;
            }
            _ => {}
        }
    }
    rec.entries.sort_by_key(|e| e.log_time_ns);
    rec.calls.sort_by_key(|c| c.0);
    Ok(rec)
}

/// The longest record a bag may hold, uncompressed (rosbag2 and the node
/// write chunks of about 1 MiB; a point cloud message is a few MiB).
pub const MAX_RECORD_BYTES: usize = 256 << 20;

/// A channel read from a bag: its topic and role (`None`: skipped).
struct ChannelInfo {
    topic: String,
    role: Option<Role>,
}

/// The role of a channel's topic in the cell (`None`: skipped), once its
/// encoding and schema are checked.
fn check_channel(
    topic: &str,
    encoding: &str,
    schema: Option<&str>,
    topics: &Topics,
    path: &Path,
) -> Result<Option<Role>, BagError> {
    let Some(role) = topics.role(topic) else {
        return Ok(None);
    };
    let bad = |what, found: &str, expected: String| BagError::Encoding {
        path: path.into(),
        topic: topic.to_string(),
        what,
        found: found.to_string(),
        expected,
    };
    if encoding != "cdr" {
        return Err(bad("message encoding", encoding, "`cdr`".into()));
    }
    let want = role.type_name();
    match schema {
        Some(s) if schema::short_name(s) == want => Ok(Some(role)),
        Some(s) => Err(bad("schema", s, format!("`{}`", schema::bag_name(want)))),
        None => Err(bad("schema", "(none)", format!("`{}`", schema::bag_name(want)))),
    }
}

/// The metadata records of the bag at `path`, by name (none where the
/// file has no readable ones).
pub fn read_metadata(path: &Path) -> Result<BTreeMap<String, BTreeMap<String, String>>, BagError> {
    let bytes = std::fs::read(path).map_err(|source| BagError::Io { path: path.into(), source })?;
    let mut rec = Recording::default();
    // The parser panics on some malformed records: contained, the records
    // up to there are kept.
    let _ = workcell_guard_description::contain::contain(|| read_summary(&bytes, &mut rec));
    Ok(rec.metadata)
}

/// The profile and metadata records, up to the file's first fault (a file
/// without them still gives its messages). Chunks are skipped, not
/// decompressed.
fn read_summary(bytes: &[u8], rec: &mut Recording) {
    let Ok(records) = mcap::read::LinearReader::new(bytes) else {
        return;
    };
    // Up to the first fault (a reader that failed yields that fault again).
    for r in records.map_while(Result::ok) {
        match r {
            mcap::records::Record::Header(h) => rec.profile = h.profile,
            mcap::records::Record::Metadata(m) if m.name == CALL => rec.calls.extend(Call::parse(&m.metadata)),
            mcap::records::Record::Metadata(m) => {
                rec.metadata.insert(m.name, m.metadata);
            }
            _ => {}
        }
    }
}
