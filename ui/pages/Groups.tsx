import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";
import { DialogFooter, Link } from "../components.tsx";
import { replaceParams } from "../router.ts";
import { api } from "../session.ts";
import type { Health } from "./Overview.tsx";
import "../styles/access.css";

export const ROLES = ["admin", "write", "read", "nodata"] as const;
export type Role = (typeof ROLES)[number];

/** What each role lets a member do; a role includes the ones below it. */
const ROLE_HELP: Record<Role, string> = {
  admin: "everything in scope; users, groups and service accounts only with every cluster and every topic",
  write: "create, change and delete topics and records",
  read: "read records and run queries",
  nodata: "see names and figures, no records",
};

export interface Group {
  name: string;
  roles: Role[];
  clusters: string[];
  topics: { allow: string[]; deny: string[] };
  source: "config" | "store";
  createdAt: number | null;
  updatedAt: number | null;
}

export const GROUPS_KEY = ["access", "groups"];

export function useGroups() {
  return useQuery({ queryKey: GROUPS_KEY, queryFn: () => api<Group[]>("/api/groups") });
}

/** The page's search (`q`), kept in the URL like the other lists. */
export function searchOf(location: string): { params: URLSearchParams; q: string } {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  return { params, q: params.get("q") ?? "" };
}

export const when = (ms: number | null | undefined) => (ms === null || ms === undefined ? "—" : new Date(ms).toLocaleString());

/**
 * A modal dialog mounted when opened, so each opening starts from a fresh form; `close` closes
 * it through the browser (focus returns to the button that opened it), then `onClosed` unmounts it.
 */
export function Modal({
  title,
  onClosed,
  children,
  wide = false,
}: {
  title: string;
  onClosed: () => void;
  children: (close: () => void) => ReactNode;
  wide?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
  }, []);
  const close = () => dialog.current?.close();
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onClose={onClosed} className={wide ? "access-dialog wide" : "access-dialog"}>
      <h2 id={titleId}>{title}</h2>
      {children(close)}
    </dialog>
  );
}

/**
 * Beneath a name: whether it is switched off, and whether it comes from the configuration file
 * (read-only here: the API refuses to change it, so no action is offered).
 */
export function NameNotes({ source, off }: { source: "config" | "store"; off?: string | null }) {
  if (source !== "config" && !off) return null;
  return (
    <div className="access-notes">
      {off && <span className="access-tag access-tag-off">{off}</span>}
      {source === "config" && (
        <span title="Defined in the configuration file: change it there">
          <span className="access-tag access-tag-config">Configuration file</span> <span className="muted">read-only</span>
        </span>
      )}
    </div>
  );
}

export function Tags({ values, empty = "none" }: { values: string[]; empty?: string }) {
  if (values.length === 0) return <span className="muted">{empty}</span>;
  return (
    <span className="access-tags">
      {values.map((v) => (
        <span key={v} className="access-tag" title={v}>
          {v}
        </span>
      ))}
    </span>
  );
}

/**
 * Which groups an identity belongs to: a checkbox per group, with what each grants. A group the
 * identity names but that no longer exists stays listed (and checked) until unchecked.
 */
export function GroupPicker({ chosen, onChange }: { chosen: string[]; onChange: (groups: string[]) => void }) {
  const groups = useGroups();
  const hint = useId();
  const known = new Set((groups.data ?? []).map((g) => g.name));
  const dangling = chosen.filter((c) => !known.has(c));
  const toggle = (name: string, on: boolean) => onChange(on ? [...chosen, name] : chosen.filter((c) => c !== name));
  return (
    <fieldset aria-describedby={hint}>
      <legend>Groups</legend>
      <p id={hint} className="muted access-field-hint">
        Rights are the union of the chosen groups' rights. No group: no rights.
      </p>
      {groups.error && (
        <p className="error" role="alert">
          {groups.error.message}
        </p>
      )}
      {groups.isPending && <p className="muted">Loading the groups…</p>}
      {groups.data?.length === 0 && (
        <p className="muted">
          No groups yet: <Link to="/groups">create one on the Groups page</Link> first.
        </p>
      )}
      <div className="access-choices">
        {(groups.data ?? []).map((g) => (
          <label key={g.name} className="check">
            <input type="checkbox" checked={chosen.includes(g.name)} onChange={(e) => toggle(g.name, e.target.checked)} />
            <span>
              {g.name} <span className="muted">({g.roles.join(", ")})</span>
            </span>
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

/** A confirmation before an action that cannot be undone; the API's refusal is said in it. */
export function ConfirmDialog({
  title,
  children,
  label,
  busyLabel,
  action,
  onDone,
  onClosed,
}: {
  title: string;
  children: ReactNode;
  label: string;
  busyLabel: string;
  action: () => Promise<unknown>;
  onDone: () => Promise<void> | void;
  onClosed: () => void;
}) {
  const run = useMutation({ mutationFn: action });
  return (
    <Modal title={title} onClosed={onClosed}>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e) => {
            e.preventDefault();
            run.mutate(undefined, {
              onSuccess: async () => {
                await onDone();
                close();
              },
            });
          }}
        >
          {children}
          <DialogFooter error={run.error} label={label} busyLabel={busyLabel} busy={run.isPending} danger onCancel={close} />
        </form>
      )}
    </Modal>
  );
}

/** Patterns typed one per line (commas and spaces separate too), without blanks or repeats. */
const patternsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter((p) => p !== ""))];

const clusterLabel = (clusters: string[]) => (clusters.includes("*") ? ["every cluster"] : clusters);

/** Groups: what each grants on which clusters and topics; the configuration file's are shown read-only. */
export function GroupsPage({ location }: { location: string }) {
  const view = searchOf(location);
  const groups = useGroups();
  const [editing, setEditing] = useState<Group | "new" | null>(null);
  const [deleting, setDeleting] = useState<Group | null>(null);
  const client = useQueryClient();
  const needle = view.q.toLowerCase();
  const rows = (groups.data ?? []).filter(
    (g) =>
      needle === "" ||
      g.name.toLowerCase().includes(needle) ||
      [...g.topics.allow, ...g.topics.deny, ...g.clusters].some((p) => p.toLowerCase().includes(needle)),
  );

  return (
    <section className="page access">
      <h1>Groups</h1>
      <p className="muted access-intro">
        A group grants roles on clusters and topics. Users and service accounts get the union of their groups' rights.
      </p>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={view.q}
            onChange={(e) => replaceParams("/groups", view.params, { q: e.target.value })}
            placeholder="Group, cluster or pattern"
          />
        </label>
        <button type="button" onClick={() => setEditing("new")}>
          Create group…
        </button>
        <span className="muted" aria-live="polite">
          {groups.data ? `${rows.length} of ${groups.data.length} groups` : ""}
        </span>
      </div>
      {groups.error && (
        <p className="error" role="alert">
          {groups.error.message}
        </p>
      )}
      {groups.isPending && <p className="muted">Loading the groups…</p>}
      {groups.data && rows.length === 0 && (
        <p className="muted">
          {groups.data.length === 0
            ? "No groups yet. Create one (“Create group…”), then put users and service accounts in it."
            : "No group matches the search."}
        </p>
      )}
      {rows.length > 0 && (
        <div className="access-table-scroll">
          <table className="access-table" aria-label="Groups">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Roles</th>
                <th scope="col">Clusters</th>
                <th scope="col">Topics</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((g) => (
                <tr key={g.name}>
                  <th scope="row">
                    {g.name}
                    <NameNotes source={g.source} />
                  </th>
                  <td>
                    <Tags values={g.roles} />
                  </td>
                  <td>
                    <Tags values={clusterLabel(g.clusters)} />
                  </td>
                  <td>
                    <div className="access-patterns">
                      <span className="muted">allow</span> <Tags values={g.topics.allow} empty="no topic" />
                    </div>
                    {g.topics.deny.length > 0 && (
                      <div className="access-patterns">
                        <span className="muted">deny</span> <Tags values={g.topics.deny} />
                      </div>
                    )}
                  </td>
                  <td className="access-actions">
                    {g.source === "store" && (
                      <div>
                        <button type="button" className="ghost" aria-label={`Edit ${g.name}`} onClick={() => setEditing(g)}>
                          Edit…
                        </button>
                        <button type="button" className="ghost" aria-label={`Delete ${g.name}`} onClick={() => setDeleting(g)}>
                          Delete…
                        </button>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && <GroupDialog group={editing === "new" ? null : editing} onClosed={() => setEditing(null)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete the group ${deleting.name}`}
          label="Delete group"
          busyLabel="Deleting…"
          action={() => api(`/api/groups/${encodeURIComponent(deleting.name)}`, { method: "DELETE" })}
          onDone={() => client.invalidateQueries({ queryKey: ["access"] })}
          onClosed={() => setDeleting(null)}
        >
          <p>Its members lose the rights it grants from their next request. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** Create a group (`group` null) or change one: roles, clusters, allowed and denied topic patterns. */
function GroupDialog({ group, onClosed }: { group: Group | null; onClosed: () => void }) {
  const client = useQueryClient();
  const health = useQuery({ queryKey: ["health"], queryFn: () => api<Health>("/api/health") });
  const patternHint = useId();
  const [name, setName] = useState(group?.name ?? "");
  const [roles, setRoles] = useState<Role[]>(group?.roles ?? []);
  const [clusters, setClusters] = useState<string[]>(group?.clusters ?? ["*"]);
  const [allow, setAllow] = useState((group?.topics.allow ?? []).join("\n"));
  const [deny, setDeny] = useState((group?.topics.deny ?? []).join("\n"));
  const save = useMutation({
    mutationFn: (body: object) =>
      group
        ? api<Group>(`/api/groups/${encodeURIComponent(group.name)}`, { method: "PUT", body: JSON.stringify(body) })
        : api<Group>("/api/groups", { method: "POST", body: JSON.stringify(body) }),
    onSuccess: () => client.invalidateQueries({ queryKey: ["access"] }),
  });
  const every = clusters.includes("*");
  const configured = (health.data?.clusters ?? []).map((c) => c.name);
  const others = clusters.filter((c) => c !== "*" && !configured.includes(c));
  const toggleCluster = (c: string, on: boolean) => setClusters(on ? [...clusters, c] : clusters.filter((x) => x !== c));

  return (
    <Modal title={group ? `Edit the group ${group.name}` : "Create a group"} onClosed={onClosed} wide>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            const body = { roles, clusters, topics: { allow: patternsOf(allow), deny: patternsOf(deny) } };
            save.mutate(group ? body : { name: name.trim(), ...body }, { onSuccess: close });
          }}
        >
          {!group && (
            <label className="stacked">
              <span>Group name</span>
              <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="off" />
            </label>
          )}
          <fieldset>
            <legend>Roles</legend>
            {ROLES.map((r) => (
              <label key={r} className="check">
                <input
                  type="checkbox"
                  checked={roles.includes(r)}
                  onChange={(e) => setRoles(e.target.checked ? [...roles, r] : roles.filter((x) => x !== r))}
                />
                <span>
                  {r} <span className="muted">— {ROLE_HELP[r]}</span>
                </span>
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Clusters</legend>
            <label className="check">
              <input type="checkbox" checked={every} onChange={(e) => toggleCluster("*", e.target.checked)} />
              <span>Every cluster, also those added later</span>
            </label>
            {health.isPending && <p className="muted">Loading the clusters…</p>}
            {health.error && <p className="error">The clusters could not be listed: {health.error.message}</p>}
            {configured.map((c) => (
              <label key={c} className="check">
                <input
                  type="checkbox"
                  checked={every || clusters.includes(c)}
                  disabled={every}
                  onChange={(e) => toggleCluster(c, e.target.checked)}
                />
                <span>{c}</span>
              </label>
            ))}
            {others.map((c) => (
              <label key={c} className="check">
                <input type="checkbox" checked disabled={every} onChange={() => toggleCluster(c, false)} />
                <span>
                  {c} {health.data && <span className="muted">(not configured)</span>}
                </span>
              </label>
            ))}
          </fieldset>
          <fieldset aria-describedby={patternHint}>
            <legend>Topics</legend>
            <p id={patternHint} className="muted access-field-hint">
              One pattern per line. <code>*</code> matches any run of characters and <code>?</code> one character: <code>payments.*</code>{" "}
              matches <code>payments.eu</code>. A topic matching a denied pattern is out of this group's scope even when an allowed one
              matches it (deny wins). No allowed pattern: no topic.
            </p>
            <label className="stacked">
              <span>Allowed topics</span>
              <textarea value={allow} onChange={(e) => setAllow(e.target.value)} rows={3} spellCheck={false} placeholder="payments.*" />
            </label>
            <label className="stacked">
              <span>Denied topics</span>
              <textarea
                value={deny}
                onChange={(e) => setDeny(e.target.value)}
                rows={2}
                spellCheck={false}
                placeholder="payments.internal-*"
              />
            </label>
          </fieldset>
          <DialogFooter
            error={save.error}
            label={group ? "Save" : "Create group"}
            busyLabel={group ? "Saving…" : "Creating…"}
            busy={save.isPending}
            onCancel={close}
          />
        </form>
      )}
    </Modal>
  );
}
