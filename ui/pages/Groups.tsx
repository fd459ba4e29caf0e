import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { fetchHealth } from "../api/cluster.ts";
import { type Group, groupsApi, type NewGroup, type Role, useGroups } from "../api/groups.ts";
import { type Done, Field, FieldProblem, LinesField, NameNotes, ResourceForm, ResourceList, Tags } from "./AccessList.tsx";

const ROLES = ["admin", "write", "read", "nodata"] as const satisfies readonly Role[];

/** What each role lets a member do; a role includes the ones below it. */
const ROLE_HELP: Record<Role, string> = {
  admin: "everything in scope; users, groups and service accounts only with every cluster and every topic",
  write: "create, change and delete topics and records",
  read: "read records and run queries",
  nodata: "see names and figures, no records",
};

/** Patterns typed one per line (commas and spaces separate too), without blanks or repeats. */
const patternsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter((p) => p !== ""))];

const clusterLabel = (clusters: string[]) => (clusters.includes("*") ? ["every cluster"] : clusters);

/** Groups: what each grants on which clusters and topics; the configuration file's are shown read-only. */
export function GroupsPage({ location }: { location: string }) {
  return (
    <ResourceList<Group>
      title="Groups"
      intro="A group grants roles on clusters and topics. Users and service accounts get the union of their groups' rights."
      path="/groups"
      location={location}
      query={useGroups()}
      noun={{ one: "group", many: "groups" }}
      searchPlaceholder="Group, cluster or pattern"
      matches={(g, needle) =>
        g.name.toLowerCase().includes(needle) ||
        [...g.topics.allow, ...g.topics.deny, ...g.clusters].some((p) => p.toLowerCase().includes(needle))
      }
      empty="Create one (“Create group…”), then put users and service accounts in it."
      columns={[
        { header: "Roles", cell: (g) => <Tags values={g.roles} /> },
        { header: "Clusters", cell: (g) => <Tags values={clusterLabel(g.clusters)} /> },
        {
          header: "Topics",
          cell: (g) => (
            <>
              <div className="access-patterns">
                <span className="muted">allow</span> <Tags values={g.topics.allow} empty="no topic" />
              </div>
              {g.topics.deny.length > 0 && (
                <div className="access-patterns">
                  <span className="muted">deny</span> <Tags values={g.topics.deny} />
                </div>
              )}
            </>
          ),
        },
      ]}
      nameNotes={(g) => <NameNotes source={g.source} />}
      editable={(g) => g.source === "store"}
      form={(group, done, onClosed) => <GroupDialog group={group} done={done} onClosed={onClosed} />}
      remove={{
        button: "Delete…",
        label: "Delete group",
        busyLabel: "Deleting…",
        title: (g) => `Delete the group ${g.name}`,
        text: <p>Its members lose the rights it grants from their next request. This cannot be undone.</p>,
        done: (g) => `${g.name} is deleted.`,
        run: (g) => groupsApi.remove(g.name),
      }}
    />
  );
}

/** Create a group (`group` null) or change one: roles, clusters, allowed and denied topic patterns. */
function GroupDialog({ group, done, onClosed }: { group: Group | null; done: Done; onClosed: () => void }) {
  const health = useQuery({ queryKey: ["health"], queryFn: fetchHealth });
  const patternHint = useId();
  const [name, setName] = useState(group?.name ?? "");
  const [roles, setRoles] = useState<Role[]>(group?.roles ?? []);
  const [clusters, setClusters] = useState<string[]>(group?.clusters ?? ["*"]);
  const [allow, setAllow] = useState((group?.topics.allow ?? []).join("\n"));
  const [deny, setDeny] = useState((group?.topics.deny ?? []).join("\n"));
  const every = clusters.includes("*");
  const configured = (health.data?.clusters ?? []).map((c) => c.name);
  const others = clusters.filter((c) => c !== "*" && !configured.includes(c));
  const toggleCluster = (c: string, on: boolean) => setClusters(on ? [...clusters, c] : clusters.filter((x) => x !== c));

  return (
    <ResourceForm
      title={group ? `Edit the group ${group.name}` : "Create a group"}
      label={group ? "Save" : "Create group"}
      busyLabel={group ? "Saving…" : "Creating…"}
      body={() => {
        const body = { roles, clusters, topics: { allow: patternsOf(allow), deny: patternsOf(deny) } };
        return group ? body : { name: name.trim(), ...body };
      }}
      schema={group ? groupsApi.schemas.change : groupsApi.schemas.create}
      save={(body) => (group ? groupsApi.update(group.name, body) : groupsApi.create(body as NewGroup))}
      onSaved={() => done(group ? `${group.name} is saved.` : `${name.trim()} is created.`)}
      onClosed={onClosed}
    >
      {!group && (
        <Field label="Group name" path="name">
          {(problem) => (
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="off" {...problem} />
          )}
        </Field>
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
        <FieldProblem path="roles" />
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
        <FieldProblem path="clusters" />
      </fieldset>
      <fieldset aria-describedby={patternHint}>
        <legend>Topics</legend>
        <p id={patternHint} className="muted access-field-hint">
          One pattern per line. <code>*</code> matches any run of characters and <code>?</code> one character: <code>payments.*</code>{" "}
          matches <code>payments.eu</code>. A topic matching a denied pattern is out of this group's scope even when an allowed one matches
          it (deny wins). No allowed pattern: no topic.
        </p>
        <LinesField label="Allowed topics" path="topics.allow" value={allow} onChange={setAllow} rows={3} placeholder="payments.*" />
        <LinesField label="Denied topics" path="topics.deny" value={deny} onChange={setDeny} rows={2} placeholder="payments.internal-*" />
      </fieldset>
    </ResourceForm>
  );
}
