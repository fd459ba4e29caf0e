/**
 * Failed connectors and tasks (3001, 3002, beyond the SPEC), read once per evaluation pass and
 * Connect cluster from the Connect proxy's own client (`GET /connectors?expand=status`), and the
 * optional bounded auto-restart of what failed (`alerts.connectorRestarts`, off by default): at
 * most `max` restarts of one connector per `window`, each one audited as Loupe's own.
 */
import type { Logger } from "../../log/logger.ts";
import type { AuditRecord } from "../audit/types.ts";
import { type Pattern, pattern } from "./conditions.ts";
import type { RaiseNotification } from "./notifications.ts";

/** A connector's state and its tasks' (`trace` when FAILED), as the Connect client reads them. */
export interface ConnectorHealth {
  name: string;
  state: string;
  trace?: string;
  tasks: { id: number; state: string; trace?: string }[];
}

/** What the evaluation reads of Kafka Connect (the Connect area's service fills it). */
export interface ConnectHealth {
  aliases(): string[];
  /** The Kafka cluster an alias's connectors act on: where its alerts are raised. */
  kafkaClusterOf(alias: string): string | undefined;
  connectorStates(alias: string): Promise<ConnectorHealth[]>;
  restartFailed(alias: string, name: string): Promise<void>;
}

export interface RestartPolicy {
  enabled: boolean;
  max: number;
  windowMs: number;
  connectors: string[];
}

interface ConnectFinding {
  fingerprint: string;
  raise: RaiseNotification;
  holdMs: number;
}

/** Longest part of a Java stack trace a summary carries: its first line, cut here. */
const TRACE_CHARS = 300;

const firstLine = (trace: string | undefined): string => {
  const line = (trace ?? "").split("\n", 1)[0]!.trim();
  return line.length > TRACE_CHARS ? `${line.slice(0, TRACE_CHARS)}...` : line;
};

/** A failed task's finding: its id (a number) last, after a `/`; no NUL, which PostgreSQL text cannot hold. */
export const taskFingerprint = (cluster: string, alias: string, connector: string, task: number): string =>
  `cond/${cluster}/3002/${alias}/${connector}/${task}`;

/**
 * The FAILED connectors (3001) and tasks (3002) of one Connect cluster. Fingerprints start with
 * `cond/<cluster>/<id>/<alias>/`: each alias is reconciled on its own, so one that does not
 * answer keeps what it raised (1002 says it is down).
 */
export function connectFindings(
  cluster: string,
  alias: string,
  states: ConnectorHealth[],
): { connectors: ConnectFinding[]; tasks: ConnectFinding[] } {
  const base = { cluster, category: "Connect", source: "loupe" };
  const connectors: ConnectFinding[] = [];
  const tasks: ConnectFinding[] = [];
  for (const c of states) {
    if (c.state === "FAILED")
      connectors.push({
        fingerprint: `cond/${cluster}/3001/${alias}/${c.name}`,
        holdMs: 0,
        raise: {
          ...base,
          alertId: 3001,
          instance: `${alias}/${c.name}`,
          summary: `Connector '${c.name}' on Connect cluster '${alias}' has FAILED${c.trace ? `: ${firstLine(c.trace)}` : ""}`,
          labels: { connectCluster: alias, connector: c.name },
        },
      });
    for (const t of c.tasks)
      if (t.state === "FAILED")
        tasks.push({
          fingerprint: taskFingerprint(cluster, alias, c.name, t.id),
          holdMs: 0,
          raise: {
            ...base,
            alertId: 3002,
            instance: `${alias}/${c.name}/${t.id}`,
            summary: `Task ${t.id} of connector '${c.name}' on Connect cluster '${alias}' has FAILED${t.trace ? `: ${firstLine(t.trace)}` : ""}`,
            labels: { connectCluster: alias, connector: c.name, task: String(t.id) },
          },
        });
  }
  return { connectors, tasks };
}

/**
 * Restarts failed connectors within a budget per connector. The budget is this instance's memory
 * (the evaluation runs on one instance at a time): a restart of Loupe, or another instance taking
 * the evaluation over, starts it afresh.
 */
export class ConnectorRestarts {
  readonly #policy: RestartPolicy;
  readonly #patterns: Pattern[];
  readonly #connect: ConnectHealth;
  readonly #audit: (rec: AuditRecord) => Promise<unknown>;
  readonly #log: Logger;
  readonly #now: () => number;
  /** When each connector (`alias/name`) was restarted, within the window. */
  readonly #restarts = new Map<string, number[]>();
  /** Connectors whose spent budget was logged, until it frees up. */
  readonly #spent = new Set<string>();

  constructor(
    policy: RestartPolicy,
    d: { connect: ConnectHealth; audit: (rec: AuditRecord) => Promise<unknown>; log: Logger; now: () => number },
  ) {
    this.#policy = policy;
    this.#patterns = policy.connectors.map(pattern);
    this.#connect = d.connect;
    this.#audit = d.audit;
    this.#log = d.log;
    this.#now = d.now;
  }

  /** Restarts each failed connector of the alias that the policy names and whose budget allows it. */
  async restart(alias: string, states: ConnectorHealth[]): Promise<void> {
    if (!this.#policy.enabled) return;
    const now = this.#now();
    for (const c of states) {
      const failedTasks = c.tasks.filter((t) => t.state === "FAILED");
      if (c.state !== "FAILED" && failedTasks.length === 0) continue;
      if (!this.#patterns.some((p) => p.matches(c.name))) continue;
      const key = `${alias}/${c.name}`;
      const recent = (this.#restarts.get(key) ?? []).filter((t) => now - t < this.#policy.windowMs);
      this.#restarts.set(key, recent);
      if (recent.length >= this.#policy.max) {
        if (!this.#spent.has(key))
          this.#log.warn("a failed connector is not restarted again: its restart budget is spent", {
            alias,
            connector: c.name,
            restarts: recent.length,
            windowMs: this.#policy.windowMs,
          });
        this.#spent.add(key);
        continue;
      }
      this.#spent.delete(key);
      recent.push(now);
      const failed =
        c.state === "FAILED" ? "the connector" : `task${failedTasks.length === 1 ? "" : "s"} ${failedTasks.map((t) => t.id).join(", ")}`;
      const content = {
        alias,
        connector: c.name,
        action: "restart",
        includeTasks: "true",
        onlyFailed: "true",
        reason: `${failed} FAILED: ${firstLine(c.state === "FAILED" ? c.trace : failedTasks[0]?.trace) || "no trace"}`,
        restart: `${recent.length} of at most ${this.#policy.max} within ${Math.round(this.#policy.windowMs / 1000)} s`,
      };
      try {
        await this.#connect.restartFailed(alias, c.name);
        this.#log.info("a failed connector was restarted", { alias, connector: c.name, restart: content.restart });
        await this.#audit({ type: "CONNECTOR", change: "UPDATE", user: LOUPE_ACTOR, content });
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        this.#log.warn("a failed connector could not be restarted", { alias, connector: c.name, error: message });
        await this.#audit({ type: "CONNECTOR", change: "UPDATE", user: LOUPE_ACTOR, content, failure: message });
      }
    }
  }
}

/** Who Loupe's own restarts are audited as (the processors' pauses use the same name). */
const LOUPE_ACTOR = "loupe";
