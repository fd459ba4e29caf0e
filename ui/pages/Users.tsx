import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { DialogFooter } from "../components.tsx";
import { replaceParams } from "../router.ts";
import { api } from "../session.ts";
import { ConfirmDialog, GroupPicker, Modal, NameNotes, searchOf, Tags } from "./Groups.tsx";
import "../styles/access.css";

export interface User {
  name: string;
  email: string | null;
  groups: string[];
  /** Global roles of the configuration file's users, from before groups. */
  roles: string[];
  source: "config" | "store";
  disabled: boolean;
  createdAt: number | null;
  updatedAt: number | null;
}

const USERS_KEY = ["access", "users"];

type Open = { kind: "new" } | { kind: "edit" | "password" | "delete"; user: User } | null;

/** Local users: create with a password and groups, change groups, reset a password, disable, delete. */
export function UsersPage({ location, self }: { location: string; self: string | null }) {
  const view = searchOf(location);
  const client = useQueryClient();
  const users = useQuery({ queryKey: USERS_KEY, queryFn: () => api<User[]>("/api/users") });
  const [open, setOpen] = useState<Open>(null);
  const [status, setStatus] = useState("");
  const toggle = useMutation({
    mutationFn: (u: User) =>
      api<User>(`/api/users/${encodeURIComponent(u.name)}`, { method: "PUT", body: JSON.stringify({ disabled: !u.disabled }) }),
    onSuccess: async (_, u) => {
      await client.invalidateQueries({ queryKey: ["access"] });
      setStatus(`${u.name} is ${u.disabled ? "enabled" : "disabled"}.`);
    },
  });
  const needle = view.q.toLowerCase();
  const rows = (users.data ?? []).filter(
    (u) =>
      needle === "" ||
      u.name.toLowerCase().includes(needle) ||
      (u.email ?? "").toLowerCase().includes(needle) ||
      u.groups.some((g) => g.toLowerCase().includes(needle)),
  );
  const legacy = (users.data ?? []).some((u) => u.roles.length > 0);
  const done = (message: string) => async () => {
    await client.invalidateQueries({ queryKey: ["access"] });
    setStatus(message);
  };

  return (
    <section className="page access">
      <h1>Users</h1>
      <p className="muted access-intro">People who sign in with a password kept by Loupe. Their rights come from their groups.</p>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={view.q}
            onChange={(e) => replaceParams("/users", view.params, { q: e.target.value })}
            placeholder="Name, email or group"
          />
        </label>
        <button type="button" onClick={() => setOpen({ kind: "new" })}>
          Create user…
        </button>
        <span className="muted" aria-live="polite">
          {users.data ? `${rows.length} of ${users.data.length} users` : ""}
        </span>
      </div>
      <p role="status" className="access-status">
        {status}
      </p>
      {users.error && (
        <p className="error" role="alert">
          {users.error.message}
        </p>
      )}
      {toggle.error && (
        <p className="error" role="alert">
          {toggle.error.message}
        </p>
      )}
      {users.isPending && <p className="muted">Loading the users…</p>}
      {users.data && rows.length === 0 && (
        <p className="muted">
          {users.data.length === 0 ? "No users yet. Create one (“Create user…”) and put them in a group." : "No user matches the search."}
        </p>
      )}
      {rows.length > 0 && (
        <div className="access-table-scroll">
          <table className="access-table" aria-label="Users">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Groups</th>
                {legacy && <th scope="col">Roles (configuration file)</th>}
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((u) => (
                <tr key={u.name} className={u.disabled ? "access-is-disabled" : undefined}>
                  <th scope="row">
                    {u.name}
                    {u.name === self && <span className="muted"> (you)</span>}
                    <NameNotes source={u.source} off={u.disabled ? "Disabled" : null} />
                  </th>
                  <td>{u.email ?? <span className="muted">—</span>}</td>
                  <td>
                    <Tags values={u.groups} />
                  </td>
                  {legacy && (
                    <td>
                      <Tags values={u.roles} empty="—" />
                    </td>
                  )}
                  <td className="access-actions">
                    {u.source === "store" && (
                      <div>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Edit ${u.name}`}
                          onClick={() => setOpen({ kind: "edit", user: u })}
                        >
                          Edit…
                        </button>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Reset the password of ${u.name}`}
                          onClick={() => setOpen({ kind: "password", user: u })}
                        >
                          Password…
                        </button>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`${u.disabled ? "Enable" : "Disable"} ${u.name}`}
                          disabled={toggle.isPending}
                          onClick={() => toggle.mutate(u)}
                        >
                          {u.disabled ? "Enable" : "Disable"}
                        </button>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Delete ${u.name}`}
                          onClick={() => setOpen({ kind: "delete", user: u })}
                        >
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
      {open?.kind === "new" && <UserDialog user={null} onSaved={done} onClosed={() => setOpen(null)} />}
      {open?.kind === "edit" && <UserDialog user={open.user} onSaved={done} onClosed={() => setOpen(null)} />}
      {open?.kind === "password" && (
        <PasswordDialog
          title={`Reset the password of ${open.user.name}`}
          path={`/api/users/${encodeURIComponent(open.user.name)}`}
          onSaved={done(`The password of ${open.user.name} is changed.`)}
          onClosed={() => setOpen(null)}
        />
      )}
      {open?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete the user ${open.user.name}`}
          label="Delete user"
          busyLabel="Deleting…"
          action={() => api(`/api/users/${encodeURIComponent(open.user.name)}`, { method: "DELETE" })}
          onDone={done(`${open.user.name} is deleted.`)}
          onClosed={() => setOpen(null)}
        >
          <p>They are signed out at their next request and cannot sign in again. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** Create a user (`user` null: name, email, password, groups) or change one's email and groups. */
function UserDialog({
  user,
  onSaved,
  onClosed,
}: {
  user: User | null;
  onSaved: (message: string) => () => Promise<void>;
  onClosed: () => void;
}) {
  const [name, setName] = useState(user?.name ?? "");
  const [email, setEmail] = useState(user?.email ?? "");
  const [groups, setGroups] = useState<string[]>(user?.groups ?? []);
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const mismatch = !user && repeat !== "" && password !== repeat;
  const save = useMutation({
    mutationFn: (body: object) =>
      user
        ? api<User>(`/api/users/${encodeURIComponent(user.name)}`, { method: "PUT", body: JSON.stringify(body) })
        : api<User>("/api/users", { method: "POST", body: JSON.stringify(body) }),
  });
  return (
    <Modal title={user ? `Edit the user ${user.name}` : "Create a user"} onClosed={onClosed} wide>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (mismatch) return;
            const mail = email.trim();
            // The email is sent only when changed: a user edited for their groups keeps it as it is.
            const body = user
              ? { groups, ...(mail === (user.email ?? "") ? {} : { email: mail === "" ? null : mail }) }
              : { name: name.trim(), password, groups, ...(mail === "" ? {} : { email: mail }) };
            save.mutate(body, {
              onSuccess: async () => {
                await onSaved(user ? `${user.name} is saved.` : `${name.trim()} is created.`)();
                close();
              },
            });
          }}
        >
          {!user && (
            <label className="stacked">
              <span>User name</span>
              <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />
            </label>
          )}
          <label className="stacked">
            <span>Email (optional)</span>
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
          </label>
          {!user && (
            <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} mismatch={mismatch} />
          )}
          <GroupPicker chosen={groups} onChange={setGroups} />
          <DialogFooter
            error={save.error}
            label={user ? "Save" : "Create user"}
            busyLabel={user ? "Saving…" : "Creating…"}
            busy={save.isPending}
            disabled={mismatch}
            onCancel={close}
          />
        </form>
      )}
    </Modal>
  );
}

/** A new password typed twice: a typo is caught before the server takes it. */
function NewPasswordFields({
  password,
  repeat,
  onPassword,
  onRepeat,
  mismatch,
  label = "Password",
}: {
  password: string;
  repeat: string;
  onPassword: (v: string) => void;
  onRepeat: (v: string) => void;
  mismatch: boolean;
  label?: string;
}) {
  const note = useId();
  return (
    <>
      <label className="stacked">
        <span>{label}</span>
        <input type="password" value={password} onChange={(e) => onPassword(e.target.value)} required autoComplete="new-password" />
      </label>
      <label className="stacked">
        <span>Repeat the {label.toLowerCase()}</span>
        <input
          type="password"
          value={repeat}
          onChange={(e) => onRepeat(e.target.value)}
          required
          autoComplete="new-password"
          aria-invalid={mismatch}
          aria-describedby={mismatch ? note : undefined}
        />
      </label>
      {mismatch && (
        <p id={note} className="error">
          The two passwords differ.
        </p>
      )}
    </>
  );
}

/**
 * Set a password: an admin's reset of a user's (`PUT /api/users/{name}`), or the signed-in
 * user's own (`PUT /api/user/password`, which asks for the current one).
 */
function PasswordDialog({
  title,
  path,
  own = false,
  onSaved,
  onClosed,
}: {
  title: string;
  path: string;
  own?: boolean;
  onSaved: () => Promise<void> | void;
  onClosed: () => void;
}) {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const mismatch = repeat !== "" && password !== repeat;
  const save = useMutation({
    mutationFn: () => api(path, { method: "PUT", body: JSON.stringify(own ? { currentPassword: current, password } : { password }) }),
  });
  return (
    <Modal title={title} onClosed={onClosed}>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (mismatch) return;
            save.mutate(undefined, {
              onSuccess: async () => {
                await onSaved();
                close();
              },
            });
          }}
        >
          {own && (
            <label className="stacked">
              <span>Current password</span>
              <input
                type="password"
                value={current}
                onChange={(e) => setCurrent(e.target.value)}
                required
                autoComplete="current-password"
              />
            </label>
          )}
          <NewPasswordFields
            password={password}
            repeat={repeat}
            onPassword={setPassword}
            onRepeat={setRepeat}
            mismatch={mismatch}
            label="New password"
          />
          <DialogFooter
            error={save.error}
            label="Change password"
            busyLabel="Changing…"
            busy={save.isPending}
            disabled={mismatch}
            onCancel={close}
          />
        </form>
      )}
    </Modal>
  );
}

/** The signed-in local user's own password, from the shell's user area. */
export function OwnPasswordButton() {
  const [open, setOpen] = useState(false);
  const [status, setStatus] = useState("");
  return (
    <>
      <button type="button" className="ghost" onClick={() => setOpen(true)}>
        Change password…
      </button>
      <span role="status" className="muted">
        {status}
      </span>
      {open && (
        <PasswordDialog
          title="Change your password"
          path="/api/user/password"
          own
          onSaved={() => setStatus("Your password is changed.")}
          onClosed={() => setOpen(false)}
        />
      )}
    </>
  );
}
