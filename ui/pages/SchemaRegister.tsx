import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type Compatibility, checkCompatibility, fetchVersions, register, SCHEMA_TYPES, srKeys } from "../api/schemas.ts";

type Step =
  | { step: "edit" }
  | { step: "checking" }
  | { step: "incompatible"; result: Compatibility }
  | { step: "registering" }
  | { step: "failed"; message: string }
  | { step: "done"; id: number; version: number | null; existing: boolean };

/**
 * Registers a schema under a subject, checking it against the subject's latest version first:
 * a compatible schema (or a subject's first) is registered at once; an incompatible one shows
 * the registry's messages and is registered only if the user insists (the registry may still
 * refuse it under the subject's level, and then says why).
 */
export function RegisterForm({
  subject,
  initialSchema = "",
  initialType = "AVRO",
  onRegistered,
}: {
  subject: string;
  initialSchema?: string;
  initialType?: string;
  onRegistered?: (version: number | null) => void;
}) {
  const client = useQueryClient();
  const [schema, setSchema] = useState(initialSchema);
  const [schemaType, setSchemaType] = useState(initialType);
  const [state, setState] = useState<Step>({ step: "edit" });
  const busy = state.step === "checking" || state.step === "registering";
  const name = subject.trim();

  async function doRegister() {
    setState({ step: "registering" });
    try {
      const before = await fetchVersions(name).catch(() => [] as number[]);
      const { id } = await register(name, schema, schemaType);
      const after = await fetchVersions(name).catch(() => [] as number[]);
      await client.invalidateQueries({ queryKey: srKeys.subjects });
      await client.invalidateQueries({ queryKey: srKeys.subject(name) });
      const version = after.length > 0 ? Math.max(...after) : null;
      // The registry answers a schema it already holds with its id, adding no version.
      setState({ step: "done", id, version, existing: after.length === before.length });
      onRegistered?.(version);
    } catch (e) {
      setState({ step: "failed", message: (e as Error).message });
    }
  }

  async function checkThenRegister() {
    setState({ step: "checking" });
    try {
      const result = await checkCompatibility(name, schema, schemaType);
      if (result === null || result.is_compatible) await doRegister();
      else setState({ step: "incompatible", result });
    } catch (e) {
      setState({ step: "failed", message: (e as Error).message });
    }
  }

  return (
    <form
      className="register-form"
      aria-label={`Register a schema under ${name || "the subject"}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy && name !== "" && schema.trim() !== "") void checkThenRegister();
      }}
    >
      <label className="stacked">
        <span>Schema type</span>
        <select value={schemaType} onChange={(e) => setSchemaType(e.target.value)} disabled={busy}>
          {SCHEMA_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label className="stacked">
        <span>Schema</span>
        <textarea
          className="schema-text"
          value={schema}
          onChange={(e) => {
            setSchema(e.target.value);
            if (state.step !== "edit") setState({ step: "edit" });
          }}
          rows={14}
          spellCheck={false}
          required
          disabled={busy}
        />
      </label>
      {state.step === "incompatible" && (
        <div className="incompatible" role="alert">
          <p className="error">Not compatible with the latest version of {name} under its compatibility level.</p>
          {state.result.messages && state.result.messages.length > 0 ? (
            <ul className="error" aria-label="Why it is not compatible">
              {state.result.messages.map((m) => (
                <li key={m}>{m}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">The registry gives no detail; registering says why it refuses.</p>
          )}
        </div>
      )}
      {state.step === "failed" && (
        <p className="error" role="alert">
          {state.message}
        </p>
      )}
      {state.step === "done" && (
        <p className="ok" role="status">
          {state.existing
            ? `This schema is already registered (id ${state.id}): no new version.`
            : `Registered as version ${state.version ?? "?"} (schema id ${state.id}).`}
        </p>
      )}
      <div className="toolbar dialog-buttons">
        <button type="submit" disabled={busy || name === "" || schema.trim() === ""}>
          {state.step === "checking" ? "Checking…" : state.step === "registering" ? "Registering…" : "Check and register"}
        </button>
        {state.step === "incompatible" && (
          <button type="button" className="danger" onClick={() => void doRegister()}>
            Register anyway
          </button>
        )}
      </div>
    </form>
  );
}
