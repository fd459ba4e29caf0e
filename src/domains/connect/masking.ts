/**
 * Secrets in connector configurations. Users who may only read (`read`, `nodata`) see them
 * masked; `write` and `admin` see them, since they edit them. Audit entries never hold them.
 */
import { globMatch } from "../access/scope.ts";

export const MASK = "********";

/**
 * password, secret, token, jaas and credentials anywhere in the key; `key` only as its last word
 * (`ssl.key`, `aws.secret.key`, `privateKey`, `api.key`), so that `key.converter` stays readable.
 */
const BUILT_IN = /password|passwd|secret|token|jaas|credential/i;
const LAST_WORD_KEY = /(^|[._-])key$/i;
const CAMEL_KEY = /[a-z0-9]Key$/;

export class SecretKeys {
  readonly #extra: string[];

  /** `extra`: exact key names or `*` globs (`guardRails.secretKeys`), matched ignoring case. */
  constructor(extra: readonly string[] = []) {
    this.#extra = extra.map((p) => p.toLowerCase());
  }

  isSecret(key: string): boolean {
    if (BUILT_IN.test(key) || LAST_WORD_KEY.test(key) || CAMEL_KEY.test(key)) return true;
    const lower = key.toLowerCase();
    return this.#extra.some((p) => globMatch(p, lower));
  }

  /** A flat config map with its secret values masked. */
  maskConfig(config: unknown): unknown {
    if (!config || typeof config !== "object" || Array.isArray(config)) return config;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(config)) out[k] = this.isSecret(k) && v !== null && v !== "" ? MASK : v;
    return out;
  }

  /** `{name, config, ...}` (a connector, a task) with its config masked. */
  maskHolder(value: unknown): unknown {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const holder = value as Record<string, unknown>;
    return "config" in holder ? { ...holder, config: this.maskConfig(holder.config) } : holder;
  }

  /** The list with `expand=info`: `{name: {info: {config...}, status}}`; a plain name list is left as is. */
  maskExpandedList(value: unknown): unknown {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
      const e = entry as Record<string, unknown> | null;
      out[name] = e && typeof e === "object" && "info" in e ? { ...e, info: this.maskHolder(e.info) } : entry;
    }
    return out;
  }
}
