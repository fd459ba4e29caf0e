import { useMutation } from "@tanstack/react-query";
import { useId, useState } from "react";
import { changeOwnPassword, type NewUserBody, ownPasswordSchema, type User, usersApi, useUsers } from "../api/users.ts";
import { type Done, Field, GroupPicker, NameNotes, ResourceForm, ResourceList, Tags } from "./AccessList.tsx";

type Open = { kind: "password"; user: User } | null;

/** Local users: create with a password and groups, change groups, reset a password, disable, delete. */
export function UsersPage({ location, self }: { location: string; self: string | null }) {
  const users = useUsers();
  const [open, setOpen] = useState<Open>(null);
  const toggle = useMutation({ mutationFn: (u: User) => usersApi.update(u.name, { disabled: !u.disabled }) });
  const legacy = (users.data ?? []).some((u) => u.roles.length > 0);
  return (
    <ResourceList<User>
      title="Users"
      intro="People who sign in with a password kept by Loupe. Their rights come from their groups."
      path="/users"
      location={location}
      query={users}
      noun={{ one: "user", many: "users" }}
      searchPlaceholder="Name, email or group"
      matches={(u, needle) =>
        u.name.toLowerCase().includes(needle) ||
        (u.email ?? "").toLowerCase().includes(needle) ||
        u.groups.some((g) => g.toLowerCase().includes(needle))
      }
      empty="Create one (“Create user…”) and put them in a group."
      columns={[
        { header: "Email", cell: (u) => u.email ?? <span className="muted">—</span> },
        { header: "Groups", cell: (u) => <Tags values={u.groups} /> },
        ...(legacy ? [{ header: "Roles (configuration file)", cell: (u: User) => <Tags values={u.roles} empty="—" /> }] : []),
      ]}
      nameNotes={(u) => (
        <>
          {u.name === self && <span className="muted"> (you)</span>}
          <NameNotes source={u.source} off={u.disabled ? "Disabled" : null} />
        </>
      )}
      rowOff={(u) => u.disabled}
      editable={(u) => u.source === "store"}
      actions={[
        { label: () => "Password…", name: (u) => `Reset the password of ${u.name}`, run: (u) => setOpen({ kind: "password", user: u }) },
        {
          label: (u) => (u.disabled ? "Enable" : "Disable"),
          name: (u) => `${u.disabled ? "Enable" : "Disable"} ${u.name}`,
          run: (u, done) => toggle.mutate(u, { onSuccess: () => done(`${u.name} is ${u.disabled ? "enabled" : "disabled"}.`) }),
          busy: toggle.isPending,
        },
      ]}
      extraError={toggle.error}
      form={(user, done, onClosed) => <UserDialog user={user} done={done} onClosed={onClosed} />}
      remove={{
        button: "Delete…",
        label: "Delete user",
        busyLabel: "Deleting…",
        title: (u) => `Delete the user ${u.name}`,
        text: <p>They are signed out at their next request and cannot sign in again. This cannot be undone.</p>,
        done: (u) => `${u.name} is deleted.`,
        run: (u) => usersApi.remove(u.name),
      }}
    >
      {(done) =>
        open?.kind === "password" && (
          <PasswordDialog
            title={`Reset the password of ${open.user.name}`}
            save={(password) => usersApi.update(open.user.name, { password })}
            onSaved={() => done(`The password of ${open.user.name} is changed.`)}
            onClosed={() => setOpen(null)}
          />
        )
      }
    </ResourceList>
  );
}
/** Create a user (`user` null: name, email, password, groups) or change one's email and groups. */
function UserDialog({ user, done, onClosed }: { user: User | null; done: Done; onClosed: () => void }) {
  const [name, setName] = useState(user?.name ?? "");
  const [email, setEmail] = useState(user?.email ?? "");
  const [groups, setGroups] = useState<string[]>(user?.groups ?? []);
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const mismatch = !user && repeat !== "" && password !== repeat;
  const mail = email.trim();
  return (
    <ResourceForm
      title={user ? `Edit the user ${user.name}` : "Create a user"}
      label={user ? "Save" : "Create user"}
      busyLabel={user ? "Saving…" : "Creating…"}
      disabled={mismatch}
      body={() =>
        mismatch
          ? null
          : user
            ? // The email is sent only when changed: a user edited for their groups keeps it as it is.
              { groups, ...(mail === (user.email ?? "") ? {} : { email: mail === "" ? null : mail }) }
            : { name: name.trim(), password, groups, ...(mail === "" ? {} : { email: mail }) }
      }
      schema={user ? usersApi.schemas.change : usersApi.schemas.create}
      save={(body) => (user ? usersApi.update(user.name, body) : usersApi.create(body as NewUserBody))}
      onSaved={() => done(user ? `${user.name} is saved.` : `${name.trim()} is created.`)}
      onClosed={onClosed}
    >
      {!user && (
        <Field label="User name" path="name">
          {(problem) => <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" {...problem} />}
        </Field>
      )}
      <Field label="Email (optional)" path="email">
        {(problem) => <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" {...problem} />}
      </Field>
      {!user && <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} mismatch={mismatch} />}
      <GroupPicker chosen={groups} onChange={setGroups} />
    </ResourceForm>
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
      <Field label={label} path="password">
        {(problem) => (
          <input
            type="password"
            value={password}
            onChange={(e) => onPassword(e.target.value)}
            required
            autoComplete="new-password"
            {...problem}
          />
        )}
      </Field>
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
 * user's own (`PUT /api/user/password`, which asks for the current one: `own`).
 */
function PasswordDialog({
  title,
  own = false,
  save,
  onSaved,
  onClosed,
}: {
  title: string;
  own?: boolean;
  save: (password: string, current: string) => Promise<unknown>;
  onSaved: () => Promise<void> | void;
  onClosed: () => void;
}) {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const mismatch = repeat !== "" && password !== repeat;
  return (
    <ResourceForm
      title={title}
      wide={false}
      label="Change password"
      busyLabel="Changing…"
      disabled={mismatch}
      body={() => (mismatch ? null : own ? { currentPassword: current, password } : { password })}
      schema={own ? ownPasswordSchema : usersApi.schemas.change}
      save={(b) => save(b.password, b.currentPassword ?? "")}
      onSaved={onSaved}
      onClosed={onClosed}
    >
      {own && (
        <Field label="Current password" path="currentPassword">
          {(problem) => (
            <input
              type="password"
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
              required
              autoComplete="current-password"
              {...problem}
            />
          )}
        </Field>
      )}
      <NewPasswordFields
        password={password}
        repeat={repeat}
        onPassword={setPassword}
        onRepeat={setRepeat}
        mismatch={mismatch}
        label="New password"
      />
    </ResourceForm>
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
          own
          save={(password, currentPassword) => changeOwnPassword({ currentPassword, password })}
          onSaved={() => setStatus("Your password is changed.")}
          onClosed={() => setOpen(false)}
        />
      )}
    </>
  );
}
