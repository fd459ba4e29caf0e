import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useRef, useState } from "react";
import {
  connectKeys,
  connectorAction,
  connectorHref,
  fetchConfig,
  fetchStatus,
  shortClass,
  stateClass,
  whileRebalancing,
} from "../api/connect.ts";
import { ActionResult, ConfirmDeleteDialog, ErrorAlert, Link, TableHead, Tile } from "../components.tsx";
import { navigate } from "../router.ts";

/** A connector's state moves on its own (tasks start, fail, move worker): its page asks again this often. */
const STATUS_REFRESH_MS = 3_000;

type Action = "pause" | "resume" | "restart" | { task: number };

/**
 * One connector: its state and worker, its tasks (each restartable), its configuration (secrets
 * come masked for users who may not read data), and for writers pause, resume, restart, edit
 * and delete. Every refusal is shown beside the buttons that caused it.
 */
export function ConnectorPage({ alias, name, canWrite }: { alias: string; name: string; canWrite: boolean }) {
  const client = useQueryClient();
  const key = connectKeys.connector(alias, name);
  const status = useQuery({
    queryKey: [...key, "status"],
    queryFn: () => fetchStatus(alias, name),
    refetchInterval: STATUS_REFRESH_MS,
    ...whileRebalancing,
  });
  const config = useQuery({ queryKey: [...key, "config"], queryFn: () => fetchConfig(alias, name), ...whileRebalancing });
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const act = useMutation({
    mutationFn: (action: Action) => connectorAction(alias, name, action),
    onSuccess: () => client.invalidateQueries({ queryKey: key }),
  });
  const [done, setDone] = useState<string | null>(null);
  const run = (action: Action, said: string) => {
    setDone(null);
    act.mutate(action, { onSuccess: () => setDone(said) });
  };

  const s = status.data;
  const state = s?.connector.state;
  const cls = config.data?.["connector.class"];
  return (
    <section className="page connect connector-page">
      <p className="crumbs">
        <Link to={`/connect?alias=${encodeURIComponent(alias)}`}>Connect</Link> <span className="muted">/ {alias}</span>
      </p>
      <h1>
        <span className="muted">Connector</span> {name}
      </h1>
      {status.error && (
        <p className="error" role="alert">
          {status.error.message}
          {name.includes("/") && " (Kafka Connect's REST API refuses a connector name holding a slash in its paths.)"}
        </p>
      )}
      {status.isPending && <p className="muted">Loading the connector…</p>}
      {s && (
        <>
          <div className="tiles">
            <Tile label="State" value={s.connector.state} text />
            <Tile label="Type" value={s.type ?? "—"} text />
            <Tile label="Plugin" value={cls ? shortClass(cls) : "—"} text />
            <Tile label="Worker" value={s.connector.worker_id} text />
            <Tile label="Tasks" value={String(s.tasks.length)} />
          </div>
          {s.connector.trace && (
            <details className="trace">
              <summary>Why the connector failed</summary>
              <pre>{s.connector.trace}</pre>
            </details>
          )}
        </>
      )}
      {canWrite && s && (
        <div className="toolbar actions">
          {state === "PAUSED" || state === "STOPPED" ? (
            <button
              type="button"
              onClick={() => run("resume", "Resumed: the connector and its tasks start again.")}
              disabled={act.isPending}
            >
              Resume
            </button>
          ) : (
            <button type="button" onClick={() => run("pause", "Paused: its tasks stop until resumed.")} disabled={act.isPending}>
              Pause
            </button>
          )}
          <button
            type="button"
            className="ghost"
            onClick={() => run("restart", "Restart asked: the connector and its failed tasks restart.")}
            disabled={act.isPending}
          >
            Restart
          </button>
          <button type="button" className="ghost" onClick={() => navigate(connectorHref(alias, name, true))}>
            Edit configuration
          </button>
          <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
            Delete…
          </button>
        </div>
      )}
      <ActionResult error={act.error} done={done} />

      {s && (
        <>
          <h2>Tasks</h2>
          {s.tasks.length === 0 ? (
            <p className="muted">No task yet: the connector starts its tasks once it runs.</p>
          ) : (
            <table aria-label="Tasks">
              <TableHead columns={["Task", "State", "Worker", "Error"]} actions={canWrite} />
              <tbody>
                {s.tasks.map((t) => (
                  <tr key={t.id}>
                    <td>{t.id}</td>
                    <td>
                      <span className={stateClass(t.state)}>{t.state}</span>
                    </td>
                    <td>{t.worker_id}</td>
                    <td>
                      {t.trace ? (
                        <details className="trace">
                          <summary>{t.trace.split("\n", 1)[0]}</summary>
                          <pre>{t.trace}</pre>
                        </details>
                      ) : (
                        "—"
                      )}
                    </td>
                    {canWrite && (
                      <td>
                        <button
                          type="button"
                          className={t.state === "FAILED" ? undefined : "ghost"}
                          onClick={() => run({ task: t.id }, `Restart of task ${t.id} asked.`)}
                          disabled={act.isPending}
                        >
                          Restart task {t.id}
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}

      <h2>Configuration</h2>
      <ErrorAlert error={config.error} />
      {config.data && (
        <table aria-label="Configuration" className="connect-config">
          <TableHead columns={["Setting", "Value"]} />
          <tbody>
            {Object.entries(config.data)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => (
                <tr key={k}>
                  <td className="mono">{k}</td>
                  <td className="mono">{v}</td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
      {canWrite && <DeleteConnectorDialog dialog={deleteDialog} alias={alias} name={name} />}
    </section>
  );
}

/** Deleting stops the connector and its tasks for good: its name must be typed to confirm. */
function DeleteConnectorDialog({ dialog, alias, name }: { dialog: RefObject<HTMLDialogElement | null>; alias: string; name: string }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => connectorAction(alias, name, "delete"),
    onSuccess: async () => {
      client.removeQueries({ queryKey: connectKeys.connector(alias, name) });
      await client.invalidateQueries({ queryKey: connectKeys.connectors(alias) });
      dialog.current?.close();
      navigate(`/connect?alias=${encodeURIComponent(alias)}`);
    },
  });
  return (
    <ConfirmDeleteDialog
      dialog={dialog}
      id="delete-connector-title"
      title={`Delete ${name}`}
      typeName={{ name, noun: "connector" }}
      label="Delete connector"
      action={remove}
    >
      The connector and its tasks stop and its configuration is removed from the Connect cluster. This cannot be undone.
    </ConfirmDeleteDialog>
  );
}
