import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { createRedrive, type RedriveCreate, redriveHref, redriveKeys } from "../api/redrive.ts";
import { ErrorAlert, Link } from "../components.tsx";
import { navigate } from "../router.ts";
import { topicNames } from "../sql/catalog.ts";

/** Kafka Connect's dead-letter header: the topic each record came from. */
export const CONNECT_TOPIC_HEADER = "__connect.errors.topic";

type Bound = "none" | "offset" | "time";

/** A bound of the range: each partition's start or end (none), an offset, or a local time. */
function BoundChoice({
  legend,
  none,
  kind,
  onKind,
  value,
  onValue,
}: {
  legend: string;
  none: string;
  kind: Bound;
  onKind: (k: Bound) => void;
  value: string;
  onValue: (v: string) => void;
}) {
  const name = useId();
  return (
    <fieldset className="redrive-bound">
      <legend>{legend}</legend>
      <div className="redrive-choices">
        {(
          [
            ["none", none],
            ["offset", "An offset"],
            ["time", "A time"],
          ] as const
        ).map(([k, label]) => (
          <label key={k} className="check">
            <input type="radio" name={name} checked={kind === k} onChange={() => onKind(k)} />
            <span>{label}</span>
          </label>
        ))}
      </div>
      {kind === "offset" && (
        <label className="stacked">
          <span>{legend} offset (each partition)</span>
          <input type="number" min={0} value={value} onChange={(e) => onValue(e.target.value)} required />
        </label>
      )}
      {kind === "time" && (
        <label className="stacked">
          <span>{legend} time (local)</span>
          <input type="datetime-local" step={1} value={value} onChange={(e) => onValue(e.target.value)} required />
        </label>
      )}
    </fieldset>
  );
}

/** An offset or epoch ms typed in a bound's field; NaN when it is not one (the schema then says so). */
const boundValue = (kind: Bound, text: string) => (kind === "offset" ? Number(text) : new Date(text).getTime());

/**
 * A new redrive job: its source (a topic, some partitions, a range by offset or time), its target
 * (a topic, or the header naming each record's), a filter and a rate. It is created PAUSED and its
 * page opens on a dry run: what it would write, per target, and a sample, before Start.
 */
export function RedriveCreatePage({ cluster }: { cluster: string | null }) {
  const client = useQueryClient();
  // Under a key of its own: the topic list caches its pages under ["topics", cluster].
  const topics = useQuery({ queryKey: ["redrive-topic-names", cluster], queryFn: topicNames, staleTime: 30_000 });
  const topicList = useId();
  const [name, setName] = useState("");
  const [topic, setTopic] = useState("");
  const [partitions, setPartitions] = useState("");
  const [from, setFrom] = useState<Bound>("none");
  const [fromValue, setFromValue] = useState("");
  const [to, setTo] = useState<Bound>("none");
  const [toValue, setToValue] = useState("");
  const [targetKind, setTargetKind] = useState<"header" | "topic">("header");
  const [target, setTarget] = useState("");
  const [header, setHeader] = useState(CONNECT_TOPIC_HEADER);
  const [where, setWhere] = useState("");
  const [rate, setRate] = useState("1000");

  const body = (): RedriveCreate => {
    const parts = partitions
      .split(/[\s,]+/)
      .filter((p) => p !== "")
      .map(Number);
    return {
      ...(name.trim() !== "" ? { name: name.trim() } : {}),
      topic: topic.trim(),
      ...(parts.length > 0 ? { partitions: parts } : {}),
      ...(from === "offset"
        ? { fromOffset: boundValue(from, fromValue) }
        : from === "time"
          ? { fromTime: boundValue(from, fromValue) }
          : {}),
      ...(to === "offset" ? { toOffset: boundValue(to, toValue) } : to === "time" ? { toTime: boundValue(to, toValue) } : {}),
      ...(targetKind === "topic" ? { target: target.trim() } : { targetHeader: header.trim() }),
      ...(where.trim() !== "" ? { where: where.trim() } : {}),
      ratePerSecond: Number(rate),
    };
  };
  const create = useMutation({
    mutationFn: () => createRedrive(body()),
    onSuccess: async (job) => {
      await client.invalidateQueries({ queryKey: redriveKeys.all });
      navigate(`${redriveHref(job.id)}?dryrun=1`);
    },
  });

  return (
    <section className="page redrive">
      <p className="crumbs">
        <Link to="/redrives">Redrive jobs</Link>
      </p>
      <h1>New redrive job</h1>
      <p className="muted redrive-intro">
        A redrive copies a topic's records once, exactly once, to a topic or to the topic each record names in a header. It is created
        paused: its dry run shows what it would write before you start it.
      </p>
      <form
        className="redrive-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!create.isPending) create.mutate();
        }}
      >
        <datalist id={topicList}>
          {(topics.data ?? []).map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <fieldset>
          <legend>Source</legend>
          <label className="stacked">
            <span>Source topic</span>
            <input value={topic} onChange={(e) => setTopic(e.target.value)} list={topicList} required autoComplete="off" />
          </label>
          <label className="stacked">
            <span>Partitions</span>
            <input
              value={partitions}
              onChange={(e) => setPartitions(e.target.value)}
              placeholder="all"
              aria-describedby={`${topicList}-parts`}
              autoComplete="off"
            />
          </label>
          <p id={`${topicList}-parts`} className="muted redrive-hint">
            Empty for every partition, or their numbers: <code>0, 2</code>.
          </p>
          <div className="redrive-bounds">
            <BoundChoice
              legend="From"
              none="Each partition's start"
              kind={from}
              onKind={setFrom}
              value={fromValue}
              onValue={setFromValue}
            />
            <BoundChoice legend="Up to" none="Each partition's end now" kind={to} onKind={setTo} value={toValue} onValue={setToValue} />
          </div>
          <p className="muted redrive-hint">
            The range is fixed at creation, at most to the end offsets of that moment; the record at "Up to" is not copied.
          </p>
        </fieldset>
        <fieldset>
          <legend>Target</legend>
          <div className="redrive-choices">
            <label className="check">
              <input type="radio" name="target-kind" checked={targetKind === "header"} onChange={() => setTargetKind("header")} />
              <span>The topic a header of each record names</span>
            </label>
            <label className="check">
              <input type="radio" name="target-kind" checked={targetKind === "topic"} onChange={() => setTargetKind("topic")} />
              <span>One topic</span>
            </label>
          </div>
          {targetKind === "header" ? (
            <>
              <label className="stacked">
                <span>Header</span>
                <input value={header} onChange={(e) => setHeader(e.target.value)} required autoComplete="off" />
              </label>
              <p className="muted redrive-hint">
                Kafka Connect's dead-letter queues name each record's topic in <code>{CONNECT_TOPIC_HEADER}</code>. A record without it, or
                naming no topic, is counted unroutable; one naming a topic you may not write is refused.
              </p>
            </>
          ) : (
            <label className="stacked">
              <span>Target topic</span>
              <input value={target} onChange={(e) => setTarget(e.target.value)} list={topicList} required autoComplete="off" />
            </label>
          )}
        </fieldset>
        <fieldset>
          <legend>Filter and pace</legend>
          <label className="stacked">
            <span>Only the records where</span>
            <textarea
              value={where}
              onChange={(e) => setWhere(e.target.value)}
              rows={2}
              spellCheck={false}
              className="redrive-where"
              placeholder="_value.test IS NULL"
            />
          </label>
          <p className="muted redrive-hint">
            A condition of the query language, as after <code>SELECT * FROM topic WHERE</code>; empty copies every record of the range.
          </p>
          <label className="stacked">
            <span>Records per second at most</span>
            <input type="number" min={1} max={1_000_000} value={rate} onChange={(e) => setRate(e.target.value)} required />
          </label>
          <label className="stacked">
            <span>Name</span>
            <input value={name} onChange={(e) => setName(e.target.value)} placeholder="optional" maxLength={100} autoComplete="off" />
          </label>
        </fieldset>
        <ErrorAlert error={create.error} />
        <div className="toolbar actions">
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create and dry run"}
          </button>
          <button type="button" className="ghost" onClick={() => navigate("/redrives")}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
