import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from "react";
import {
  fetchWriteFormats,
  type ProduceAnswer,
  type ProduceBody,
  produceRecords,
  type TopicDetail,
  topicKey,
  type WriteFormat,
  type WriteFormats,
  writeFormatsKey,
} from "../api/topics.ts";
import { DialogFooter, ErrorAlert, num, TableHead } from "../components.tsx";
import { Field } from "./TopicField.tsx";
import "../styles/topic-list.css";
import "../styles/topic-messages.css";
import { number } from "../format.ts";
import { avroProblem, avroTemplate } from "./TopicAvro.ts";
import { prettyJson } from "./TopicRecordText.ts";
import { partitionNumbers, WRITE_FORMATS } from "./TopicShared.ts";

type Side = "key" | "value";
type SideInfo = WriteFormats["key"];
type ProduceRecordBody = ProduceBody["records"][number];

const SOURCE_WORDS: Record<SideInfo["source"], string> = {
  chosen: "chosen here",
  metadata: "from the topic's metadata",
  registry: "from the registry subject",
  default: "the default: no metadata or subject names one",
};

const INT_TEXT = /^\s*[-+]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What is wrong with a key or value typed for its format, or null: said while it is typed. */
export function sideProblem(text: string, format: WriteFormat, schema: string | null): string | null {
  switch (format) {
    case "STRING":
      return null;
    case "JSON":
    case "AVRO":
    case "PROTOBUF": {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        return `Not valid JSON: ${(e as Error).message}`;
      }
      return format === "AVRO" && schema ? avroProblem(schema, value) : null;
    }
    case "INT": {
      if (!INT_TEXT.test(text)) return "Not a whole number (INT)";
      const n = Number(text);
      return n < -(2 ** 31) || n > 2 ** 31 - 1 ? "Out of range for INT" : null;
    }
    case "LONG": {
      if (!INT_TEXT.test(text)) return "Not a whole number (LONG)";
      const n = BigInt(text.trim());
      return n < -(2n ** 63n) || n > 2n ** 63n - 1n ? "Out of range for LONG" : null;
    }
    case "FLOAT":
    case "DOUBLE":
      return NUMBER_TEXT.test(text) ? null : `Not a number (${format})`;
    case "BYTES":
      return text.length % 4 === 0 && BASE64.test(text) ? null : "Not base64 (BYTES are written as base64)";
  }
}

/** A template to start from: the Avro schema's fields, the Protobuf message's (made by the server), an empty JSON object, or nothing. */
function templateFor(info: SideInfo | undefined): string {
  if (!info?.format) return "";
  if (info.format === "AVRO" && info.schema) return prettyJson(JSON.stringify(avroTemplate(info.schema)));
  if (info.format === "PROTOBUF" && info.template) return prettyJson(JSON.stringify(info.template));
  if (info.format === "JSON" || info.format === "PROTOBUF") return "{}";
  return "";
}

interface LineRecord {
  record: ProduceRecordBody;
  problems: string[];
}

/** One JSON line as a record: `{"key": ..., "value": ..., "headers": {...}, "partition": n}`. */
function parseLine(line: string, n: number, formats: Record<Side, SideInfo>, partitions: number): LineRecord {
  const problems: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    return { record: {}, problems: [`Line ${n}: not valid JSON (${(e as Error).message})`] };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { record: {}, problems: [`Line ${n}: a record is an object with key, value, headers and partition`] };
  const o = parsed as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !["key", "value", "headers", "partition"].includes(k));
  if (unknown.length > 0) problems.push(`Line ${n}: unknown field ${unknown.map((k) => `'${k}'`).join(", ")}`);
  const record: ProduceRecordBody = {};
  for (const side of ["key", "value"] as const) {
    const v = o[side];
    if (v === undefined || v === null) continue;
    const info = formats[side];
    // JSON and Avro take the value itself; the other formats its text.
    const structured = info.format === "JSON" || info.format === "AVRO" || info.format === "PROTOBUF";
    const text = structured ? JSON.stringify(v) : typeof v === "string" || typeof v === "number" ? String(v) : null;
    if (text === null) {
      problems.push(`Line ${n}: ${side}: ${info.format} takes text or a number`);
      continue;
    }
    const problem = info.format ? sideProblem(text, info.format, info.schema) : null;
    if (problem) problems.push(`Line ${n}: ${side}: ${problem}`);
    record[side] = text;
  }
  if (o.headers !== undefined) {
    const h = o.headers;
    if (Array.isArray(h) && h.every((x) => typeof x?.key === "string" && typeof x?.value === "string")) record.headers = h;
    else if (typeof h === "object" && h !== null && !Array.isArray(h) && Object.values(h).every((x) => typeof x === "string"))
      record.headers = h as Record<string, string>;
    else problems.push(`Line ${n}: headers are {"name": "value"} or [{"key": ..., "value": ...}] of text`);
  }
  if (o.partition !== undefined) {
    const p = o.partition;
    if (!Number.isInteger(p) || (p as number) < 0 || (p as number) >= partitions)
      problems.push(`Line ${n}: partition ${JSON.stringify(p)} is not one of 0 to ${partitions - 1}`);
    else record.partition = p as number;
  }
  return { record, problems };
}

/**
 * Produce records: key, value and headers, a partition or by key, in the formats the topic's
 * metadata or registry subject give (or chosen here), checked while typed (JSON, an Avro value
 * against its schema, numbers, base64); one record, or many as JSON lines. Answers where each
 * record went. The server checks everything again and writes nothing when one record fails.
 */
export function ProduceDialog({ cluster, topic, onClosed }: { cluster: string | null; topic: TopicDetail; onClosed: () => void }) {
  const client = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = useId();
  const [chosen, setChosen] = useState<{ key?: WriteFormat; value?: WriteFormat }>({});
  const formats = useQuery({
    queryKey: writeFormatsKey(cluster, topic.topicName, chosen.key, chosen.value),
    queryFn: () => fetchWriteFormats(topic.topicName, chosen),
    staleTime: 0,
  });
  const f = formats.data;
  const [mode, setMode] = useState<"one" | "lines">("one");
  const [partition, setPartition] = useState("");
  const [key, setKey] = useState("");
  const [value, setValue] = useState<string | null>(null);
  const [tombstone, setTombstone] = useState(false);
  const [headers, setHeaders] = useState<Array<{ key: string; value: string }>>([]);
  const [lines, setLines] = useState("");
  const [result, setResult] = useState<ProduceAnswer | null>(null);
  const closeButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  // A template once the value's format is known, until the user types their own.
  const valueText = value ?? templateFor(f?.value);
  useEffect(() => {
    if (result) closeButton.current?.focus();
  }, [result]);

  const send = useMutation({
    mutationFn: (body: ProduceBody) => produceRecords(topic.topicName, body),
    onSuccess: async (answer) => {
      setResult(answer);
      await client.invalidateQueries({ queryKey: topicKey(cluster, topic.topicName) });
    },
  });

  const oneProblems = useMemo(() => {
    if (!f) return { key: null, value: null };
    return {
      key: key === "" || !f.key.format ? null : sideProblem(key, f.key.format, f.key.schema),
      value: tombstone || !f.value.format ? null : sideProblem(valueText, f.value.format, f.value.schema),
    };
  }, [f, key, valueText, tombstone]);
  const parsedLines = useMemo(() => {
    if (!f || mode !== "lines") return [];
    return lines
      .split("\n")
      .map((l, i) => ({ l: l.trim(), n: i + 1 }))
      .filter((x) => x.l !== "")
      .map((x) => parseLine(x.l, x.n, f, topic.partitions));
  }, [f, lines, mode, topic.partitions]);
  const lineProblems = parsedLines.flatMap((p) => p.problems);
  const headerProblem = headers.some((h) => h.key.trim() === "") ? "Each header needs a name." : null;
  const unwritable = f?.problems ?? [];
  const ready =
    f !== undefined &&
    f.key.format !== null &&
    f.value.format !== null &&
    (mode === "one" ? !oneProblems.key && !oneProblems.value && !headerProblem : parsedLines.length > 0 && lineProblems.length === 0);

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!ready || !f) return;
    const body: ProduceBody = {
      ...(chosen.key ? { keyFormat: chosen.key } : {}),
      ...(chosen.value ? { valueFormat: chosen.value } : {}),
      records:
        mode === "one"
          ? [
              {
                key: key === "" ? null : key,
                value: tombstone ? null : valueText,
                ...(headers.length > 0 ? { headers: headers.map((h) => ({ key: h.key.trim(), value: h.value })) } : {}),
                ...(partition !== "" ? { partition: Number(partition) } : {}),
              },
            ]
          : parsedLines.map((p) => p.record),
    };
    send.mutate(body);
  }

  const formatSelect = (side: Side) => {
    const info = f?.[side];
    return (
      <Field
        label={side === "key" ? "Key format" : "Value format"}
        hint={
          info
            ? `${info.format ?? "Cannot be written"}: ${SOURCE_WORDS[info.source]}${info.subject ? ` ${info.subject}` : ""}`
            : formats.isPending
              ? "Asking how the topic is written…"
              : undefined
        }
        control={(props) => (
          <select
            {...props}
            value={chosen[side] ?? ""}
            onChange={(e) => {
              const next = e.target.value === "" ? undefined : (e.target.value as WriteFormat);
              const { [side]: _, ...rest } = chosen;
              setChosen(next ? { ...rest, [side]: next } : rest);
              if (side === "value") setValue(null);
            }}
          >
            <option value="">{`The topic's${info && !chosen[side] && info.format ? ` (${info.format})` : ""}`}</option>
            {WRITE_FORMATS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        )}
      />
    );
  };

  return (
    <dialog ref={dialog} className="produce" aria-labelledby={`${ids}-title`} onClose={onClosed}>
      <form className="dialog-form" onSubmit={submit}>
        <h2 id={`${ids}-title`}>Produce to {topic.topicName}</h2>
        {result ? (
          <>
            <p role="status">
              {`${number.format(result.records)} record${result.records === 1 ? "" : "s"} written as ${result.keyFormat} / ${result.valueFormat}.`}
            </p>
            <div className="produce-result">
              <table aria-label="Records written" className="compact">
                <TableHead columns={[num("Record"), num("Partition"), num("Offset")]} />
                <tbody>
                  {result.offsets.slice(0, 200).map((o, i) => (
                    <tr key={`${o.partition}/${o.offset}`}>
                      <td className="num">{i + 1}</td>
                      <td className="num">{o.partition}</td>
                      <td className="num">{number.format(o.offset)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="toolbar dialog-buttons">
              <button
                type="button"
                onClick={() => {
                  setResult(null);
                  send.reset();
                }}
              >
                Produce more
              </button>
              <button ref={closeButton} type="button" className="ghost" onClick={() => dialog.current?.close()}>
                Close
              </button>
            </div>
          </>
        ) : (
          <>
            <ErrorAlert error={formats.error} />
            <div className="produce-formats">
              {formatSelect("key")}
              {formatSelect("value")}
            </div>
            {unwritable.map((p) => (
              <p key={p} className="warning">
                {p}
              </p>
            ))}
            <fieldset>
              <legend>Records</legend>
              <label className="check">
                <input type="radio" name="mode" checked={mode === "one"} onChange={() => setMode("one")} />
                One record
              </label>
              <label className="check">
                <input type="radio" name="mode" checked={mode === "lines"} onChange={() => setMode("lines")} />
                Several records, one JSON object a line
              </label>
            </fieldset>
            {mode === "one" ? (
              <>
                <label className="stacked">
                  <span>Partition</span>
                  <select value={partition} onChange={(e) => setPartition(e.target.value)}>
                    <option value="">By key (round robin without one)</option>
                    {partitionNumbers(topic.partitions).map((p) => (
                      <option key={p} value={p}>{`Partition ${p}`}</option>
                    ))}
                  </select>
                </label>
                <Field
                  label="Key"
                  problem={oneProblems.key}
                  hint="Empty: a record without a key."
                  control={(props) => (
                    <textarea
                      {...props}
                      value={key}
                      onChange={(e) => setKey(e.target.value)}
                      rows={f?.key.format === "AVRO" || f?.key.format === "JSON" ? 3 : 1}
                      spellCheck={false}
                    />
                  )}
                />
                <Field
                  label="Value"
                  problem={oneProblems.value}
                  hint={
                    f?.value.format === "AVRO" && f.value.schema
                      ? "The value as JSON, checked against the schema as you type."
                      : f?.value.format === "JSON"
                        ? "JSON, checked as you type; written as typed."
                        : undefined
                  }
                  control={(props) => (
                    <textarea
                      {...props}
                      value={tombstone ? "" : valueText}
                      onChange={(e) => setValue(e.target.value)}
                      rows={8}
                      spellCheck={false}
                      disabled={tombstone}
                    />
                  )}
                />
                <label className="check">
                  <input type="checkbox" checked={tombstone} onChange={(e) => setTombstone(e.target.checked)} />
                  No value (a tombstone: a compacted topic forgets the key)
                </label>
                <fieldset>
                  <legend>Headers</legend>
                  {headers.length === 0 && <span className="muted">No headers.</span>}
                  {headers.map((h, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; their place is their identity
                    <div className="header-row" key={i}>
                      <input
                        aria-label={`Header ${i + 1} name`}
                        value={h.key}
                        onChange={(e) => setHeaders(headers.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)))}
                        autoComplete="off"
                      />
                      <input
                        aria-label={`Header ${i + 1} value`}
                        value={h.value}
                        onChange={(e) => setHeaders(headers.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))}
                        autoComplete="off"
                      />
                      <button
                        type="button"
                        className="ghost small"
                        aria-label={`Remove header ${i + 1}`}
                        onClick={() => setHeaders(headers.filter((_, j) => j !== i))}
                      >
                        Remove
                      </button>
                    </div>
                  ))}
                  {headerProblem && <span className="error field-problem">{headerProblem}</span>}
                  <div>
                    <button type="button" className="ghost small" onClick={() => setHeaders([...headers, { key: "", value: "" }])}>
                      Add header
                    </button>
                  </div>
                </fieldset>
              </>
            ) : (
              <Field
                label="Records (JSON lines)"
                problem={
                  lineProblems.length > 0
                    ? `${lineProblems.slice(0, 3).join(" · ")}${lineProblems.length > 3 ? ` · and ${lineProblems.length - 3} more` : ""}`
                    : null
                }
                hint={`${number.format(parsedLines.length)} record${parsedLines.length === 1 ? "" : "s"}; at most 1,000 a time. JSON and Avro take the value itself, the other formats its text.`}
                control={(props) => (
                  <textarea
                    {...props}
                    value={lines}
                    onChange={(e) => setLines(e.target.value)}
                    rows={10}
                    spellCheck={false}
                    placeholder={
                      '{"key": "k1", "value": {"n": 1}, "headers": {"source": "ui"}}\n{"key": "k2", "value": {"n": 2}, "partition": 0}'
                    }
                  />
                )}
              />
            )}
            <DialogFooter
              error={send.error}
              label={mode === "lines" && parsedLines.length > 1 ? `Produce ${number.format(parsedLines.length)} records` : "Produce"}
              busyLabel="Producing…"
              busy={send.isPending}
              disabled={!ready}
              onCancel={() => dialog.current?.close()}
            />
          </>
        )}
      </form>
    </dialog>
  );
}
