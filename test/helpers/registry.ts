/** The schema registry as tests use it: registering a schema, and the Confluent wire format. */
import { schemaRegistryUrl } from "../cluster/cluster.ts";

/** Registers `schema` (Avro, as an object) under `subject` and answers its id. */
export async function registerSchema(subject: string, schema: object): Promise<number> {
  const res = await fetch(`${schemaRegistryUrl()}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: "POST",
    headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  if (!res.ok) throw new Error(`register ${subject}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

/** Magic byte 0, the schema id as a big-endian int32, then the Avro binary. */
export function confluentWire(id: number, bytes: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(0, 0);
  head.writeInt32BE(id, 1);
  return Buffer.concat([head, bytes]);
}
