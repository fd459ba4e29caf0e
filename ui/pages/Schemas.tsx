import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { ErrorAlert, Link, TableHead } from "../components.tsx";
import { navigate, replaceParams } from "../router.ts";
import "../styles/schemas.css";
import { fetchGlobalLevel, fetchSubjects, LEVELS, setLevel, srKeys, subjectHref } from "../api/schemas.ts";
import { RegisterForm } from "./SchemaRegister.tsx";
import { SubjectPage } from "./SchemaSubject.tsx";

/** The schema registry's subjects (`/schemas`) and one subject (`/schemas/{subject}`). */
export function SchemasPage({ path, location, canWrite }: { path: string; location: string; canWrite: boolean }) {
  const rest = path.slice("/schemas/".length);
  if (path.startsWith("/schemas/") && rest !== "") {
    let subject = rest;
    try {
      subject = decodeURIComponent(rest);
    } catch {
      /* shown as written */
    }
    return <SubjectPage subject={subject} location={location} canWrite={canWrite} />;
  }
  return <SubjectList location={location} canWrite={canWrite} />;
}

function SubjectList({ location, canWrite }: { location: string; canWrite: boolean }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const q = params.get("q") ?? "";
  const subjects = useQuery({ queryKey: srKeys.subjects, queryFn: fetchSubjects });
  const [registering, setRegistering] = useState(false);
  const [newSubject, setNewSubject] = useState("");
  const shown = useMemo(() => {
    const needle = q.toLowerCase();
    return (subjects.data ?? []).filter((s) => s.toLowerCase().includes(needle)).sort((a, b) => a.localeCompare(b));
  }, [subjects.data, q]);

  return (
    <section className="page schemas">
      <h1>Schemas</h1>
      <GlobalLevel canWrite={canWrite} />
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input
            type="search"
            value={q}
            onChange={(e) => replaceParams("/schemas", params, { q: e.target.value })}
            placeholder="Subject name"
          />
        </label>
        {canWrite && !registering && (
          <button type="button" onClick={() => setRegistering(true)}>
            Register a schema…
          </button>
        )}
        <span className="muted" aria-live="polite">
          {subjects.data ? `${shown.length} of ${subjects.data.length} subjects` : ""}
        </span>
      </div>
      {registering && (
        <section className="card register-card" aria-labelledby="register-new-title">
          <h2 id="register-new-title">Register a schema under a new subject</h2>
          <label className="stacked">
            <span>Subject</span>
            <input value={newSubject} onChange={(e) => setNewSubject(e.target.value)} autoComplete="off" placeholder="orders-value" />
          </label>
          <RegisterForm subject={newSubject} onRegistered={() => navigate(subjectHref(newSubject.trim()))} />
          <button type="button" className="ghost" onClick={() => setRegistering(false)}>
            Close
          </button>
        </section>
      )}
      <ErrorAlert error={subjects.error} />
      {subjects.isPending && <p className="muted">Loading the subjects…</p>}
      {subjects.data && shown.length === 0 && (
        <p className="muted">
          {subjects.data.length > 0
            ? "No subject matches the search."
            : canWrite
              ? "No subject yet: register a schema, or let a producer's serializer register one."
              : "No subject yet: producers' serializers register their schemas here."}
        </p>
      )}
      {shown.length > 0 && (
        <table aria-label="Subjects">
          <TableHead columns={["Subject"]} />
          <tbody>
            {shown.map((s) => (
              <tr key={s}>
                <td>
                  <Link to={subjectHref(s)}>{s}</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The registry's global compatibility level, which every subject without its own follows. */
function GlobalLevel({ canWrite }: { canWrite: boolean }) {
  const client = useQueryClient();
  const level = useQuery({ queryKey: srKeys.globalLevel, queryFn: fetchGlobalLevel });
  const [chosen, setChosen] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (l: string) => setLevel(null, l),
    onSuccess: async () => {
      setChosen(null);
      await client.invalidateQueries({ queryKey: ["sr"] });
    },
  });
  const value = chosen ?? level.data ?? "";
  return (
    <div className="toolbar level">
      {canWrite && level.data ? (
        <form
          className="level-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (chosen && chosen !== level.data) save.mutate(chosen);
          }}
        >
          <label className="search">
            <span>Global compatibility level</span>
            <select value={value} onChange={(e) => setChosen(e.target.value)}>
              {LEVELS.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={save.isPending || chosen === null || chosen === level.data}>
            {save.isPending ? "Saving…" : "Save"}
          </button>
        </form>
      ) : (
        <span>
          Global compatibility level: <strong data-testid="global-level">{level.data ?? "…"}</strong>
        </span>
      )}
      {(level.error ?? save.error) && (
        <span className="error" role="alert">
          {(level.error ?? save.error)?.message}
        </span>
      )}
    </div>
  );
}
