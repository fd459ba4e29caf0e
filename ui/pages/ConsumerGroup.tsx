import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef } from "react";
import { fetchGroup, resetOffsets } from "../api/consumers.ts";
import { deleteConsumerGroup } from "../api/topics.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ConfirmDeleteDialog, ErrorAlert, num, TableHead, Tile } from "../components.tsx";
import { number } from "../format.ts";
import { navigate } from "../router.ts";
import { DEFAULT_LAG_WINDOW, LAG_WINDOWS, LagChart, type LagWindow } from "./LagChart.tsx";
import { ResetDialog } from "./ResetDialog.tsx";
import { ShareGroupPage } from "./ShareGroup.tsx";

/**
 * One group: its lag over time, members, per-partition offsets and lag (also in seconds), and
 * for writers, while the group has no member, the offset reset and deleting the group.
 */
export function ConsumerGroupPage({ id, location, canWrite }: { id: string; location: string; canWrite: boolean }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  if (params.get("type") === "share") return <ShareGroupPage id={id} location={location} canWrite={canWrite} />;
  return <ClassicGroupPage id={id} location={location} canWrite={canWrite} params={params} />;
}

function ClassicGroupPage({
  id,
  location,
  canWrite,
  params,
}: {
  id: string;
  location: string;
  canWrite: boolean;
  params: URLSearchParams;
}) {
  const cluster = clusterOf(location);
  const lagWindow = LAG_WINDOWS.find((w) => w.value === params.get("window"))?.value ?? DEFAULT_LAG_WINDOW;
  const setWindow = (w: LagWindow) => {
    const next = new URLSearchParams(params);
    if (w === DEFAULT_LAG_WINDOW) next.delete("window");
    else next.set("window", w);
    const query = next.toString();
    navigate(`/consumers/${encodeURIComponent(id)}${query ? `?${query}` : ""}`, { replace: true });
  };
  const key = ["group", cluster, id];
  const group = useQuery({ queryKey: key, queryFn: () => fetchGroup(id) });
  const g = group.data;
  const dialog = useRef<HTMLDialogElement>(null);
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const empty = g !== undefined && (g.state === "Empty" || g.members.length === 0);
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteConsumerGroup(id),
    onSuccess: async () => {
      deleteDialog.current?.close();
      client.removeQueries({ queryKey: key });
      await client.invalidateQueries({ queryKey: ["groups", cluster] });
      navigate(withCluster("/consumers", cluster));
    },
  });
  return (
    <section className="page">
      <h1>
        <span className="muted">Consumer group</span> {id}
      </h1>
      <ErrorAlert error={group.error} />
      {group.isPending && <p className="muted">Loading the group…</p>}
      {g && (
        <>
          <div className="tiles">
            <Tile label="State" value={g.state} text />
            <Tile label="Members" value={number.format(g.members.length)} />
            <Tile label="Total lag" value={number.format(g.lag)} />
          </div>
          {canWrite && (
            <div className="toolbar actions">
              <button type="button" onClick={() => dialog.current?.showModal()} disabled={!empty}>
                Reset offsets…
              </button>
              {empty ? (
                <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
                  Delete group…
                </button>
              ) : (
                <span className="muted">Offsets can be reset, and the group deleted, when it has no active member.</span>
              )}
            </div>
          )}

          <LagChart group={id} cluster={cluster} window={lagWindow} onWindow={setWindow} />

          <h2>Offsets and lag</h2>
          <table aria-label="Offsets and lag">
            <TableHead columns={["Topic", num("Partition"), num("Committed"), num("End offset"), num("Lag"), num("Lag (s)"), "Client"]} />
            <tbody>
              {g.offsets.map((o) => (
                <tr key={`${o.topic}/${o.partition}`}>
                  <td>{o.topic}</td>
                  <td className="num">{o.partition}</td>
                  <td className="num">{number.format(o.currentOffset)}</td>
                  <td className="num">{number.format(o.logEndOffset)}</td>
                  <td className="num">{number.format(o.lag)}</td>
                  <td className="num">{o.lagSeconds === null ? "—" : number.format(o.lagSeconds)}</td>
                  <td>{o.clientId ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>

          <h2>Members</h2>
          {g.members.length === 0 ? (
            <p className="muted">No member is connected.</p>
          ) : (
            <table aria-label="Members">
              <TableHead columns={["Client", "Host", "Partitions"]} />
              <tbody>
                {g.members.map((m) => (
                  <tr key={m.memberId}>
                    <td>{m.clientId}</td>
                    <td>{m.host}</td>
                    <td>{m.assignments.map((a) => `${a.topic}-${a.partition}`).join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {canWrite && (
            <ResetDialog
              dialog={dialog}
              group={id}
              rows={g.offsets.map((o) => ({ topic: o.topic, partition: o.partition, current: o.currentOffset, end: o.logEndOffset }))}
              apply={(body) => resetOffsets(id, body)}
              legend="Move the committed offsets to"
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
              {`Its committed offsets are deleted with it (${number.format(new Set(g.offsets.map((o) => o.topic)).size)} topic${new Set(g.offsets.map((o) => o.topic)).size === 1 ? "" : "s"}): a consumer that joins the group later starts where its auto.offset.reset says. This cannot be undone.`}
            </ConfirmDeleteDialog>
          )}
        </>
      )}
    </section>
  );
}
