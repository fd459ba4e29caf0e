import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { AUDIT_TYPES } from "../../src/domains/audit/types.ts";
import { type AuditEntry, fetchAudit } from "../api/audit.ts";
import { ErrorAlert, TableHead } from "../components.tsx";
import { navigate } from "../router.ts";
import { openFeed } from "../sse.ts";

/** Entries kept from the live tail: beyond, the oldest are let go. */
const LIVE_KEEP = 1_000;

interface Filters {
  type: string;
  user: string;
  from: string;
  to: string;
}

function filtersOf(location: string): { params: URLSearchParams; f: Filters } {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  return {
    params,
    f: { type: params.get("type") ?? "", user: params.get("user") ?? "", from: params.get("from") ?? "", to: params.get("to") ?? "" },
  };
}

/** datetime-local text (the browser's zone) to epoch ms, or null. */
const epoch = (local: string) => (local ? Date.parse(local) : Number.NaN);

const entryKey = (e: AuditEntry) => `${e.timestamp}|${e.type}|${e.change}|${e.userId}|${JSON.stringify(e.content)}`;

function matches(e: AuditEntry, f: Filters): boolean {
  if (f.type && e.type !== f.type) return false;
  if (f.user && e.userId !== f.user) return false;
  if (f.from && e.timestamp < epoch(f.from)) return false;
  if (f.to && e.timestamp > epoch(f.to)) return false;
  return true;
}

/** The audit log: filtered by type, user and time (all in the URL), newest first, with a live tail. */
export function AuditPage({ location }: { location: string }) {
  const { params, f } = filtersOf(location);
  const query = new URLSearchParams();
  if (f.type) query.set("type", f.type);
  if (f.user) query.set("user", f.user);
  if (f.from && !Number.isNaN(epoch(f.from))) query.set("from", String(epoch(f.from)));
  if (f.to && !Number.isNaN(epoch(f.to))) query.set("to", String(epoch(f.to)));
  const listed = useQuery({ queryKey: ["audit", query.toString()], queryFn: () => fetchAudit(query) });

  const [live, setLive] = useState<AuditEntry[]>([]);
  const [feed, setFeed] = useState<{ state: "connecting" | "open" | "closed" | "error"; why?: string }>({ state: "connecting" });
  useEffect(() => {
    setLive([]);
    setFeed({ state: "connecting" });
    const current: Filters = { type: f.type, user: f.user, from: f.from, to: f.to };
    const opened = openFeed<AuditEntry>(
      "/api/sse/audit",
      (e) => {
        if (matches(e, current)) setLive((was) => [e, ...was].slice(0, LIVE_KEEP));
      },
      (state, why) => setFeed(why ? { state, why } : { state }),
    );
    // The tail starts again when the filters change.
    return () => opened.close();
  }, [f.type, f.user, f.from, f.to]);

  const set = (key: keyof Filters, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    const q = next.toString();
    navigate(`/audit${q ? `?${q}` : ""}`, { replace: true });
  };

  // An entry of the tail that a later listing also holds is shown once.
  const entries = [...new Map([...live, ...(listed.data ?? [])].map((e) => [entryKey(e), e])).values()];
  return (
    <section className="page">
      <h1>Audit</h1>
      <div className="toolbar">
        <label className="search">
          <span>Type</span>
          <select value={f.type} onChange={(e) => set("type", e.target.value)}>
            <option value="">Any</option>
            {AUDIT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label className="search">
          <span>User</span>
          <input value={f.user} onChange={(e) => set("user", e.target.value)} placeholder="Any" />
        </label>
        <label className="search">
          <span>From</span>
          <input type="datetime-local" step="1" value={f.from} onChange={(e) => set("from", e.target.value)} />
        </label>
        <label className="search">
          <span>To</span>
          <input type="datetime-local" step="1" value={f.to} onChange={(e) => set("to", e.target.value)} />
        </label>
        <span className={`live live-${feed.state}`} role="status" data-testid="live">
          {feed.state === "open"
            ? "Live"
            : feed.state === "connecting"
              ? "Connecting…"
              : `Live tail stopped${feed.why ? `: ${feed.why}` : ""}`}
        </span>
      </div>
      <ErrorAlert error={listed.error} />
      {listed.isPending && <p className="muted">Loading the audit log…</p>}
      {listed.data && entries.length === 0 && <p className="muted">No entry matches. Changes appear here as they are made.</p>}
      {entries.length > 0 && (
        <table aria-label="Audit entries">
          <TableHead columns={["Time", "User", "Type", "Change", "Content"]} />
          <tbody>
            {entries.map((e) => (
              <tr key={entryKey(e)}>
                <td>{new Date(e.timestamp).toLocaleString()}</td>
                <td>{e.userId}</td>
                <td>{e.type}</td>
                <td>{e.change}</td>
                <td className="content">
                  {Object.entries(e.content)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(" · ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
