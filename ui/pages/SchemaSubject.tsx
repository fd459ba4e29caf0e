import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useEffect, useRef, useState } from "react";
import {
  deleteSubject,
  fetchCanDelete,
  fetchGlobalLevel,
  fetchSubjectLevel,
  fetchVersion,
  fetchVersions,
  LEVELS,
  pretty,
  setLevel,
  srKeys,
  subjectHref,
} from "../api/schemas.ts";
import { ConfirmDeleteDialog, ErrorAlert, Link, Tile } from "../components.tsx";
import { navigate, replaceParams } from "../router.ts";
import { SchemaDiffView } from "./SchemaDiff.tsx";
import { RegisterForm } from "./SchemaRegister.tsx";

/**
 * One subject: its versions, the schema of one (indented), the differences between two, its
 * compatibility level (its own or the global one it follows), and for writers a new version
 * registered after a compatibility check; deletes only where the server allows them.
 * The version shown (`v`) and the one compared with (`diff`) are in the URL.
 */
export function SubjectPage({ subject, location, canWrite }: { subject: string; location: string; canWrite: boolean }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const base = `/schemas/${encodeURIComponent(subject)}`;
  const set = (changes: Record<string, string | null>) => replaceParams(base, params, changes);
  const key = srKeys.subject(subject);
  const versions = useQuery({ queryKey: [...key, "versions"], queryFn: () => fetchVersions(subject) });
  const list = [...(versions.data ?? [])].sort((a, b) => b - a);
  const latest = list[0];
  const asked = Number(params.get("v"));
  const shown = list.includes(asked) ? asked : latest;
  const other = Number(params.get("diff"));
  const compared = list.includes(other) && other !== shown ? other : undefined;

  const version = useQuery({
    queryKey: [...key, "version", shown],
    queryFn: () => fetchVersion(subject, shown!),
    enabled: shown !== undefined,
  });
  const otherVersion = useQuery({
    queryKey: [...key, "version", compared],
    queryFn: () => fetchVersion(subject, compared!),
    enabled: compared !== undefined,
  });
  const latestVersion = useQuery({
    queryKey: [...key, "version", latest],
    queryFn: () => fetchVersion(subject, latest!),
    enabled: latest !== undefined && canWrite,
  });
  // The form starts from the latest schema as it was when the page opened; registering keeps it (and its answer) in place.
  const [seed, setSeed] = useState<{ schema: string; type: string } | null>(null);
  useEffect(() => {
    if (seed !== null || !versions.data) return;
    if (latest === undefined) setSeed({ schema: "", type: "AVRO" });
    else if (latestVersion.data) setSeed({ schema: pretty(latestVersion.data.schema), type: latestVersion.data.schemaType ?? "AVRO" });
  }, [seed, versions.data, latest, latestVersion.data]);
  const canDelete = useQuery({ queryKey: ["auth", "schemaRegistryDelete"], queryFn: fetchCanDelete, enabled: canWrite });
  const deleting = useRef<HTMLDialogElement>(null);
  const [deleteWhat, setDeleteWhat] = useState<"subject" | number>("subject");

  const v = version.data;
  const older = compared !== undefined && shown !== undefined ? Math.min(compared, shown) : undefined;
  const newer = compared !== undefined && shown !== undefined ? Math.max(compared, shown) : undefined;
  const [before, after] = older === shown ? [v, otherVersion.data] : [otherVersion.data, v];

  return (
    <section className="page schemas subject-page">
      <p className="crumbs">
        <Link to="/schemas">Schemas</Link>
      </p>
      <h1>
        <span className="muted">Subject</span> {subject}
      </h1>
      <ErrorAlert error={versions.error} />
      {versions.isPending && <p className="muted">Loading the versions…</p>}
      {versions.data && list.length === 0 && <p className="muted">This subject has no version.</p>}
      {list.length > 0 && (
        <>
          <div className="tiles">
            <Tile label="Versions" value={String(list.length)} />
            <Tile label="Latest" value={String(latest)} />
            <Tile label="Schema id" value={v ? String(v.id) : "…"} />
            <Tile label="Type" value={v ? (v.schemaType ?? "AVRO") : "…"} text />
          </div>
          <div className="toolbar version-pick">
            <label className="search">
              <span>Version</span>
              <select value={String(shown)} onChange={(e) => set({ v: e.target.value === String(latest) ? null : e.target.value })}>
                {list.map((n) => (
                  <option key={n} value={String(n)}>
                    {n === latest ? `${n} (latest)` : String(n)}
                  </option>
                ))}
              </select>
            </label>
            <label className="search">
              <span>Compare with</span>
              <select value={compared === undefined ? "" : String(compared)} onChange={(e) => set({ diff: e.target.value })}>
                <option value="">No comparison</option>
                {list
                  .filter((n) => n !== shown)
                  .map((n) => (
                    <option key={n} value={String(n)}>
                      {`Version ${n}`}
                    </option>
                  ))}
              </select>
            </label>
            {canWrite && canDelete.data && shown !== undefined && (
              <span className="delete-buttons">
                <button
                  type="button"
                  className="ghost"
                  onClick={() => {
                    setDeleteWhat(shown);
                    deleting.current?.showModal();
                  }}
                >
                  Delete version {shown}…
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => {
                    setDeleteWhat("subject");
                    deleting.current?.showModal();
                  }}
                >
                  Delete subject…
                </button>
              </span>
            )}
          </div>
          <ErrorAlert error={version.error} />
          <ErrorAlert error={otherVersion.error} />
          {compared !== undefined ? (
            before && after ? (
              <SchemaDiffView
                before={pretty(before.schema)}
                after={pretty(after.schema)}
                label={`Changes from version ${older} to version ${newer}`}
              />
            ) : (
              <p className="muted">Loading the two versions…</p>
            )
          ) : (
            v && (
              <figure className="schema-view">
                <figcaption>{`Schema of version ${v.version}`}</figcaption>
                {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached by Tab (WCAG 2.1.1) */}
                <pre className="schema" tabIndex={0}>
                  {pretty(v.schema)}
                </pre>
              </figure>
            )
          )}
        </>
      )}

      <SubjectLevel subject={subject} canWrite={canWrite} />

      {canWrite && versions.data && (
        <section aria-labelledby="register-title">
          <h2 id="register-title">Register a new version</h2>
          <p className="muted">The schema is checked against the latest version under the subject's compatibility level first.</p>
          {seed ? (
            <RegisterForm
              subject={subject}
              initialSchema={seed.schema}
              initialType={seed.type}
              onRegistered={() => set({ v: null, diff: null })}
            />
          ) : (
            <p className="muted">Loading the latest version…</p>
          )}
        </section>
      )}
      {canWrite && canDelete.data && (
        <DeleteDialog
          dialog={deleting}
          subject={subject}
          what={deleteWhat}
          onDeleted={() => (deleteWhat === "subject" ? navigate("/schemas") : navigate(subjectHref(subject)))}
        />
      )}
    </section>
  );
}

/** The subject's own compatibility level, or the global one it follows; writers change it here. */
function SubjectLevel({ subject, canWrite }: { subject: string; canWrite: boolean }) {
  const client = useQueryClient();
  const key = [...srKeys.subject(subject), "config"];
  const own = useQuery({ queryKey: key, queryFn: () => fetchSubjectLevel(subject) });
  const global = useQuery({ queryKey: srKeys.globalLevel, queryFn: fetchGlobalLevel });
  const [chosen, setChosen] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (l: string) => setLevel(subject, l),
    onSuccess: async () => {
      setChosen(null);
      await client.invalidateQueries({ queryKey: key });
    },
  });
  const effective = own.data ?? global.data;
  const said = own.data ? `${own.data} (its own)` : global.data ? `${global.data} (the global level)` : "…";
  return (
    <section aria-labelledby="level-title">
      <h2 id="level-title">Compatibility</h2>
      <p>
        Level: <strong data-testid="subject-level">{own.isPending ? "…" : said}</strong>
      </p>
      {canWrite && effective && (
        <form
          className="toolbar level-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (chosen) save.mutate(chosen);
          }}
        >
          <label className="search">
            <span>Compatibility level of {subject}</span>
            <select value={chosen ?? effective} onChange={(e) => setChosen(e.target.value)}>
              {LEVELS.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={save.isPending || chosen === null || chosen === own.data}>
            {save.isPending ? "Saving…" : "Save level"}
          </button>
        </form>
      )}
      <ErrorAlert error={own.error ?? save.error} />
    </section>
  );
}

/** Deleting a version or the whole subject: confirmed here, refused by the server where not allowed. */
function DeleteDialog({
  dialog,
  subject,
  what,
  onDeleted,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  subject: string;
  what: "subject" | number;
  onDeleted: () => void;
}) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteSubject(subject, what === "subject" ? undefined : what),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ["sr"] });
      dialog.current?.close();
      onDeleted();
    },
  });
  const whole = what === "subject";
  return (
    <ConfirmDeleteDialog
      dialog={dialog}
      id="delete-schema-title"
      title={whole ? `Delete subject ${subject}` : `Delete version ${what} of ${subject}`}
      {...(whole ? { typeName: { name: subject, noun: "subject" } } : {})}
      label={whole ? "Delete subject" : "Delete version"}
      action={remove}
    >
      {whole
        ? "Every version of the subject is deleted. Consumers that still read records written with them may fail."
        : "Consumers that still read records written with this version may fail."}
    </ConfirmDeleteDialog>
  );
}
