import { existsSync, readFileSync } from "node:fs";
import type { z } from "zod";
import { type Config, configSchema } from "./schema.ts";

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly problems: { key: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

/**
 * Environment overrides. Each variable sets one key of the file; the file is
 * read first, then these win. LOUPE_KAFKA_BOOTSTRAP sets the default cluster's servers.
 */
export const ENV_OVERRIDES = {
  LOUPE_HOST: "server.host",
  LOUPE_PORT: "server.port",
  LOUPE_ALLOWED_HOSTS: "server.allowedHosts",
  LOUPE_DATA_DIR: "dataDir",
  LOUPE_LOG_LEVEL: "log.level",
  LOUPE_KAFKA_BOOTSTRAP: "kafka.clusters[default].bootstrapServers",
  LOUPE_TOKEN_LIFETIME: "auth.tokenLifetime",
  LOUPE_IDLE_TIMEOUT: "auth.idleTimeout",
  LOUPE_SCHEMA_REGISTRY_URL: "schemaRegistry.urls",
  LOUPE_SCHEMA_REGISTRY_TOPICS: "schemaRegistry.topics",
  LOUPE_CONNECT_URLS: "connect.clusters[alias].urls",
  LOUPE_CONNECT_TOPICS: "connect.clusters[alias].topics",
} as const;

type Env = Record<string, string | undefined>;
type Raw = Record<string, unknown>;

function obj(parent: Raw, key: string): Raw {
  const v = parent[key];
  if (v && typeof v === "object" && !Array.isArray(v)) return v as Raw;
  const fresh: Raw = {};
  parent[key] = fresh;
  return fresh;
}

function applyEnv(raw: Raw, env: Env): void {
  if (env.LOUPE_HOST) obj(raw, "server").host = env.LOUPE_HOST;
  if (env.LOUPE_PORT) obj(raw, "server").port = env.LOUPE_PORT;
  // Comma-separated, as the file's string form.
  if (env.LOUPE_ALLOWED_HOSTS) obj(raw, "server").allowedHosts = env.LOUPE_ALLOWED_HOSTS;
  if (env.LOUPE_DATA_DIR) raw.dataDir = env.LOUPE_DATA_DIR;
  if (env.LOUPE_LOG_LEVEL) obj(raw, "log").level = env.LOUPE_LOG_LEVEL.toLowerCase();
  if (env.LOUPE_TOKEN_LIFETIME) obj(raw, "auth").tokenLifetime = env.LOUPE_TOKEN_LIFETIME;
  if (env.LOUPE_IDLE_TIMEOUT) obj(raw, "auth").idleTimeout = env.LOUPE_IDLE_TIMEOUT;
  // Comma-separated: several hosts of one registry, tried in turn.
  if (env.LOUPE_SCHEMA_REGISTRY_URL) {
    const registry = obj(raw, "schemaRegistry");
    const legacy = (raw.sql as Raw | undefined)?.schemaRegistry;
    // The file's old section keeps its place only for what the variable does not set.
    if (legacy && typeof legacy === "object" && !("urls" in registry)) delete (raw.sql as Raw).schemaRegistry;
    registry.urls = env.LOUPE_SCHEMA_REGISTRY_URL;
  }
  // Comma-separated: the registry's storage topics (internal).
  if (env.LOUPE_SCHEMA_REGISTRY_TOPICS)
    obj(raw, "schemaRegistry").topics = env.LOUPE_SCHEMA_REGISTRY_TOPICS.split(",")
      .map((t) => t.trim())
      .filter(Boolean);
  if (env.LOUPE_CONNECT_URLS) applyConnectUrls(raw, env.LOUPE_CONNECT_URLS);
  if (env.LOUPE_CONNECT_TOPICS) applyConnectTopics(raw, env.LOUPE_CONNECT_TOPICS);
  if (env.LOUPE_KAFKA_BOOTSTRAP) {
    const kafka = obj(raw, "kafka");
    const clusters = Array.isArray(kafka.clusters) ? (kafka.clusters as Raw[]) : [];
    const target = clusters.find((c) => c?.default === true) ?? clusters[0];
    if (target) target.bootstrapServers = env.LOUPE_KAFKA_BOOTSTRAP;
    else clusters.push({ name: "default", default: true, bootstrapServers: env.LOUPE_KAFKA_BOOTSTRAP });
    kafka.clusters = clusters;
  }
}

/**
 * `alias=url1,url2;alias2=url3`: the workers of each alias. An alias of the file keeps its other
 * settings (auth, TLS) and gets these URLs; a new alias is added.
 */
function applyConnectUrls(raw: Raw, text: string): void {
  const connect = obj(raw, "connect");
  const clusters = Array.isArray(connect.clusters) ? (connect.clusters as Raw[]) : [];
  for (const part of text.split(";")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    if (eq < 1) throw new ConfigError(`LOUPE_CONNECT_URLS: expected alias=url1,url2;alias2=url3, got '${part.trim()}'`);
    const alias = part.slice(0, eq).trim();
    const urls = part.slice(eq + 1);
    const known = clusters.find((c) => c?.alias === alias);
    if (known) known.urls = urls;
    else clusters.push({ alias, urls });
  }
  connect.clusters = clusters;
}

/** `alias=configs,offsets,statuses;alias2=...`: each alias's storage topics (internal). */
function applyConnectTopics(raw: Raw, text: string): void {
  const clusters = (obj(raw, "connect").clusters ?? []) as Raw[];
  for (const part of text.split(";")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    const names = part
      .slice(eq + 1)
      .split(",")
      .map((t) => t.trim());
    if (eq < 1 || names.length !== 3 || names.some((n) => !n))
      throw new ConfigError(`LOUPE_CONNECT_TOPICS: expected alias=configs,offsets,statuses;alias2=..., got '${part.trim()}'`);
    const alias = part.slice(0, eq).trim();
    const known = clusters.find((c) => c?.alias === alias);
    if (!known) throw new ConfigError(`LOUPE_CONNECT_TOPICS: no Connect cluster '${alias}' (set its URLs first)`);
    known.topics = { configs: names[0], offsets: names[1], statuses: names[2] };
  }
}

export function formatIssues(error: z.ZodError): { key: string; message: string }[] {
  return error.issues.map((i) => ({
    key: i.path.length ? i.path.map(String).join(".") : "(root)",
    message: i.message,
  }));
}

/** Validates raw settings (already merged with the environment). */
export function parseConfig(raw: unknown, source = "configuration"): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const problems = formatIssues(result.error);
    const lines = problems.map((p) => `  ${p.key}: ${p.message}`).join("\n");
    throw new ConfigError(`Invalid ${source}:\n${lines}`, problems);
  }
  return result.data;
}

/**
 * Reads the TOML file named by `path` (or LOUPE_CONFIG), applies LOUPE_* overrides
 * and validates. A named file that does not exist is an error; no file at all means defaults.
 */
export function loadConfig(opts: { path?: string; env?: Env } = {}): Config {
  const env = opts.env ?? process.env;
  const path = opts.path ?? env.LOUPE_CONFIG;
  let raw: Raw = {};
  if (path) {
    if (!existsSync(path)) throw new ConfigError(`Configuration file not found: ${path}`);
    try {
      raw = Bun.TOML.parse(readFileSync(path, "utf8")) as Raw;
    } catch (e) {
      throw new ConfigError(`Configuration file ${path} is not valid TOML: ${(e as Error).message}`);
    }
  }
  applyEnv(raw, env);
  return parseConfig(raw, path ? `configuration file ${path}` : "configuration");
}
