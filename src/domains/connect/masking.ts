/**
 * Secrets in connector configurations. Users who may only read (`read`, `nodata`) see them
 * masked; `write` and `admin` see them, since they edit them. Audit entries never hold them.
 *
 * Two ways to know one: by the key (`database.password`, `basic.auth.user.info`), and by the
 * shape of the value, whatever its key (`mongodb://user:pass@host` in `connection.uri`,
 * `;password=...` in a JDBC URL, `Bearer ...` in a header list). Texts Connect writes about a
 * config (its 400 "Invalid value <value> for configuration <key>", a task's trace) are masked
 * by the same shapes and by the secret values the request itself carried.
 */
import { globMatch } from "../access/scope.ts";
import { configText } from "./config-text.ts";

export const MASK = "********";

/**
 * password, secret, token, jaas, credentials, passphrases, user info (`basic.auth.user.info`),
 * authorization (`http.headers.authorization`) and API keys anywhere in the key; `key` only as
 * its last word (`ssl.key`, `aws.secret.key`, `privateKey`, `api.key`), so that
 * `key.converter` stays readable.
 */
const BUILT_IN = /password|passwd|passphrase|secret|token|jaas|credential|user[._-]?info|authorization|apikey/i;
const LAST_WORD_KEY = /(^|[._-])key$/i;
const CAMEL_KEY = /[a-z0-9]Key$/;

/**
 * Secrets by the shape of a value, each with what replaces it:
 * - a URL's user info (`scheme://user:pass@host` keeps `user`; `scheme://token@host` keeps nothing);
 * - a parameter named like a secret (`password=`, `;pwd=`, `?sig=`, `api_key=`), up to `&`, `;`,
 *   `,`, a quote or a blank;
 * - an HTTP authorization (`Basic ...`, `Bearer ...`, `Authorization: ...`).
 */
const SHAPES: [RegExp, string | ((...m: string[]) => string)][] = [
  [
    /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@'"]*)@/gi,
    (_all, scheme, info) => `${scheme}${info.includes(":") ? `${info.slice(0, info.indexOf(":"))}:` : ""}${MASK}@`,
  ],
  [
    /((?:^|[?&;,\s"'])[\w.-]*?(?:password|passwd|pwd|passphrase|secret|token|apikey|api[_-]?key|access[_-]?key|sig|signature|credentials?)=["']?)[^&;,\s"']+/gi,
    `$1${MASK}`,
  ],
  [
    /\b(authorization\s*[:=]\s*)(?:(basic|bearer|digest|token|apikey)\s+)?[^\s,;|"']+/gi,
    (_all, head, scheme) => `${head}${scheme ? `${scheme} ` : ""}${MASK}`,
  ],
  [/\b(Basic|Bearer|Digest)\s+[A-Za-z0-9+/=._~-]{6,}/g, `$1 ${MASK}`],
];

/** The shapes above masked in one text. */
export function maskValueShapes(text: string): string {
  let out = text;
  for (const [re, by] of SHAPES) out = out.replace(re, by as string);
  return out;
}

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

  /** A flat config map with its secret values masked: whole under a secret key, by shape under any other. */
  maskConfig(config: unknown): unknown {
    if (!config || typeof config !== "object" || Array.isArray(config)) return config;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(config)) {
      if (this.isSecret(k) && v !== null && v !== "") out[k] = MASK;
      else out[k] = typeof v === "string" ? maskValueShapes(v) : v;
    }
    return out;
  }

  /**
   * A text Connect wrote about a config (an error message, a trace): the value shapes masked,
   * and every value of `config` that is a secret (by key, or holding a shape) replaced whole
   * wherever it appears (Connect quotes a refused value verbatim).
   */
  maskText(text: string, config?: Record<string, unknown>): string {
    let out = text;
    if (config)
      for (const [k, v] of Object.entries(config)) {
        const value = configText(v);
        // Short values (`1`, `true`) are no secrets worth garbling a message over.
        if (value === undefined || value.length < 4) continue;
        if (this.isSecret(k) || maskValueShapes(value) !== value) out = out.split(value).join(MASK);
      }
    return maskValueShapes(out);
  }

  /** `{name, config, ...}` (a connector, a task) with its config masked. */
  maskHolder(value: unknown): unknown {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const holder = value as Record<string, unknown>;
    return "config" in holder ? { ...holder, config: this.maskConfig(holder.config) } : holder;
  }

  /** A connector's or a task's state: its `trace` (and its tasks' traces) masked by shape. */
  maskStatus(value: unknown): unknown {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const status = { ...(value as Record<string, unknown>) };
    if (typeof status.trace === "string") status.trace = maskValueShapes(status.trace);
    if (status.connector && typeof status.connector === "object") status.connector = this.maskStatus(status.connector);
    if (Array.isArray(status.tasks)) status.tasks = status.tasks.map((t) => this.maskStatus(t));
    return status;
  }

  /** The list with `expand=info` / `expand=status`: `{name: {info: {config...}, status}}`; a plain name list is left as is. */
  maskExpandedList(value: unknown): unknown {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
      if (!entry || typeof entry !== "object") {
        out[name] = entry;
        continue;
      }
      const e = { ...(entry as Record<string, unknown>) };
      if ("info" in e) e.info = this.maskHolder(e.info);
      if ("status" in e) e.status = this.maskStatus(e.status);
      out[name] = e;
    }
    return out;
  }
}
