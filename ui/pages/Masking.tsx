import { useId, useState } from "react";
import { useGroups } from "../api/groups.ts";
import {
  DEFAULT_REPLACEMENT,
  MASK_METHODS,
  type MaskMethod,
  type NewPolicy,
  type Policy,
  policiesApi,
  usePolicies,
} from "../api/masking.ts";
import { Link } from "../components.tsx";
import { type Done, Field, FieldProblem, LinesField, ResourceForm, ResourceList, Tags } from "./AccessList.tsx";

const ROLES = ["admin", "write", "read", "nodata"] as const satisfies readonly Policy["roles"][number][];

/** Each method in words, as the form offers it. */
const METHOD_HELP: Record<MaskMethod, { label: string; help: string }> = {
  REDACT: { label: "Redact", help: `the field shows a constant (${DEFAULT_REPLACEMENT} unless another is given)` },
  HASH: {
    label: "Hash",
    help: "HMAC-SHA-256 of the value under this install's salt: equal values stay equal, none can be read back",
  },
  KEEP_LAST_N: { label: "Keep the last N characters", help: "all but the last N characters become *" },
  REMOVE: { label: "Remove", help: "the field is left out of the record" },
};

/** How a policy masks, in a few words: "Keep the last 4", "Redact as [hidden]". */
function howOf(p: Policy): string {
  if (p.method === "KEEP_LAST_N") return `Keep the last ${p.keepLast ?? "?"}`;
  if (p.method === "REDACT") return `Redact as ${p.replacement ?? DEFAULT_REPLACEMENT}`;
  return METHOD_HELP[p.method].label;
}

/** Patterns typed one per line (commas and spaces separate too), without blanks or repeats. */
const patternsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter((p) => p !== ""))];

/**
 * Data masking policies (admins only): which fields of which topics' records are hidden from
 * which groups or roles, and how; exception groups see the clear value (docs/masking.md).
 */
export function MaskingPage({ location }: { location: string }) {
  return (
    <ResourceList<Policy>
      title="Masking policies"
      intro={
        <>
          A policy hides fields of records from the groups or roles it names, in every answer that shows record contents: queries, live
          subscriptions, JDBC, the message browser. Members of its exception groups see the clear value. A change applies to the queries
          started after it.
        </>
      }
      path="/masking"
      location={location}
      query={usePolicies()}
      noun={{ one: "policy", many: "policies" }}
      searchPlaceholder="Policy, topic, field or group"
      matches={(p, needle) =>
        [p.name, ...p.topics, ...p.fields, ...p.groups, ...p.roles, ...p.exceptGroups].some((s) => s.toLowerCase().includes(needle))
      }
      empty="Create one (“Create policy…”): the topics and fields it covers, how it masks them, and for whom."
      columns={[
        { header: "Topics", cell: (p) => <Tags values={p.topics} /> },
        { header: "Fields", cell: (p) => <Tags values={p.fields} /> },
        { header: "How", cell: (p) => howOf(p) },
        {
          header: "Masks",
          cell: (p) => (
            <>
              {p.groups.length > 0 && (
                <div className="access-patterns">
                  <span className="muted">groups</span> <Tags values={p.groups} />
                </div>
              )}
              {p.roles.length > 0 && (
                <div className="access-patterns">
                  <span className="muted">roles</span> <Tags values={p.roles} />
                </div>
              )}
            </>
          ),
        },
        { header: "Sees the clear value", cell: (p) => <Tags values={p.exceptGroups} empty="no group" /> },
      ]}
      form={(policy, done, onClosed) => <PolicyDialog policy={policy} done={done} onClosed={onClosed} />}
      remove={{
        button: "Delete…",
        label: "Delete policy",
        busyLabel: "Deleting…",
        title: (p) => `Delete the policy ${p.name}`,
        text: (
          <p>The fields it masks show in the clear to the users it masked, in the queries started after this. This cannot be undone.</p>
        ),
        done: (p) => `${p.name} is deleted.`,
        run: (p) => policiesApi.remove(p.name),
      }}
    />
  );
}

/** The policy the form describes, as a creation sends it (the method's own setting only with its method). */
type FormPolicy = Omit<Policy, "name" | "createdAt" | "updatedAt">;

/** What a change sends: the fields that differ from the policy (a list is sent whole), so its audit entry names only those. */
function changeOf(before: Policy, after: FormPolicy): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["topics", "fields", "groups", "roles", "exceptGroups"] as const)
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) out[k] = after[k];
  if (before.method !== after.method) out.method = after.method;
  if (before.replacement !== after.replacement) out.replacement = after.replacement;
  if (before.keepLast !== after.keepLast) out.keepLast = after.keepLast;
  return out;
}

/** Create a policy (`policy` null) or change one. */
function PolicyDialog({ policy, done, onClosed }: { policy: Policy | null; done: Done; onClosed: () => void }) {
  const topicsHint = useId();
  const fieldsHint = useId();
  const [name, setName] = useState(policy?.name ?? "");
  const [topics, setTopics] = useState((policy?.topics ?? []).join("\n"));
  const [fields, setFields] = useState((policy?.fields ?? []).join("\n"));
  const [method, setMethod] = useState<MaskMethod>(policy?.method ?? "REDACT");
  const [replacement, setReplacement] = useState(policy?.replacement ?? "");
  const [keepLast, setKeepLast] = useState(String(policy?.keepLast ?? 4));
  const [groups, setGroups] = useState<string[]>(policy?.groups ?? []);
  const [roles, setRoles] = useState<Policy["roles"]>(policy?.roles ?? []);
  const [exceptGroups, setExceptGroups] = useState<string[]>(policy?.exceptGroups ?? []);

  const described = (): FormPolicy => ({
    topics: patternsOf(topics),
    fields: patternsOf(fields),
    method,
    replacement: method === "REDACT" && replacement !== "" ? replacement : null,
    keepLast: method === "KEEP_LAST_N" ? (keepLast.trim() === "" ? Number.NaN : Number(keepLast)) : null,
    groups,
    roles,
    exceptGroups,
  });

  return (
    <ResourceForm
      title={policy ? `Edit the policy ${policy.name}` : "Create a masking policy"}
      label={policy ? "Save" : "Create policy"}
      busyLabel={policy ? "Saving…" : "Creating…"}
      // An edit that changes nothing has nothing to send.
      disabled={policy !== null && Object.keys(changeOf(policy, described())).length === 0}
      body={() => {
        const p = described();
        if (policy) return changeOf(policy, p);
        const { replacement: r, keepLast: k, ...rest } = p;
        return { name: name.trim(), ...rest, ...(r !== null ? { replacement: r } : {}), ...(k !== null ? { keepLast: k } : {}) };
      }}
      schema={policy ? policiesApi.schemas.change : policiesApi.schemas.create}
      save={(body) => (policy ? policiesApi.update(policy.name, body) : policiesApi.create(body as NewPolicy))}
      onSaved={() => done(policy ? `${policy.name} is saved.` : `${name.trim()} is created.`)}
      onClosed={onClosed}
    >
      {!policy && (
        <Field label="Policy name" path="name">
          {(problem) => (
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} autoComplete="off" {...problem} />
          )}
        </Field>
      )}
      <fieldset aria-describedby={topicsHint}>
        <legend>Topics</legend>
        <p id={topicsHint} className="muted access-field-hint">
          One pattern per line: <code>*</code> matches any run of characters, <code>?</code> one character.
        </p>
        <LinesField label="Topic patterns" path="topics" value={topics} onChange={setTopics} rows={2} placeholder="payments.*" />
      </fieldset>
      <fieldset aria-describedby={fieldsHint}>
        <legend>Fields</legend>
        <p id={fieldsHint} className="muted access-field-hint">
          One per line. A name (<code>ssn</code>) masks that field at any depth, in the key and the value; a dotted path (
          <code>card.number</code>) masks exactly that path. Each part may hold <code>*</code> and <code>?</code>. <code>_key</code> masks
          the whole key, <code>_headers.&lt;name&gt;</code> the values of those headers.
        </p>
        <LinesField label="Field patterns" path="fields" value={fields} onChange={setFields} rows={3} placeholder="card.number" />
      </fieldset>
      <fieldset>
        <legend>How</legend>
        {MASK_METHODS.map((m) => (
          <label key={m} className="check">
            <input type="radio" name="method" checked={method === m} onChange={() => setMethod(m)} />
            <span>
              {METHOD_HELP[m].label} <span className="muted">— {METHOD_HELP[m].help}</span>
            </span>
          </label>
        ))}
        <FieldProblem path="method" />
        {method === "REDACT" && (
          <Field label="Shown instead" path="replacement">
            {(problem) => (
              <input
                value={replacement}
                onChange={(e) => setReplacement(e.target.value)}
                maxLength={256}
                placeholder={DEFAULT_REPLACEMENT}
                autoComplete="off"
                {...problem}
              />
            )}
          </Field>
        )}
        {method === "KEEP_LAST_N" && (
          <Field label="Characters kept" path="keepLast">
            {(problem) => (
              <input type="number" min={1} max={64} value={keepLast} onChange={(e) => setKeepLast(e.target.value)} {...problem} />
            )}
          </Field>
        )}
      </fieldset>
      <GroupChoices legend="Masked groups" hint="Their members see the fields masked." path="groups" chosen={groups} onChange={setGroups} />
      <fieldset>
        <legend>Masked roles</legend>
        <p className="muted access-field-hint">
          A user whose highest role on the cluster queried is one of these sees the fields masked. Name a group or a role, or both.
        </p>
        {ROLES.map((r) => (
          <label key={r} className="check">
            <input
              type="checkbox"
              checked={roles.includes(r)}
              onChange={(e) => setRoles(e.target.checked ? [...roles, r] : roles.filter((x) => x !== r))}
            />
            <span>{r}</span>
          </label>
        ))}
        <FieldProblem path="roles" />
      </fieldset>
      <GroupChoices
        legend="Exception groups"
        hint="Their members see the clear value, whatever the groups and roles above say."
        path="exceptGroups"
        chosen={exceptGroups}
        onChange={setExceptGroups}
      />
    </ResourceForm>
  );
}

/** A checkbox per Loupe group; a group the policy names that no longer exists stays listed until unchecked. */
function GroupChoices({
  legend,
  hint,
  path,
  chosen,
  onChange,
}: {
  legend: string;
  hint: string;
  path: string;
  chosen: string[];
  onChange: (groups: string[]) => void;
}) {
  const groups = useGroups();
  const hintId = useId();
  const known = new Set((groups.data ?? []).map((g) => g.name));
  const dangling = chosen.filter((c) => !known.has(c));
  const toggle = (name: string, on: boolean) => onChange(on ? [...chosen, name] : chosen.filter((c) => c !== name));
  return (
    <fieldset aria-describedby={hintId}>
      <legend>{legend}</legend>
      <p id={hintId} className="muted access-field-hint">
        {hint}
      </p>
      {groups.error && (
        <p className="error" role="alert">
          {groups.error.message}
        </p>
      )}
      <FieldProblem path={path} />
      {groups.isPending && <p className="muted">Loading the groups…</p>}
      {groups.data?.length === 0 && (
        <p className="muted">
          No groups yet: <Link to="/groups">create one on the Groups page</Link>.
        </p>
      )}
      <div className="access-choices">
        {(groups.data ?? []).map((g) => (
          <label key={g.name} className="check">
            <input type="checkbox" checked={chosen.includes(g.name)} onChange={(e) => toggle(g.name, e.target.checked)} />
            <span>{g.name}</span>
          </label>
        ))}
        {dangling.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" checked onChange={() => toggle(name, false)} />
            <span>
              {name} <span className="muted">(no longer defined)</span>
            </span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
