/**
 * The one table from Kafka's protocol errors to Loupe's AppError codes, and the function that
 * turns anything the Kafka client throws into an AppError that keeps the broker's reason.
 *
 * The client nests errors (MultipleErrors > ResponseError > ProtocolError, or a NetworkError
 * with the socket error as cause); toAppError looks at the leaves and picks the one that says
 * the most: a definite broker answer wins over a transient one, which wins over the network.
 */

import { AuthenticationError, NetworkError, ProtocolError, TimeoutError, UnsupportedApiError, UserError } from "@platformatic/kafka";
import { AppError, type ErrorCode } from "../errors.ts";

/**
 * Kafka error name (as in the protocol's error table, with its numeric code in the comment)
 * to AppError code. Names not listed map to BAD_GATEWAY: the broker refused for a reason
 * Loupe does not know how to blame on the caller.
 */
export const KAFKA_ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  // The caller asked for something that exists already or is busy.
  TOPIC_ALREADY_EXISTS: "CONFLICT", // 36
  NON_EMPTY_GROUP: "CONFLICT", // 68
  GROUP_SUBSCRIBED_TO_TOPIC: "CONFLICT", // 86
  REBALANCE_IN_PROGRESS: "CONFLICT", // 27
  UNKNOWN_MEMBER_ID: "CONFLICT", // 25: offsets of a group with live members
  ILLEGAL_GENERATION: "CONFLICT", // 22
  FENCED_INSTANCE_ID: "CONFLICT", // 82
  GROUP_MAX_SIZE_REACHED: "CONFLICT", // 81
  REASSIGNMENT_IN_PROGRESS: "CONFLICT", // 60
  DUPLICATE_RESOURCE: "CONFLICT", // 92
  CONCURRENT_TRANSACTIONS: "CONFLICT", // 51

  // The thing asked for does not exist.
  UNKNOWN_TOPIC_OR_PARTITION: "NOT_FOUND", // 3
  UNKNOWN_TOPIC_ID: "NOT_FOUND", // 100
  GROUP_ID_NOT_FOUND: "NOT_FOUND", // 69
  RESOURCE_NOT_FOUND: "NOT_FOUND", // 91
  RESOURCE_NOT_FOUND_EXCEPTION: "NOT_FOUND",
  TRANSACTIONAL_ID_NOT_FOUND: "NOT_FOUND", // 105
  UNKNOWN_PRODUCER_ID: "NOT_FOUND", // 59

  // The request was wrong; the broker's message says how.
  INVALID_CONFIG: "BAD_REQUEST", // 40
  INVALID_REQUEST: "BAD_REQUEST", // 42
  INVALID_PARTITIONS: "BAD_REQUEST", // 37
  INVALID_REPLICATION_FACTOR: "BAD_REQUEST", // 38
  INVALID_REPLICA_ASSIGNMENT: "BAD_REQUEST", // 39
  POLICY_VIOLATION: "BAD_REQUEST", // 44
  OFFSET_OUT_OF_RANGE: "BAD_REQUEST", // 1
  INVALID_TOPIC_EXCEPTION: "BAD_REQUEST", // 17
  INVALID_GROUP_ID: "BAD_REQUEST", // 24
  INVALID_SESSION_TIMEOUT: "BAD_REQUEST", // 26
  INVALID_COMMIT_OFFSET_SIZE: "BAD_REQUEST", // 28
  OFFSET_METADATA_TOO_LARGE: "BAD_REQUEST", // 12
  INVALID_FETCH_SIZE: "BAD_REQUEST", // 4
  INVALID_TIMESTAMP: "BAD_REQUEST", // 32
  INVALID_RECORD: "BAD_REQUEST", // 87
  CORRUPT_MESSAGE: "BAD_REQUEST", // 2
  INVALID_REQUIRED_ACKS: "BAD_REQUEST", // 21
  INVALID_PRINCIPAL_TYPE: "BAD_REQUEST", // 67
  INVALID_UPDATE_VERSION: "BAD_REQUEST", // 95
  NO_REASSIGNMENT_IN_PROGRESS: "BAD_REQUEST", // 85
  ELECTION_NOT_NEEDED: "BAD_REQUEST", // 84
  // No authorizer on the broker: COMPAT.md wants ACL listing to answer 400 then.
  SECURITY_DISABLED: "BAD_REQUEST", // 54
  MESSAGE_TOO_LARGE: "PAYLOAD_TOO_LARGE", // 10
  RECORD_LIST_TOO_LARGE: "PAYLOAD_TOO_LARGE", // 18

  // The cluster cannot do this.
  UNSUPPORTED_VERSION: "UNSUPPORTED", // 35
  UNSUPPORTED_FOR_MESSAGE_FORMAT: "UNSUPPORTED", // 43
  UNSUPPORTED_COMPRESSION_TYPE: "UNSUPPORTED", // 76
  TOPIC_DELETION_DISABLED: "UNSUPPORTED", // 73
  FEATURE_UPDATE_FAILED: "UNSUPPORTED", // 96

  // Loupe's own principal lacks the right on the cluster.
  TOPIC_AUTHORIZATION_FAILED: "FORBIDDEN", // 29
  GROUP_AUTHORIZATION_FAILED: "FORBIDDEN", // 30
  CLUSTER_AUTHORIZATION_FAILED: "FORBIDDEN", // 31
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "FORBIDDEN", // 53
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: "FORBIDDEN", // 65
  // Loupe's credentials for the cluster are wrong: the upstream refused, not the caller.
  SASL_AUTHENTICATION_FAILED: "BAD_GATEWAY", // 58
  ILLEGAL_SASL_STATE: "BAD_GATEWAY", // 34
  UNSUPPORTED_SASL_MECHANISM: "BAD_GATEWAY", // 33

  THROTTLING_QUOTA_EXCEEDED: "TOO_MANY_REQUESTS", // 89

  // Transient: the cluster is moving or busy.
  LEADER_NOT_AVAILABLE: "UNAVAILABLE", // 5
  NOT_LEADER_OR_FOLLOWER: "UNAVAILABLE", // 6
  BROKER_NOT_AVAILABLE: "UNAVAILABLE", // 8
  REPLICA_NOT_AVAILABLE: "UNAVAILABLE", // 9
  NETWORK_EXCEPTION: "UNAVAILABLE", // 13
  COORDINATOR_LOAD_IN_PROGRESS: "UNAVAILABLE", // 14
  COORDINATOR_NOT_AVAILABLE: "UNAVAILABLE", // 15
  NOT_COORDINATOR: "UNAVAILABLE", // 16
  NOT_ENOUGH_REPLICAS: "UNAVAILABLE", // 19
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: "UNAVAILABLE", // 20
  NOT_CONTROLLER: "UNAVAILABLE", // 41
  KAFKA_STORAGE_ERROR: "UNAVAILABLE", // 56
  FENCED_LEADER_EPOCH: "UNAVAILABLE", // 74
  UNKNOWN_LEADER_EPOCH: "UNAVAILABLE", // 75
  OFFSET_NOT_AVAILABLE: "UNAVAILABLE", // 78
  PREFERRED_LEADER_NOT_AVAILABLE: "UNAVAILABLE", // 80
  ELIGIBLE_LEADERS_NOT_AVAILABLE: "UNAVAILABLE", // 83
  REQUEST_TIMED_OUT: "GATEWAY_TIMEOUT", // 7
};

const TRANSIENT: ReadonlySet<ErrorCode> = new Set(["UNAVAILABLE", "GATEWAY_TIMEOUT"]);

/** What the cluster's connections know beyond the error itself, to tell TLS failures apart. */
export interface ConnectionFacts {
  /**
   * A socket error the cluster's connections met just before, or the refusal that failed its last
   * connection (see RequestCounter.lastSocketError).
   */
  recentSocketError?: unknown;
  /** Whether Loupe offers a client certificate (tls.cert); undefined when not known. */
  clientCertificate?: boolean;
}

/** What one leaf of the client's error tree says. */
interface Finding {
  code: ErrorCode;
  reason: string;
  kafkaError?: string;
  kafkaErrorCode?: number;
  retriable: boolean;
  rank: number;
  /** The cluster refused Loupe as configured (credentials, certificates, TLS settings). */
  refusal?: true;
}

/** The innermost errors of an error tree: MultipleErrors hold several, each maybe nested. */
function leaves(err: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth < 8 && err instanceof AggregateError && err.errors.length > 0) {
    for (const e of err.errors) leaves(e, out, depth + 1);
  } else {
    out.push(err);
  }
  return out;
}

function socketReason(err: Error): string {
  const cause = err.cause instanceof Error ? err.cause : null;
  const inner = cause?.cause instanceof Error ? cause.cause : cause;
  return inner && inner.message !== err.message ? `${err.message} (${inner.message})` : err.message;
}

/** The errors inside `err`, nearest first: its `cause` chain and the `errors` of any aggregate on it. */
function wrapped(err: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth >= 8 || !(err instanceof Error)) return out;
  const inner = [...(err.cause !== undefined ? [err.cause] : []), ...(err instanceof AggregateError ? err.errors : [])];
  for (const e of inner) {
    out.push(e);
    wrapped(e, out, depth + 1);
  }
  return out;
}

/**
 * SASL did not let Loupe in: wrong credentials (the broker's own words, e.g. "invalid credentials
 * with SASL mechanism SCRAM-SHA-512"), a mechanism the listener does not offer, or a connection
 * closed during the exchange (a TLS listener spoken to in plain text).
 */
function credentialsFinding(err: Error): Finding {
  const inner = wrapped(err);
  const answer = inner.find((e): e is ProtocolError => e instanceof ProtocolError);
  const server =
    typeof answer?.serverErrorMessage === "string" && answer.serverErrorMessage.trim() ? answer.serverErrorMessage.trim() : null;
  const said = (reason: string): Finding => ({
    code: "BAD_GATEWAY",
    reason,
    ...(answer ? { kafkaError: String(answer.apiId), kafkaErrorCode: Number(answer.apiCode) } : {}),
    retriable: false,
    rank: 2,
    refusal: true,
  });
  if (answer?.apiId === "UNSUPPORTED_SASL_MECHANISM") {
    return said(
      `the broker does not offer the SASL mechanism Loupe uses (${server ?? answer.message}); check kafka.clusters[].sasl.mechanism`,
    );
  }
  if (answer) {
    return said(
      `the cluster rejected Loupe's credentials (SASL authentication failed${server ? `: ${server}` : ""}); check kafka.clusters[].sasl`,
    );
  }
  if (inner.some((e) => e instanceof NetworkError)) {
    return said(
      `the broker closed the connection during the SASL exchange (${err.message}); a SASL_SSL listener also needs kafka.clusters[].tls`,
    );
  }
  return said(`SASL authentication failed (${err.message}); check kafka.clusters[].sasl`);
}

/** Node's codes for a broker certificate that does not chain to a trusted CA. */
const UNTRUSTED_CERT_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REJECTED",
]);

/**
 * A TLS failure, said as what to fix: the broker's certificate is not trusted, not valid now, or
 * names another host; or the broker refused Loupe's client certificate (a TLS alert it sent).
 * Undefined for anything else.
 */
function tlsFinding(err: unknown, conn: ConnectionFacts): Finding | undefined {
  if (!(err instanceof Error)) return undefined;
  const said = (reason: string): Finding => ({ code: "BAD_GATEWAY", reason: `TLS: ${reason}`, retriable: false, rank: 2, refusal: true });
  // The client's own findings: a TLS listener answered plain text, or a plain one TLS.
  if (err instanceof UserError && /Broker requires TLS/.test(err.message)) {
    return said("the broker's listener requires TLS; set kafka.clusters[].tls (with the ca that signed its certificate)");
  }
  if (/before secure TLS connection was established|Please verify the broker supports TLS/.test(err.message)) {
    return said(
      `the broker closed the connection during the TLS handshake (${err.message}); is it a TLS listener? (a plain-text one needs no kafka.clusters[].tls)`,
    );
  }
  if (!("code" in err) || typeof err.code !== "string") return undefined;
  const code = err.code;
  if (UNTRUSTED_CERT_CODES.has(code)) {
    return said(`the broker's certificate is not trusted (${err.message}); kafka.clusters[].tls.ca must name the CA that signed it`);
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
    return said(`the broker's certificate is not valid now (${err.message})`);
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return said(
      `the broker's certificate does not name the host Loupe connected to (${err.message}); use a host name the certificate names`,
    );
  }
  const refused =
    /ALERT_(BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|UNKNOWN_CA|UNSUPPORTED_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|ACCESS_DENIED)/;
  // Brokers (Java) answer a missing client certificate with bad_certificate, not certificate_required.
  if (/ALERT_CERTIFICATE_REQUIRED/.test(code) || (refused.test(code) && conn.clientCertificate === false)) {
    return said(`the broker requires a client certificate (${code}); set kafka.clusters[].tls.cert and key`);
  }
  if (refused.test(code)) {
    return said(`the broker refused Loupe's client certificate (${code}); it must be signed by a CA the broker trusts and be valid now`);
  }
  if (/^ERR_SSL_/.test(code)) return said(`the handshake failed (${err.message})`);
  return undefined;
}

function classify(err: unknown, conn: ConnectionFacts = {}): Finding {
  if (err instanceof AppError) {
    return { code: err.code, reason: err.message, retriable: false, rank: 0 };
  }
  const tls = err instanceof UserError ? tlsFinding(err, conn) : undefined;
  if (tls) return tls;
  if (err instanceof ProtocolError) {
    const name = String(err.apiId);
    const code = KAFKA_ERROR_CODES[name] ?? "BAD_GATEWAY";
    const server = typeof err.serverErrorMessage === "string" && err.serverErrorMessage.trim() ? err.serverErrorMessage.trim() : null;
    return {
      code,
      reason: server ?? err.message,
      kafkaError: name,
      kafkaErrorCode: Number(err.apiCode),
      retriable: err.canRetry === true,
      rank: TRANSIENT.has(code) ? 2 : 1,
    };
  }
  if (err instanceof TimeoutError) {
    return { code: "GATEWAY_TIMEOUT", reason: `the cluster did not answer in time (${err.message})`, retriable: true, rank: 3 };
  }
  if (err instanceof AuthenticationError) return credentialsFinding(err);
  if (err instanceof NetworkError) {
    // A connection that failed because of who Loupe is (credentials, certificates) is no outage:
    // the client wraps the reason in a NetworkError, so it is looked for inside.
    for (const inner of wrapped(err)) {
      if (inner instanceof AuthenticationError) return credentialsFinding(inner);
      const tls = tlsFinding(inner, conn);
      if (tls) return tls;
    }
    return { code: "UNAVAILABLE", reason: `cannot reach the cluster: ${socketReason(err)}`, retriable: true, rank: 4 };
  }
  if (err instanceof UnsupportedApiError) {
    return { code: "UNSUPPORTED", reason: err.message, retriable: false, rank: 1 };
  }
  if (err instanceof UserError) {
    // The client checks topics against its metadata before asking the broker.
    const unknownTopic = /^Unknown topic (.+?)\.?$/.exec(err.message);
    if (unknownTopic) {
      return {
        code: "NOT_FOUND",
        reason: `Topic '${unknownTopic[1]}' does not exist.`,
        kafkaError: "UNKNOWN_TOPIC_OR_PARTITION",
        kafkaErrorCode: 3,
        retriable: false,
        rank: 1,
      };
    }
    const detail = err.cause instanceof Error ? `${err.message} ${err.cause.message}` : err.message;
    return { code: "BAD_REQUEST", reason: detail, retriable: false, rank: 1 };
  }
  if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) {
    return { code: "GATEWAY_TIMEOUT", reason: "the cluster did not answer in time", retriable: true, rank: 3 };
  }
  if (err instanceof Error && "code" in err && typeof err.code === "string" && /^E[A-Z]+$/.test(err.code)) {
    return { code: "UNAVAILABLE", reason: `cannot reach the cluster: ${err.message}`, retriable: true, rank: 4 };
  }
  return { code: "INTERNAL", reason: err instanceof Error ? err.message : String(err), retriable: false, rank: 5 };
}

/**
 * The AppError for anything the Kafka client threw. `context` says what Loupe tried, e.g.
 * "Cannot create topic 'orders'"; the message is `<context>: <broker's reason>`.
 * INTERNAL errors keep a generic message: their text may be a bug's, not the broker's.
 */
export function toAppError(err: unknown, context: string, cluster?: string, conn: ConnectionFacts = {}): AppError {
  if (err instanceof AppError) return err;
  const findings = leaves(err).map((leaf) => closedBecause(leaf, conn) ?? classify(leaf, conn));
  findings.sort((a, b) => a.rank - b.rank);
  const best = findings[0] ?? classify(err);
  const details: Record<string, unknown> = {};
  if (cluster) details.cluster = cluster;
  if (best.kafkaError) {
    details.kafkaError = best.kafkaError;
    details.kafkaErrorCode = best.kafkaErrorCode;
  }
  if (best.code !== "INTERNAL") details.retriable = best.retriable;
  const message = best.code === "INTERNAL" ? `${context}: unexpected error from the Kafka client` : `${context}: ${best.reason}`;
  return new AppError(best.code, message, { details, cause: err });
}

/**
 * A connection the broker closed right after the TLS handshake fails its requests with a bare
 * "Connection closed"; the alert that said why (a client certificate the broker does not trust,
 * in TLS 1.3 sent only after the handshake) reached the connection as a socket error instead.
 * Likewise a request that waited for a connection the client was giving up on ("Connection closed
 * while waiting for ready.") is told by the refusal that failed that connection just before.
 */
function closedBecause(leaf: unknown, conn: ConnectionFacts): Finding | undefined {
  const recent = conn.recentSocketError;
  if (recent === undefined || !(leaf instanceof NetworkError) || leaf.cause !== undefined) return undefined;
  return (
    tlsFinding(recent, conn) ??
    leaves(recent)
      .map((l) => classify(l, conn))
      .find((f) => f.refusal)
  );
}

/** Whether `err` says the cluster refused Loupe as configured (see ConnectionFacts.recentSocketError). */
export function isRefusal(err: unknown, conn: ConnectionFacts = {}): boolean {
  // Only an error that carries its reason: a bare "Connection closed" told by an earlier one is not kept again.
  return leaves(err).some((l) => classify(l, conn).refusal === true);
}

/** The Kafka error name inside a client error, if there is one (e.g. "OFFSET_OUT_OF_RANGE"). */
export function kafkaErrorName(err: unknown): string | null {
  for (const leaf of leaves(err)) if (leaf instanceof ProtocolError) return String(leaf.apiId);
  return null;
}
