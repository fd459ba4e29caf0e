import { useMutation } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import {
  type CreatedAccount,
  type NewServiceAccountBody,
  type ServiceAccount,
  serviceAccountsApi,
  useServiceAccounts,
} from "../api/service-accounts.ts";
import { type Done, Field, GroupPicker, Modal, ResourceForm, ResourceList, Tags, when } from "./AccessList.tsx";

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

/** Service accounts: machine identities with groups, a secret shown once, an optional expiry; disable or revoke. */
export function ServiceAccountsPage({ location }: { location: string }) {
  const [created, setCreated] = useState<CreatedAccount | null>(null);
  const toggle = useMutation({ mutationFn: (a: ServiceAccount) => serviceAccountsApi.update(a.name, { disabled: !a.disabled }) });
  const now = Date.now();
  return (
    <ResourceList<ServiceAccount>
      title="Service accounts"
      intro={
        <>
          Identities for programs: they send <code>x-service-token: name:secret</code> (or <code>Authorization: Bearer name:secret</code>)
          and get the rights of their groups.
        </>
      }
      path="/service-accounts"
      location={location}
      query={useServiceAccounts()}
      noun={{ one: "service account", many: "service accounts" }}
      searchPlaceholder="Name or group"
      matches={(a, needle) => a.name.toLowerCase().includes(needle) || a.groups.some((g) => g.toLowerCase().includes(needle))}
      empty="Create one (“Create service account…”) for a program, and give it a group."
      columns={[
        { header: "Groups", cell: (a) => <Tags values={a.groups} /> },
        {
          header: "Status",
          cell: (a) => {
            const s = statusOf(a, now);
            return s.off ? <span className="access-tag access-tag-off">{s.label}</span> : s.label;
          },
        },
        { header: "Expires", cell: (a) => (a.expiresAt === null ? <span className="muted">never</span> : <Day ms={a.expiresAt} />) },
        {
          header: "Last used",
          cell: (a) => (a.lastUsedAt === null ? <span className="muted">never</span> : <Ago ms={a.lastUsedAt} now={now} />),
        },
        {
          header: "Created",
          cell: (a) => (
            <>
              <Day ms={a.createdAt} />
              {a.createdBy && <div className="muted">by {a.createdBy}</div>}
            </>
          ),
        },
      ]}
      rowOff={(a) => statusOf(a, now).off}
      actions={[
        {
          label: (a) => (a.disabled ? "Enable" : "Disable"),
          name: (a) => `${a.disabled ? "Enable" : "Disable"} ${a.name}`,
          run: (a, done) => toggle.mutate(a, { onSuccess: () => done(`${a.name} is ${a.disabled ? "enabled" : "disabled"}.`) }),
          busy: toggle.isPending,
        },
      ]}
      extraError={toggle.error}
      form={(account, done, onClosed) => <AccountDialog account={account} done={done} onCreated={setCreated} onClosed={onClosed} />}
      remove={{
        button: "Revoke…",
        label: "Revoke",
        busyLabel: "Revoking…",
        title: (a) => `Revoke the service account ${a.name}`,
        text: (
          <p>Its token stops working at once, and its open streams are closed. This cannot be undone: a program needs a new account.</p>
        ),
        done: (a) => `${a.name} is revoked.`,
        run: (a) => serviceAccountsApi.remove(a.name),
      }}
    >
      {() => created && <SecretDialog account={created} onClosed={() => setCreated(null)} />}
    </ResourceList>
  );
}

/** Create a service account (`account` null) or change one's groups and expiry. */
function AccountDialog({
  account,
  done,
  onCreated,
  onClosed,
}: {
  account: ServiceAccount | null;
  done: Done;
  onCreated: (created: CreatedAccount) => void;
  onClosed: () => void;
}) {
  const hint = useId();
  const [name, setName] = useState(account?.name ?? "");
  const [groups, setGroups] = useState<string[]>(account?.groups ?? []);
  const [expiry, setExpiry] = useState(account?.expiresAt ? dayOf(account.expiresAt) : "");
  const expiresAt = expiry === "" ? null : endOfDay(expiry);
  return (
    <ResourceForm
      title={account ? `Edit the service account ${account.name}` : "Create a service account"}
      label={account ? "Save" : "Create service account"}
      busyLabel={account ? "Saving…" : "Creating…"}
      body={() => (account ? { groups, expiresAt } : { name: name.trim(), groups, ...(expiresAt === null ? {} : { expiresAt }) })}
      schema={account ? serviceAccountsApi.schemas.change : serviceAccountsApi.schemas.create}
      save={(body): Promise<ServiceAccount | CreatedAccount> =>
        account ? serviceAccountsApi.update(account.name, body) : serviceAccountsApi.create(body as NewServiceAccountBody)
      }
      // The form's dialog closes first; a new account's secret opens in its place, once.
      closeFirst
      onSaved={async (answer) => {
        if (account) return done(`${account.name} is saved.`);
        await done("");
        onCreated(answer as CreatedAccount);
      }}
      onClosed={onClosed}
    >
      {!account && (
        <Field label="Service account name" path="name">
          {(problem) => <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" {...problem} />}
        </Field>
      )}
      <GroupPicker chosen={groups} onChange={setGroups} />
      <Field label="Valid through (optional)" path="expiresAt">
        {(problem) => (
          <input
            type="date"
            value={expiry}
            min={account ? undefined : dayOf(Date.now())}
            onChange={(e) => setExpiry(e.target.value)}
            id={problem.id}
            aria-invalid={problem["aria-invalid"]}
            aria-describedby={[hint, problem["aria-describedby"]].filter(Boolean).join(" ")}
          />
        )}
      </Field>
      <p id={hint} className="muted access-field-hint">
        It stops working at the end of that day (your time zone). Empty: it never expires.
      </p>
    </ResourceForm>
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
function SecretDialog({ account, onClosed }: { account: CreatedAccount; onClosed: () => void }) {
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
