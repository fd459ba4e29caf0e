/**
 * What a non-admin may not put into a connector's configuration. The Connect REST API runs a
 * connector's configuration inside the workers' JVMs with the workers' rights, so some keys are
 * a way to run code or read files there rather than to configure a connector:
 *
 * - client overrides of security settings (`consumer.override.sasl.jaas.config` naming
 *   `com.sun.security.auth.module.JndiLoginModule` is the JNDI-injection class of CVEs), JAAS
 *   configs, login and callback handler classes;
 * - OAuth token endpoint URLs with `file:`, which read any file the worker can read;
 * - config providers (`${file:/etc/passwd:x}`, `${env:...}`, `${directory:...}`), which put a
 *   worker's files and environment into a config that is then read back;
 * - plugins on the deny list (the file source and sink read and write the workers' disks).
 *
 * Admins may still set them (audited); everyone else gets 403 naming the keys.
 */

import { configText } from "./config-text.ts";

/** One offending key and the rail it breaks. */
export interface Violation {
  key: string;
  rule: string;
}

const RULES: { rule: string; test: (key: string, value: string) => boolean }[] = [
  { rule: "client override of a security setting", test: (k) => /\.override\.(sasl\.|ssl\.|security\.protocol)/i.test(k) },
  { rule: "JAAS configuration", test: (k) => /sasl\.jaas\.config$/i.test(k) },
  { rule: "login or callback handler class", test: (k) => /(login\.class|callback\.handler\.class)$/i.test(k) },
  { rule: "OAuth endpoint reading a file", test: (k, v) => /oauthbearer.*\.url$/i.test(k) && /^\s*file:/i.test(v) },
  { rule: "config provider", test: (_k, v) => /\$\{[^:}]*:/.test(v) },
];

/**
 * `org.apache.kafka.connect.file.FileStreamSourceConnector`, `FileStreamSourceConnector` and
 * `FileStreamSource` all name the same plugin to Connect: compared by simple name, without the
 * `Connector` suffix, ignoring case.
 */
export function pluginKey(name: string): string {
  const simple = name.trim().split(".").pop() ?? "";
  return simple.toLowerCase().replace(/connector$/, "");
}

/** The keys of `config` that break a rail, in the config's order; empty when none does. */
export function guardRailViolations(config: Record<string, unknown>, deniedPlugins: readonly string[]): Violation[] {
  const denied = new Set(deniedPlugins.map(pluginKey));
  const out: Violation[] = [];
  for (const [key, raw] of Object.entries(config)) {
    const value = configText(raw) ?? "";
    const rules = RULES.filter((r) => r.test(key, value)).map((r) => r.rule);
    if (key.toLowerCase() === "connector.class" && value && denied.has(pluginKey(value))) rules.push(`denied plugin ${value.trim()}`);
    for (const rule of rules) out.push({ key, rule });
  }
  return out;
}

/** `key (rule), key (rule)`: what the 403 message and the audit entry name. */
export function describeViolations(list: readonly Violation[]): string {
  return list.map((v) => `${v.key} (${v.rule})`).join(", ");
}
