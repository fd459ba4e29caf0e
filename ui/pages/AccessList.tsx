/**
 * The admin pages' one list and one form (users, groups, service accounts; ACLs and quotas
 * next): a searchable table of named resources with their actions, and the dialog that creates
 * or changes one. Each page says what its columns, fields and words are.
 */
import { type UseQueryResult, useMutation, useQueryClient } from "@tanstack/react-query";
import { createContext, type FormEvent, type ReactNode, useContext, useEffect, useId, useRef, useState } from "react";
import type { z } from "zod";
import { ACCESS_KEY } from "../api/access.ts";
import { useGroups } from "../api/groups.ts";
import { DialogFooter, Link } from "../components.tsx";
import { replaceParams } from "../router.ts";
import "../styles/access.css";

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
export function NameNotes({ source, off }: { source?: "config" | "store"; off?: string | null }) {
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

export function Tags({ values, empty = "none" }: { values: readonly string[]; empty?: string }) {
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
      <FieldProblem path="groups" />
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

/** What the request schema says of a form's fields: each shown field's message by its path ("name", "topics.allow"). */
interface FieldProblems {
  byField: ReadonlyMap<string, string>;
  /** The paths the form's fields show, noted as they render. */
  fields: Set<string>;
}

const FieldProblemsContext = createContext<FieldProblems | null>(null);

/** What a control takes to say it is invalid and where its message is. */
export interface ControlProblem {
  "aria-invalid": boolean;
  "aria-describedby"?: string;
}

/** The request schema's message about the field at `path`, and the attributes that tie it to its control. */
function useFieldProblem(path: string): { id: string; message: string | undefined; control: ControlProblem } {
  const problems = useContext(FieldProblemsContext);
  const id = useId();
  problems?.fields.add(path);
  const message = problems?.byField.get(path);
  return { id, message, control: message === undefined ? { "aria-invalid": false } : { "aria-invalid": true, "aria-describedby": id } };
}

function ProblemText({ id, message }: { id: string; message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <p id={id} className="error" role="alert">
      {message}
    </p>
  );
}

/**
 * A labelled control of a resource form, with what the request schema says of its value (`path`)
 * beneath it; the control takes the attributes given (its id, whether it is invalid, its message).
 */
export function Field({
  label,
  path,
  children,
}: {
  label: string;
  path: string;
  children: (control: ControlProblem & { id: string }) => ReactNode;
}) {
  const { id, message, control } = useFieldProblem(path);
  const controlId = useId();
  return (
    <>
      <label className="stacked" htmlFor={controlId}>
        <span>{label}</span>
        {children({ id: controlId, ...control })}
      </label>
      <ProblemText id={id} message={message} />
    </>
  );
}

/** A Field holding a list written one item per line (topic or field patterns). */
export function LinesField(props: {
  label: string;
  path: string;
  value: string;
  onChange: (value: string) => void;
  rows: number;
  placeholder: string;
}) {
  return (
    <Field label={props.label} path={props.path}>
      {(problem) => (
        <textarea
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          rows={props.rows}
          spellCheck={false}
          placeholder={props.placeholder}
          {...problem}
        />
      )}
    </Field>
  );
}

/** What the request schema says of a group of controls (a fieldset's checkboxes), beneath them. */
export function FieldProblem({ path }: { path: string }) {
  const { id, message } = useFieldProblem(path);
  return <ProblemText id={id} message={message} />;
}

/**
 * What `schema` says of `body`: each problem under the shown field its path starts with (the
 * value named when it is one item of a list), the first of the rest as one line; null when valid.
 */
function problemsOf(
  schema: z.ZodType,
  body: unknown,
  fields: ReadonlySet<string>,
): { byField: Map<string, string>; rest: string | null } | null {
  const res = schema.safeParse(body);
  if (res.success) return null;
  const byField = new Map<string, string>();
  let rest: string | null = null;
  for (const issue of res.error.issues) {
    const path = issue.path.map(String);
    let depth = path.length;
    while (depth > 0 && !fields.has(path.slice(0, depth).join("."))) depth--;
    if (depth === 0) {
      rest ??= `${path.join(".") || "(body)"}: ${issue.message}`;
      continue;
    }
    const field = path.slice(0, depth).join(".");
    const value = issue.path.reduce<unknown>(
      (v, key) => (v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined),
      body,
    );
    const message = depth < path.length && typeof value === "string" ? `'${value}': ${issue.message}` : issue.message;
    if (!byField.has(field)) byField.set(field, message);
  }
  return { byField, rest };
}

/**
 * The dialog that creates or changes one resource: its fields, then the API's refusal (if any)
 * and the buttons. `body` answers what to send, or null when the form is not ready (two
 * passwords that differ). With `schema` (the route's request schema, from ui/api/), the body is
 * checked before it is sent: each field (`Field`, `FieldProblem`) says what is wrong with its
 * value, from the first try to send on, and nothing is sent until it is right. Once saved,
 * `onSaved` runs and the dialog closes (`closeFirst`: the other way round, when what follows
 * opens a dialog of its own).
 */
export function ResourceForm<B, A>({
  title,
  wide = true,
  label,
  busyLabel,
  danger = false,
  disabled = false,
  body,
  schema,
  save,
  onSaved,
  closeFirst = false,
  onClosed,
  children,
}: {
  title: string;
  wide?: boolean;
  label: string;
  busyLabel: string;
  danger?: boolean;
  disabled?: boolean;
  body: () => B | null;
  schema?: z.ZodType;
  save: (body: B) => Promise<A>;
  onSaved: (answer: A) => Promise<void> | void;
  closeFirst?: boolean;
  onClosed: () => void;
  children: ReactNode;
}) {
  const run = useMutation({ mutationFn: save });
  const fields = useRef(new Set<string>()).current;
  /** Set by the first try to send: the fields' messages follow what is typed from then on. */
  const [tried, setTried] = useState(false);
  const current = body();
  const problems = tried && schema && current !== null ? problemsOf(schema, current, fields) : null;
  return (
    <Modal title={title} onClosed={onClosed} wide={wide}>
      {(close) => (
        <form
          className="dialog-form"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            const sent = body();
            if (sent === null) return;
            setTried(true);
            if (schema && problemsOf(schema, sent, fields)) {
              run.reset();
              return;
            }
            run.mutate(sent, {
              onSuccess: async (answer) => {
                if (closeFirst) close();
                await onSaved(answer);
                if (!closeFirst) close();
              },
            });
          }}
        >
          <FieldProblemsContext.Provider value={{ byField: problems?.byField ?? new Map(), fields }}>
            {children}
          </FieldProblemsContext.Provider>
          <DialogFooter
            error={problems?.rest ? new Error(problems.rest) : run.error}
            label={label}
            busyLabel={busyLabel}
            busy={run.isPending}
            disabled={disabled}
            danger={danger}
            onCancel={close}
          />
        </form>
      )}
    </Modal>
  );
}

/** What an action or dialog of the list calls when it is done: the lists reload, the status line says `message`. */
export type Done = (message: string) => Promise<void>;

/** A column of the list: its heading and its cell. */
export interface Column<T> {
  header: string;
  cell(row: T): ReactNode;
}

/** What a row offers beyond editing and deleting (reset a password, disable), and the page's own dialogs. */
export interface RowAction<T> {
  label(row: T): string;
  /** The button's accessible name, naming the row. */
  name(row: T): string;
  /** `done` says what the action did in the page's status line. */
  run(row: T, done: Done): void;
  busy?: boolean;
}

/**
 * The list page of one kind of resource: title and intro, a search kept in the URL, the create
 * button and a count; the table (name, the page's columns, the row's actions); the create, edit
 * and delete dialogs; and a status line that says what the last action did.
 */
export function ResourceList<T extends { name: string }>({
  title,
  intro,
  path,
  location,
  query,
  noun,
  searchPlaceholder,
  matches,
  empty,
  columns,
  nameNotes,
  rowOff,
  editable = () => true,
  canCreate = true,
  nameHeader = "Name",
  actions = [],
  form,
  remove,
  extraError = null,
  children,
}: {
  title: string;
  intro: ReactNode;
  /** The page's path, where the search is kept. */
  path: string;
  location: string;
  query: UseQueryResult<T[]>;
  /** The resource in words: one and many ("service account", "service accounts"). */
  noun: { one: string; many: string };
  searchPlaceholder: string;
  matches(row: T, needle: string): boolean;
  /** Said when there is none yet. */
  empty: string;
  columns: Column<T>[];
  /** Beneath the row's name: its source, whether it is switched off, "(you)". */
  nameNotes?(row: T): ReactNode;
  /** A row shown as switched off (disabled, expired). */
  rowOff?(row: T): boolean;
  /** Whether the row may be changed here (the configuration file's may not). */
  editable?(row: T): boolean;
  /** Whether the create button is offered (a list others may read but not change: no). */
  canCreate?: boolean;
  /** The heading of the name column. */
  nameHeader?: string;
  actions?: RowAction<T>[];
  /** The create (`row` null) or edit dialog. */
  form(row: T | null, done: Done, onClosed: () => void): ReactNode;
  remove: {
    /** The button ("Delete…", "Revoke…") and the dialog's action ("Delete user", "Revoke"). */
    button: string;
    label: string;
    busyLabel: string;
    title(row: T): string;
    text: ReactNode;
    done(row: T): string;
    run(row: T): Promise<unknown>;
  };
  /** A row action's refusal, said above the table. */
  extraError?: Error | null;
  /** The page's own dialogs (a new secret shown once). */
  children?: (done: Done) => ReactNode;
}) {
  const view = searchOf(location);
  const client = useQueryClient();
  const [open, setOpen] = useState<{ kind: "new" } | { kind: "edit" | "delete"; row: T } | null>(null);
  const [status, setStatus] = useState("");
  const done: Done = async (message) => {
    await client.invalidateQueries({ queryKey: ACCESS_KEY });
    setStatus(message);
  };
  const needle = view.q.toLowerCase();
  const rows = (query.data ?? []).filter((r) => needle === "" || matches(r, needle));
  const close = () => setOpen(null);
  const create = `Create ${noun.one}…`;

  return (
    <section className="page access">
      <h1>{title}</h1>
      <p className="muted access-intro">{intro}</p>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={view.q}
            onChange={(e) => replaceParams(path, view.params, { q: e.target.value })}
            placeholder={searchPlaceholder}
          />
        </label>
        {canCreate && (
          <button type="button" onClick={() => setOpen({ kind: "new" })}>
            {create}
          </button>
        )}
        <span className="muted" aria-live="polite">
          {query.data ? `${rows.length} of ${query.data.length} ${noun.many}` : ""}
        </span>
      </div>
      <p role="status" className="access-status">
        {status}
      </p>
      {query.error && (
        <p className="error" role="alert">
          {query.error.message}
        </p>
      )}
      {extraError && (
        <p className="error" role="alert">
          {extraError.message}
        </p>
      )}
      {query.isPending && <p className="muted">Loading the {noun.many}…</p>}
      {query.data && rows.length === 0 && (
        <p className="muted">{query.data.length === 0 ? `No ${noun.many} yet. ${empty}` : `No ${noun.one} matches the search.`}</p>
      )}
      {rows.length > 0 && (
        <div className="access-table-scroll">
          <table className="access-table" aria-label={title}>
            <thead>
              <tr>
                <th scope="col">{nameHeader}</th>
                {columns.map((c) => (
                  <th key={c.header} scope="col">
                    {c.header}
                  </th>
                ))}
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.name} className={rowOff?.(r) ? "access-is-disabled" : undefined}>
                  <th scope="row">
                    {r.name}
                    {nameNotes?.(r)}
                  </th>
                  {columns.map((c) => (
                    <td key={c.header}>{c.cell(r)}</td>
                  ))}
                  <td className="access-actions">
                    {editable(r) && (
                      <div>
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`Edit ${r.name}`}
                          onClick={() => setOpen({ kind: "edit", row: r })}
                        >
                          Edit…
                        </button>
                        {actions.map((a) => (
                          <button
                            key={a.name(r)}
                            type="button"
                            className="ghost"
                            aria-label={a.name(r)}
                            disabled={a.busy}
                            onClick={() => a.run(r, done)}
                          >
                            {a.label(r)}
                          </button>
                        ))}
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`${remove.button.replace(/…$/, "")} ${r.name}`}
                          onClick={() => setOpen({ kind: "delete", row: r })}
                        >
                          {remove.button}
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
      {open?.kind === "new" && form(null, done, () => setOpen((o) => (o?.kind === "new" ? null : o)))}
      {open?.kind === "edit" && form(open.row, done, close)}
      {open?.kind === "delete" && (
        <ResourceForm
          title={remove.title(open.row)}
          wide={false}
          label={remove.label}
          busyLabel={remove.busyLabel}
          danger
          body={() => ({})}
          save={() => remove.run(open.row)}
          onSaved={() => done(remove.done(open.row))}
          onClosed={close}
        >
          {remove.text}
        </ResourceForm>
      )}
      {children?.(done)}
    </section>
  );
}
