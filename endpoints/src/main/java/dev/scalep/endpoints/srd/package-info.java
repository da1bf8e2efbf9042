/**
 * SRD semantics on EFA endpoints, built on the verbs API only (runs on {@code sim:efa} and on the
 * ibv EFA path). An ordered channel is an {@link dev.scalep.endpoints.srd.OrderedSender} and an
 * {@link dev.scalep.endpoints.srd.OrderedReceiver}, each over its own SRD QP, built directly on
 * verbs QPs and an address handle rather than on the endpoint manager (one QP per side keeps the
 * sequence space per channel). Every operation carries a sequence number in its immediate
 * ({@link dev.scalep.endpoints.srd.ImmCodec}); the receiver tracks arrivals in a ring of
 * {@code window} slots and, under receiver-reorder, applies in sequence order; under sender-wait the
 * sender holds an emulated atomic until the completions of everything before it arrived. Sender
 * callbacks run in post order from a completion ring. Also here: batched receive refill
 * ({@link dev.scalep.endpoints.srd.RecvRefiller}), shared-CQ demultiplexing by QP number
 * ({@link dev.scalep.endpoints.srd.CqDemux}), and {@link dev.scalep.endpoints.srd.OrderingCheck},
 * the verifier behind {@code scalep check ordering}.
 */
package dev.scalep.endpoints.srd;
