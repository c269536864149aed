//! Service servers that answer both request mappings ROS 2 clients use:
//! - **enhanced** (rmw_fastrtps, rmw_connextdds, ros2-client): the payload
//!   is the request alone; the request's identity travels as the sample's
//!   identity (or a related-sample-identity inline QoS), and the reply
//!   carries it as its related sample identity;
//! - **Cyclone** (rmw_cyclonedds_cpp): a 16-byte header (the low 8 bytes of
//!   the client's GUID, a sequence number) comes before the request, and
//!   the reply starts with the same header.
//!
//! A request with a related sample identity is enhanced. One without is
//! read both ways: the form that decodes and uses the whole payload (up
//! to CDR's end padding) wins, the header-less one first; a request that
//! neither form reads is refused with both reasons. Every reply also
//! carries the related sample identity, which Cyclone ignores.
//!
//! The server's reader and writer are the participant's, made beside the
//! node (a node's writer cannot set a reply's related sample identity). So
//! that the graph shows the service as the node's (`ros2 node info`,
//! `get_service_names_and_types_by_node`: rmw lists a node's services by
//! the request readers and reply writers the node announces on
//! `ros_discovery_info`), the node also makes a reader and a writer of its
//! own on the same two topics, which are never read or written.

use ros2_client::dds::rustdds::{
    self, QosPolicies, RepresentationIdentifier, TopicKind, WriteOptionsBuilder,
    bytes::Bytes,
    no_key::{self, DataWriter, SimpleDataReader},
    rpc::SampleIdentity,
    serialization::deserialize_from_cdr_with_rep_id,
};
use ros2_client::dds::{Node, Publisher, Subscription};
use ros2_client::{Message, QosProfile, message_info::MessageInfo};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// A request: which mapping it came in, what its reply must carry, and
/// which reader of the caller's the reply is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestId {
    mapping: Mapping,
    reply_to: ReplyTo,
}

/// Which mapping a request came in, and what its reply must carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// No header: the reply's related sample identity answers it.
    Enhanced(SampleIdentity),
    /// rmw_cyclonedds's header (client GUID's low half, sequence number),
    /// sent back in front of the reply.
    Cyclone {
        /// The sample's identity (also sent as the related one).
        sample: SampleIdentity,
        /// The client GUID's low 8 bytes.
        guid_low: [u8; 8],
        /// The client's sequence number.
        seq: i64,
    },
}

/// The reader a reply goes to, as far as the request names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReplyTo {
    /// rmw_fastrtps names its client's reply reader as the writer of the
    /// request's related sample identity.
    Reader(rustdds::GUID),
    /// Other clients: some reader of the participant of this writer (the
    /// request's).
    Participant(rustdds::GUID),
}

impl ReplyTo {
    fn is(&self, reader: rustdds::GUID) -> bool {
        match *self {
            ReplyTo::Reader(g) => g == reader,
            ReplyTo::Participant(w) => w.prefix == reader.prefix,
        }
    }
}

/// A serialized sample and its encoding.
#[derive(Clone, Debug)]
pub struct Raw {
    bytes: Bytes,
    encoding: RepresentationIdentifier,
}

/// Passes samples through undecoded (decoding is the server's, which
/// knows the mappings).
pub struct RawAdapter;

const ENCODINGS: [RepresentationIdentifier; 2] = [RepresentationIdentifier::CDR_LE, RepresentationIdentifier::CDR_BE];

/// The (never failing) pass-through decoder.
#[derive(Clone, Copy)]
pub struct RawDecoder;

/// Never produced: raw samples always decode.
#[derive(Debug, thiserror::Error)]
#[error("raw sample")]
pub struct RawError;

impl no_key::DeserializerAdapter<Raw> for RawAdapter {
    type Error = RawError;
    type Decoded = Raw;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &ENCODINGS
    }

    fn transform_decoded(decoded: Raw) -> Raw {
        decoded
    }
}

impl no_key::DefaultDecoder<Raw> for RawAdapter {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

impl<'de> no_key::Decode<'de, Raw> for RawDecoder {
    type Error = RawError;

    fn decode_bytes(self, input: &'de [u8], encoding: RepresentationIdentifier) -> Result<Raw, RawError> {
        Ok(Raw { bytes: Bytes::copy_from_slice(input), encoding })
    }
}

impl no_key::SerializerAdapter<Raw> for RawAdapter {
    type Error = RawError;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &Raw) -> Result<Bytes, RawError> {
        Ok(value.bytes.clone())
    }
}

/// `T` from CDR `bytes` in `encoding`, only if it reads them all (up to
/// three bytes of end padding).
fn whole<T: serde::de::DeserializeOwned>(bytes: &[u8], encoding: RepresentationIdentifier) -> Result<T, String> {
    let (v, used) = deserialize_from_cdr_with_rep_id::<T>(bytes, encoding).map_err(|e| format!("{e}"))?;
    if used + 3 < bytes.len() {
        return Err(format!("{} of {} bytes read", used, bytes.len()));
    }
    Ok(v)
}

/// Reads request `raw` (module text): its mapping and its value.
pub fn decode_request<Q: serde::de::DeserializeOwned>(raw: &Raw, info: &MessageInfo) -> Result<(RequestId, Q), String> {
    let own = SampleIdentity {
        writer_guid: info.publisher_gid().into(),
        sequence_number: rustdds::SequenceNumber::from(info.sequence_number()),
    };
    decode_with(raw, own, info.related_request_id().map(Into::into))
}

/// [`decode_request`] on a payload alone, as if it came from an unknown
/// writer, with a related sample identity where `enhanced` (the fuzz
/// targets read requests this way).
pub fn decode_request_bytes<Q: serde::de::DeserializeOwned>(
    bytes: &[u8],
    big_endian: bool,
    enhanced: bool,
) -> Result<Q, String> {
    let encoding = if big_endian { RepresentationIdentifier::CDR_BE } else { RepresentationIdentifier::CDR_LE };
    let raw = Raw { bytes: Bytes::copy_from_slice(bytes), encoding };
    let own =
        SampleIdentity { writer_guid: rustdds::GUID::GUID_UNKNOWN, sequence_number: rustdds::SequenceNumber::from(1) };
    decode_with(&raw, own, enhanced.then_some(own)).map(|(_, q)| q)
}

fn decode_with<Q: serde::de::DeserializeOwned>(
    raw: &Raw,
    own: SampleIdentity,
    related: Option<SampleIdentity>,
) -> Result<(RequestId, Q), String> {
    if let Some(related) = related {
        let mut id = related;
        // FastDDS sends an unknown sequence number there: the sample's own
        // is the one its client waits for.
        if id.sequence_number == rustdds::SequenceNumber::UNKNOWN {
            id.sequence_number = own.sequence_number;
        }
        // rmw_fastrtps's related writer is its reply reader, a GUID of
        // the calling participant other than the request's writer.
        let from = own.writer_guid;
        let reply_to = if related.writer_guid != from && related.writer_guid.prefix == from.prefix {
            ReplyTo::Reader(related.writer_guid)
        } else {
            ReplyTo::Participant(from)
        };
        return whole::<Q>(&raw.bytes, raw.encoding)
            .map(|q| (RequestId { mapping: Mapping::Enhanced(id), reply_to }, q));
    }
    let reply_to = ReplyTo::Participant(own.writer_guid);
    let plain = match whole::<Q>(&raw.bytes, raw.encoding) {
        Ok(q) => return Ok((RequestId { mapping: Mapping::Enhanced(own), reply_to }, q)),
        Err(e) => e,
    };
    let cyclone = (|| {
        if raw.bytes.len() < 16 {
            return Err(format!("{} bytes, shorter than its 16-byte header", raw.bytes.len()));
        }
        let mut guid_low = [0u8; 8];
        guid_low.copy_from_slice(&raw.bytes[..8]);
        let seq_bytes: [u8; 8] = raw.bytes[8..16].try_into().map_err(|_| "header".to_string())?;
        let seq = if raw.encoding == RepresentationIdentifier::CDR_BE {
            i64::from_be_bytes(seq_bytes)
        } else {
            i64::from_le_bytes(seq_bytes)
        };
        whole::<Q>(&raw.bytes[16..], raw.encoding)
            .map(|q| (RequestId { mapping: Mapping::Cyclone { sample: own, guid_low, seq }, reply_to }, q))
    })();
    cyclone.map_err(|c| format!("neither mapping reads it: without a header, {plain}; with rmw_cyclonedds's, {c}"))
}

/// The reply's bytes for a request `id`: the Cyclone header (little
/// endian) where it had one, then `answer` as little-endian CDR.
pub fn encode_reply<A: serde::Serialize>(id: RequestId, answer: &A) -> Result<Raw, String> {
    let mut out = Vec::with_capacity(64);
    if let Mapping::Cyclone { guid_low, seq, .. } = id.mapping {
        out.extend_from_slice(&guid_low);
        out.extend_from_slice(&seq.to_le_bytes());
    }
    cdr_encoding::to_writer::<A, byteorder::LittleEndian, _>(&mut out, answer).map_err(|e| e.to_string())?;
    Ok(Raw { bytes: Bytes::from(out), encoding: RepresentationIdentifier::CDR_LE })
}

/// How long a reply waits for the caller's reply reader to be matched
/// before it is sent anyway.
pub const REPLY_WAIT: Duration = Duration::from_secs(2);

/// A reader found in discovery counts as matched by the reply writer after
/// this long (where the writer's own match event was not seen).
const DISCOVERY_SETTLE: Duration = Duration::from_millis(20);

/// A reply not sent yet: its caller's reader was not matched.
struct Held {
    raw: Raw,
    related: SampleIdentity,
    reply_to: ReplyTo,
    since: Instant,
}

/// What the reply writer knows of the readers it reaches.
#[derive(Default)]
struct Readers {
    /// Matched, by the writer's own events.
    matched: Vec<rustdds::GUID>,
    /// Found in discovery on the reply topic, and since when.
    discovered: Vec<(rustdds::GUID, Instant)>,
}

/// A service server answering both mappings.
///
/// A reply is sent once the writer has matched the calling client's reply
/// reader: a client may call as soon as it has matched the server's request
/// reader and reply writer, before this side has discovered its reply
/// reader, and a reply written then reaches it only after a heartbeat
/// resend (seconds with Fast DDS), or never. Until then the reply is held
/// (up to [`REPLY_WAIT`]) and [`DualServer::flush`] sends it.
pub struct DualServer<Q, A: serde::Serialize> {
    requests: SimpleDataReader<Raw, RawAdapter>,
    replies: DataWriter<Raw, RawAdapter>,
    participant: rustdds::DomainParticipant,
    reply_topic: String,
    held: RefCell<Vec<Held>>,
    readers: RefCell<Readers>,
    /// The node's own reader and writer on the two topics (module text):
    /// they announce the service as the node's and are never used.
    _announced: (Subscription<Q>, Publisher<A>),
    _types: PhantomData<fn(Q) -> A>,
}

impl<Q: Message + 'static, A: Message + 'static> DualServer<Q, A> {
    /// The server of service `fq_name` (fully qualified) of type
    /// `pkg/srv/name`, on `participant`, `qos` both ways, announced as
    /// `node`'s.
    pub fn new(
        participant: &rustdds::DomainParticipant,
        node: &mut Node,
        fq_name: &str,
        (pkg, name): (&str, &str),
        qos: &QosProfile,
    ) -> Result<Self, String> {
        let q: QosPolicies = qos.into();
        fn e<E: std::fmt::Debug>(e: E) -> String {
            format!("{e:?}")
        }
        let typ = |dir: &str| format!("{pkg}::srv::dds_::{name}_{dir}_");
        let reply_topic = format!("rr{fq_name}Reply");
        let rq =
            participant.create_topic(format!("rq{fq_name}Request"), typ("Request"), &q, TopicKind::NoKey).map_err(e)?;
        let rr = participant.create_topic(reply_topic.clone(), typ("Response"), &q, TopicKind::NoKey).map_err(e)?;
        let requests = participant
            .create_subscriber(&q)
            .map_err(e)?
            .create_simple_datareader_no_key::<Raw, RawAdapter>(&rq, Some(q.clone()))
            .map_err(e)?;
        let replies = participant
            .create_publisher(&q)
            .map_err(e)?
            .create_datawriter_no_key::<Raw, RawAdapter>(&rr, Some(q))
            .map_err(e)?;
        let announced = (
            node.create_subscription::<Q>(&rq, Some(qos.clone())).map_err(e)?,
            node.create_publisher::<A>(&rr, Some(qos.clone())).map_err(e)?,
        );
        Ok(DualServer {
            requests,
            replies,
            participant: participant.clone(),
            reply_topic,
            held: RefCell::default(),
            readers: RefCell::default(),
            _announced: announced,
            _types: PhantomData,
        })
    }

    /// Every request as it arrives, decoded as [`decode_request`] reads it.
    pub fn receive_request_stream(&self) -> impl futures::Stream<Item = Result<(RequestId, Q), String>> + '_ {
        use futures::StreamExt;
        self.requests.as_async_stream().map(|r| match r {
            Ok(dcc) => {
                let info = MessageInfo::from(&dcc);
                decode_request::<Q>(&dcc.into_value(), &info)
            }
            Err(e) => Err(format!("{e:?}")),
        })
    }

    /// Answers request `id` with `answer`: now if the caller's reply reader
    /// is matched, else once it is (the type's text).
    pub fn send_response(&self, id: RequestId, answer: A) -> Result<(), String> {
        let related = match id.mapping {
            Mapping::Enhanced(s) | Mapping::Cyclone { sample: s, .. } => s,
        };
        let raw = encode_reply(id, &answer)?;
        self.take_events();
        if self.readers.borrow().matched.iter().any(|&g| id.reply_to.is(g)) {
            return self.write(raw, related);
        }
        self.held.borrow_mut().push(Held { raw, related, reply_to: id.reply_to, since: Instant::now() });
        self.flush().map(drop)
    }

    /// Sends every held reply whose reader is now matched, or that waited
    /// [`REPLY_WAIT`]; keeps the writer's match events read (call it often:
    /// the writer keeps only a few). Returns how many are still held.
    pub fn flush(&self) -> Result<usize, String> {
        self.take_events();
        if self.held.borrow().is_empty() {
            return Ok(0);
        }
        let now = Instant::now();
        self.look_in_discovery(now);
        let mut result = Ok(());
        let held = std::mem::take(&mut *self.held.borrow_mut());
        let mut kept = Vec::new();
        for h in held {
            let r = self.readers.borrow();
            let matched = r.matched.iter().any(|&g| h.reply_to.is(g))
                || r.discovered.iter().any(|&(g, t)| h.reply_to.is(g) && now.duration_since(t) >= DISCOVERY_SETTLE);
            drop(r);
            if matched || now.duration_since(h.since) >= REPLY_WAIT {
                if !matched {
                    tracing::debug!(
                        "{}: the caller's reader not matched in {REPLY_WAIT:?}: sent anyway",
                        self.reply_topic
                    );
                }
                result = result.and(self.write(h.raw, h.related));
            } else {
                kept.push(h);
            }
        }
        let n = kept.len();
        *self.held.borrow_mut() = kept;
        result.map(|()| n)
    }

    fn write(&self, raw: Raw, related: SampleIdentity) -> Result<(), String> {
        let opts = WriteOptionsBuilder::new()
            .source_timestamp(rustdds::Timestamp::now())
            .related_sample_identity(related)
            .build();
        self.replies.write_with_options(raw, opts).map(drop).map_err(|e| format!("{e:?}"))
    }

    /// The writer's match events, into `readers.matched`.
    fn take_events(&self) {
        use rustdds::StatusEvented;
        let mut r = self.readers.borrow_mut();
        while let Some(ev) = self.replies.try_recv_status() {
            if let rustdds::DataWriterStatus::PublicationMatched { current, reader, .. } = ev {
                r.matched.retain(|&g| g != reader);
                if current.count_change() > 0 {
                    r.matched.push(reader);
                }
            }
        }
    }

    /// The readers discovery knows on the reply topic, each with the time
    /// it was first seen here.
    fn look_in_discovery(&self, now: Instant) {
        let found: Vec<rustdds::GUID> = (self.participant.discovered_readers().into_iter())
            .filter(|d| d.subscription_topic_data.topic_name() == &self.reply_topic)
            .map(|d| d.reader_proxy.remote_reader_guid)
            .collect();
        let mut r = self.readers.borrow_mut();
        r.discovered.retain(|(g, _)| found.contains(g));
        for g in found {
            if !r.discovered.iter().any(|&(d, _)| d == g) {
                r.discovered.push((g, now));
            }
        }
    }
}
