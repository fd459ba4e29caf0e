import { type ReactNode, type RefObject, useState } from "react";
import { navigate } from "./router.ts";

/** A link within the app: a real href (open in a new tab works), navigated in place on a plain click. */
export function Link({ to, children, current }: { to: string; children: ReactNode; current?: boolean }) {
  return (
    <a
      href={to}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** A figure with its label, in a row of tiles; `text` for words rather than a number. */
export function Tile({ label, value, text }: { label: string; value: string; text?: boolean }) {
  return (
    <div className={text ? "tile tile-text" : "tile"}>
      <span className="muted">{label}</span>
      <strong>{value}</strong>
    </div>
  );
}

/** The end of a dialog's form: the API's refusal where the user acted, then submit and Cancel. */
export function DialogFooter({
  error,
  label,
  busyLabel,
  busy,
  disabled = false,
  danger = false,
  onCancel,
}: {
  error: Error | null;
  label: string;
  busyLabel: string;
  busy: boolean;
  disabled?: boolean;
  danger?: boolean;
  onCancel: () => void;
}) {
  return (
    <>
      <ErrorAlert error={error} />
      <div className="toolbar dialog-buttons">
        <button type="submit" className={danger ? "danger" : undefined} disabled={disabled || busy}>
          {busy ? busyLabel : label}
        </button>
        <button type="button" className="ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** A mutation as the delete dialog needs it (TanStack Query's useMutation result fits). */
export interface DeleteAction {
  mutate: () => void;
  reset: () => void;
  error: Error | null;
  isPending: boolean;
}

/**
 * Confirms a delete that cannot be undone. With `typeName`, the button works only once that
 * name is typed (topics, connectors, whole subjects); closing the dialog clears both the typed
 * text and the last error.
 */
export function ConfirmDeleteDialog({
  dialog,
  id,
  title,
  children,
  typeName,
  label,
  action,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  /** The id of the title, for aria-labelledby. */
  id: string;
  title: string;
  /** What deleting does, said before the button. */
  children: ReactNode;
  typeName?: { name: string; noun: string };
  label: string;
  action: DeleteAction;
}) {
  const [typed, setTyped] = useState("");
  const confirmed = typeName === undefined || typed === typeName.name;
  return (
    <dialog
      ref={dialog}
      aria-labelledby={id}
      onClose={() => {
        setTyped("");
        action.reset();
      }}
    >
      <form
        className="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (confirmed) action.mutate();
        }}
      >
        <h2 id={id}>{title}</h2>
        <p>{children}</p>
        {typeName && (
          <label className="stacked">
            <span>Type the {typeName.noun}'s name to confirm</span>
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
          </label>
        )}
        <DialogFooter
          error={action.error}
          label={label}
          busyLabel="Deleting…"
          busy={action.isPending}
          disabled={!confirmed}
          danger
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}

/** An error, said as an alert (read out at once by assistive technology); nothing without one. */
export function ErrorAlert({ error }: { error: Error | null | undefined }) {
  return error ? (
    <p className="error" role="alert">
      {error.message}
    </p>
  ) : null;
}

/** What the last action on a page did: its error (an alert), or what it achieved (a status line). */
export function ActionResult({ error, done }: { error: Error | null; done: string | null }) {
  if (error) return <ErrorAlert error={error} />;
  return done ? (
    <p className="muted" role="status">
      {done}
    </p>
  ) : null;
}

/** A column's header: its label, or `num(label)` for a right-aligned column of numbers. */
export type Column = string | { label: string; num: true };
export const num = (label: string): Column => ({ label, num: true });

/**
 * A table's header row, one `th scope="col"` a column; `actions` adds a last column for the
 * rows' buttons, named for assistive technology only.
 */
export function TableHead({ columns, actions = false }: { columns: readonly Column[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) =>
          typeof c === "string" ? (
            <th key={c} scope="col">
              {c}
            </th>
          ) : (
            <th key={c.label} scope="col" className="num">
              {c.label}
            </th>
          ),
        )}
        {actions && (
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
