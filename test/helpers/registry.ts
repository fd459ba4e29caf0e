/** The schema registry as tests use it: registering a schema, and the Confluent wire format. */
import { registryEnv } from "../cluster/cluster.ts";

const JSON_TYPE = { "content-type": "application/vnd.schemaregistry.v1+json" };

/**
 * Registers `schema` (Avro, as an object) under `subject` on the first host and answers its id
 * once every host (SCHEMA_REGISTRY_URL lists them) serves it: they share a store through an
 * asynchronous journal, and Loupe may ask any of them.
 */
export async function registerSchema(subject: string, schema: object): Promise<number> {
  return register(subject, JSON.stringify({ schema: JSON.stringify(schema) }));
}

/** Registers Protobuf `.proto` text with its references (imports registered under their own subjects), as registerSchema does. */
export async function registerProtobuf(
  subject: string,
  text: string,
  references: Array<{ name: string; subject: string; version: number }> = [],
): Promise<number> {
  return register(subject, JSON.stringify({ schema: text, schemaType: "PROTOBUF", references }));
}

async function register(subject: string, body: string): Promise<number> {
  const [first, ...others] = registryEnv().urls;
  const path = `/subjects/${encodeURIComponent(subject)}`;
  const res = await fetch(`${first}${path}/versions`, { method: "POST", headers: JSON_TYPE, body });
  if (!res.ok) throw new Error(`register ${subject}: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: number };
  for (const url of others) {
    // The Confluent "is this schema registered under the subject" lookup: 404 until the host has it.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = await fetch(`${url}${path}`, { method: "POST", headers: JSON_TYPE, body });
      const text = await found.text();
      if (found.ok && (JSON.parse(text) as { id: number }).id === id) break;
      if (Date.now() > deadline) throw new Error(`register ${subject}: ${url} does not serve it after 10 s (${found.status} ${text})`);
      await Bun.sleep(50);
    }
  }
  return id;
}

/** Magic byte 0, the schema id as a big-endian int32, then the Avro binary. */
export function confluentWire(id: number, bytes: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(0, 0);
  head.writeInt32BE(id, 1);
  return Buffer.concat([head, bytes]);
}
