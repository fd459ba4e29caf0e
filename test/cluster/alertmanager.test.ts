/**
 * The Alertmanager test/setup.ts starts (or ALERTMANAGER_URL points at): Debian's real
 * prometheus-alertmanager. It shows what delivery may rely on: an alert posted to its v2 API is
 * listed with its labels, the same labels posted again are one alert, and a restart on the same
 * port and data directory answers again.
 */
import { describe, expect, test } from "bun:test";
import { waitFor } from "../helpers/wait.ts";
import { alertmanagerService, killService, requireEnv, restartService, startCluster } from "./cluster.ts";

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string;
  status: { state: string };
}

async function alertsNamed(url: string, name: string): Promise<AmAlert[]> {
  const res = await fetch(`${url}/api/v2/alerts?filter=${encodeURIComponent(`alertname="${name}"`)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as AmAlert[];
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/api/v2/alerts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("alertmanager service", () => {
  test("an alert posted twice with the same labels is one alert, with its labels and annotations", async () => {
    const url = requireEnv("ALERTMANAGER_URL");
    const name = `t${crypto.randomUUID().slice(0, 8)}`;
    const alert = { labels: { alertname: name, severity: "HIGH" }, annotations: { summary: "s" }, generatorURL: "http://loupe.test/x" };
    expect((await post(url, [alert])).status).toBe(200);
    expect((await post(url, [alert])).status).toBe(200);
    const got = await alertsNamed(url, name);
    expect(got.length).toBe(1);
    expect(got[0]!.labels.severity).toBe("HIGH");
    expect(got[0]!.annotations.summary).toBe("s");
    // Resolved: endsAt in the past.
    expect((await post(url, [{ ...alert, endsAt: new Date(Date.now() - 1000).toISOString() }])).status).toBe(200);
    const resolved = await alertsNamed(url, name);
    expect(resolved.length === 0 || resolved[0]!.status.state !== "active").toBe(true);
  });

  test("a killed Alertmanager restarts on its port", async () => {
    const cluster = await startCluster({ services: ["alertmanager"] });
    try {
      const proc = cluster.services[0]!;
      const url = proc.env.ALERTMANAGER_URL!;
      expect(await alertmanagerService.probe(proc)).toBe(true);
      await killService(proc);
      expect(await alertmanagerService.probe(proc)).toBe(false);
      await restartService(proc);
      await waitFor(() => alertmanagerService.probe(proc), { timeoutMs: 10_000, what: "alertmanager answers again" });
      expect((await fetch(`${url}/api/v2/status`)).status).toBe(200);
    } finally {
      await cluster.stop({ graceMs: 1_000 });
    }
  });
});
