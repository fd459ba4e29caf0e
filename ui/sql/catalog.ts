/**
 * What the editor's completion knows of the cluster: its topic names, and the value fields of a
 * topic, from the schema its metadata records or else from a few of its records (a query with a
 * small LIMIT through the page's one stream reader). Both are fetched when completion first asks
 * and cached per cluster (topics for a while, a topic's fields for the page's life), so typing
 * never sends more than the first request.
 */

import { fetchMetadata } from "../api/metadata.ts";
import { fetchTopics } from "../api/topics.ts";
import { clusterOf } from "../cluster.ts";
import { runQuery } from "../stream.ts";

/** A field of the value, as its path of names from the value's root (`["geo", "lat"]`). */
export type FieldPath = readonly string[];

const TOPICS_TTL_MS = 30_000;
/** Records read to learn a topic's fields when no schema says them. */
export const SAMPLE_RECORDS = 20;
const SAMPLE_TIMEOUT_MS = 5_000;
const MAX_DEPTH = 4;
const MAX_PATHS = 500;

const cluster = () => clusterOf(window.location.search) ?? "";

let topics: { cluster: string; at: number; names: Promise<string[]> } | null = null;

export function topicNames(): Promise<string[]> {
  const c = cluster();
  if (topics && topics.cluster === c && Date.now() - topics.at < TOPICS_TTL_MS) return topics.names;
  const names = fetchTopics().then((list) => list.map((t) => t.topicName).sort());
  const entry = { cluster: c, at: Date.now(), names };
  topics = entry;
  // A failure is not remembered: the next completion asks again.
  names.catch(() => {
    if (topics === entry) topics = null;
  });
  return names;
}

const fields = new Map<string, Promise<FieldPath[]>>();

export async function topicFields(topic: string): Promise<FieldPath[]> {
  // A name still being typed is no topic: nothing is sampled for it, and nothing remembered.
  const names = await topicNames().catch(() => null);
  if (names && !names.includes(topic)) return [];
  const key = `${cluster()}\u0000${topic}`;
  let found = fields.get(key);
  if (!found) {
    found = fromSchema(topic).then((paths) => (paths.length > 0 ? paths : sample(topic)));
    fields.set(key, found);
    found.catch(() => fields.delete(key));
  }
  return found;
}

async function fromSchema(topic: string): Promise<FieldPath[]> {
  try {
    const meta = await fetchMetadata(topic);
    return meta.valueSchema ? schemaPaths(meta.valueSchema) : [];
  } catch {
    return [];
  }
}

async function sample(topic: string): Promise<FieldPath[]> {
  const values: unknown[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), SAMPLE_TIMEOUT_MS);
  try {
    await runQuery(
      `SELECT * FROM \`${topic.replaceAll("`", "``")}\` LIMIT ${SAMPLE_RECORDS}`,
      {
        records(batch) {
          for (const rec of batch) {
            try {
              values.push(JSON.parse(rec.value));
            } catch {
              /* not JSON: no fields */
            }
          }
        },
        stats() {},
        end() {},
        error() {},
      },
      controller.signal,
      { history: false },
    );
  } catch {
    // Timed out or refused: what was read so far is what there is.
  } finally {
    clearTimeout(timer);
  }
  return valuePaths(values);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The object fields of sampled values, nested ones too (arrays are not entered), first seen first. */
export function valuePaths(values: readonly unknown[]): FieldPath[] {
  const seen = new Set<string>();
  const out: FieldPath[] = [];
  const walk = (v: unknown, prefix: string[]) => {
    if (!isObject(v) || prefix.length >= MAX_DEPTH) return;
    for (const [k, child] of Object.entries(v)) {
      if (out.length >= MAX_PATHS) return;
      const path = [...prefix, k];
      const id = path.join("\u0000");
      if (!seen.has(id)) {
        seen.add(id);
        out.push(path);
      }
      walk(child, path);
    }
  };
  for (const v of values) walk(v, []);
  return out;
}

/** The fields a value schema names: Avro records (nested, in unions too) or a JSON Schema's properties. */
export function schemaPaths(text: string): FieldPath[] {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return [];
  }
  const out: FieldPath[] = [];
  const walk = (node: unknown, prefix: string[]) => {
    if (prefix.length >= MAX_DEPTH || out.length >= MAX_PATHS) return;
    if (Array.isArray(node)) {
      for (const branch of node) walk(branch, prefix);
      return;
    }
    if (!isObject(node)) return;
    if (node.type === "record" && Array.isArray(node.fields)) {
      for (const f of node.fields) {
        if (!isObject(f) || typeof f.name !== "string") continue;
        out.push([...prefix, f.name]);
        walk(f.type, [...prefix, f.name]);
      }
    } else if (isObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties)) {
        out.push([...prefix, name]);
        walk(sub, [...prefix, name]);
      }
    } else if (isObject(node.type) || Array.isArray(node.type)) {
      walk(node.type, prefix);
    }
  };
  walk(schema, []);
  return out;
}
