import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useMemo, useRef, useState } from "react";
import "../styles/acls.css";
import { CLUSTER_RESOURCE_NAME, type OPERATIONS, RESOURCE_OPERATIONS, type ResourceType } from "../../src/domains/acls/schemas.ts";
import { ACLS_KEY, type AclBodyInput, type AclEntry, createAcl, deleteAcl, type Explanation, explainAcl, useAcls } from "../api/acls.ts";
import { clusterOf } from "../cluster.ts";
import { ActionResult, ConfirmDeleteDialog } from "../components.tsx";
import { replaceParams } from "../router.ts";

const TYPES = Object.keys(RESOURCE_OPERATIONS) as ResourceType[];
type By = "principal" | "resource";

/** The page's state in the URL: `by` (principal or resource), `q` (search), `cluster`. */
function viewOf(location: string) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  return { params, by: (params.get("by") === "resource" ? "resource" : "principal") as By, q: params.get("q") ?? "" };
}

const resourceOf = (a: AclEntry) => `${a.resourceType} ${a.patternType === "PREFIXED" ? `${a.resourceName}*` : a.resourceName}`;
const keyOf = (a: AclEntry) =>
  [a.principal, a.resourceType, a.patternType, a.resourceName, a.host, a.operation, a.permissionType].join("|");

/** The cluster's ACLs by principal or by resource; admins add and delete bindings; everyone may ask whether a principal may do something. */
export function AclsPage({ location, canAdmin }: { location: string; canAdmin: boolean }) {
  const cluster = clusterOf(location);
  const view = viewOf(location);
  const acls = useAcls(cluster);
  const set = (changes: Record<string, string | null>) => replaceParams("/acls", view.params, changes);
  const deletion = useDeleteDialog();

  const groups = useMemo(() => {
    const needle = view.q.toLowerCase();
    const shown = (acls.data ?? []).filter(
      (a) => needle === "" || `${a.principal} ${resourceOf(a)} ${a.operation}`.toLowerCase().includes(needle),
    );
    const by = new Map<string, AclEntry[]>();
    for (const a of shown) {
      const k = view.by === "principal" ? a.principal : resourceOf(a);
      by.set(k, [...(by.get(k) ?? []), a]);
    }
    return [...by.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [acls.data, view.q, view.by]);

  return (
    <section className="page acls">
      <h1>ACLs</h1>
      <div className="toolbar">
        <fieldset className="acl-by">
          <legend>Group by</legend>
          {(["principal", "resource"] as const).map((b) => (
            <label key={b}>
              <input type="radio" name="acl-by" checked={view.by === b} onChange={() => set({ by: b === "principal" ? null : b })} />
              {b}
            </label>
          ))}
        </fieldset>
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={view.q}
            onChange={(e) => set({ q: e.target.value || null })}
            placeholder="Principal, resource or operation"
          />
        </label>
        <span className="muted" aria-live="polite">
          {acls.data ? `${acls.data.length} binding${acls.data.length === 1 ? "" : "s"}` : ""}
        </span>
      </div>
      {acls.error && (
        <p className="error" role="alert">
          {acls.error.message}
        </p>
      )}
      {acls.isPending && <p className="muted">Loading ACLs…</p>}
      {acls.data && groups.length === 0 && (
        <p className="muted">{acls.data.length === 0 ? "The cluster has no ACL binding." : "No binding matches the search."}</p>
      )}
      {groups.map(([name, rows]) => (
        <AclGroup key={name} name={name} rows={rows} by={view.by} onDelete={canAdmin ? deletion.open : null} />
      ))}
      {canAdmin && deletion.element}
      {canAdmin && <AddAcl />}
      <ExplainForm />
    </section>
  );
}

function AclGroup({ name, rows, by, onDelete }: { name: string; rows: AclEntry[]; by: By; onDelete: ((a: AclEntry) => void) | null }) {
  return (
    <>
      <h2>{name}</h2>
      <table aria-label={`Bindings of ${name}`}>
        <thead>
          <tr>
            <th scope="col">{by === "principal" ? "Resource" : "Principal"}</th>
            <th scope="col">Pattern</th>
            <th scope="col">Operation</th>
            <th scope="col">Permission</th>
            <th scope="col">Host</th>
            {onDelete && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((a) => (
            <tr key={keyOf(a)}>
              <td>{by === "principal" ? resourceOf(a) : a.principal}</td>
              <td>{a.patternType}</td>
              <td>{a.operation}</td>
              <td className={a.permissionType === "Deny" ? "deny" : "allow"}>{a.permissionType}</td>
              <td>{a.host}</td>
              {onDelete && (
                <td>
                  <button
                    type="button"
                    className="ghost"
                    aria-label={`Delete ${a.permissionType} ${a.operation} on ${a.resourceType} ${a.resourceName} for ${a.principal}`}
                    onClick={() => onDelete(a)}
                  >
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** One confirmation for every row's Delete: the binding chosen is deleted exactly. */
function useDeleteDialog() {
  const dialog = useRef<HTMLDialogElement>(null);
  const [target, setTarget] = useState<AclEntry | null>(null);
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteAcl(target!),
    onSuccess: () => {
      dialog.current?.close();
      void client.invalidateQueries({ queryKey: ACLS_KEY });
    },
  });
  const open = (a: AclEntry) => {
    setTarget(a);
    dialog.current?.showModal();
  };
  const element = (
    <ConfirmDeleteDialog dialog={dialog} id="acl-delete-title" title="Delete the binding" label="Delete" action={remove}>
      {target
        ? `${target.permissionType} ${target.operation} on ${target.resourceType} ${target.resourceName} (${target.patternType}) for ${target.principal} from ${target.host}.`
        : ""}
    </ConfirmDeleteDialog>
  );
  return { open, element };
}

/** Who does what on which resource: the fields the add and the explain forms share. */
function useSubject() {
  const [principal, setPrincipal] = useState("User:");
  const [type, setType] = useState<ResourceType>("Topic");
  const [name, setName] = useState("");
  const [operation, setOperation] = useState("Read");
  return { principal, setPrincipal, type, setType, name, setName, operation, setOperation };
}
type Subject = ReturnType<typeof useSubject>;

/** The principal, a resource type, its name, and an operation offered among those valid for the type. */
function SubjectFields({ subject, idPrefix }: { subject: Subject; idPrefix: string }) {
  const { principal, setPrincipal, type, setType, name, setName, operation, setOperation } = subject;
  const ops = RESOURCE_OPERATIONS[type];
  return (
    <>
      <label className="stacked">
        <span>Principal</span>
        <input value={principal} onChange={(e) => setPrincipal(e.target.value)} placeholder="User:alice" />
      </label>
      <label className="stacked">
        <span>Resource type</span>
        <select
          value={type}
          onChange={(e) => {
            const t = e.target.value as ResourceType;
            setType(t);
            if (!RESOURCE_OPERATIONS[t].includes(operation as keyof typeof OPERATIONS)) setOperation(RESOURCE_OPERATIONS[t][0]!);
            if (t === "Cluster") setName(CLUSTER_RESOURCE_NAME);
            else if (name === CLUSTER_RESOURCE_NAME) setName("");
          }}
        >
          {TYPES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label className="stacked">
        <span>Resource name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} readOnly={type === "Cluster"} id={`${idPrefix}-name`} />
      </label>
      <label className="stacked">
        <span>Operation</span>
        <select value={operation} onChange={(e) => setOperation(e.target.value)}>
          {ops.map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
      </label>
    </>
  );
}

function AddAcl() {
  const client = useQueryClient();
  const subject = useSubject();
  const [patternType, setPatternType] = useState("LITERAL");
  const [host, setHost] = useState("*");
  const [permissionType, setPermission] = useState("Allow");
  const add = useMutation({
    mutationFn: (body: AclBodyInput) => createAcl(body),
    onSuccess: () => void client.invalidateQueries({ queryKey: ACLS_KEY }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const { principal, type, name, operation } = subject;
    add.mutate({ resourceType: type, resourceName: name, principal, permissionType, host, operation, patternType });
  };
  return (
    <form className="acl-form" onSubmit={submit} aria-labelledby="acl-add-title">
      <h2 id="acl-add-title">Add a binding</h2>
      <div className="acl-fields">
        <SubjectFields subject={subject} idPrefix="acl-add" />
        <label className="stacked">
          <span>Pattern</span>
          <select value={patternType} onChange={(e) => setPatternType(e.target.value)}>
            <option value="LITERAL">Literal</option>
            <option value="PREFIXED">Prefixed</option>
          </select>
        </label>
        <label className="stacked">
          <span>Permission</span>
          <select value={permissionType} onChange={(e) => setPermission(e.target.value)}>
            <option>Allow</option>
            <option>Deny</option>
          </select>
        </label>
        <label className="stacked">
          <span>Host</span>
          <input value={host} onChange={(e) => setHost(e.target.value)} />
        </label>
      </div>
      <button type="submit" disabled={add.isPending}>
        {add.isPending ? "Adding…" : "Add binding"}
      </button>
      <ActionResult
        error={add.error}
        done={
          add.data ? `Added: ${add.data.permissionType} ${add.data.operation} on ${resourceOf(add.data)} for ${add.data.principal}` : null
        }
      />
    </form>
  );
}

function ExplainForm() {
  const subject = useSubject();
  const [host, setHost] = useState("");
  const ask = useMutation({
    mutationFn: () => {
      const { principal, type, name, operation } = subject;
      return explainAcl({ principal, resourceType: type, resourceName: name, operation, ...(host ? { host } : {}) });
    },
  });
  return (
    <form
      className="acl-form"
      aria-labelledby="acl-explain-title"
      onSubmit={(e) => {
        e.preventDefault();
        ask.mutate();
      }}
    >
      <h2 id="acl-explain-title">May a principal do this?</h2>
      <div className="acl-fields">
        <SubjectFields subject={subject} idPrefix="acl-explain" />
        <label className="stacked">
          <span>Client host (optional)</span>
          <input value={host} onChange={(e) => setHost(e.target.value)} placeholder="10.0.0.7" />
        </label>
      </div>
      <button type="submit" disabled={ask.isPending}>
        Explain
      </button>
      <ActionResult error={ask.error} done={null} />
      {ask.data && <Answer answer={ask.data} />}
    </form>
  );
}

function Answer({ answer }: { answer: Explanation }) {
  const verdict = answer.allowed === null ? "It depends on the brokers." : answer.allowed ? "Allowed." : "Denied.";
  return (
    <div className="acl-answer" role="status">
      <p>
        <strong className={answer.allowed === null ? "" : answer.allowed ? "allow" : "deny"}>{verdict}</strong> {answer.summary}
      </p>
      {answer.considered.length > 0 && (
        <table aria-label="Bindings on the resource">
          <thead>
            <tr>
              <th scope="col">Binding</th>
              <th scope="col">Applies</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {answer.considered.map((b) => (
              <tr key={keyOf(b)}>
                <td>
                  {b.permissionType} {b.operation} on {resourceOf(b)} for {b.principal}
                </td>
                <td>{b.applies ? "yes" : "no"}</td>
                <td>{b.why}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {answer.caveats.length > 0 && (
        <ul className="muted">
          {answer.caveats.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
