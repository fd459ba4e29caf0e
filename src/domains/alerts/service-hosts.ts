/**
 * 1002 Connect worker down and 1003 registry host down, as findings of the evaluation like any
 * other: each pass probes every configured Connect worker (`GET /`) and registry host
 * (`GET /config`) through the proxies' own clients, so their auth and TLS settings apply. The
 * probes of a pass go out at once, each within PROBE_TIMEOUT_MS (or the service's own timeout
 * when that is shorter): a pass waits one timeout at most, however many hosts are silent.
 *
 * The proxies write to the same per-host record what their requests find between two passes (a
 * host that failed a request, or answered one). A host a request found dead since the previous
 * pass, and that no later request found answering, counts as down in the next pass even when its
 * probe is answered then: the request it failed was real. Raising, holding and resolving are the
 * evaluator's (`#reconcile`): a host down is raised at the first pass that finds it, and resolved
 * after two passes in a row without it.
 */
import type { RaiseNotification } from "./notifications.ts";

/** The longest one probe may take. */
export const PROBE_TIMEOUT_MS = 3_000;

/** The alerts of the hosts: a Connect worker, a registry host. */
export const HOST_ALERTS = [1002, 1003] as const;
export type HostAlert = (typeof HOST_ALERTS)[number];

/** One backend host the evaluation probes. */
export interface ServiceHost {
  alertId: HostAlert;
  /** The Kafka cluster its alert is raised on. */
  cluster: string;
  /**
   * Names the host in its fingerprint (`cond/<cluster>/<alertId>/<instance>`) and as the
   * notification's `instance`, without credentials: `<alias> <url>` of a worker, a registry host's URL.
   */
  instance: string;
  /** The summary's subject: `Kafka Connect worker http://w1:8083 of 'dev'`. */
  what: string;
  /** One cheap request within `timeoutMs`: null when the host answers, else why it did not. */
  probe(timeoutMs: number): Promise<string | null>;
}

/** Where the proxies tell what one of their requests found of a host. */
export interface HostObserver {
  /** `error`: why the host failed the request; null: it answered. */
  observed(alertId: HostAlert, instance: string, error: string | null): void;
}

/** What the evaluation probes: the composition root fills it from the Connect and registry services. */
export interface ServiceHostSource {
  hosts(): ServiceHost[];
  health: ServiceHostHealth;
}

interface HostFinding {
  fingerprint: string;
  raise: RaiseNotification;
  holdMs: number;
}

/** The newest word on a host: from a probe or from a proxied request. */
interface HostRecord {
  error: string | null;
  at: number;
  byRequest: boolean;
}

/** The per-host record the probes and the proxies write (this instance's memory). */
export class ServiceHostHealth implements HostObserver {
  readonly #now: () => number;
  readonly #records = new Map<string, HostRecord>();
  /** When the previous pass began: what requests found since then counts in the next one. */
  #lastPass = Number.NEGATIVE_INFINITY;

  constructor(opts: { now?: () => number } = {}) {
    this.#now = opts.now ?? Date.now;
  }

  observed(alertId: HostAlert, instance: string, error: string | null): void {
    this.#records.set(`${alertId} ${instance}`, { error, at: this.#now(), byRequest: true });
  }

  /** Probes every host at once; each host down in this pass, as a finding of its alert. */
  async pass(hosts: ServiceHost[], timeoutMs = PROBE_TIMEOUT_MS): Promise<HostFinding[]> {
    const since = this.#lastPass;
    this.#lastPass = this.#now();
    const down = await Promise.all(
      hosts.map(async (host) => {
        const key = `${host.alertId} ${host.instance}`;
        const before = this.#records.get(key);
        const probed = await host.probe(timeoutMs).catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
        const fromRequest = before?.byRequest && before.at >= since ? before.error : null;
        // A request's word that came in while the probe was out is newer: kept for the next pass.
        if (this.#records.get(key) === before) this.#records.set(key, { error: probed, at: this.#now(), byRequest: false });
        const error = probed ?? fromRequest;
        return error === null ? null : finding(host, error);
      }),
    );
    return down.filter((f) => f !== null);
  }
}

function finding(host: ServiceHost, error: string): HostFinding {
  return {
    fingerprint: `cond/${host.cluster}/${host.alertId}/${host.instance}`,
    holdMs: 0,
    raise: {
      alertId: host.alertId,
      cluster: host.cluster,
      severity: "HIGH",
      category: "Infrastructure",
      source: "loupe",
      instance: host.instance,
      summary: `${host.what} does not answer: ${error}`,
    },
  };
}
