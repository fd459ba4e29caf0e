/**
 * The alert evaluation: one pass per interval (a background job, on one instance of those
 * sharing the store) that reads each cluster and raises or resolves the conditions that hold:
 *
 * - 1000 broker down: a broker seen by an earlier pass of this instance and gone from the metadata;
 * - 1005 under-replicated and 1006 offline partitions, 1014 leader imbalance: from the same one
 *   Metadata request;
 * - 1007 the controller quorum without a leader, or its leader changed, and 1001 a controller of
 *   the quorum that no longer fetches from its leader: one DescribeQuorum;
 * - 1008 to 1012 from the brokers' Prometheus endpoints, 1013 from DescribeLogDirs (broker-metrics.ts);
 * - 2000 consumer lag: each condition against one lag snapshot of the cluster (the lag engine's,
 *   a fixed number of requests whatever the number of groups);
 * - 1002 Connect worker down, 1003 registry host down: every worker and registry host probed at
 *   once, and what the proxies' requests found since the last pass (service-hosts.ts);
 * - 1004 Alertmanager down: an Alertmanager whose deliveries have failed three times in a row
 *   (from the outbox; raised on the default cluster, and delivered to the other channels);
 * - 3001 connector and 3002 task FAILED (beyond the SPEC): one status request per Connect
 *   cluster (connect-failures.ts), raised on the alias's Kafka cluster; with
 *   `alerts.connectorRestarts` enabled, what failed is restarted within a budget;
 * - 5000 processor FAILED (beyond the SPEC): from the processors' own state in the store.
 *
 * A finding is identified by a fingerprint (`cond/<cluster>/<alertId>/...`): a new one is raised
 * (after its hold, `for 5m`), one still found stays raised (the outbox re-sends it), one missing
 * in two passes in a row is resolved (one pass without it does not flap it). A disabled setting
 * finds nothing, so what it raised is resolved.
 */
import type { KafkaPool, QuorumState } from "../../kafka/index.ts";
import { LagEngine } from "../../lag/engine.ts";
import type { Logger } from "../../log/logger.ts";
import type { BrokerMetrics } from "./broker-metrics.ts";
import { type LagCondition, parseLagCondition } from "./conditions.ts";
import { type ConnectHealth, type ConnectorRestarts, connectFindings } from "./connect-failures.ts";
import { imbalanceFindings, QuorumWatch, voterFindings } from "./kafka-findings.ts";
import type { NotificationService, RaiseNotification } from "./notifications.ts";
import { HOST_ALERTS, type ServiceHostSource } from "./service-hosts.ts";
import type { AlertSettings } from "./settings.ts";

/** Failed attempts in a row before an Alertmanager counts as down (1004). */
const AM_DOWN_ATTEMPTS = 3;

/** What the evaluation reads of the outbox. */
export interface DeliveryHealth {
  failingAlertmanagers(minAttempts: number): Promise<{ url: string; attempts: number; lastError: string | null }[]>;
}

/** What the evaluation reads of the processors (the processors area's service fills it). */
export interface ProcessorHealth {
  failed(cluster: string): Promise<{ id: string; name: string; owner: string; error: string }[]>;
}

/** Parts built after the alerts, watched once the composition root has them. */
export interface Watched {
  connect?: ConnectHealth;
  restarts?: ConnectorRestarts;
  processors?: ProcessorHealth;
  hosts?: ServiceHostSource;
}

interface Finding {
  fingerprint: string;
  raise: RaiseNotification;
  holdMs: number;
}

/**
 * Passes in a row a finding must be missing before it is resolved: one pass without it (a
 * partition between two leaders, a lag read just after a commit) does not end and raise it again.
 */
const CLEAR_PASSES = 2;

interface Deps {
  kafka: KafkaPool;
  lag: LagEngine;
  notifications: NotificationService;
  settings: AlertSettings;
  deliveries: DeliveryHealth;
  log: Logger;
  /** A quorum voter silent this long is down (1001); VOTER_SILENT_MS when absent. */
  controllerSilenceMs?: number;
  /** Broker internals (1008 to 1013); none evaluated without it. */
  brokerMetrics?: BrokerMetrics;
}

/** Partitions named in a summary, at most. */
const NAMED = 10;

/**
 * A lag condition's finding for one group and topic. The topic comes last, after a `/` no topic
 * name holds, so any group name stays unambiguous; no control character (a NUL once): PostgreSQL
 * text cannot hold NUL, and such a notification was never stored there.
 */
export const lagFingerprint = (cluster: string, conditionId: string, group: string, topic: string): string =>
  `cond/${cluster}/2000/${conditionId}/${group}/${topic}`;

export class AlertEvaluator {
  readonly #d: Deps;
  readonly #now: () => number;
  /** Brokers each cluster had at some pass, by id: address. */
  readonly #seen = new Map<string, Map<number, string>>();
  /** Since when a finding under its hold has been found without a break. */
  readonly #since = new Map<string, number>();
  /** Passes in a row an active finding was missing. */
  readonly #missing = new Map<string, number>();
  #watched: Watched = {};
  readonly #quorumWatch = new QuorumWatch();

  constructor(d: Deps, opts: { now?: () => number } = {}) {
    this.#d = d;
    this.#now = opts.now ?? Date.now;
  }

  /** Set once by the composition root: Connect and the processors are built after the alerts. */
  watch(parts: Watched): void {
    this.#watched = parts;
  }

  /** One pass over every cluster; a cluster that fails is logged and the others go on. */
  async evaluate(): Promise<void> {
    const failures: unknown[] = [];
    // Probes wait on hosts, not on Kafka: they go out first and are counted at the end.
    const hosts = this.#serviceHosts().then(
      () => undefined,
      (e: unknown) => ({ e }),
    );
    for (const cluster of this.#d.kafka.names()) {
      try {
        await this.#cluster(cluster);
      } catch (e) {
        failures.push(e);
        this.#d.log.warn("alert evaluation of a cluster failed", { cluster }, e);
      }
      try {
        await this.#processors(cluster);
      } catch (e) {
        failures.push(e);
        this.#d.log.warn("alert evaluation of the processors failed", { cluster }, e);
      }
    }
    for (const alias of this.#watched.connect?.aliases() ?? []) {
      try {
        await this.#connectors(this.#watched.connect!, alias);
      } catch (e) {
        failures.push(e);
        this.#d.log.warn("alert evaluation of a Connect cluster failed", { alias }, e);
      }
    }
    try {
      await this.#alertmanagers();
    } catch (e) {
      failures.push(e);
    }
    const hostFailure = await hosts;
    if (hostFailure) {
      failures.push(hostFailure.e);
      this.#d.log.warn("alert evaluation of the Connect workers and registry hosts failed", {}, hostFailure.e);
    }
    if (failures.length > 0) throw failures[0];
  }

  /** 1002 and 1003: the hosts of enabled settings probed at once, reconciled per cluster. */
  async #serviceHosts(): Promise<void> {
    const source = this.#watched.hosts;
    if (!source) return;
    const probed = [];
    for (const host of source.hosts()) if (await this.#d.settings.enabled(host.cluster, host.alertId)) probed.push(host);
    const found = await source.health.pass(probed);
    for (const cluster of this.#d.kafka.names())
      for (const alertId of HOST_ALERTS)
        await this.#reconcile(
          cluster,
          alertId,
          found.filter((f) => f.raise.cluster === cluster && f.raise.alertId === alertId),
        );
  }

  /**
   * One status request for the alias's connectors. One that does not answer raises nor resolves
   * anything here: what it raised stays (its workers' 1002 says why).
   */
  async #connectors(connect: ConnectHealth, alias: string): Promise<void> {
    const cluster = connect.kafkaClusterOf(alias) || this.#d.kafka.default().name;
    const restarts = this.#watched.restarts;
    const wanted = (await this.#d.settings.enabled(cluster, 3001)) || (await this.#d.settings.enabled(cluster, 3002));
    const states = wanted || restarts ? await connect.connectorStates(alias) : [];
    const { connectors, tasks } = connectFindings(cluster, alias, states);
    await this.#reconcile(cluster, 3001, connectors, `${alias}/`);
    await this.#reconcile(cluster, 3002, tasks, `${alias}/`);
    await restarts?.restart(alias, states);
  }

  /** The cluster's FAILED processors, from the store: no Kafka request. */
  async #processors(cluster: string): Promise<void> {
    const processors = this.#watched.processors;
    if (!processors) return;
    const failed = (await this.#d.settings.enabled(cluster, 5000)) ? await processors.failed(cluster) : [];
    await this.#reconcile(
      cluster,
      5000,
      failed.map((p) => ({
        fingerprint: `cond/${cluster}/5000/${p.id}`,
        holdMs: 0,
        raise: {
          cluster,
          alertId: 5000,
          category: "Processors",
          source: "loupe",
          instance: p.name,
          summary: `Processor '${p.name}' (owner ${p.owner}) has FAILED${p.error ? `: ${p.error.split("\n", 1)[0]!.slice(0, 300)}` : ""}`,
          labels: { processor: p.id },
        },
      })),
    );
  }

  async #alertmanagers(): Promise<void> {
    const cluster = this.#d.kafka.default().name;
    const failing = await this.#d.deliveries.failingAlertmanagers(AM_DOWN_ATTEMPTS);
    const findings = failing.map((f) => ({
      fingerprint: `cond/${cluster}/1004/${f.url}`,
      holdMs: 0,
      raise: {
        cluster,
        alertId: 1004,
        category: "Infrastructure",
        source: "loupe",
        instance: f.url,
        summary: `Alertmanager ${f.url} does not take alerts (${f.attempts} attempts${f.lastError ? `: ${f.lastError}` : ""})`,
      },
    }));
    await this.#reconcile(cluster, 1004, findings);
  }

  async #cluster(cluster: string): Promise<void> {
    const state = await this.#d.kafka.get(cluster).describe();
    const seen = this.#seen.get(cluster) ?? new Map<number, string>();
    this.#seen.set(cluster, seen);
    for (const b of state.brokers) seen.set(b.id, `${b.host}:${b.port}`);
    const up = new Set(state.brokers.map((b) => b.id));
    const base = { cluster, category: "Infrastructure", source: "loupe" };

    const down: Finding[] = [...seen]
      .filter(([id]) => !up.has(id))
      .map(([id, address]) => ({
        fingerprint: `cond/${cluster}/1000/${id}`,
        holdMs: 0,
        raise: { ...base, alertId: 1000, instance: `broker ${id} (${address})`, summary: `Broker ${id} (${address}) is down` },
      }));
    await this.#reconcile(cluster, 1000, down);

    const partitionsFinding = (alertId: number, list: { topic: string; partition: number }[], what: string): Finding[] =>
      list.length === 0
        ? []
        : [
            {
              fingerprint: `cond/${cluster}/${alertId}/cluster`,
              holdMs: 0,
              raise: {
                ...base,
                alertId,
                instance: cluster,
                summary: `${list.length} partition${list.length === 1 ? " is" : "s are"} ${what}: ${list
                  .slice(0, NAMED)
                  .map((p) => `${p.topic}-${p.partition}`)
                  .join(", ")}${list.length > NAMED ? ", ..." : ""}`,
              },
            },
          ];
    await this.#reconcile(cluster, 1005, partitionsFinding(1005, state.underReplicated, "under-replicated"));
    await this.#reconcile(cluster, 1006, partitionsFinding(1006, state.offline, "offline (no leader)"));
    await this.#reconcile(cluster, 1014, imbalanceFindings(cluster, state.preferredLeaders));
    const internals = await this.#d.brokerMetrics?.findings(cluster, state.brokers, (id) => this.#d.settings.enabled(cluster, id));
    for (const { alertId, findings } of internals ?? []) await this.#reconcile(cluster, alertId, findings);
    await this.#quorum(cluster);
    await this.#reconcile(cluster, 2000, await this.#lag(cluster));
  }

  /**
   * One DescribeQuorum, while 1007 is on. One that fails (a controller that does not answer in
   * time, a principal without DESCRIBE on the cluster) leaves 1007 as it was: logged, not guessed.
   */
  async #quorum(cluster: string): Promise<void> {
    const [leadership, voters] = [await this.#d.settings.enabled(cluster, 1007), await this.#d.settings.enabled(cluster, 1001)];
    if (!leadership) await this.#reconcile(cluster, 1007, []);
    if (!voters) await this.#reconcile(cluster, 1001, []);
    if (!leadership && !voters) return;
    let quorum: QuorumState | null;
    try {
      quorum = await this.#d.kafka.get(cluster).quorum();
    } catch (e) {
      this.#d.log.warn("the controller quorum could not be described", { cluster }, e);
      return;
    }
    if (leadership) await this.#reconcile(cluster, 1007, this.#quorumWatch.findings(cluster, quorum, this.#now()));
    if (voters) await this.#reconcile(cluster, 1001, voterFindings(cluster, quorum, this.#d.controllerSilenceMs));
  }

  /** Every lag condition of the cluster against one snapshot; none taken when there is no condition. */
  async #lag(cluster: string): Promise<Finding[]> {
    const conditions = (await this.#d.settings.allConditions(2000))
      .filter((c) => c.cluster === cluster)
      .map((c) => ({ id: c.id, expression: c.expression, parsed: parseLagCondition(c.expression) }))
      .filter((c): c is { id: string; expression: string; parsed: LagCondition } => c.parsed !== undefined);
    if (conditions.length === 0 || !(await this.#d.settings.enabled(cluster, 2000))) return [];
    const lags = LagEngine.byTopic(await this.#d.lag.snapshot(cluster));
    const out: Finding[] = [];
    for (const c of conditions) {
      const { metric, threshold, group, topic, holdMs } = c.parsed;
      for (const l of lags) {
        if (!group.matches(l.group) || !topic.matches(l.topic)) continue;
        const seconds = l.partitions.reduce<number | null>((m, p) => (p.lagSeconds === null ? m : Math.max(m ?? 0, p.lagSeconds)), null);
        const value = metric === "lag" ? l.lag : seconds;
        if (value === null || value < threshold) continue;
        const amount = metric === "lag" ? `${value} records` : `${Math.round(value)} s`;
        out.push({
          fingerprint: lagFingerprint(cluster, c.id, l.group, l.topic),
          holdMs,
          raise: {
            cluster,
            alertId: 2000,
            category: "Consumers",
            source: "loupe",
            instance: `${l.group}/${l.topic}`,
            summary: `Consumer group '${l.group}' is ${amount} behind on topic '${l.topic}' (${c.expression})`,
            labels: { condition: c.id, group: l.group, topic: l.topic },
          },
        });
      }
    }
    return out;
  }

  /**
   * Raises what is found (once held long enough), resolves what was raised and is found no more:
   * of the fingerprints under `cond/<cluster>/<alertId>/<scope>` (a scope: one Connect cluster's).
   */
  async #reconcile(cluster: string, alertId: number, findings: Finding[], scope = ""): Promise<void> {
    const prefix = `cond/${cluster}/${alertId}/${scope}`;
    const now = this.#now();
    const found = (await this.#d.settings.enabled(cluster, alertId)) ? findings : [];
    const keys = new Set(found.map((f) => f.fingerprint));
    for (const key of this.#since.keys()) if (key.startsWith(prefix) && !keys.has(key)) this.#since.delete(key);
    const active = new Set(await this.#d.notifications.activeFingerprints(prefix));
    for (const f of found) {
      if (active.has(f.fingerprint)) continue;
      const since = this.#since.get(f.fingerprint) ?? now;
      this.#since.set(f.fingerprint, since);
      if (now - since < f.holdMs) continue;
      await this.#d.notifications.raise({ ...f.raise, fingerprint: f.fingerprint });
    }
    for (const fingerprint of active) {
      if (keys.has(fingerprint)) {
        this.#missing.delete(fingerprint);
        continue;
      }
      const missing = (this.#missing.get(fingerprint) ?? 0) + 1;
      if (missing < CLEAR_PASSES) {
        this.#missing.set(fingerprint, missing);
        continue;
      }
      this.#missing.delete(fingerprint);
      await this.#d.notifications.resolve(fingerprint, now);
    }
  }
}
