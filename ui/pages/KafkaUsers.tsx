import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useRef, useState } from "react";
import "../styles/acls.css";
import { SCRAM_MECHANISMS } from "../../src/domains/kafka-users/schemas.ts";
import {
  createKafkaUser,
  deleteKafkaUser,
  KAFKA_USERS_KEY,
  type KafkaUserView,
  rotateKafkaUser,
  useKafkaUsers,
} from "../api/kafka-users.ts";
import { clusterOf } from "../cluster.ts";
import { ActionResult, ConfirmDeleteDialog, DialogFooter } from "../components.tsx";

type Mechanism = (typeof SCRAM_MECHANISMS)[number];

/** The Kafka cluster's SCRAM users (admins): created with a password, given a new one, deleted. Passwords are never shown. */
export function KafkaUsersPage({ location }: { location: string }) {
  const cluster = clusterOf(location);
  const users = useKafkaUsers(cluster);
  const [rotating, setRotating] = useState<KafkaUserView | null>(null);
  const [deleting, setDeleting] = useState<KafkaUserView | null>(null);
  const rotateDialog = useRef<HTMLDialogElement>(null);
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const client = useQueryClient();
  const refresh = () => void client.invalidateQueries({ queryKey: KAFKA_USERS_KEY });
  const remove = useMutation({
    mutationFn: () => deleteKafkaUser(deleting!.name),
    onSuccess: () => {
      deleteDialog.current?.close();
      refresh();
    },
  });

  return (
    <section className="page kafka-users">
      <h1>Kafka users</h1>
      <p className="muted">The cluster's SCRAM credentials: what clients log in to the brokers with (User:&lt;name&gt; to its ACLs).</p>
      {users.error && (
        <p className="error" role="alert">
          {users.error.message}
        </p>
      )}
      {users.isPending && <p className="muted">Loading Kafka users…</p>}
      {users.data && users.data.length === 0 && <p className="muted">The cluster has no SCRAM user.</p>}
      {users.data && users.data.length > 0 && (
        <table aria-label="Kafka users">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Mechanisms</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.data.map((u) => (
              <tr key={u.name}>
                <td>{u.name}</td>
                <td>{u.credentials.map((c) => `${c.mechanism} (${c.iterations} iterations)`).join(", ")}</td>
                <td>
                  <button
                    type="button"
                    className="ghost"
                    aria-label={`New password for ${u.name}`}
                    onClick={() => {
                      setRotating(u);
                      rotateDialog.current?.showModal();
                    }}
                  >
                    New password…
                  </button>{" "}
                  <button
                    type="button"
                    className="ghost"
                    aria-label={`Delete ${u.name}`}
                    onClick={() => {
                      setDeleting(u);
                      deleteDialog.current?.showModal();
                    }}
                  >
                    Delete…
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateForm onDone={refresh} />
      <RotateDialog dialog={rotateDialog} user={rotating} onDone={refresh} />
      <ConfirmDeleteDialog
        dialog={deleteDialog}
        id="kafka-user-delete"
        title={`Delete ${deleting?.name ?? ""}`}
        typeName={deleting ? { name: deleting.name, noun: "user" } : undefined}
        label="Delete user"
        action={remove}
      >
        Its credentials are deleted: it can no longer log in to the brokers (sessions already open last until they re-authenticate).
      </ConfirmDeleteDialog>
    </section>
  );
}

function CreateForm({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [mechanism, setMechanism] = useState<Mechanism>("SCRAM-SHA-512");
  const create = useMutation({
    mutationFn: () => createKafkaUser({ name, password, mechanism }),
    onSuccess: () => {
      setPassword("");
      onDone();
    },
  });
  return (
    <form
      className="acl-form"
      aria-labelledby="kafka-user-create-title"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h2 id="kafka-user-create-title">Create a Kafka user</h2>
      <div className="acl-fields">
        <label className="stacked">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
        </label>
        <label className="stacked">
          <span>Password</span>
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
        </label>
        <label className="stacked">
          <span>Mechanism</span>
          <select value={mechanism} onChange={(e) => setMechanism(e.target.value as Mechanism)}>
            {SCRAM_MECHANISMS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
      </div>
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? "Creating…" : "Create user"}
      </button>
      <ActionResult error={create.error} done={create.data ? `Created ${create.data.name}` : null} />
    </form>
  );
}

function RotateDialog({
  dialog,
  user,
  onDone,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  user: KafkaUserView | null;
  onDone: () => void;
}) {
  const [password, setPassword] = useState("");
  const [mechanism, setMechanism] = useState<Mechanism | "">("");
  const chosen = mechanism || user?.credentials[0]?.mechanism || "SCRAM-SHA-512";
  const rotate = useMutation({
    mutationFn: () => rotateKafkaUser(user!.name, { password, mechanism: chosen }),
    onSuccess: () => {
      dialog.current?.close();
      onDone();
    },
  });
  return (
    <dialog
      ref={dialog}
      aria-labelledby="kafka-user-rotate-title"
      onClose={() => {
        setPassword("");
        setMechanism("");
        rotate.reset();
      }}
    >
      <form
        className="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          rotate.mutate();
        }}
      >
        <h2 id="kafka-user-rotate-title">New password for {user?.name}</h2>
        <p>The old password stops working once the brokers have the new one.</p>
        <label className="stacked">
          <span>Mechanism</span>
          <select value={chosen} onChange={(e) => setMechanism(e.target.value as Mechanism)}>
            {(user?.credentials ?? []).map((c) => (
              <option key={c.mechanism}>{c.mechanism}</option>
            ))}
          </select>
        </label>
        <label className="stacked">
          <span>New password</span>
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
        </label>
        <DialogFooter
          error={rotate.error}
          label="Set password"
          busyLabel="Setting…"
          busy={rotate.isPending}
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}
