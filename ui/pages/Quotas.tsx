import { type FormEvent, useId, useState } from "react";
import { z } from "zod";
import { clientParams, PRECEDENCE_RULES, QUOTA_KEYS, userParams } from "../../src/domains/quotas/schemas.ts";
import { type QuotaTarget, urlOf } from "../../src/domains/quotas/targets.ts";
import {
  type EffectiveQuota,
  type QuotaEntry,
  type QuotaKey,
  quotasApi,
  quotaValuesBody,
  useEffectiveQuota,
  useQuotas,
} from "../api/quotas.ts";
import { bytes } from "../format.ts";
import { type Done, Field, ResourceForm, ResourceList } from "./AccessList.tsx";

/** The constraints in words, with their unit. */
const LABELS: Record<QuotaKey, { label: string; unit: string }> = {
  producer_byte_rate: { label: "Produce rate", unit: "bytes/s" },
  consumer_byte_rate: { label: "Fetch rate", unit: "bytes/s" },
  request_percentage: { label: "Request time", unit: "% of one thread" },
};

/** The eight kinds of entry, in the SPEC's precedence (1 highest), as a user picks one. */
const KINDS: Array<{ rule: (typeof PRECEDENCE_RULES)[number]; user: "named" | "default" | "none"; client: "named" | "default" | "none" }> =
  [
    { rule: PRECEDENCE_RULES[0], user: "named", client: "named" },
    { rule: PRECEDENCE_RULES[1], user: "named", client: "default" },
    { rule: PRECEDENCE_RULES[2], user: "named", client: "none" },
    { rule: PRECEDENCE_RULES[3], user: "default", client: "named" },
    { rule: PRECEDENCE_RULES[4], user: "default", client: "default" },
    { rule: PRECEDENCE_RULES[5], user: "default", client: "none" },
    { rule: PRECEDENCE_RULES[6], user: "none", client: "named" },
    { rule: PRECEDENCE_RULES[7], user: "none", client: "default" },
  ];

/** The entry's target and precedence, read from its SPEC type and names. */
function targetOf(e: QuotaEntry): { target: QuotaTarget; precedence: number } {
  const user = e.entityName === "<default>" ? null : e.entityName;
  switch (e.entityType) {
    case "USERCLIENT":
      return { target: { user, clientId: e.child ?? null }, precedence: user === null ? 4 : 1 };
    case "USERS":
      return { target: { user, clientId: null }, precedence: user === null ? 5 : 2 };
    case "USER":
      return { target: { user }, precedence: 3 };
    case "USERS DEFAULT":
      return { target: { user: null }, precedence: 6 };
    case "CLIENT":
    case "CLIENTS":
      return { target: { clientId: e.entityName }, precedence: 7 };
    default:
      return { target: { clientId: null }, precedence: 8 };
  }
}

/** An entity in words: "user alice, client id app", "default user", "client id app". */
function entityText(t: QuotaTarget): string {
  const parts: string[] = [];
  if (t.user !== undefined) parts.push(t.user === null ? "default user" : `user ${t.user}`);
  if (t.clientId !== undefined) parts.push(t.clientId === null ? "default client id" : `client id ${t.clientId}`);
  return parts.join(", ");
}

function valueText(key: QuotaKey, value: string | undefined): string {
  if (value === undefined) return "—";
  return key === "request_percentage" ? `${value} %` : `${bytes(Number(value))}/s`;
}

interface Row {
  name: string;
  entry: QuotaEntry;
  precedence: number;
  target: QuotaTarget;
}

/** The entries in the order of precedence, then by name. */
const rowsOf = (list: QuotaEntry[]): Row[] =>
  list
    .map((entry): Row => {
      const { target, precedence } = targetOf(entry);
      return { name: entityText(target), entry, precedence, target };
    })
    .sort((a, b) => a.precedence - b.precedence || a.name.localeCompare(b.name));

/** Client quotas by entity; admins add, change and remove them; anyone asks which applies to a user and client id. */
export function QuotasPage({ location, canChange }: { location: string; canChange: boolean }) {
  const rows = useQuotas(rowsOf);
  return (
    <ResourceList<Row>
      title="Quotas"
      intro={
        <>
          Kafka's client quotas by user, client id or both. A client gets, for each constraint, the limit of the highest entry that sets it,
          in this order: user and client id, user and default client, user, default user and client id, default user and default client,
          default user, client id, default client.
        </>
      }
      path="/quotas"
      location={location}
      query={rows}
      noun={{ one: "quota", many: "quotas" }}
      nameHeader="Entity"
      searchPlaceholder="User or client id"
      matches={(r, needle) => r.name.toLowerCase().includes(needle)}
      empty={canChange ? "Add one (“Create quota…”) to limit a user or a client id." : "No client is limited by a quota."}
      canCreate={canChange}
      editable={(r) => canChange && r.entry.isAuthorized}
      columns={[
        { header: "Precedence", cell: (r) => `${r.precedence} · ${PRECEDENCE_RULES[r.precedence - 1]}` },
        ...QUOTA_KEYS.map((k) => ({ header: LABELS[k].label, cell: (r: Row) => valueText(k, r.entry.properties[k]) })),
      ]}
      form={(row, done, onClosed) => <QuotaDialog row={row} done={done} onClosed={onClosed} />}
      remove={{
        button: "Delete…",
        label: "Delete quota",
        busyLabel: "Deleting…",
        title: (r) => `Delete the quota of the ${r.name}`,
        text: <p>Its limits stop applying: the next entry in the precedence that sets a constraint applies instead, or none.</p>,
        done: (r) => `The quota of the ${r.name} is deleted.`,
        run: (r) => quotasApi.remove(r.entry.url),
      }}
    >
      {() => <EffectiveSection />}
    </ResourceList>
  );
}

/** What a new entry's form checks before sending: the names its kind needs, and the values (the PUT's own schema). */
const formSchema = z.object({
  user: userParams.shape.user.optional(),
  clientId: clientParams.shape.clientId.optional(),
  values: quotaValuesBody,
});

/** Create a quota (`row` null: pick the kind and names) or change one's constraints (a cleared field removes that one). */
function QuotaDialog({ row, done, onClosed }: { row: Row | null; done: Done; onClosed: () => void }) {
  const [kind, setKind] = useState(0);
  const [user, setUser] = useState("");
  const [client, setClient] = useState("");
  const [values, setValues] = useState<Record<QuotaKey, string>>({
    producer_byte_rate: row?.entry.properties.producer_byte_rate ?? "",
    consumer_byte_rate: row?.entry.properties.consumer_byte_rate ?? "",
    request_percentage: row?.entry.properties.request_percentage ?? "",
  });
  const k = KINDS[kind]!;
  const target: QuotaTarget = row?.target ?? {
    ...(k.user === "none" ? {} : { user: k.user === "default" ? null : user.trim() }),
    ...(k.client === "none" ? {} : { clientId: k.client === "default" ? null : client.trim() }),
  };
  const cleared = row ? QUOTA_KEYS.filter((key) => values[key].trim() === "" && row.entry.properties[key] !== undefined) : [];
  return (
    <ResourceForm
      title={row ? `Edit the quota of the ${row.name}` : "Create a quota"}
      label={row ? "Save" : "Create quota"}
      busyLabel={row ? "Saving…" : "Creating…"}
      body={() => ({
        ...(k.user === "named" && !row ? { user: user.trim() } : {}),
        ...(k.client === "named" && !row ? { clientId: client.trim() } : {}),
        values: Object.fromEntries(QUOTA_KEYS.map((key) => [key, values[key].trim()])),
      })}
      schema={cleared.length > 0 && QUOTA_KEYS.every((key) => values[key].trim() === "") ? undefined : formSchema}
      save={async (body) => {
        const url = urlOf(target);
        if (QUOTA_KEYS.some((key) => body.values[key] !== "")) await quotasApi.set(url, body.values);
        if (cleared.length > 0) await quotasApi.remove(url, cleared);
      }}
      onSaved={() => done(`The quota of the ${entityText(target)} is saved.`)}
      onClosed={onClosed}
    >
      {!row && (
        <>
          <Field label="Applies to" path="kind">
            {(problem) => (
              <select value={kind} onChange={(e) => setKind(Number(e.target.value))} {...problem}>
                {KINDS.map((x, i) => (
                  <option key={x.rule} value={i}>
                    {i + 1} · {x.rule}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {k.user === "named" && (
            <Field label="User (the principal's name; ANONYMOUS without authentication)" path="user">
              {(problem) => <input value={user} onChange={(e) => setUser(e.target.value)} autoComplete="off" {...problem} />}
            </Field>
          )}
          {k.client === "named" && (
            <Field label="Client id" path="clientId">
              {(problem) => <input value={client} onChange={(e) => setClient(e.target.value)} autoComplete="off" {...problem} />}
            </Field>
          )}
        </>
      )}
      {QUOTA_KEYS.map((key) => (
        <Field key={key} label={`${LABELS[key].label} (${LABELS[key].unit}; empty: ${row ? "none" : "not set"})`} path={`values.${key}`}>
          {(problem) => (
            <input
              value={values[key]}
              inputMode="decimal"
              autoComplete="off"
              onChange={(e) => setValues((v) => ({ ...v, [key]: e.target.value }))}
              {...problem}
            />
          )}
        </Field>
      ))}
    </ResourceForm>
  );
}

/** "Which quota applies to user U with client id C?", answered by the server from every entry. */
function EffectiveSection() {
  const heading = useId();
  const [user, setUser] = useState("");
  const [client, setClient] = useState("");
  const [ask, setAsk] = useState<{ user: string; clientId: string } | null>(null);
  const answer = useEffectiveQuota(ask);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (user.trim() !== "" && client.trim() !== "") setAsk({ user: user.trim(), clientId: client.trim() });
  };
  return (
    <section className="quota-effective" aria-labelledby={heading}>
      <h2 id={heading}>Which quota applies?</h2>
      <form className="toolbar" onSubmit={submit}>
        <label className="stacked">
          <span>User</span>
          <input value={user} onChange={(e) => setUser(e.target.value)} placeholder="ANONYMOUS without authentication" required />
        </label>
        <label className="stacked">
          <span>Client id</span>
          <input value={client} onChange={(e) => setClient(e.target.value)} required />
        </label>
        <button type="submit" disabled={answer.isFetching}>
          {answer.isFetching ? "Asking…" : "Ask"}
        </button>
      </form>
      {answer.error && (
        <p className="error" role="alert">
          {answer.error.message}
        </p>
      )}
      {answer.data && <EffectiveAnswer answer={answer.data} />}
    </section>
  );
}

function EffectiveAnswer({ answer }: { answer: EffectiveQuota }) {
  const source = (s: EffectiveQuota["quotas"][number]["source"]) =>
    s ? `${s.precedence} · ${s.rule} (${entityText(targetOf({ ...s, isAuthorized: false }).target)})` : "no entry sets it";
  return (
    <div className="access-table-scroll">
      <table className="access-table" aria-label={`Quotas of user ${answer.user} with client id ${answer.clientId}`}>
        <thead>
          <tr>
            <th scope="col">Constraint</th>
            <th scope="col">Limit</th>
            <th scope="col">From</th>
            <th scope="col">Counted over</th>
          </tr>
        </thead>
        <tbody>
          {answer.quotas.map((q) => (
            <tr key={q.property}>
              <th scope="row">{LABELS[q.property].label}</th>
              <td>{q.value === null ? <span className="muted">unlimited</span> : valueText(q.property, q.value)}</td>
              <td>{source(q.source)}</td>
              <td>{q.sharedBy ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
