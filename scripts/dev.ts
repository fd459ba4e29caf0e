/**
 * `npm run dev`: the development cluster (Kafka, the schema registry, Kafka Connect, and LDAP
 * when slapd is installed), Loupe against it, and the demo data of scripts/seed.ts seeded
 * through it (topics in JSON and Avro with their types and schemas, a live and a lagging
 * consumer group, a running processor made from one of the UI's examples, a connector, and a
 * trickle of new records). Every long step says what it does; the first start also downloads
 * the cluster's jars (about 250 MB), step by step.
 *
 * Ctrl-C stops Loupe, the trickle and the live group; the cluster keeps running for the next
 * start (`bun test/cluster/cli.ts down` stops it and deletes its data).
 */
import { join } from "node:path";
import { createKafkaPool } from "../src/kafka/index.ts";
import { seedDemo } from "./seed.ts";

const root = join(import.meta.dir, "..");
const port = Number(process.env.LOUPE_PORT ?? 9991);
const dataDir = process.env.LOUPE_DATA_DIR ?? join(root, ".loupe-dev");
const adminPassword = process.env.LOUPE_ADMIN_PASSWORD ?? "admin";
const say = (line: string) => console.error(line);

/** `cli.ts up`: its progress goes to the terminal as it comes, its KEY=VALUE lines are read here. */
async function clusterUp(): Promise<Record<string, string>> {
  say("dev: starting the development cluster (bun test/cluster/cli.ts up) ...");
  const proc = Bun.spawn([process.execPath, join(root, "test/cluster/cli.ts"), "up"], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the development cluster did not start (see above)");
  const env: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  if (!env.KAFKA_BOOTSTRAP) throw new Error(`no KAFKA_BOOTSTRAP from the cluster tool: ${out}`);
  return env;
}

/** A cluster given in the environment (KAFKA_BOOTSTRAP and the others, as `cli.ts env` prints them) is used as it is. */
function givenCluster(): Record<string, string> | null {
  if (!process.env.KAFKA_BOOTSTRAP) return null;
  const keys = ["KAFKA_BOOTSTRAP", "SCHEMA_REGISTRY_URL", "SCHEMA_REGISTRY_TOPICS", "CONNECT_URL", "CONNECT_TOPICS"];
  const env: Record<string, string> = {};
  for (const k of keys) if (process.env[k]) env[k] = process.env[k]!;
  say(`dev: using the cluster of the environment (${env.KAFKA_BOOTSTRAP})`);
  return env;
}

async function main() {
  const env = givenCluster() ?? (await clusterUp());
  say(`dev: starting Loupe on port ${port} (data in ${dataDir}) ...`);
  const loupe = Bun.spawn([process.execPath, join(root, "src/main.ts"), "serve"], {
    cwd: root,
    env: {
      ...process.env,
      LOUPE_PORT: String(port),
      LOUPE_DATA_DIR: dataDir,
      LOUPE_KAFKA_BOOTSTRAP: env.KAFKA_BOOTSTRAP,
      // Both registry hosts, comma-separated: Loupe tries them in turn.
      ...(env.SCHEMA_REGISTRY_URL ? { LOUPE_SCHEMA_REGISTRY_URL: env.SCHEMA_REGISTRY_URL } : {}),
      // Their storage topics, and Connect's: internal (an admin's only).
      ...(env.SCHEMA_REGISTRY_TOPICS ? { LOUPE_SCHEMA_REGISTRY_TOPICS: env.SCHEMA_REGISTRY_TOPICS } : {}),
      ...(env.CONNECT_TOPICS ? { LOUPE_CONNECT_TOPICS: `dev=${env.CONNECT_TOPICS}` } : {}),
      // The Connect cluster's two workers, under the alias `dev`.
      ...(env.CONNECT_URL ? { LOUPE_CONNECT_URLS: `dev=${env.CONNECT_URL}` } : {}),
      LOUPE_ADMIN_PASSWORD: adminPassword,
    },
    stdout: "inherit",
    stderr: "inherit",
  });

  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${url}api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (loupe.exitCode !== null) process.exit(loupe.exitCode);
    if (Date.now() > deadline) throw new Error(`Loupe did not answer ${url}api/health within 60 s`);
    await Bun.sleep(100);
  }

  // The seed goes through Loupe's API as the admin (types, the processor), and Kafka directly.
  const login = await fetch(`${url}api/login`, {
    method: "POST",
    headers: { accept: "text/plain", "content-type": "application/json" },
    body: JSON.stringify({ user: "admin", password: adminPassword }),
  });
  if (!login.ok) {
    throw new Error(`cannot log in as admin to seed the demo data (${login.status}): set LOUPE_ADMIN_PASSWORD to the admin's password`);
  }
  const token = await login.text();
  const pool = createKafkaPool([{ name: "dev", bootstrapServers: [env.KAFKA_BOOTSTRAP!], clientId: "loupe-dev-seed", default: true }]);
  say("dev: seeding the demo data ...");
  const seeded = await seedDemo({
    kafka: pool.default(),
    api: (path, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("x-service-token", token);
      if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
      return fetch(new URL(path, url), { ...init, headers });
    },
    registryUrls: env.SCHEMA_REGISTRY_URL ? env.SCHEMA_REGISTRY_URL.split(",") : [],
    ...(env.CONNECT_URL ? { connect: { url: env.CONNECT_URL.split(",")[0]!, alias: "dev" } } : {}),
    workDir: dataDir,
    // Names of the demo's own, for a cluster others use too.
    prefix: process.env.LOUPE_DEV_PREFIX ?? "",
    log: (line) => say(`seed: ${line}`),
  });

  say(
    `\nLoupe is running at ${url}\nLogin: admin / ${adminPassword === "admin" ? "admin" : "(LOUPE_ADMIN_PASSWORD)"}\nKafka: ${env.KAFKA_BOOTSTRAP}\n` +
      "Ctrl-C stops Loupe and the demo's producer and consumers; 'npx bun test/cluster/cli.ts down' stops the cluster and deletes its data.\n",
  );

  const stop = async () => {
    await seeded.stop();
    loupe.kill("SIGTERM");
    await loupe.exited;
    await pool.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  const code = await loupe.exited;
  await seeded.stop();
  await pool.close();
  process.exit(code);
}

await main();
