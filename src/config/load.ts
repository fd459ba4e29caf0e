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

type Env = Record<string, string | undefined>;
type Raw = Record<string, unknown>;

function obj(parent: Raw, key: string): Raw {
  const v = parent[key];
  if (v && typeof v === "object" && !Array.isArray(v)) return v as Raw;
  const fresh: Raw = {};
  parent[key] = fresh;
  return fresh;
}

/** One environment variable: the key of the file it sets, how its value is written, and how it applies. */
export interface EnvOverride {
  key: string;
  /** How the value is written, when it is not simply the key's own. */
  form?: string;
  apply(raw: Raw, value: string): void;
}

/**
 * Environment overrides. Each variable sets one key of the file; the file is read first, then
 * these win, in this order (a Connect alias's topics need its URLs first).
 */
export const ENV_OVERRIDES: Readonly<Record<string, EnvOverride>> = {
  LOUPE_HOST: { key: "server.host", apply: (raw, v) => void (obj(raw, "server").host = v) },
  LOUPE_PORT: { key: "server.port", apply: (raw, v) => void (obj(raw, "server").port = v) },
  LOUPE_ALLOWED_HOSTS: {
    key: "server.allowedHosts",
    form: "comma-separated, as the file's string form",
    apply: (raw, v) => void (obj(raw, "server").allowedHosts = v),
  },
  LOUPE_DATA_DIR: { key: "dataDir", apply: (raw, v) => void (raw.dataDir = v) },
  LOUPE_STORE_URL: { key: "store.url", apply: (raw, v) => void (obj(raw, "store").url = v) },
  LOUPE_LOG_LEVEL: { key: "log.level", form: "any case", apply: (raw, v) => void (obj(raw, "log").level = v.toLowerCase()) },
  LOUPE_TOKEN_LIFETIME: { key: "auth.tokenLifetime", apply: (raw, v) => void (obj(raw, "auth").tokenLifetime = v) },
  LOUPE_IDLE_TIMEOUT: { key: "auth.idleTimeout", apply: (raw, v) => void (obj(raw, "auth").idleTimeout = v) },
  LOUPE_SCHEMA_REGISTRY_URL: {
    key: "schemaRegistry.urls",
    form: "comma-separated: several hosts of one registry, tried in turn",
    apply: (raw, v) => {
      const registry = obj(raw, "schemaRegistry");
      const legacy = (raw.sql as Raw | undefined)?.schemaRegistry;
      // The file's old section keeps its place only for what the variable does not set.
      if (legacy && typeof legacy === "object" && !("urls" in registry)) delete (raw.sql as Raw).schemaRegistry;
      registry.urls = v;
    },
  },
  LOUPE_SCHEMA_REGISTRY_TOPICS: {
    key: "schemaRegistry.topics",
    form: "comma-separated: the registry's storage topics, internal",
    apply: (raw, v) =>
      void (obj(raw, "schemaRegistry").topics = v
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean)),
  },
  LOUPE_CONNECT_URLS: {
    key: "connect.clusters[alias].urls",
    form: "`alias=url1,url2;alias2=url3`: an alias of the file keeps its other settings, a new alias is added",
    apply: applyConnectUrls,
  },
  LOUPE_CONNECT_TOPICS: {
    key: "connect.clusters[alias].topics",
    form: "`alias=configs,offsets,statuses;alias2=...`: each alias's storage topics (internal)",
    apply: applyConnectTopics,
  },
  LOUPE_KAFKA_BOOTSTRAP: {
    key: "kafka.clusters[default].bootstrapServers",
    form: "the default cluster's servers: the one marked default, else the first; a cluster `default` is added when the file has none",
    apply: (raw, v) => {
      const kafka = obj(raw, "kafka");
      const clusters = Array.isArray(kafka.clusters) ? (kafka.clusters as Raw[]) : [];
      const target = clusters.find((c) => c?.default === true) ?? clusters[0];
      if (target) target.bootstrapServers = v;
      else clusters.push({ name: "default", default: true, bootstrapServers: v });
      kafka.clusters = clusters;
    },
  },
};

function applyEnv(raw: Raw, env: Env): void {
  for (const [name, override] of Object.entries(ENV_OVERRIDES)) {
    const value = env[name];
    if (value) override.apply(raw, value);
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
