/**
 * The alert settings of the cluster shown, by category: what each raises, its severity, whether
 * it is on (administrators turn it on and off), whether Loupe can evaluate it (and why not), and
 * the conditions of those that take them (writers add and remove them; a condition is checked in
 * the browser with the server's own rule, so a wrong one is refused before anything is sent).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useMemo, useRef, useState } from "react";
import { type AlertSetting, alertsApi, conditionText, settingsKey, useAlertSettings } from "../api/alerts.ts";
import { ActionResult, ConfirmDeleteDialog, ErrorAlert, TableHead } from "../components.tsx";
import { type AlertsViewer, SeverityTag } from "./AlertParts.tsx";

/** Consumer lag, the setting whose conditions the hints below describe. */
const LAG = 2000;

export function AlertSettingsView({ cluster, viewer }: { cluster: string | null; viewer: AlertsViewer }) {
  const settings = useAlertSettings(cluster);
  const client = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  // The state asked for, shown from the click on (set in the same render as the click's), until the list is read again.
  const [asked, setAsked] = useState<{ id: number; enabled: boolean } | null>(null);
  const toggle = useMutation({
    mutationFn: (s: { setting: AlertSetting; enabled: boolean }) => alertsApi.setEnabled(s.setting.id, s.enabled),
    onSuccess: async (_answer, s) => {
      await client.invalidateQueries({ queryKey: settingsKey });
      setDone(`${s.setting.id} · ${s.setting.description} is ${s.enabled ? "on" : "off"}.`);
    },
    onSettled: () => setAsked(null),
  });
  return (
    <>
      <p className="muted alerts-intro">
        The settings of {cluster ? `cluster ${cluster}` : "the default cluster"}: each raises its notifications while it is on.
        {viewer.canAdmin ? "" : " Turning settings on and off is for Loupe's administrators."}
      </p>
      <ActionResult error={toggle.error} done={done} />
      <ErrorAlert error={settings.error} />
      {settings.isPending && <p className="muted">Loading the alert settings…</p>}
      {Object.entries(settings.data?.categories ?? {})
        .filter(([, list]) => list.length > 0)
        .map(([category, list]) => (
          <section key={category} className="alert-category" aria-labelledby={`alert-category-${category}`}>
            <h2 id={`alert-category-${category}`}>{category}</h2>
            <div className="alerts-table-scroll">
              <table className="alerts-table alert-settings" aria-label={`${category} alert settings`}>
                <TableHead columns={["Id", "Alert", "Severity", "State", "Availability"]} />
                <tbody>
                  {list.map((s) => (
                    <tr key={s.id} className={s.isAvailable ? undefined : "alert-unavailable"}>
                      <td>{s.id}</td>
                      <th scope="row">{s.description}</th>
                      <td>
                        <SeverityTag severity={s.severity} />
                      </td>
                      <td>
                        <StateCell
                          setting={s}
                          enabled={asked?.id === s.id ? asked.enabled : s.enabled}
                          canAdmin={viewer.canAdmin}
                          busy={asked !== null}
                          onChange={(enabled) => {
                            setDone(null);
                            setAsked({ id: s.id, enabled });
                            toggle.mutate({ setting: s, enabled });
                          }}
                        />
                      </td>
                      <td id={`alert-availability-${s.id}`}>
                        {s.isAvailable ? "Available" : <span className="muted">Unavailable: {s.unavailableReason}</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {list
              .filter((s) => s.conditionTemplate)
              .map((s) => (
                <Conditions key={s.id} setting={s} canWrite={viewer.canWrite} />
              ))}
          </section>
        ))}
    </>
  );
}

/**
 * On or off: a switch for administrators, words for everyone else. A setting Loupe cannot
 * evaluate is not switched on (it would raise nothing); one that is on may still be switched off.
 */
function StateCell({
  setting: s,
  enabled,
  canAdmin,
  busy,
  onChange,
}: {
  setting: AlertSetting;
  /** Its state, or the one asked for while the change is on its way. */
  enabled: boolean;
  canAdmin: boolean;
  busy: boolean;
  onChange: (enabled: boolean) => void;
}) {
  const words = enabled ? "On" : "Off";
  if (!canAdmin) return <span className={enabled ? "alert-on" : "muted"}>{words}</span>;
  const blocked = !s.isAvailable && !s.enabled;
  return (
    <label className="check alert-switch">
      <input
        type="checkbox"
        role="switch"
        checked={enabled}
        aria-checked={enabled}
        disabled={busy || blocked}
        aria-label={`${s.id} · ${s.description}`}
        aria-describedby={blocked ? `alert-availability-${s.id}` : undefined}
        onChange={(e) => onChange(e.target.checked)}
      />
      <span aria-hidden="true">{words}</span>
    </label>
  );
}

/** The setting's conditions, and for writers the form that adds one and the buttons that remove them. */
function Conditions({ setting, canWrite }: { setting: AlertSetting; canWrite: boolean }) {
  const heading = useId();
  const entries = Object.entries(setting.conditions);
  const client = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const [removing, setRemoving] = useState<{ id: string; expression: string } | null>(null);
  const remove = useMutation({
    mutationFn: (c: { id: string; expression: string }) => alertsApi.deleteCondition(setting.id, c.id),
    onSuccess: async (_answer, c) => {
      dialog.current?.close();
      await client.invalidateQueries({ queryKey: settingsKey });
      setDone(`Condition removed: ${c.expression}`);
    },
  });
  return (
    <section className="alert-conditions" aria-labelledby={heading}>
      <h3 id={heading}>
        Conditions of {setting.id} · {setting.description}
      </h3>
      <p className="muted">
        Template: <code>{setting.conditionTemplate}</code>.
        {setting.id === LAG && (
          <>
            {" "}
            Also <code>lag-seconds &gt;= N</code> (seconds behind), <code>*</code> and <code>?</code> in names (any characters, one
            character), and <code>for 5m</code> at the end (must hold that long: s, m or h).
          </>
        )}
      </p>
      {entries.length === 0 ? (
        <p className="muted">No condition yet: this setting raises nothing until one is added.</p>
      ) : (
        <div className="alerts-table-scroll">
          <table className="alerts-table" aria-label={`Conditions of ${setting.id}`}>
            <TableHead columns={["Condition", "Id"]} actions={canWrite} />
            <tbody>
              {entries.map(([id, expression]) => (
                <tr key={id}>
                  <td className="alert-value">
                    <code>{expression}</code>
                  </td>
                  <td className="muted alert-value">{id}</td>
                  {canWrite && (
                    <td className="alert-actions">
                      <button
                        type="button"
                        className="ghost"
                        aria-label={`Remove ${expression}`}
                        onClick={() => {
                          setDone(null);
                          setRemoving({ id, expression });
                          dialog.current?.showModal();
                        }}
                      >
                        Remove…
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!canWrite && <p className="muted">Adding and removing conditions needs the write role.</p>}
      {canWrite && (
        <>
          <AddCondition
            setting={setting}
            onAdded={(expression) => setDone(`Condition added: ${expression}`)}
            onStart={() => setDone(null)}
          />
          <ConfirmDeleteDialog
            dialog={dialog}
            id={`${heading}-remove`}
            title="Remove the condition"
            label="Remove"
            action={{
              mutate: () => removing && remove.mutate(removing),
              reset: remove.reset,
              error: remove.error,
              isPending: remove.isPending,
            }}
          >
            {removing ? `${removing.expression}: what it raised and is still active is resolved by the next evaluations.` : ""}
          </ConfirmDeleteDialog>
        </>
      )}
      <ActionResult error={null} done={done} />
    </section>
  );
}

/**
 * A new condition, checked as it is typed with the rule the server checks with (the setting's
 * template): the message shows once the user has tried to add it or left the field, and nothing
 * is sent until it is right.
 */
function AddCondition({
  setting,
  onAdded,
  onStart,
}: {
  setting: AlertSetting;
  onAdded: (expression: string) => void;
  onStart: () => void;
}) {
  const [text, setText] = useState("");
  const [touched, setTouched] = useState(false);
  const inputId = useId();
  const messageId = useId();
  const client = useQueryClient();
  const rule = useMemo(() => conditionText(setting), [setting]);
  const checked = rule.safeParse(text);
  const problem = checked.success ? null : (checked.error.issues[0]?.message ?? "Not a condition");
  const add = useMutation({
    mutationFn: (t: string) => alertsApi.addCondition(setting, t),
    onSuccess: async () => {
      const expression = checked.success ? checked.data : text;
      setText("");
      setTouched(false);
      await client.invalidateQueries({ queryKey: settingsKey });
      onAdded(expression);
    },
  });
  const shown = touched && problem !== null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    onStart();
    add.reset();
    if (problem === null) add.mutate(text);
  };
  return (
    <form className="alert-add-condition" onSubmit={submit} noValidate>
      <label className="stacked" htmlFor={inputId}>
        <span>New condition</span>
        <input
          id={inputId}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onBlur={() => setTouched(text.trim() !== "")}
          placeholder={setting.conditionTemplate ?? ""}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={shown}
          aria-describedby={messageId}
        />
      </label>
      <p id={messageId} className={shown ? "error" : "muted"} role={shown ? "alert" : undefined}>
        {shown
          ? problem
          : text.trim() !== "" && problem === null
            ? "Matches the template."
            : setting.id === LAG
              ? "For example: lag >= 1000 on group payments and topic orders for 5m"
              : ""}
      </p>
      <button type="submit" disabled={add.isPending}>
        {add.isPending ? "Adding…" : "Add condition"}
      </button>
      <ErrorAlert error={add.error} />
    </form>
  );
}
