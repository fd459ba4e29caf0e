import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { DialogFooter } from "../components.tsx";
import { replaceParams } from "../router.ts";
import { api } from "../session.ts";
import { ConfirmDialog, GroupPicker, Modal, searchOf, Tags, when } from "./Groups.tsx";
import "../styles/access.css";

export interface ServiceAccount {
  name: string;
  groups: string[];
  expiresAt: number | null;
  createdAt: number;
  lastUsedAt: number | null;
  disabled: boolean;
  createdBy: string | null;
}

/** The answer to a creation: the only time the secret leaves the server. */
interface Created extends ServiceAccount {
  secret: string;
  token: string;
}

const ACCOUNTS_KEY = ["access", "service-accounts"];

/** A day picked in a date field, as the end of that day in the browser's time zone: it is valid through that day. */
function endOfDay(value: string): number {
  const [y, m, d] = value.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, d, 23, 59, 59, 999).getTime();
}

/** An instant as a date field's value (local time). */
function dayOf(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/** A day, with the instant in its tooltip. */
function Day({ ms }: { ms: number }) {
  return (
    <time dateTime={new Date(ms).toISOString()} title={when(ms)}>
      {new Date(ms).toLocaleDateString()}
    </time>
  );
}

const ago = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const STEPS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
];

/** How long ago, the way one asks "is it still used?"; the instant in its tooltip. */
function Ago({ ms, now }: { ms: number; now: number }) {
  const past = Math.max(0, now - ms);
  const step = STEPS.find(([, size]) => past >= size);
  return (
    <time dateTime={new Date(ms).toISOString()} title={when(ms)}>
      {step ? ago.format(-Math.floor(past / step[1]), step[0]) : "just now"}
    </time>
  );
}

function statusOf(a: ServiceAccount, now: number): { label: string; off: boolean } {
  if (a.disabled) return { label: "Disabled", off: true };
  if (a.expiresAt !== null && a.expiresAt <= now) return { label: "Expired", off: true };
  return { label: "Active", off: false };
}

type Open = { kind: "new" } | { kind: "edit" | "delete"; account: ServiceAccount } | { kind: "created"; account: Created } | null;

/** Service accounts: machine identities with groups, a secret shown once, an optional expiry; disable or revoke. */
export function ServiceAccountsPage({ location }: { location: string }) {
  const view = searchOf(location);
  const client = useQueryClient();
  const accounts = useQuery({ queryKey: ACCOUNTS_KEY, queryFn: () => api<ServiceAccount[]>("/api/service-accounts") });
  const [open, setOpen] = useState<Open>(null);
  const [status, setStatus] = useState("");
  const toggle = useMutation({
    mutationFn: (a: ServiceAccount) =>
      api(`/api/service-accounts/${encodeURIComponent(a.name)}`, { method: "PUT", body: JSON.stringify({ disabled: !a.disabled }) }),
    onSuccess: async (_, a) => {
      await client.invalidateQueries({ queryKey: ["access"] });
      setStatus(`${a.name} is ${a.disabled ? "enabled" : "disabled"}.`);
    },
  });
  const needle = view.q.toLowerCase();
  const rows = (accounts.data ?? []).filter(
    (a) => needle === "" || a.name.toLowerCase().includes(needle) || a.groups.some((g) => g.toLowerCase().includes(needle)),
  );
  const now = Date.now();
  const done = (message: string) => async () => {
    await client.invalidateQueries({ queryKey: ["access"] });
    setStatus(message);
  };

  return (
    <section className="page access">
      <h1>Service accounts</h1>
      <p className="muted access-intro">
        Identities for programs: they send <code>x-service-token: name:secret</code> (or <code>Authorization: Bearer name:secret</code>) and
        get the rights of their groups.
      </p>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={view.q}
            onChange={(e) => replaceParams("/service-accounts", view.params, { q: e.target.value })}
            placeholder="Name or group"
          />
        </label>
        <button type="button" onClick={() => setOpen({ kind: "new" })}>
          Create service account…
        </button>
        <span className="muted" aria-live="polite">
          {accounts.data ? `${rows.length} of ${accounts.data.length} service accounts` : ""}
        </span>
      </div>
      <p role="status" className="access-status">
        {status}
      </p>
      {accounts.error && (
        <p className="error" role="alert">
          {accounts.error.message}
        </p>
      )}
      {toggle.error && (
        <p className="error" role="alert">
          {toggle.error.message}
        </p>
      )}
      {accounts.isPending && <p className="muted">Loading the service accounts…</p>}
      {accounts.data && rows.length === 0 && (
        <p className="muted">
          {accounts.data.length === 0
            ? "No service accounts yet. Create one (“Create service account…”) for a program, and give it a group."
            : "No service account matches the search."}
        </p>
      )}
      {rows.length > 0 && (
        <div className="access-table-scroll">
          <table className="access-table" aria-label="Service accounts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Groups</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => {
                const s = statusOf(a, now);
                return (
                  <tr key={a.name} className={s.off ? "access-is-disabled" : undefined}>
                    <th scope="row">{a.name}</th>
                    <td>
                      <Tags values={a.groups} />
                    </td>
                    <td>{s.off ? <span className="access-tag access-tag-off">{s.label}</span> : s.label}</td>
                    <td>{a.expiresAt === null ? <span className="muted">never</span> : <Day ms={a.expiresAt} />}</td>
                    <td>{a.lastUsedAt === null ? <span className="muted">never</span> : <Ago ms={a.lastUsedAt} now={now} />}</td>
                    <td>
                      <Day ms={a.createdAt} />
                      {a.createdBy && <div className="muted">by {a.createdBy}</div>}
                    </td>
                    <td className="access-actions">
                      <div>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Edit ${a.name}`}
                          onClick={() => setOpen({ kind: "edit", account: a })}
                        >
                          Edit…
                        </button>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`${a.disabled ? "Enable" : "Disable"} ${a.name}`}
                          disabled={toggle.isPending}
                          onClick={() => toggle.mutate(a)}
                        >
                          {a.disabled ? "Enable" : "Disable"}
                        </button>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Revoke ${a.name}`}
                          onClick={() => setOpen({ kind: "delete", account: a })}
                        >
                          Revoke…
                        </button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === "new" && (
        <AccountDialog
          account={null}
          onSaved={async (created) => {
            await client.invalidateQueries({ queryKey: ["access"] });
            // The form's dialog has closed; the secret's opens in its place, once.
            if (created) setOpen({ kind: "created", account: created });
          }}
          onClosed={() => setOpen((o) => (o?.kind === "new" ? null : o))}
        />
      )}
      {open?.kind === "edit" && (
        <AccountDialog
          account={open.account}
          onSaved={async () => {
            await done(`${open.account.name} is saved.`)();
          }}
          onClosed={() => setOpen(null)}
        />
      )}
      {open?.kind === "created" && <SecretDialog account={open.account} onClosed={() => setOpen(null)} />}
      {open?.kind === "delete" && (
        <ConfirmDialog
          title={`Revoke the service account ${open.account.name}`}
          label="Revoke"
          busyLabel="Revoking…"
          action={() => api(`/api/service-accounts/${encodeURIComponent(open.account.name)}`, { method: "DELETE" })}
          onDone={done(`${open.account.name} is revoked.`)}
          onClosed={() => setOpen(null)}
        >
          <p>Its token stops working at once, and its open streams are closed. This cannot be undone: a program needs a new account.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** Create a service account (`account` null) or change one's groups and expiry. */
function AccountDialog({
  account,
  onSaved,
  onClosed,
}: {
  account: ServiceAccount | null;
  onSaved: (created: Created | null) => Promise<void>;
  onClosed: () => void;
}) {
  const hint = useId();
  const [name, setName] = useState(account?.name ?? "");
  const [groups, setGroups] = useState<string[]>(account?.groups ?? []);
  const [expiry, setExpiry] = useState(account?.expiresAt ? dayOf(account.expiresAt) : "");
  const save = useMutation({
    mutationFn: (body: object) =>
      account
        ? api<ServiceAccount>(`/api/service-accounts/${encodeURIComponent(account.name)}`, { method: "PUT", body: JSON.stringify(body) })
        : api<Created>("/api/service-accounts", { method: "POST", body: JSON.stringify(body) }),
  });
  return (
    <Modal title={account ? `Edit the service account ${account.name}` : "Create a service account"} onClosed={onClosed} wide>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            const expiresAt = expiry === "" ? null : endOfDay(expiry);
            const body = account ? { groups, expiresAt } : { name: name.trim(), groups, ...(expiresAt === null ? {} : { expiresAt }) };
            save.mutate(body, {
              onSuccess: async (answer) => {
                close();
                await onSaved(account ? null : (answer as Created));
              },
            });
          }}
        >
          {!account && (
            <label className="stacked">
              <span>Service account name</span>
              <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />
            </label>
          )}
          <GroupPicker chosen={groups} onChange={setGroups} />
          <label className="stacked">
            <span>Valid through (optional)</span>
            <input
              type="date"
              value={expiry}
              min={account ? undefined : dayOf(Date.now())}
              onChange={(e) => setExpiry(e.target.value)}
              aria-describedby={hint}
            />
          </label>
          <p id={hint} className="muted access-field-hint">
            It stops working at the end of that day (your time zone). Empty: it never expires.
          </p>
          <DialogFooter
            error={save.error}
            label={account ? "Save" : "Create service account"}
            busyLabel={account ? "Saving…" : "Creating…"}
            busy={save.isPending}
            onCancel={close}
          />
        </form>
      )}
    </Modal>
  );
}

/** Copies `text`; where the Clipboard API is not offered, through a selection of the field that shows it. */
async function copy(text: string, field: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    field?.select();
    return document.execCommand("copy");
  }
}

/** The new account's token, shown this once: Loupe keeps only a hash of the secret. */
function SecretDialog({ account, onClosed }: { account: Created; onClosed: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const warning = useId();
  const [copied, setCopied] = useState<string>("");
  useEffect(() => field.current?.select(), []);
  return (
    <Modal title={`Service account ${account.name} created`} onClosed={onClosed} wide>
      {() => (
        <div className="dialog-form">
          <p id={warning} className="access-warning">
            <strong>Copy the token now: it cannot be shown again.</strong> Loupe keeps only a hash of its secret. If it is lost, revoke the
            account and create a new one.
          </p>
          <label className="stacked">
            <span>Token</span>
            <input ref={field} className="access-secret" readOnly value={account.token} aria-describedby={warning} spellCheck={false} />
          </label>
          <p className="muted access-field-hint">
            Programs send it as the value of the <code>x-service-token</code> header, or after <code>Authorization: Bearer</code>.
          </p>
          <div className="toolbar dialog-buttons">
            <button
              type="button"
              onClick={async () =>
                setCopied((await copy(account.token, field.current)) ? "Copied to the clipboard." : "Select the token and copy it.")
              }
            >
              Copy token
            </button>
            {/* Unmounted at once, not on the dialog's close event (a task later): the token leaves the page with the click. */}
            <button type="button" className="ghost" onClick={onClosed}>
              Done
            </button>
            <span role="status" className="muted">
              {copied}
            </span>
          </div>
        </div>
      )}
    </Modal>
  );
}
