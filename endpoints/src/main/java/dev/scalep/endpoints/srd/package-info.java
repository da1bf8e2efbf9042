/**
 * SRD semantics on EFA endpoints, built on the verbs API only (runs on {@code sim:efa} and on the
 * ibv EFA path). An ordered channel is an {@link dev.scalep.endpoints.srd.OrderedSender} and an
 * {@link dev.scalep.endpoints.srd.OrderedReceiver}, each over its own SRD QP, built directly on
 * verbs QPs and an address handle rather than on the endpoint manager (one QP per side keeps the
 * sequence space per channel). Every operation carries a sequence number in its immediate
 * ({@link dev.scalep.endpoints.srd.ImmCodec}); the receiver tracks arrivals in a ring of
 * {@code window} slots and, under receiver-reorder, applies in sequence order; under sender-wait the
 * sender holds an emulated atomic until the completions of everything before it arrived. Sender
 * callbacks run in post order from a completion ring. The sender's work requests are one pool of
 * {@code window} pre-linked records, posted as chains of consecutive records with
 * {@code QueuePair.postSend(wrs, from, count)} (one doorbell per chain, records never rewritten
 * beyond the per-operation fields, reused for retransmissions).
 *
 * <p>Length-then-payload messaging: {@link dev.scalep.endpoints.srd.TaggedSender} sends, per
 * message, a LENGTH and a PAYLOAD send chained in one post, each starting with a 16-byte header
 * carrying the 64-bit {@link dev.scalep.endpoints.srd.MessageTag} (kind in the high bits, message id
 * in the low 32); {@link dev.scalep.endpoints.srd.TaggedReceiver} matches lengths with a wildcard on
 * the id, then posts an exact match for that id's payload; unmatched arrivals wait in an unexpected
 * queue. Failed sends (error completions other than flush, or a timeout) are reposted from the
 * sender's pool with a RETRANSMIT header, after bringing the QP back from ERR; the receiver drops
 * duplicates. Works over SRD, UD and RC. Also here: batched receive refill
 * ({@link dev.scalep.endpoints.srd.RecvRefiller}), shared-CQ demultiplexing by QP number
 * ({@link dev.scalep.endpoints.srd.CqDemux}), and {@link dev.scalep.endpoints.srd.OrderingCheck},
 * the verifier behind {@code scalep check ordering}.
 */
package dev.scalep.endpoints.srd;
