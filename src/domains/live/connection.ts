/**
 * One connection of the live websocket: its requests, each answered by exactly one frame that
 * echoes its correlationId, and its subscriptions.
 *
 * Requests are handled one at a time, in the order they came: the Go CLI waits for each answer,
 * and the Python client opens a connection per request; none pipelines. Nothing is sent before
 * the first answer (the Python client takes the first frame it receives as the answer), and a
 * subscription's records go out only after its SUBSCRIBE was answered.
 *
 * Access is checked per request, with the token of the request (`authToken`), else the one of
 * the handshake, else the one this connection's LOGIN got: a token from any connection works on
 * any other. The rules are those of the HTTP routes doing the same: SUBSCRIBE reads records
 * (read, as `/api/sql/data`), PUBLISH writes them (write, audited TOPIC_DATA INSERT), COMMIT
 * moves a consumer group's offsets (write, audited CONSUMER_GROUP UPDATE, as an offset reset).
 * A denial is audited as the HTTP guard audits it. As there, the roles that count are those the
 * identity's groups grant on the connection's cluster, and every topic a request names must be in
 * its scope: read for SUBSCRIBE (its query names the topic, and one out of scope is invalid like an
 * unknown one), write for PUBLISH and COMMIT. Checked once per request, never per record; an open
 * subscription ends when its identity's scope changes (see LiveHub.sweep).
 */

import { isQueryLimitError } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import { LEVEL_ROLES, type Level } from "../../http/access.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { Socket } from "../../http/websocket.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import { SqlError } from "../../sql/index.ts";
import type { AuditService } from "../audit/service.ts";
import type { AuditChange, AuditType } from "../audit/types.ts";
import type { AuthService, Session } from "../auth/service.ts";
import { type CompiledQuery, type SqlService, viewerOf } from "../sql/service.ts";
import { topicCheck } from "../sql/topic-check.ts";
import { type Content, isInvalid, parseRequest, type Request, textFrame } from "./frames.ts";
import { Subscription } from "./subscription.ts";

/** Most subscriptions one connection may hold at once. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 16;
/**
 * How long a SUBSCRIBE waits for its queries to start reading, beyond sql.clusterWait, before it
 * answers ERROR: a query whose cluster does not answer ends by itself within sql.clusterWait,
 * with the error that names the cluster, and that error is the answer.
 */
const START_MARGIN_MS = 5_000;
/** How often the tokens and scopes behind open subscriptions are checked again. */
const SWEEP_MS = 1_000;

export interface LiveDeps {
  auth: AuthService;
  audit: AuditService;
  sql: SqlService;
  kafka: KafkaPool;
  streams: StreamRegistry;
  log: Logger;
}

/** Where a connection is and who opened it, from its handshake. */
export interface ConnectionInfo {
  clientId: string;
  cluster: string;
  /** The peer's address, for login throttling. */
  address: string;
  /** The route's path as written in the access table, for ACCESS DENY entries. */
  path: string;
  /** A token sent with the handshake (`x-service-token` or Bearer), used when a request has none. */
  handshakeToken?: string;
}

/** An error answer: INVALIDREQUEST for what the request got wrong, ERROR for the rest. */
class Refusal extends Error {
  constructor(
    readonly kind: "ERROR" | "INVALIDREQUEST",
    message: string,
  ) {
    super(message);
  }
}

interface Held {
  sub: Subscription;
  tokenHash: string;
  /** The scope the subscription was opened with (Scope.key): another one ends it. */
  scopeKey: string;
  release: () => void;
}

/**
 * What every connection shares: the revocation news of the auth service (one listener for all
 * connections) and the periodic check of open subscriptions' tokens and scopes.
 */
export class LiveHub {
  readonly #connections = new Set<LiveConnection>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #sweeping = false;

  constructor(readonly deps: LiveDeps) {
    deps.auth.onRevoke((hash, reason) => {
      if (hash) for (const c of this.#connections) c.revoke(hash, reason);
      else void this.sweep();
    });
  }

  connect(socket: Socket, info: ConnectionInfo): LiveConnection {
    return new LiveConnection(this, socket, info);
  }

  /** Called by a connection when it starts or stops holding subscriptions. */
  track(conn: LiveConnection, holding: boolean): void {
    if (holding) this.#connections.add(conn);
    else this.#connections.delete(conn);
    if (this.#connections.size > 0 && !this.#timer) {
      this.#timer = setInterval(() => void this.sweep(), SWEEP_MS);
      this.#timer.unref?.();
    } else if (this.#connections.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /**
   * Ends the subscriptions whose token no longer works or whose identity's rights changed since
   * they were opened (a group's roles or topics, membership): the scope they were checked against
   * is no longer the identity's, so what they may read is decided again by a new SUBSCRIBE.
   */
  async sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      const checks = new Map<string, Promise<Session | string>>();
      for (const conn of [...this.#connections])
        for (const hash of conn.tokenHashes()) {
          let check = checks.get(hash);
          if (!check) {
            check = this.deps.auth.checkToken(hash).catch(() => "token could not be checked");
            checks.set(hash, check);
          }
          const session = await check;
          if (typeof session === "string") conn.revoke(hash, session);
          else conn.revoke(hash, "your access changed", session.scope.key);
        }
    } finally {
      this.#sweeping = false;
    }
  }
}

/**
 * Whether the scope allows a request of `level` on the cluster, as the HTTP guard decides for a
 * route: the roles its groups grant there; the admin level only from groups without limits.
 */
function allows(level: Exclude<Level, "public">, scope: Session["scope"], cluster: string): boolean {
  const held = level === "admin" ? [...scope.unrestricted] : scope.clusterRoles(cluster);
  return held.some((r) => LEVEL_ROLES[level].includes(r));
}

export class LiveConnection {
  readonly #subs = new Map<Subscription, Held>();
  /** The token this connection's LOGIN got. */
  #loginToken: string | undefined;
  /** Requests are handled in order: each waits for the one before it. */
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  /** Runs once the answer being sent is out (a SUBSCRIBE's records wait for it). */
  #afterAnswer: (() => void) | null = null;

  constructor(
    private readonly hub: LiveHub,
    private readonly socket: Socket,
    private readonly info: ConnectionInfo,
  ) {}

  get #deps(): LiveDeps {
    return this.hub.deps;
  }

  message(text: string): void {
    this.#queue = this.#queue.then(() => this.#handle(text)).catch((err) => this.#deps.log.error("live request failed", {}, err));
  }

  close(): void {
    this.#closed = true;
    for (const held of [...this.#subs.values()]) this.#drop(held);
  }

  tokenHashes(): Set<string> {
    return new Set([...this.#subs.values()].map((h) => h.tokenHash));
  }

  /**
   * Ends the subscriptions made with a token that stopped working, or (given `scopeKey`) those of
   * the token opened with another scope; each gets an ERROR saying why.
   */
  revoke(tokenHash: string, reason: string, scopeKey?: string): void {
    for (const held of [...this.#subs.values()]) {
      if (held.tokenHash !== tokenHash || held.sub.stopped || held.scopeKey === scopeKey) continue;
      this.#drop(held);
      this.socket.send(textFrame("ERROR", held.sub.correlationId, `The subscription to '${held.sub.topic}' ended: ${reason}`));
    }
  }

  /**
   * Ends a subscription from outside (the server stops): an ERROR answer to its SUBSCRIBE says
   * why, as for a revoked token, and the connection closes with 1001 (going away) once it holds
   * no other.
   */
  #endFromOutside(held: Held | undefined, err: unknown): void {
    if (!held || held.sub.stopped) return;
    const reason = err instanceof Error ? err.message : "ended by the server";
    this.#drop(held);
    this.socket.send(textFrame("ERROR", held.sub.correlationId, `The subscription to '${held.sub.topic}' ended: ${reason}`));
    if (this.#subs.size === 0) this.socket.close(1001, reason);
  }

  #drop(held: Held): void {
    held.sub.stop();
    held.release();
    this.#subs.delete(held.sub);
    if (this.#subs.size === 0) this.hub.track(this, false);
  }

  async #handle(text: string): Promise<void> {
    if (this.#closed) return;
    const req = parseRequest(text);
    if (isInvalid(req)) {
      this.socket.send(textFrame("INVALIDREQUEST", req.correlationId, req.message));
      return;
    }
    let answer: string;
    try {
      answer = await this.#answer(req);
    } catch (err) {
      answer =
        err instanceof Refusal
          ? textFrame(err.kind, req.correlationId, err.message)
          : textFrame("ERROR", req.correlationId, err instanceof AppError ? err.message : "Internal error");
      if (!(err instanceof Refusal) && !(err instanceof AppError)) this.#deps.log.error("live request failed", { type: req.type }, err);
    }
    this.socket.send(answer);
    const after = this.#afterAnswer;
    this.#afterAnswer = null;
    after?.();
  }

  /** The answer frame of a request (SUCCESS); throws for an ERROR or INVALIDREQUEST. */
  async #answer(req: Request): Promise<string> {
    switch (req.type) {
      case "LOGIN": {
        const { token } = await this.#deps.auth.login(req.content.user, req.content.password, this.info.address);
        this.#loginToken = token;
        return textFrame("SUCCESS", req.correlationId, token);
      }
      case "SUBSCRIBE":
        return this.#subscribe(req.correlationId, await this.#session(req, "read"), req.content);
      case "UNSUBSCRIBE": {
        await this.#session(req, "public");
        const topics = new Set(req.content.topics);
        for (const held of [...this.#subs.values()]) if (topics.has(held.sub.topic)) this.#drop(held);
        return textFrame("SUCCESS", req.correlationId, [...topics].join(","));
      }
      case "PUBLISH":
        return this.#publish(req.correlationId, await this.#session(req, "write", { type: "TOPIC_DATA", change: "INSERT" }), req.content);
      case "COMMIT":
        return this.#commit(
          req.correlationId,
          await this.#session(req, "write", { type: "CONSUMER_GROUP", change: "UPDATE" }),
          req.content,
        );
    }
  }

  /**
   * The session of the request's token, checked against `level` on the connection's cluster and,
   * for PUBLISH and COMMIT, their topics against its scope (write); a denial is audited.
   */
  async #session(req: Request, level: Level, audit?: { type: AuditType; change: AuditChange }): Promise<Session> {
    const token = req.authToken || this.info.handshakeToken || this.#loginToken;
    if (!token) throw new Refusal("ERROR", "Authentication required: LOGIN first, or send authToken");
    const session = await this.#deps.auth.authenticate(token);
    if (!session) throw new Refusal("ERROR", "Token is invalid or expired");
    if (level === "public") return session;
    const { cluster } = this.info;
    if (!allows(level, session.scope, cluster)) {
      const held = level === "admin" ? [...session.scope.unrestricted] : session.scope.clusterRoles(cluster);
      await this.#deny(req, session, "role does not allow this action", audit);
      throw new Refusal("ERROR", `Role ${held.join(",") || "none"} may not ${req.type}`);
    }
    for (const topic of this.#writtenTopics(req)) {
      const refused = session.scope.refusal(cluster, topic, "write");
      if (!refused) continue;
      await this.#deny(req, session, "topic outside the identity's scope", audit);
      throw new Refusal("ERROR", refused);
    }
    return session;
  }

  /** The topics a PUBLISH or COMMIT writes to (a SUBSCRIBE's are checked when its queries compile). */
  #writtenTopics(req: Request): string[] {
    if (req.type === "PUBLISH") return [req.content.topic];
    if (req.type === "COMMIT") return [...new Set(req.content.commits.map((c) => c.topic))];
    return [];
  }

  /** Audits a refused request as the HTTP guard audits a refused route. */
  async #deny(req: Request, session: Session, why: string, audit?: { type: AuditType; change: AuditChange }): Promise<void> {
    const user = session.user.name;
    const failure = `FORBIDDEN: ${why}`;
    await this.#deps.audit.record(
      audit
        ? { type: audit.type, change: audit.change, user, content: this.#target(req), failure }
        : {
            type: "ACCESS",
            change: "DENY",
            user,
            content: { clientId: this.info.clientId, method: req.type, path: this.info.path },
            failure,
          },
    );
  }

  /** What a request acts on, for its audit entry. */
  #target(req: Request): Record<string, unknown> {
    if (req.type === "PUBLISH") return { topic: req.content.topic };
    if (req.type === "COMMIT")
      return { groupId: this.info.clientId, topics: [...new Set(req.content.commits.map((c) => c.topic))].join(",") };
    return {};
  }

  async #subscribe(correlationId: string, session: Session, content: Content<"SUBSCRIBE">): Promise<string> {
    const { sql, streams } = this.#deps;
    if (this.#subs.size + content.sqls.length > MAX_SUBSCRIPTIONS_PER_CONNECTION)
      throw new Refusal("ERROR", `At most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions per connection (${this.#subs.size} open)`);
    const compiled: CompiledQuery[] = [];
    const allowed = topicCheck(session.scope, this.info.cluster, "run");
    for (const text of content.sqls) {
      try {
        compiled.push(await sql.compile(text, this.info.cluster, allowed));
      } catch (err) {
        if (err instanceof SqlError || isQueryLimitError(err)) throw new Refusal("INVALIDREQUEST", err.message);
        throw err;
      }
    }

    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const started: Held[] = [];
    try {
      for (const c of compiled) {
        // Counted against the user's open streams, and ended from outside when the server stops.
        let held: Held | undefined;
        const release = streams.acquire(session.user.name, undefined, (err) => this.#endFromOutside(held, err));
        const sub = new Subscription({
          sql,
          compiled: c,
          cluster: this.info.cluster,
          viewer: viewerOf(session, this.info.cluster),
          correlationId,
          socket: this.socket,
          answered,
          onEnded: (reason) => {
            const held = this.#subs.get(sub);
            if (held) this.#drop(held);
            this.#deps.log.info("live subscription ended", { clientId: this.info.clientId, topic: sub.topic, reason });
          },
        });
        held = { sub, tokenHash: session.tokenHash, scopeKey: session.scope.key, release };
        started.push(held);
        const startMs = sql.clusterWaitMs + START_MARGIN_MS;
        await withTimeout(sub.start(), startMs, `Reading topic '${sub.topic}' did not start within ${Math.round(startMs / 1000)} s`);
      }
    } catch (err) {
      for (const held of started) {
        held.sub.stop();
        held.release();
      }
      answer();
      throw err;
    }
    if (this.#closed) {
      for (const held of started) {
        held.sub.stop();
        held.release();
      }
      answer();
      throw new Refusal("ERROR", "The connection closed");
    }
    for (const held of started) this.#subs.set(held.sub, held);
    this.hub.track(this, true);
    // Records wait for this answer: it goes out before the first KAFKAMSG.
    this.#afterAnswer = answer;
    return textFrame("SUCCESS", correlationId, [...new Set(started.map((h) => h.sub.topic))].join(","));
  }

  async #publish(correlationId: string, session: Session, content: Content<"PUBLISH">): Promise<string> {
    const { audit, kafka } = this.#deps;
    const pending = await audit.begin({
      type: "TOPIC_DATA",
      change: "INSERT",
      user: session.user.name,
      content: { topic: content.topic },
      request: { clientId: this.info.clientId, records: 1 },
    });
    try {
      const [written] = await kafka
        .get(this.info.cluster)
        .writes.produce(content.topic, [{ key: content.key ?? null, value: content.value ?? null }]);
      await pending.complete({ content: { topic: content.topic, records: 1, partition: written?.partition, offset: written?.offset } });
      return textFrame("SUCCESS", correlationId, "OK");
    } catch (err) {
      await pending.complete({ failure: err instanceof AppError ? `${err.code}: ${err.message}` : "INTERNAL: unexpected error" });
      throw err;
    }
  }

  async #commit(correlationId: string, session: Session, content: Content<"COMMIT">): Promise<string> {
    const { audit, kafka } = this.#deps;
    const groupId = this.info.clientId;
    const offsets = content.commits.map((c) => ({ topic: c.topic, partition: c.partition, offset: c.offset }));
    const described = offsets.map((o) => `${o.topic}:${o.partition}@${o.offset}`).join(",");
    const pending = await audit.begin({
      type: "CONSUMER_GROUP",
      change: "UPDATE",
      user: session.user.name,
      content: { groupId },
      request: { commit: described },
    });
    try {
      await kafka.get(this.info.cluster).groups.alterOffsets(groupId, offsets);
      await pending.complete({ content: { groupId, commit: described } });
      return textFrame("SUCCESS", correlationId, "OK");
    } catch (err) {
      await pending.complete({ failure: err instanceof AppError ? `${err.code}: ${err.message}` : "INTERNAL: unexpected error" });
      throw err;
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Refusal("ERROR", message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
