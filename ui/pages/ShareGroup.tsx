import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useRef, useState } from "react";
import {
  alterShareConfigs,
  deleteShareGroup,
  fetchShareConfigs,
  fetchShareGroup,
  type GroupConfigEntry,
  resetShareOffsets,
} from "../api/consumers.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ActionResult, ConfirmDeleteDialog, ErrorAlert, num, TableHead, Tile } from "../components.tsx";
import { number } from "../format.ts";
import { navigate } from "../router.ts";
import { ResetDialog } from "./ResetDialog.tsx";

const maybe = (n: number | null) => (n === null ? "—" : number.format(n));

/**
 * One Kafka 4 share group (KIP-932): its members (several may share a partition), each
 * partition's start offset and lag (records not yet acknowledged), its `share.*` configs, and
 * for writers, while it has no member, the start-offset reset and deleting the group.
 */
export function ShareGroupPage({ id, location, canWrite }: { id: string; location: string; canWrite: boolean }) {
  const cluster = clusterOf(location);
  const key = ["share-group", cluster, id];
  const group = useQuery({ queryKey: key, queryFn: () => fetchShareGroup(id), refetchInterval: 10_000 });
  const configs = useQuery({ queryKey: ["share-group-configs", cluster, id], queryFn: () => fetchShareConfigs(id) });
  const g = group.data;
  const dialog = useRef<HTMLDialogElement>(null);
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const empty = g !== undefined && g.members.length === 0;
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteShareGroup(id),
    onSuccess: async () => {
      deleteDialog.current?.close();
      client.removeQueries({ queryKey: key });
      await client.invalidateQueries({ queryKey: ["groups", cluster] });
      navigate(withCluster("/consumers", cluster));
    },
  });
  const own = (configs.data ?? []).filter((c) => !c.isDefault);
  return (
    <section className="page">
      <h1>
        <span className="muted">Share group</span> {id}
      </h1>
      <ErrorAlert error={group.error} />
      {group.isPending && <p className="muted">Loading the group…</p>}
      {g && (
        <>
          <div className="tiles">
            <Tile label="State" value={g.state} text />
            <Tile label="Members" value={number.format(g.members.length)} />
            <Tile label="Total lag" value={number.format(g.lag)} />
            <Tile label="Assignor" value={g.assignor || "—"} text />
          </div>
          {canWrite && (
            <div className="toolbar actions">
              <button type="button" onClick={() => dialog.current?.showModal()} disabled={!empty}>
                Reset start offsets…
              </button>
              {empty ? (
                <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
                  Delete group…
                </button>
              ) : (
                <span className="muted">Start offsets can be reset, and the group deleted, when it has no active member.</span>
              )}
            </div>
          )}

          <h2>Partitions</h2>
          <p className="muted">
            Members share the partitions of a share group; the start offset is the first record not yet acknowledged, and the lag counts the
            records from there to the end that no member has acknowledged.
          </p>
          {g.offsets.length === 0 ? (
            <p className="muted">The group has no start offset on any topic yet.</p>
          ) : (
            <table aria-label="Partitions">
              <TableHead columns={["Topic", num("Partition"), num("Start offset"), num("End offset"), num("Lag"), num("Members")]} />
              <tbody>
                {g.offsets.map((o) => (
                  <tr key={`${o.topic}/${o.partition}`}>
                    <td>{o.topic}</td>
                    <td className="num">{o.partition}</td>
                    <td className="num">{maybe(o.startOffset)}</td>
                    <td className="num">{maybe(o.logEndOffset)}</td>
                    <td className="num">{maybe(o.lag)}</td>
                    <td className="num">{o.members}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Members</h2>
          {g.members.length === 0 ? (
            <p className="muted">No member is connected.</p>
          ) : (
            <table aria-label="Members">
              <TableHead columns={["Client", "Host", "Rack", "Subscribed topics", "Partitions"]} />
              <tbody>
                {g.members.map((m) => (
                  <tr key={m.memberId}>
                    <td>{m.clientId}</td>
                    <td>{m.host}</td>
                    <td>{m.rackId ?? "—"}</td>
                    <td>{m.subscribedTopics.join(", ")}</td>
                    <td>{m.assignments.map((a) => `${a.topic}-${a.partition}`).join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Configs</h2>
          <ErrorAlert error={configs.error} />
          {configs.data && (
            <table aria-label="Share group configs">
              <TableHead columns={["Name", "Value", "Source"]} />
              <tbody>
                {[...own, ...configs.data.filter((c) => c.isDefault)].map((c) => (
                  <tr key={c.name}>
                    <td title={c.documentation ?? undefined}>{c.name}</td>
                    <td>{c.sensitive ? "********" : (c.value ?? "—")}</td>
                    <td>{c.isDefault ? "broker default" : "this group"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          {canWrite && configs.data && <ConfigForm group={id} configs={configs.data} queryKey={["share-group-configs", cluster, id]} />}

          {canWrite && (
            <ResetDialog
              dialog={dialog}
              group={id}
              rows={g.offsets.map((o) => ({ topic: o.topic, partition: o.partition, current: o.startOffset, end: o.logEndOffset }))}
              apply={(body) => resetShareOffsets(id, body)}
              legend="Move the start offsets to"
              noun="start offsets"
              queryKey={key}
            />
          )}
          {canWrite && empty && (
            <ConfirmDeleteDialog
              dialog={deleteDialog}
              id="delete-group-title"
              title={`Delete ${id}`}
              typeName={{ name: id, noun: "group" }}
              label="Delete group"
              action={remove}
            >
              {`Its start offsets and the state of its in-flight records are deleted with it: a member that joins the group later starts where share.auto.offset.reset says. This cannot be undone.`}
            </ConfirmDeleteDialog>
          )}
        </>
      )}
    </section>
  );
}

/**
 * Sets one of the group's share.* configs, or (an empty value) removes the group's own value so
 * the brokers' default applies again. The brokers check the value before it is stored.
 */
function ConfigForm({ group, configs, queryKey }: { group: string; configs: GroupConfigEntry[]; queryKey: unknown[] }) {
  const editable = configs.filter((c) => !c.readOnly);
  const [name, setName] = useState(editable[0]?.name ?? "");
  const [done, setDone] = useState<string | null>(null);
  const client = useQueryClient();
  const alter = useMutation({
    mutationFn: (change: { key: string; value: string | null }) => alterShareConfigs(group, [change]),
    onSuccess: async (_, change) => {
      setDone(change.value === null ? `${change.key} now has the brokers' default.` : `${change.key} set to ${change.value}.`);
      await client.invalidateQueries({ queryKey });
    },
  });
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const value = String(new FormData(e.currentTarget).get("value") ?? "").trim();
    setDone(null);
    alter.mutate({ key: name, value: value === "" ? null : value });
  }
  if (editable.length === 0) return null;
  return (
    <form className="toolbar" onSubmit={submit} aria-label="Change a config">
      <label className="stacked">
        <span>Config</span>
        <select value={name} onChange={(e) => setName(e.target.value)}>
          {editable.map((c) => (
            <option key={c.name}>{c.name}</option>
          ))}
        </select>
      </label>
      <label className="stacked">
        <span>Value (empty: the brokers' default)</span>
        <input name="value" key={name} defaultValue={editable.find((c) => c.name === name && !c.isDefault)?.value ?? ""} />
      </label>
      <button type="submit" disabled={alter.isPending}>
        {alter.isPending ? "Saving…" : "Save config"}
      </button>
      <ActionResult error={alter.error} done={done} />
    </form>
  );
}
